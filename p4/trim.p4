/* trim.p4: packet trimming as the trimming paper builds it on Tofino (sections 3-5, ndp.p4);
 * the software twin is sharebufd's `[trimming] mode = "tofino-approx"` (model/tofino_approx.h).
 *
 * Ingress, a data packet of a class whose overflow is "trim":
 *   three per-pipeline meters per egress port at 100 %, 50 % and 25 % of its line rate; the
 *   port's state (t0, t1 registers: pessimistic until t0, half-pessimistic until t1, else
 *   optimistic) picks the meter whose colour counts; red: the packet is trimmed at ingress (an
 *   ingress mirror truncated to the trim size into the port's header queue; the original is
 *   dropped); otherwise it is enqueued with deflect-on-drop, so a packet the traffic manager
 *   cannot queue goes to the pipe's recirculation port instead of being lost.
 * Egress of the recirculation port, a deflected packet: cut to the trim size by an egress mirror
 *   with the sharebuf header (UPDATE, the port that overflowed) in front; the original is dropped.
 * Ingress, an UPDATE back from recirculation: the trimmed packet goes on to its port's header
 *   queue, and a NOTIFY copy goes to every pipe's recirculation port (a mirror session to a
 *   multicast group), so every pipeline hears of the congestion.
 * Ingress, a NOTIFY: t0[port] = now + T0, t1[port] = now + T1 (pessimistic at once).
 * Egress, a trimmed packet: the trimmed DSCP, the IPv4 total length of what is left, the header
 * checksum (the deparser); TCP/UDP checksums are left as they were (the software's
 * trim_fix_lengths also fixes those).
 */
#include <core.p4>
#include <tna.p4>

#include "include/common.p4"

const bit<8> ORIGIN_MIRROR_NOTIFY = 4;  // a NOTIFY on its way to every recirculation port

