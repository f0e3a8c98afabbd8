/* protean.p4: Protean (protean.txt, Algorithms 1 and 2; POLICIES.md "protean") on Tofino (TNA),
 * as the paper's prototype builds it (section III-C): probe packets from the packet generator
 * carry each queue's depth and the time from egress to ingress registers every probe interval,
 * and the gradient, the burst test and the threshold are computed there in log arithmetic (two
 * ternary log2 tables and one exact exp2 table per operation). The software twin is
 * ProteanPolicy with `arithmetic = "tofino"` and `sync = "probe"` (policies/protean.h); the
 * register-by-register map is in p4/README.md.
 *
 * Probe pass (a probe back from the recirculation port, for queue q):
 *   Qprev, Tprev <- Q, T (returning the previous ones);  Rem summed over the batch
 *   g_raw = 2^(log2 |Q - Qprev| - log2 (T - Tprev) - log2 rate)     (Eq. 4; the sign aside)
 *   g = g - g >> k + g_raw >> k                                      (beta = 2^-k)
 *   thr[q] = 2^(log2 g + log2 alpha_incast + log2 Rem) if g > buildup (Eq. 5),
 *            2^(log2 alpha_incast + log2 Rem) otherwise;  long_thr = 2^(log2 alpha_long + log2 Rem)
 * Data pass (Algorithm 1), by the class's role:
 *   short: admit iff cells < Rem;  long: Q < long_thr;  incast: Q < thr[q].
 * Every register is accessed once per pass; there is no division, multiplication or loop.
 */
#include <core.p4>
#include <tna.p4>

#include "include/common.p4"
#include "include/log_arith.p4"

#ifndef SB_BETA_SHIFT
#define SB_BETA_SHIFT 2  // beta = 1/4; sharebuf-p4tables says which value a configuration needs
#endif

