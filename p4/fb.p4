/* fb.p4: FB (FB paper, Eq. 3 and section 5.1; docs/policies.md "fb") on Tofino (TNA).
 *
 *   T(q) = alpha(class) x 1/N_p x gamma(q) x Rem,   gamma(q) = 1/n(port) (round robin)
 *
 * As the paper builds it: every data packet in egress writes its queue's depth into an egress
 * register (Qlength); SYNC packets from the packet generator walk the queues, recirculating once
 * per queue, copy each depth into the ingress copy, and on the way sum the occupied buffer
 * (Remaining), count the congested (non-empty) queues of each port (n, so gamma = 1/n for round
 * robin) and of each priority group (N_p), writing each aggregate into an ingress register when
 * the walk leaves a port or ends. The product alpha / (N_p x n) becomes a shift of Remaining
 * chosen by a table over (class, N_p, n) ("Shift", section 5.1): its entries, from
 * sharebuf-p4tables, round log2(N_p x n / alpha) to the nearest integer, so a threshold is within
 * a factor of sqrt(2) of Eq. 3's (the software's FbPolicy computes it exactly).
 * The arriving queue counts as congested (N_p, n >= 1 with it). One SYNC walk covers the queues
 * of the pipe it runs in (the egress register is per pipe), as in the paper's single-pipe
 * prototype.
 */
#include <core.p4>
#include <tna.p4>

#include "include/common.p4"

control FbIngress(inout headers_t hdr, inout ig_meta_t md,
                  in ingress_intrinsic_metadata_t ig_intr_md,
                  in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                  inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                  inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    SbForward() fwd;

    PortId_t recirc_port = 0;
    action set_params(bit<32> b, bit<16> last, PortId_t recirc) {
        md.capacity = b;
        md.last_qindex = last;
        recirc_port = recirc;
    }
    table fb_params {
        actions = { set_params; }
        default_action = set_params(0, 0, 0);
        size = 1;
    }

    // Per queue: its port, priority group, and whether it is its port's last queue.
    bit<16> sync_port = 0;
    bit<8> sync_group = 0;
    bool sync_last_of_port = false;
    action set_queue(bit<16> port_index, bit<8> group, bool last_of_port) {
        sync_port = port_index;
        sync_group = group;
        sync_last_of_port = last_of_port;
    }
    table queue_info {
        key = { hdr.sb.qindex : exact; }
        actions = { set_queue; }
        default_action = set_queue(0, GROUP_LOW, false);
        size = SB_MAX_QUEUES;
    }

    Register<bit<32>, bit<16>>(SB_MAX_QUEUES, 0) qlength;        // ingress copy of Qlength
    Register<bit<16>, bit<16>>(SB_MAX_PORTS, 0) n_port;          // congested queues per port
    Register<bit<16>, bit<1>>(1, 0) n_high;                      // N_p, high group
    Register<bit<16>, bit<1>>(1, 0) n_low;                       // N_p, low group
    Register<bit<32>, bit<1>>(1, 0) remaining;                   // B - occupied

    RegisterAction<bit<32>, bit<16>, bit<32>>(qlength) qlength_write = {
        void apply(inout bit<32> value) {
            value = hdr.sb.depth;
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(qlength) qlength_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };
    RegisterAction<bit<16>, bit<16>, bit<16>>(n_port) n_port_write = {
        void apply(inout bit<16> value) {
            value = hdr.sb.port_count;
        }
    };
    RegisterAction<bit<16>, bit<16>, bit<16>>(n_port) n_port_read = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
        }
    };
    RegisterAction<bit<16>, bit<1>, bit<16>>(n_high) n_high_write = {
        void apply(inout bit<16> value) {
            value = hdr.sb.high_count;
        }
    };
    RegisterAction<bit<16>, bit<1>, bit<16>>(n_high) n_high_read = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
        }
    };
    RegisterAction<bit<16>, bit<1>, bit<16>>(n_low) n_low_write = {
        void apply(inout bit<16> value) {
            value = hdr.sb.low_count;
        }
    };
    RegisterAction<bit<16>, bit<1>, bit<16>>(n_low) n_low_read = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
        }
    };
    RegisterAction<bit<32>, bit<1>, bit<32>>(remaining) remaining_write = {
        void apply(inout bit<32> value) {
            value = md.diff;  // B - occupied, computed before (a stateful ALU takes one field)
        }
    };
    RegisterAction<bit<32>, bit<1>, bit<32>>(remaining) remaining_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };

    // Eq. 3's product as a shift of Remaining: the "Shift" table of section 5.1.
    bit<16> n_p = 0;
    bit<16> n = 0;