control TrimIngress(inout headers_t hdr, inout ig_meta_t md,
                    in ingress_intrinsic_metadata_t ig_intr_md,
                    in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                    inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    SbForward() fwd;

    MirrorId_t notify_session = 0;
    // T0 and T1 in ns, both counted from the notification (pessimistic until T0, half until T1:
    // the software's t0 and max(t0, t1)); the defaults are the software's, 6 and 12 us.
    action set_params(bit<32> t0_ns, bit<32> t1_ns, MirrorId_t notify) {
        md.t0_ns = t0_ns;
        md.t1_ns = t1_ns;
        notify_session = notify;
    }
    table trim_params {
        actions = { set_params; }
        default_action = set_params(6000, 12000, 0);
        size = 1;
    }

    // Classes whose overflow is "trim".
    bool trim_class = false;
    action trims() {
        trim_class = true;
    }
    table class_overflow {
        key = { md.class_id : exact; }
        actions = { trims; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    // Per egress port: its header (trim) queue's mirror session (truncating to the trim size).
    action set_trim_session(MirrorId_t session) {
        md.mirror_session = session;
    }
    table trim_session {
        key = { md.port_index : exact; }
        actions = { set_trim_session; }
        default_action = set_trim_session(0);
        size = SB_MAX_PORTS;
    }
    // Per egress port: the device port and its header queue (an UPDATE's trimmed packet).
    action to_header_queue(PortId_t port, QueueId_t qid) {
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.qid = qid;
    }
    table header_queue {
        key = { hdr.sb.port : exact; }
        actions = { to_header_queue; NoAction; }
        default_action = NoAction();
        size = SB_MAX_PORTS;
    }

    Meter<bit<16>>(SB_MAX_PORTS, MeterType_t.BYTES) meter_optimistic;    // line rate
    Meter<bit<16>>(SB_MAX_PORTS, MeterType_t.BYTES) meter_halftimistic;  // 50 %
    Meter<bit<16>>(SB_MAX_PORTS, MeterType_t.BYTES) meter_pessimistic;   // 25 %

    Register<bit<32>, bit<16>>(SB_MAX_PORTS, 0) t0_reg;  // pessimistic until
    Register<bit<32>, bit<16>>(SB_MAX_PORTS, 0) t1_reg;  // half-pessimistic until
    RegisterAction<bit<32>, bit<16>, bit<1>>(t0_reg) t0_set = {
        void apply(inout bit<32> value) {
            value = md.t0_ns;  // now + T0, computed before (a stateful ALU takes one field)
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<1>>(t1_reg) t1_set = {
        void apply(inout bit<32> value) {
            value = md.t1_ns;
        }
    };
    // 1 while now is not past the register's time (the paper's `now() <= t0_reg`), on the 32-bit
    // nanosecond clock that wraps every 4.29 s: the time left, value - now, is counted modulo 2^32
    // and must lie in [0, the longest period]; a register found past its time is set to just
    // behind now, so it never falls a whole wrap behind while its port sees traffic (a plain
    // now <= value, as in the paper's switch.p4 version, turned a port pessimistic for up to
    // 4.29 s after every wrap), and a packet in the same nanosecond finds it past too.
    // SB_T_WINDOW_NS: max(T0, T1), from sharebuf-p4tables' compile definitions. Until
    // 2026-11-29 the time left had to be above 0 and a register past its time was set to now:
    // a packet exactly at t0 found the port half-pessimistic where the paper and the software
    // (IngressPortState) keep it pessimistic (tests/p4/p4_tables_test.cpp,
    // TrimPortStateOnTheGeneratedEntriesIsTheSoftwares).
#ifndef SB_T_WINDOW_NS
#define SB_T_WINDOW_NS 1000000
#endif
    RegisterAction<bit<32>, bit<16>, bit<1>>(t0_reg) t0_active = {
        void apply(inout bit<32> value, out bit<1> rv) {
            bit<32> left = value - md.now;
            if (left <= SB_T_WINDOW_NS) {
                rv = 1;
            } else {
                value = md.now - 1;
                rv = 0;
            }
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<1>>(t1_reg) t1_active = {
        void apply(inout bit<32> value, out bit<1> rv) {
            bit<32> left = value - md.now;
            if (left <= SB_T_WINDOW_NS) {
                rv = 1;
            } else {
                value = md.now - 1;
                rv = 0;
            }
        }
    };

    apply {
        trim_params.apply();
        md.now = ig_prsr_md.global_tstamp[31:0];
        if (hdr.sb.isValid() && hdr.sb.kind == SB_NOTIFY) {
            // Every pipe hears that sb.port overflowed: pessimistic for T0, then half for T1-T0.
            md.t0_ns = md.now + md.t0_ns;
            md.t1_ns = md.now + md.t1_ns;
            t0_set.execute(hdr.sb.port);
            t1_set.execute(hdr.sb.port);
            ig_dprsr_md.drop_ctl = 1;
        } else if (hdr.sb.isValid() && hdr.sb.kind == SB_UPDATE) {
            // A deflected packet, trimmed: on to its port's header queue, and a NOTIFY to all.
            md.port_index = hdr.sb.port;
            header_queue.apply();
            hdr.sb.setInvalid();
            md.bridge.origin = ORIGIN_MIRROR_TRIM;  // egress: the trimmed packet's rewrite
            md.bridge.port_index = md.port_index;
            md.mirror_session = notify_session;
            md.mirror_origin = ORIGIN_MIRROR_NOTIFY;
            ig_dprsr_md.mirror_type = MIRROR_TYPE_I2E;
        } else if (hdr.ethernet.isValid()) {
            fwd.apply(hdr, md, ig_intr_md, ig_dprsr_md, ig_tm_md);
            class_overflow.apply();
            if (trim_class) {
                bit<8> opti = meter_optimistic.execute(md.port_index);
                bit<8> half = meter_halftimistic.execute(md.port_index);
                bit<8> pess = meter_pessimistic.execute(md.port_index);
                bit<1> in_t0 = t0_active.execute(md.port_index);
                bit<1> in_t1 = t1_active.execute(md.port_index);
                bit<8> color = opti;
                if (in_t0 == 1) {
                    color = pess;
                } else if (in_t1 == 1) {
                    color = half;
                }
                if (color == (bit<8>)MeterColor_t.RED) {
                    // Trim at ingress: a truncated copy into the header queue, the original
                    // dropped.
                    trim_session.apply();
                    md.mirror_origin = ORIGIN_MIRROR_TRIM;
                    ig_dprsr_md.mirror_type = MIRROR_TYPE_I2E;
                    ig_dprsr_md.drop_ctl = 1;
                } else {
                    ig_tm_md.deflect_on_drop = 1;
                }
            }
        }
    }
}

control TrimEgress(inout headers_t hdr, inout eg_meta_t md,
                   in egress_intrinsic_metadata_t eg_intr_md,
                   in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                   inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                   inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    // The per-pipe session that cuts a deflected packet and sends it to the recirculation port.
    action set_update_session(MirrorId_t session) {
        md.mirror_session = session;
    }
    table update_session {
        key = { eg_intr_md.egress_port : ternary; }
        actions = { set_update_session; }
        default_action = set_update_session(0);
        size = 8;
    }
    // What a trimmed packet leaving through a port carries: its DSCP (trim_dscp, or the port's
    // trim_dscp_toward) and the IPv4 total length of the trim size.
    bit<16> trimmed_total_len = 124;  // trim_size (138) - Ethernet (14)
    action rewrite(bit<6> dscp, bit<16> total_len) {
        hdr.ipv4.dscp = dscp;
        trimmed_total_len = total_len;
    }
    action keep_dscp(bit<16> total_len) {
        trimmed_total_len = total_len;
    }
    table trimmed_rewrite {
        key = { md.meta.port_index : exact; }
        actions = { rewrite; keep_dscp; }
        default_action = keep_dscp(124);
        size = SB_MAX_PORTS;
    }

    SB_STEP(kept_of, md.kept = trimmed_total_len - hdr.ipv4.total_len;)

    apply {
        if (md.meta.origin == ORIGIN_DATA && eg_intr_md.deflection_flag == 1) {
            // Deflected on drop into the recirculation port: an UPDATE, cut to the trim size.
            hdr.sb.setValid();
            hdr.sb.kind = SB_UPDATE;
            hdr.sb.qindex = md.meta.qindex;
            hdr.sb.depth = 0;
            hdr.sb.tstamp = eg_prsr_md.global_tstamp[31:0];
            hdr.sb.last_qindex = 0;
            hdr.sb.port_count = 0;
            hdr.sb.high_count = 0;
            hdr.sb.low_count = 0;
            hdr.sb.occupied = 0;
            hdr.sb.port = md.meta.port_index;
            update_session.apply();
            md.mirror_origin = ORIGIN_MIRROR_CONTROL;
            eg_dprsr_md.mirror_type = MIRROR_TYPE_E2E;
            eg_dprsr_md.drop_ctl = 1;
        } else if (md.meta.origin == ORIGIN_MIRROR_TRIM && hdr.ipv4.isValid()) {
            trimmed_rewrite.apply();
            if (hdr.vlan.isValid()) {
                trimmed_total_len = trimmed_total_len - 4;  // the cut counts the tag's 4 bytes
            }
            // total_len > the cut's, as the borrow of cut - total_len (both below 2^15): a Tofino
            // gateway compares a field with a constant, never with another field.
            kept_of.apply();
            if (md.kept[15:15] == 1) {
                hdr.ipv4.total_len = trimmed_total_len;
                if (hdr.udp.isValid()) {
                    // Without this a receiver drops the cut datagram (its length past the end);
                    // checksum 0 is "none" in IPv4: the payload's sum is not known here.
                    hdr.udp.length = trimmed_total_len - 20;
                    hdr.udp.checksum = 0;
                }
            }
        } else if (md.meta.origin == ORIGIN_MIRROR_NOTIFY) {
            // The NOTIFY copy (truncated by its session): only the sharebuf header matters.
            hdr.sb.setValid();
            hdr.sb.kind = SB_NOTIFY;
            hdr.sb.qindex = 0;
            hdr.sb.depth = 0;
            hdr.sb.tstamp = eg_prsr_md.global_tstamp[31:0];
            hdr.sb.last_qindex = 0;
            hdr.sb.port_count = 0;
            hdr.sb.high_count = 0;
            hdr.sb.low_count = 0;
            hdr.sb.occupied = 0;
            hdr.sb.port = md.meta.port_index;
            hdr.ethernet.setInvalid();
            hdr.ipv4.setInvalid();
        }
    }
}

Pipeline(SbIngressParser(), TrimIngress(), SbIngressDeparser(),
         SbEgressParser(), TrimEgress(), SbEgressDeparser()) pipe;

Switch(pipe) main;