control ProteanIngress(inout headers_t hdr, inout ig_meta_t md,
                       in ingress_intrinsic_metadata_t ig_intr_md,
                       in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                       inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                       inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    SbForward() fwd;
    SbProbeRoute() probe_route;
    SbLog2() log2_dq;
    SbLog2() log2_dt;
    SbLog2() log2_g;
    SbLog2() log2_rem;
    SbExpGradient() exp_gradient;
    SbExpCells() exp_threshold;
    SbExpCells() exp_long;

    // The policy's constants (one default entry, from sharebuf-p4tables).
    int<32> buildup_q8 = 512;     // buildup x 256
    int<32> log_alpha_incast = 0; // log2(alpha_incast) x 256
    int<32> log_alpha_long = -256;
    action set_params(int<32> buildup, int<32> log_incast, int<32> log_long) {
        buildup_q8 = buildup;
        log_alpha_incast = log_incast;
        log_alpha_long = log_long;
    }
    table protean_params {
        actions = { set_params; }
        default_action = set_params(512, 0, -256);
        size = 1;
    }

    // log2 of the probed queue's port rate, in cells per ns (Q.8).
    int<32> log_rate = 0;
    action set_rate(int<32> log_cells_per_ns) {
        log_rate = log_cells_per_ns;
    }
    table queue_rate {
        key = { hdr.sb.qindex : exact; }
        actions = { set_rate; }
        default_action = set_rate(0);
        size = SB_MAX_QUEUES;
    }

    // Registers: the ingress copy of every queue's state.
    Register<bit<32>, bit<16>>(SB_MAX_QUEUES, 0) depth;     // Q (and Qprev for the next probe)
    Register<bit<32>, bit<16>>(SB_MAX_QUEUES, 0) tstamp;    // Tprev
    Register<int<32>, bit<16>>(SB_MAX_QUEUES, 0) gradient;  // g, Q.8
    Register<bit<32>, bit<16>>(SB_MAX_QUEUES, 0) incast_thr;
    // Rem = B minus every queue's latest depth, in any probe order (include/common.p4); below 0
    // while the latest depths come from different batches, read as 0. Starts at B.
    Register<int<32>, bit<1>>(1, 0) rem;
    Register<bit<32>, bit<1>>(1, 0) long_thr;  // alpha_long x Rem

    bit<32> q_prev = 0;
    bit<32> t_prev = 0;

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
    RegisterAction<bit<32>, bit<16>, bit<32>>(tstamp) tstamp_swap = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = hdr.sb.tstamp;
        }
    };
    RegisterAction<int<32>, bit<16>, int<32>>(gradient) gradient_ewma = {
        void apply(inout int<32> value, out int<32> rv) {
            value = value - (value >> SB_BETA_SHIFT) + (md.g_raw >> SB_BETA_SHIFT);
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(incast_thr) incast_thr_write = {
        void apply(inout bit<32> value) {
            value = md.thr;
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(incast_thr) incast_thr_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };
    // Each probe takes its queue's change off Rem.
    RegisterAction<int<32>, bit<1>, bit<32>>(rem) rem_update = {
        void apply(inout int<32> value, out bit<32> rv) {
            value = value - md.delta;
            if (value > 0) {
                rv = (bit<32>)value;
            } else {
                rv = 0;
            }
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
    RegisterAction<bit<32>, bit<1>, bit<32>>(long_thr) long_thr_write = {
        void apply(inout bit<32> value) {
            value = md.diff;
        }
    };
    RegisterAction<bit<32>, bit<1>, bit<32>>(long_thr) long_thr_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };

    apply {
        protean_params.apply();
        if (hdr.pktgen.isValid()) {
            // A new probe: through the queue it measures.
            probe_route.apply(hdr, md, ig_dprsr_md, ig_tm_md);
        } else if (hdr.sb.isValid() && hdr.sb.kind == SB_PROBE) {
            // A probe back from egress: Algorithm 2 for its queue.
            q_prev = depth_swap.execute(hdr.sb.qindex);
            t_prev = tstamp_swap.execute(hdr.sb.qindex);
            md.delta = (int<32>)(hdr.sb.depth - q_prev);
            md.rem = rem_update.execute(0);
            queue_rate.apply();
            if (hdr.sb.depth >= q_prev) {
                md.dq = hdr.sb.depth - q_prev;
            } else {
                md.dq = q_prev - hdr.sb.depth;
            }
            md.dt = hdr.sb.tstamp - t_prev;
            log2_dq.apply(md.dq, md.log_a);
            log2_dt.apply(md.dt, md.log_b);
            if (md.dq == 0 || md.dt == 0) {  // dt = 0: the software's gradient is 0 too
                md.g_raw = 0;
            } else {
                exp_gradient.apply(md.log_a - md.log_b - log_rate, md.g_raw);
                if (hdr.sb.depth < q_prev) {
                    md.g_raw = -md.g_raw;
                }
            }
            md.g = gradient_ewma.execute(hdr.sb.qindex);
            log2_rem.apply(md.rem, md.log_b);
            if (md.g > buildup_q8 && hdr.sb.depth != 0) {  // an empty queue: DT's threshold
                log2_g.apply((bit<32>)md.g, md.log_a);
                md.log_a = md.log_a - Q8_ONE;  // the gradient's 8 fractional bits
            } else {
                md.log_a = 0;
            }
            exp_threshold.apply(md.log_a + log_alpha_incast + md.log_b, md.thr);
            incast_thr_write.execute(hdr.sb.qindex);
            exp_long.apply(log_alpha_long + md.log_b, md.diff);
            long_thr_write.execute(0);
            ig_dprsr_md.drop_ctl = 1;  // a probe ends here
        } else if (hdr.ethernet.isValid()) {
            // A data packet: Algorithm 1.
            fwd.apply(hdr, md, ig_intr_md, ig_dprsr_md, ig_tm_md);
            md.qdepth = depth_read.execute(md.qindex);
            md.rem = rem_read.execute(0);
            if (md.role == ROLE_SHORT) {
                md.drop = md.cells >= md.rem;
            } else if (md.role == ROLE_LONG) {
                md.thr = long_thr_read.execute(0);
                md.drop = md.qdepth >= md.thr;
            } else {
                md.thr = incast_thr_read.execute(md.qindex);
                md.drop = md.qdepth >= md.thr;
            }
            if (md.drop) {
                ig_dprsr_md.drop_ctl = 1;
            }
        }
    }
}

control ProteanEgress(inout headers_t hdr, inout eg_meta_t md,
                      in egress_intrinsic_metadata_t eg_intr_md,
                      in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                      inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                      inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    SbProbeStamp() probe_stamp;
    apply {
        probe_stamp.apply(hdr, md, eg_intr_md, eg_prsr_md, eg_dprsr_md);
    }
}

Pipeline(SbIngressParser(), ProteanIngress(), SbIngressDeparser(),
         SbEgressParser(), ProteanEgress(), SbEgressDeparser()) pipe;

Switch(pipe) main;