#define SHIFT_RIGHT(k) action shift_right_##k() { md.thr = md.rem >> k; }
#define SHIFT_LEFT(k) action shift_left_##k() { md.thr = md.rem << k; }
    SHIFT_RIGHT(0) SHIFT_RIGHT(1) SHIFT_RIGHT(2) SHIFT_RIGHT(3) SHIFT_RIGHT(4) SHIFT_RIGHT(5)
    SHIFT_RIGHT(6) SHIFT_RIGHT(7) SHIFT_RIGHT(8) SHIFT_RIGHT(9) SHIFT_RIGHT(10) SHIFT_RIGHT(11)
    SHIFT_RIGHT(12) SHIFT_RIGHT(13) SHIFT_RIGHT(14) SHIFT_RIGHT(15) SHIFT_RIGHT(16)
    SHIFT_LEFT(1) SHIFT_LEFT(2) SHIFT_LEFT(3) SHIFT_LEFT(4) SHIFT_LEFT(5) SHIFT_LEFT(6)
    action no_room() {
        md.thr = 0;
    }
    table fb_shift {
        key = {
            md.class_id : exact;
            n_p : exact;
            n : exact;
        }
        actions = {
            shift_right_0; shift_right_1; shift_right_2; shift_right_3; shift_right_4;
            shift_right_5; shift_right_6; shift_right_7; shift_right_8; shift_right_9;
            shift_right_10; shift_right_11; shift_right_12; shift_right_13; shift_right_14;
            shift_right_15; shift_right_16;
            shift_left_1; shift_left_2; shift_left_3; shift_left_4; shift_left_5; shift_left_6;
            no_room;
        }
        default_action = no_room();
        size = 16384;
    }

    SB_STEP(below_of, md.below = md.qdepth - md.thr;)

    apply {
        fb_params.apply();
        if (hdr.pktgen.isValid()) {
            // A new SYNC walk, from queue 0, through this pipe's recirculation port.
            hdr.pktgen.setInvalid();
            hdr.sb.kind = SB_SYNC;
            hdr.sb.qindex = 0;
            hdr.sb.last_qindex = md.last_qindex;
            hdr.sb.port_count = 0;
            hdr.sb.high_count = 0;
            hdr.sb.low_count = 0;
            hdr.sb.occupied = 0;
            md.bridge.origin = ORIGIN_CONTROL;
            ig_tm_md.ucast_egress_port = recirc_port;
        } else if (hdr.sb.isValid()) {
            if (hdr.sb.kind == SB_SYNC) {
                // Egress put Qlength[qindex] into sb.depth: copy it and sum the aggregates.
                queue_info.apply();
                qlength_write.execute(hdr.sb.qindex);
                hdr.sb.occupied = hdr.sb.occupied + hdr.sb.depth;
                if (hdr.sb.depth != 0) {
                    hdr.sb.port_count = hdr.sb.port_count + 1;
                    if (sync_group == GROUP_HIGH) {
                        hdr.sb.high_count = hdr.sb.high_count + 1;
                    } else {
                        hdr.sb.low_count = hdr.sb.low_count + 1;
                    }
                }
                if (sync_last_of_port) {
                    n_port_write.execute(sync_port);
                    hdr.sb.port_count = 0;
                }
                if (hdr.sb.qindex == hdr.sb.last_qindex) {
                    // Saturating: the walk sums depths read at different times, which can exceed B;
                    // Remaining is then 0, as the C++ clamps it (BufferView::remaining_cells).
                    md.diff = md.capacity |-| hdr.sb.occupied;
                    remaining_write.execute(0);
                    n_high_write.execute(0);
                    n_low_write.execute(0);
                    ig_dprsr_md.drop_ctl = 1;  // the walk is over
                } else {
                    hdr.sb.qindex = hdr.sb.qindex + 1;  // once more round, for the next queue
                    md.bridge.origin = ORIGIN_CONTROL;
                    ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
                }
            }
        } else if (hdr.ethernet.isValid()) {
            fwd.apply(hdr, md, ig_intr_md, ig_dprsr_md, ig_tm_md);
            md.qdepth = qlength_read.execute(md.qindex);
            md.rem = remaining_read.execute(0);
            if (md.group == GROUP_HIGH) {
                n_p = n_high_read.execute(0);
            } else {
                n_p = n_low_read.execute(0);
            }
            n = n_port_read.execute(md.port_index);
            if (md.qdepth == 0) {
                // The arriving queue is congested from now on.
                n_p = n_p + 1;
                n = n + 1;
            }
            fb_shift.apply();
            // Q >= T as the borrow of Q - T (both below 2^31): a Tofino gateway compares a field
            // with a constant, never with another field.
            below_of.apply();
            if (md.below[31:31] == 0) {
                ig_dprsr_md.drop_ctl = 1;
            }
        }
    }
}

control FbEgress(inout headers_t hdr, inout eg_meta_t md,
                 in egress_intrinsic_metadata_t eg_intr_md,
                 in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                 inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                 inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    Register<bit<32>, bit<16>>(SB_MAX_QUEUES, 0) qlength;  // Qlength: written by data packets
    RegisterAction<bit<32>, bit<16>, bit<32>>(qlength) qlength_write = {
        void apply(inout bit<32> value) {
            value = (bit<32>)eg_intr_md.deq_qdepth;
        }
    };
    RegisterAction<bit<32>, bit<16>, bit<32>>(qlength) qlength_read = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };
    apply {
        if (md.meta.origin == ORIGIN_DATA) {
            qlength_write.execute(md.meta.qindex);
        } else if (hdr.sb.isValid()) {
            if (hdr.sb.kind == SB_SYNC) {  // nested: see the ingress
                hdr.sb.depth = qlength_read.execute(hdr.sb.qindex);
            }
        }
    }
}

Pipeline(SbIngressParser(), FbIngress(), SbIngressDeparser(),
         SbEgressParser(), FbEgress(), SbEgressDeparser()) pipe;

Switch(pipe) main;
