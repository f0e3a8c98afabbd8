/* dt.p4: Dynamic Thresholds (docs/policies.md "dt") on Tofino (TNA), decided in ingress on the
 * ingress copy of each queue's depth and the remaining-buffer aggregate, which probe packets
 * bring from egress every probe interval (include/common.p4) — sharebufd's `view = "probe"`.
 *
 *   T(q) = alpha(class) x Rem = 2^(log2 alpha(class) + log2 Rem)     (include/log_arith.p4)
 *   admit iff Q[q] < T(q)
 *
 * Tofino's traffic manager has DT of its own (a few alphas per pool); this program is the twin of
 * sharebuf's DtPolicy and the base the other programs extend. Every register is accessed once per
 * pass; there is no division or multiplication (the product goes through the log tables).
 */
#include <core.p4>
#include <tna.p4>

#include "include/common.p4"
#include "include/log_arith.p4"

control DtIngress(inout headers_t hdr, inout ig_meta_t md,
                  in ingress_intrinsic_metadata_t ig_intr_md,
                  in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                  inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                  inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    SbForward() fwd;
    SbProbeRoute() probe_route;
    SbLog2() log2_rem;
    SbExpCells() exp_threshold;
    int<32> log_alpha = 0;
    SB_STEP(log_t_of, md.log_t = log_alpha + md.log_b;)
    SB_STEP(below_of, md.below = md.qdepth - md.thr;)

    // log2(alpha) x 256 of each class (a class without an alpha of its own: the policy's).
    action set_alpha(int<32> log_value) {
        log_alpha = log_value;
    }
    table class_alpha {
        key = { md.class_id : exact; }
        actions = { set_alpha; }
        default_action = set_alpha(0);
        size = 64;
    }

    Register<bit<32>, bit<16>>(SB_MAX_QUEUES, 0) depth;
    // Rem = B minus the latest depth of every queue, kept in any probe order: each probe takes its
    // queue's change off (a sum restarted by one probe and published by another went wrong
    // whenever probes came back out of order, as they do when their queues' depths differ). It
    // can dip below 0 while the latest depths come from different batches: read as 0 then.
    // Starts at B (sharebuf-p4tables' register start values).
    Register<int<32>, bit<1>>(1, 0) rem;

    RegisterAction<bit<32>, bit<16>, bit<32>>(depth) depth_swap = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = hdr.sb.depth;
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(depth) depth_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };
    RegisterAction<int<32>, bit<1>, bit<32>>(rem) rem_update = {
        void apply(inout int<32> value, out bit<32> rv) {
            // The stateful ALU tests its inputs (value - delta > 0), not the value it writes.
            if (value - md.delta > 0) {
                rv = (bit<32>)(value - md.delta);
            } else {
                rv = 0;
            }
            value = value - md.delta;
        }
    };
    RegisterAction<int<32>, bit<1>, bit<32>>(rem) rem_read = {
        void apply(inout int<32> value, out bit<32> rv) {
            if (value > 0) {
                rv = (bit<32>)value;
            } else {
                rv = 0;
            }
        }
    };

    SB_STEP(probe_qindex, md.qindex = hdr.sb.qindex;)
    SB_STEP(delta_of, md.delta = (int<32>)(hdr.sb.depth - md.q_prev);)

    apply {
        // First what each kind of packet needs before the registers, then the registers: a
        // register's actions all sit in one stage, so the probe's access to `depth` and `rem`
        // must not come earlier in the program than the data packet's, which waits for its queue
        // index (bf-p4c's placement stops otherwise: "no more tables are placeable").
        if (hdr.pktgen.isValid()) {
            probe_route.apply(hdr, md, ig_dprsr_md, ig_tm_md);
        } else if (hdr.sb.isValid()) {
            if (hdr.sb.kind == SB_PROBE) {
                probe_qindex.apply();
            }
        } else if (hdr.ethernet.isValid()) {
            fwd.apply(hdr, md, ig_intr_md, ig_dprsr_md, ig_tm_md);
            class_alpha.apply();
        }
        // Which packet this is, from what nothing above writes (its port, its parsed headers),
        // so the tests cost no stage: a returning probe came through the recirculation port.
        // Nested, not `valid && kind == ...`: a field of an invalid header is undefined, and
        // p4testgen taints every path whose condition reads one, even behind a false `&&`.
        if (hdr.sb.isValid()) {
            if (ig_intr_md.ingress_port[6:0] == RECIRC_PORT_IN_PIPE && hdr.sb.kind == SB_PROBE) {
                md.q_prev = depth_swap.execute(md.qindex);
                delta_of.apply();
                rem_update.execute(0);
                ig_dprsr_md.drop_ctl = 1;
            }
        } else if (hdr.ethernet.isValid()) {
            md.qdepth = depth_read.execute(md.qindex);
            md.rem = rem_read.execute(0);
            log2_rem.apply(md.rem, md.log_b);
            log_t_of.apply();
            exp_threshold.apply(md.log_t, md.thr);
            // Q >= T as the borrow of Q - T (both below 2^31): a Tofino gateway compares a field
            // with a constant, never with another field.
            below_of.apply();
            if (md.below[31:31] == 0) {
                ig_dprsr_md.drop_ctl = 1;
            }
        }
    }
}

control DtEgress(inout headers_t hdr, inout eg_meta_t md,
                 in egress_intrinsic_metadata_t eg_intr_md,
                 in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                 inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                 inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    SbProbeStamp() probe_stamp;
    apply {
        probe_stamp.apply(hdr, md, eg_intr_md, eg_prsr_md, eg_dprsr_md);
    }
}

Pipeline(SbIngressParser(), DtIngress(), SbIngressDeparser(),
         SbEgressParser(), DtEgress(), SbEgressDeparser()) pipe;

Switch(pipe) main;
