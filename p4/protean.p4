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
    table protean_params {
        actions = { set_params; }
        default_action = set_params(-256);
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
    RegisterAction<bit<32>, bit<16>, bit<32>>(incast_thr) incast_thr_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
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
            // A probe back from egress: its queue's depth and threshold factor into the registers.
            md.q_prev = depth_swap.execute(hdr.sb.qindex);
            md.delta = (int<32>)(hdr.sb.depth - md.q_prev);
            md.rem = rem_update.execute(0);
            log2_rem.apply(md.rem, md.log_b);
            exp_threshold.apply(hdr.sb.log_scale + md.log_b, md.thr);
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
    SbLog2() log2_dq;
    SbLog2() log2_dt;
    SbLog2() log2_g;
    SbExpGradient() exp_gradient;

    // The policy's constants here (one default entry, from sharebuf-p4tables).
    int<32> buildup_q8 = 512;      // buildup x 256
    int<32> log_alpha_incast = 0;  // log2(alpha_incast) x 256
    action set_params(int<32> buildup, int<32> log_incast) {
        buildup_q8 = buildup;
        log_alpha_incast = log_incast;
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

    apply {
        if (md.meta.origin == ORIGIN_CONTROL && hdr.sb.kind == SB_PROBE) {
            // A probe leaving the queue it measures: Algorithm 2 for that queue.
            gradient_params.apply();
            hdr.sb.depth = (bit<32>)eg_intr_md.deq_qdepth;
            hdr.sb.tstamp = eg_prsr_md.global_tstamp[31:0];
            md.q_prev = depth_swap.execute(hdr.sb.qindex);
            md.t_prev = tstamp_swap.execute(hdr.sb.qindex);
            hdr.sb.gradient = gradient_read.execute(hdr.sb.qindex);
            queue_rate.apply();
            // |depth - previous| and its sign from one subtraction's borrow (both below 2^31): a
            // Tofino gateway compares a field with a constant, never with another field.
            bit<32> rise = hdr.sb.depth - md.q_prev;
            bit<1> falling = rise[31:31];
            if (falling == 0) {
                md.dq = rise;
            } else {
                md.dq = md.q_prev - hdr.sb.depth;
            }
            md.dt = hdr.sb.tstamp - md.t_prev;
            log2_dq.apply(md.dq, md.log_a);
            log2_dt.apply(md.dt, md.log_b);
            if (md.dq == 0 || md.dt == 0) {  // dt = 0: the software's gradient is 0 too
                md.g_raw = 0;
            } else {
                exp_gradient.apply(md.log_a - md.log_b - md.log_rate, md.g_raw);
                if (falling == 1) {
                    md.g_raw = -md.g_raw;
                }
            }
            md.g = hdr.sb.gradient - (hdr.sb.gradient >> SB_BETA_SHIFT) +
                   (md.g_raw >> SB_BETA_SHIFT);
            hdr.sb.gradient = md.g;
            int<32> above = buildup_q8 - md.g;  // g > buildup: negative (gateway: field vs constant)
            if (above < 0 && hdr.sb.depth != 0) {  // an empty queue: DT's threshold
                log2_g.apply((bit<32>)md.g, md.log_a);
                hdr.sb.log_scale = md.log_a - Q8_ONE + log_alpha_incast;  // g's 8 fraction bits
            } else {
                hdr.sb.log_scale = log_alpha_incast;
            }
            probe_stamp.apply(hdr, md, eg_intr_md, eg_prsr_md, eg_dprsr_md);
        } else if (md.meta.origin == ORIGIN_MIRROR_CONTROL && hdr.sb.kind == SB_PROBE) {
            // Its copy on the way to recirculation: g back into the register it came from (in
            // the other pipes' copies the queue is not theirs, and the write is never read).
            gradient_write.execute(hdr.sb.qindex);
        }
    }
}

Pipeline(SbIngressParser(), ProteanIngress(), SbIngressDeparser(),
         SbEgressParser(), ProteanEgress(), SbEgressDeparser()) pipe;

Switch(pipe) main;
