/* protean.p4: Protean (Protean paper, Algorithms 1 and 2; docs/policies.md "protean") on Tofino (TNA),
 * as the paper's prototype builds it (section III-C): probe packets from the packet generator
 * take each queue's depth and the time in egress, Algorithm 2 runs there, and the probes carry
 * what it found to the ingress registers Algorithm 1 reads. Products and quotients are sums and
 * differences of logarithms (two ternary log2 tables and one exact exp2 table per operation).
 * The software twin is ProteanPolicy with `arithmetic = "tofino"` and `sync = "probe"`
 * (policies/protean.h); the register-by-register map is in p4/README.md.
 *
 * Egress, a probe leaving queue q (Algorithm 2, lines 3-10):
 *   Qprev, Tprev <- Q, T (returning the previous ones)
 *   g_raw = 2^(log2 |Q - Qprev| - log2 (T - Tprev) - log2 rate)      (Eq. 4; the sign aside)
 *   g = g_prev - g_prev >> k + g_raw >> k                             (beta = 2^-k)
 *   log_scale = log2 g - log2 256 + log2 alpha_incast if g > buildup and Q > 0, else
 *               log2 alpha_incast
 *   The stateful ALU cannot shift a register's value, so g_prev travels: this probe reads it,
 *   and its copy on the way to recirculation writes g back as it passes the same egress pipe.
 * Ingress, the probe back from recirculation (lines 2, 11-13; every pipe's ingress sees every
 *   queue's probes, an egress pipe only its own queues'):
 *   depth[q] <- Q; Rem -= Q - Qprev (in any probe order: include/common.p4)
 *   thr[q] = 2^(log_scale + log2 Rem)  (Eq. 5);  long_thr = 2^(log2 alpha_long + log2 Rem)
 * Ingress, a data packet (Algorithm 1), by the class's role:
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
    SbLog2() log2_rem;
    SbExpCells() exp_threshold;
    SbExpCells() exp_long;

    // The policy's constant here (one default entry, from sharebuf-p4tables).
    int<32> log_alpha_long = -256;  // log2(alpha_long) x 256
    action set_params(int<32> log_long) {
        log_alpha_long = log_long;
    }
    // Until the control plane sets the default, the initial value above holds: a default
    // action's argument cannot be negative in the control plane's description of the program.
    table protean_params {
        actions = { set_params; NoAction; }
        default_action = NoAction();
        size = 1;
    }

    // Registers: what Algorithm 1 reads, as the latest probes left it.
    Register<bit<32>, bit<16>>(SB_MAX_QUEUES, 0) depth;  // Q (and Qprev for Rem's change)
    Register<bit<32>, bit<16>>(SB_MAX_QUEUES, 0) incast_thr;
    // Rem = B minus every queue's latest depth, in any probe order (include/common.p4); below 0
    // while the latest depths come from different batches, read as 0. Starts at B.
    Register<int<32>, bit<1>>(1, 0) rem;
    Register<bit<32>, bit<1>>(1, 0) long_thr;  // alpha_long x Rem

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
    RegisterAction<bit<32>, bit<16>, bit<32>>(incast_thr) incast_thr_write = {
        void apply(inout bit<32> value) {
            value = md.thr;
        }
    };
    // The data packet's tests come out of the registers as a difference whose sign bit says
    // "below the bound": Q - thr (no compare instruction, and no step of its own).
    RegisterAction<bit<32>, bit<16>, bit<32>>(incast_thr) incast_below = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = md.qdepth - value;
        }
    };
    // Each probe takes its queue's change off Rem.
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
    // A short-role frame: c - Rem. Rem below 0 (read as 0) makes it positive, as 0 would: the
    // frame does not fit either way.
    RegisterAction<int<32>, bit<1>, bit<32>>(rem) rem_below = {
        void apply(inout int<32> value, out bit<32> rv) {
            rv = (bit<32>)((int<32>)md.cells - value);
        }
    };
    RegisterAction<bit<32>, bit<1>, bit<32>>(long_thr) long_thr_write = {
        void apply(inout bit<32> value) {
            value = md.diff;
        }
    };
    RegisterAction<bit<32>, bit<1>, bit<32>>(long_thr) long_below = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = md.qdepth - value;
        }
    };

    SB_STEP(log_t_of, md.log_t = hdr.sb.log_scale + md.log_b;)
    SB_STEP(log_long_of, md.log_a = log_alpha_long + md.log_b;)
    SB_STEP(probe_qindex, md.qindex = hdr.sb.qindex;)
    SB_STEP(delta_of, md.delta = (int<32>)(hdr.sb.depth - md.q_prev);)

    apply {
        protean_params.apply();
        // First what each kind of packet needs before the registers, then the registers (as in
        // dt.p4: a register's actions share one stage, so the probe's accesses must not come
        // earlier in the program than the data packet's, which waits for its queue index).
        if (hdr.pktgen.isValid()) {
            // A new probe: through the queue it measures.
            probe_route.apply(hdr, md, ig_dprsr_md, ig_tm_md);
        } else if (hdr.sb.isValid()) {
            if (hdr.sb.kind == SB_PROBE) {
                probe_qindex.apply();
            }
        } else if (hdr.ethernet.isValid()) {
            fwd.apply(hdr, md, ig_intr_md, ig_dprsr_md, ig_tm_md);
        }
        // Which packet this is, from what nothing above writes (its port, its parsed headers),
        // so the tests cost no stage: a returning probe came through the recirculation port.
        // Nested, not `valid && kind == ...`, as in dt.p4: p4testgen taints every path whose
        // condition reads a field of an invalid header, even behind a false `&&`.
        if (hdr.sb.isValid()) {
            if (ig_intr_md.ingress_port[6:0] == RECIRC_PORT_IN_PIPE && hdr.sb.kind == SB_PROBE) {
                // A probe back from egress: its depth and threshold factor into the registers.
                md.q_prev = depth_swap.execute(md.qindex);
                delta_of.apply();
                md.rem = rem_update.execute(0);
                log2_rem.apply(md.rem, md.log_b);
                log_t_of.apply();
                exp_threshold.apply(md.log_t, md.thr);
                incast_thr_write.execute(md.qindex);
                log_long_of.apply();
                exp_long.apply(md.log_a, md.diff);
                long_thr_write.execute(0);
                ig_dprsr_md.drop_ctl = 1;  // a probe ends here
            }
        } else if (hdr.ethernet.isValid()) {
            // A data packet: Algorithm 1.
            md.qdepth = depth_read.execute(md.qindex);
            if (md.role == ROLE_SHORT) {
                md.below = rem_below.execute(0);
            } else if (md.role == ROLE_LONG) {
                md.below = long_below.execute(0);
            } else {
                md.below = incast_below.execute(md.qindex);
            }
            if (md.below[31:31] == 0) {
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
    SbLog2() log2_dq;
    SbLog2() log2_dt;
    SbLog2() log2_g;
    SbExpGradient() exp_gradient;

    // The policy's constants here (one default entry, from sharebuf-p4tables).
    int<32> buildup_q8 = 512;      // buildup x 256
    int<32> log_alpha_incast = 0;  // log2(alpha_incast) x 256
    int<32> log_scale_base = -2048;  // log_alpha_incast - Q8_ONE: g's 8 fraction bits off
    action set_params(int<32> buildup, int<32> log_incast) {
        buildup_q8 = buildup;
        log_alpha_incast = log_incast;
        log_scale_base = log_incast - Q8_ONE;
    }
    table gradient_params {
        actions = { set_params; }
        default_action = set_params(512, 0);
        size = 1;
    }

    // log2 of the probed queue's port rate, in cells per ns (Q.8).
    action set_rate(int<32> log_cells_per_ns) {
        md.log_rate = log_cells_per_ns;
    }
    table queue_rate {
        key = { hdr.sb.qindex : exact; }
        actions = { set_rate; }
        default_action = set_rate(0);
        size = SB_MAX_QUEUES;
    }

    // Registers: each queue of this pipe's ports, as its previous probe left it.
    Register<bit<32>, bit<16>>(SB_MAX_QUEUES, 0) depth;     // Qprev
    Register<bit<32>, bit<16>>(SB_MAX_QUEUES, 0) tstamp;    // Tprev
    Register<int<32>, bit<16>>(SB_MAX_QUEUES, 0) gradient;  // g, Q.8

    RegisterAction<bit<32>, bit<16>, bit<32>>(depth) depth_swap = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = hdr.sb.depth;
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(tstamp) tstamp_swap = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = hdr.sb.tstamp;
        }
    };
    RegisterAction<int<32>, bit<16>, int<32>>(gradient) gradient_read = {
        void apply(inout int<32> value, out int<32> rv) {
            rv = value;
        }
    };
    RegisterAction<int<32>, bit<16>, int<32>>(gradient) gradient_write = {
        void apply(inout int<32> value) {
            value = hdr.sb.gradient;
        }
    };

    SB_STEP(rise_of, md.rise = hdr.sb.depth - md.q_prev;)
    // One operation per field per step: an action runs in one stage, where an ALU applies one
    // operation to each field ("action spanning multiple stages" otherwise).
    SB_STEP(dt_of, md.dt = hdr.sb.tstamp - md.t_prev;)
    SB_STEP(log_q_of, md.log_t = md.log_a - md.log_b;)
    SB_STEP(log_t_of, md.log_t = md.log_t - md.log_rate;)
    // g = g - (g >> beta_shift) + (g_raw >> beta_shift), as ProteanPolicy's tofino arithmetic;
    // in the copy's pass g_raw travels in hdr.sb.log_scale.
    SB_STEP(ewma_shifts, md.g_old = hdr.sb.gradient >> SB_BETA_SHIFT;
                         md.g_new = hdr.sb.log_scale >> SB_BETA_SHIFT;)
    SB_STEP(ewma_keep, md.g = hdr.sb.gradient - md.g_old;)
    SB_STEP(ewma_add, hdr.sb.gradient = md.g + md.g_new; md.g = md.g + md.g_new;)
    SB_STEP(above_of, md.above = buildup_q8 - md.g;)

    apply {
        // Algorithm 2 in two passes of egress, both before ingress needs the result: the probe
        // leaving the queue it measures computes the raw gradient; its mirrored copy, passing the
        // recirculation port's egress in each pipe on its way to ingress, smooths it, writes it
        // back and turns it into the threshold's log factor. One pass would take 20 stages.
        // Said for every packet, the tests nested: as SbProbeStamp (include/common.p4), so that
        // p4testgen finds the paths on which a data packet leaves.
        eg_dprsr_md.mirror_type = 0;
        if (!hdr.sb.isValid()) {
            // A data packet: nothing to do here.
        } else if (md.meta.origin == ORIGIN_CONTROL && hdr.sb.kind == SB_PROBE) {
            hdr.sb.depth = (bit<32>)eg_intr_md.deq_qdepth;
            hdr.sb.tstamp = eg_prsr_md.global_tstamp[31:0];
            md.q_prev = depth_swap.execute(hdr.sb.qindex);
            md.t_prev = tstamp_swap.execute(hdr.sb.qindex);
            hdr.sb.gradient = gradient_read.execute(hdr.sb.qindex);
            queue_rate.apply();
            // |depth - previous| and its sign from one subtraction's borrow (both below 2^31): a
            // Tofino gateway compares a field with a constant, never with another field.
            rise_of.apply();
            if (md.rise[31:31] == 0) {
                md.dq = md.rise;
            } else {
                md.dq = md.q_prev - hdr.sb.depth;
            }
            dt_of.apply();
            log2_dq.apply(md.dq, md.log_a);
            log2_dt.apply(md.dt, md.log_b);
            // g_raw, signed, to the copy in hdr.sb.log_scale (which the copy's pass overwrites).
            if (md.dq == 0 || md.dt == 0) {  // dt = 0: the software's gradient is 0 too
                hdr.sb.log_scale = 0;
            } else {
                log_q_of.apply();
                log_t_of.apply();
                exp_gradient.apply(md.log_t, md.g_raw);
                if (md.rise[31:31] == 1) {
                    hdr.sb.log_scale = -md.g_raw;
                } else {
                    hdr.sb.log_scale = md.g_raw;
                }
            }
            probe_stamp.apply(hdr, md, eg_intr_md, eg_prsr_md, eg_dprsr_md);
        } else if (md.meta.origin == ORIGIN_MIRROR_CONTROL && hdr.sb.kind == SB_PROBE) {
            // Its copy on the way to recirculation: the EWMA, g back into the register it came
            // from (in the other pipes' copies the queue is not theirs, and the write is never
            // read), and the threshold's log factor for ingress.
            gradient_params.apply();
            ewma_shifts.apply();
            ewma_keep.apply();
            ewma_add.apply();
            gradient_write.execute(hdr.sb.qindex);
            above_of.apply();  // g > buildup: negative (a gateway compares with a constant)
            if (md.above < 0 && hdr.sb.depth != 0) {  // an empty queue: DT's threshold
                log2_g.apply((bit<32>)md.g, md.log_a);
                hdr.sb.log_scale = md.log_a + log_scale_base;
            } else {
                hdr.sb.log_scale = log_alpha_incast;
            }
        }
    }
}

Pipeline(SbIngressParser(), ProteanIngress(), SbIngressDeparser(),
         SbEgressParser(), ProteanEgress(), SbEgressDeparser()) pipe;

Switch(pipe) main;
