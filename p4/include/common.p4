/* sharebuf's P4 twins (p4/README.md): the part every program shares.
 *
 * - Parsers and deparsers: data packets (Ethernet / IPv4 / TCP or UDP), packet-generator packets
 *   (port 68 of a pipe), recirculated control packets (port 69 of a pipe), and the one-byte
 *   metadata header (sb_meta_h) that ingress bridges to egress and that mirrored copies carry,
 *   telling egress what it holds.
 * - Forwarding: destination MAC -> egress port (the static MAC table of sharebufd's
 *   configuration), classification: (ingress port, DSCP) -> class, queue, role, priority group
 *   (its [classify] and [[classes]]), and the queue's index in the registers
 *   (port_index x queues_per_port + queue).
 * - Probes (dt.p4, protean.p4): the packet generator's packet i of a batch is routed through
 *   queue i; its egress stamps the queue's depth and the time, mirrors it to every pipe's
 *   recirculation port (a multicast mirror session) and drops the original; back in each pipe's
 *   ingress the program writes that pipe's registers.
 *   The remaining-buffer aggregate Rem = B - (every queue's latest depth) is kept in one
 *   register that each probe lowers by its queue's change, so it holds in any probe order (the
 *   paper's prototype restarts and publishes a sum per batch, which depends on the order).
 *
 * Port numbers follow Tofino 1: 128 per pipe, the packet generator on port 68 and a
 * recirculation port on 69 of each pipe (check against the SDE's port map of the target).
 */
#ifndef SHAREBUF_COMMON_P4
#define SHAREBUF_COMMON_P4

#include "headers.p4"

#ifndef SB_MAX_PORTS
#define SB_MAX_PORTS 64
#endif
#ifndef SB_MAX_QUEUES
#define SB_MAX_QUEUES 2048  // ports x queues per port
#endif

const bit<7> PKTGEN_PORT_IN_PIPE = 68;
const bit<7> RECIRC_PORT_IN_PIPE = 69;

// What a packet in egress is, from the header ingress bridged or a mirror prepended.
const bit<8> ORIGIN_DATA = 0;            // a data packet (bridged)
const bit<8> ORIGIN_CONTROL = 1;         // a control packet (bridged; sharebuf_h follows)
const bit<8> ORIGIN_MIRROR_CONTROL = 2;  // a control packet's copy on its way to recirculation
const bit<8> ORIGIN_MIRROR_TRIM = 3;     // a data packet cut to the trim size (trim.p4)

// SB_STEP(NAME, STATEMENTS): a keyless table whose one action runs STATEMENTS. What a gateway (an
// `if`) tests must be computed in a table's action: assigned in an apply block, it is propagated
// by the midend into the condition as an expression, which a Tofino gateway cannot evaluate
// (bf-p4c: "condition expression too complex"; likewise a register's index must be one field).
// Applying a table stops the propagation.
#define SB_STEP(NAME, STATEMENTS) \
    action NAME##_run() { STATEMENTS } \
    table NAME { actions = { NAME##_run; } default_action = NAME##_run(); size = 1; }

const MirrorType_t MIRROR_TYPE_I2E = 1;
const MirrorType_t MIRROR_TYPE_E2E = 2;

header sb_meta_h {
    bit<8> origin;
    bit<8> class_id;
    bit<16> port_index;  // the egress port the packet was meant for (kept across a deflection)
    bit<16> qindex;      // its queue's register index
}

// Protean's roles (docs/policies.md): short, long, incast.
const bit<8> ROLE_SHORT = 0;
const bit<8> ROLE_LONG = 1;
const bit<8> ROLE_INCAST = 2;
// FB's priority groups.
const bit<8> GROUP_LOW = 0;
const bit<8> GROUP_HIGH = 1;

struct ig_meta_t {
    sb_meta_h bridge;
    bit<16> port_index;   // sharebufd's port number of the egress port
    bit<16> qbase;        // port_index x queues_per_port
    QueueId_t qid;
    bit<16> qid16;        // qid as wide as qbase: a container's add takes operands of one width
    bit<16> qindex;       // qbase + qid
    bit<8> class_id;
    bit<8> role;
    bit<8> group;
    bit<32> cells;        // the frame's cells (cells_of_length)
    bit<32> qdepth;       // the queue's depth as ingress last heard of it (cells)
    bit<32> rem;          // the remaining buffer as ingress last heard of it (cells)
    bit<32> thr;          // the threshold the frame is held to (cells)
    bit<32> diff;         // scratch for comparisons
    // What a gateway tests, computed in an SB_STEP table.
    bit<32> held;         // what is compared with thr: the queue's depth (or a frame's cells)
    bit<32> below;        // Q - T: its sign bit is Q < T
    int<32> log_t;        // the logarithm an exp2 table looks up
    // fb.p4's constants (fb_params): B and the SYNC walk's last queue.
    bit<32> capacity;     // B, cells
    bit<16> last_qindex;  // the last queue of a SYNC walk
    bit<32> q_prev;       // a probed queue's depth before this probe (the register's swap)
    int<32> delta;        // its change: what the probe takes off Rem
    bit<32> now;          // ns, the low 32 bits of the global timestamp (trim.p4)
    bit<32> t0_ns;        // trim.p4's T0 and T0 + T1
    bit<32> t1_ns;
    MirrorId_t mirror_session;
    bit<8> mirror_origin;  // what an ingress mirror copy is (ORIGIN_MIRROR_*)
    // Log-domain arithmetic (Q.8 fixed point; policies/tofino_arithmetic.h).
    bit<32> dq;
    bit<32> dt;
    int<32> log_a;
    int<32> log_b;
    int<32> log_c;
    bit<16> exp_key;
    int<32> g_raw;
    int<32> g;
    bool drop;
    PortId_t hairpin;     // egress port ^ ingress port: 0 for a frame sent back where it came from
}

struct eg_meta_t {
    sb_meta_h meta;
    MirrorId_t mirror_session;
    // What an egress mirror copy is (ORIGIN_MIRROR_CONTROL): a field, as Tofino's deparser takes
    // no constant in a mirror's field list.
    bit<8> mirror_origin;
    // protean.p4's gradient (Algorithm 2 in egress), Q.8 logarithms as in ig_meta_t.
    bit<32> q_prev;  // the probed queue's depth at its previous probe
    bit<32> t_prev;  // and the time of that probe
    bit<32> dq;      // |Q - Qprev|
    bit<32> dt;      // T - Tprev
    int<32> log_a;
    int<32> log_b;
    int<32> log_rate;  // log2 of the queue's port rate in cells per ns
    int<32> g_raw;     // the instantaneous gradient (Q.8)
    int<32> g;         // the smoothed gradient (Q.8)
    // What a gateway tests, computed in SB_STEP tables.
    bit<32> rise;      // Q - Qprev: its sign bit is a falling queue
    int<32> above;     // buildup - g: negative when g > buildup
    int<32> g_old;     // the EWMA's terms: gradient >> beta_shift
    int<32> g_new;     // and g_raw >> beta_shift
    int<32> log_t;     // the logarithm an exp2 table looks up
    bit<16> kept;      // trim.p4: the cut's IPv4 length - the packet's: negative when it is cut
}

// ---------------------------------------------------------------------------------------------
// Ingress parser
// ---------------------------------------------------------------------------------------------
parser SbIngressParser(packet_in pkt, out headers_t hdr, out ig_meta_t md,
                       out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        md.bridge.setValid();
        md.bridge.origin = ORIGIN_DATA;
        md.bridge.class_id = 0;
        md.bridge.port_index = 0;
        md.bridge.qindex = 0;
        md.port_index = 0;
        md.qbase = 0;
        md.qid = 0;
        md.qid16 = 0;
        md.qindex = 0;
        md.class_id = 0;
        md.role = ROLE_INCAST;
        md.group = GROUP_LOW;
        md.cells = 0;
        md.qdepth = 0;
        md.rem = 0;
        md.thr = 0;
        md.diff = 0;
        md.capacity = 0;
        md.last_qindex = 0;
        md.q_prev = 0;
        md.delta = 0;
        md.now = 0;
        md.t0_ns = 0;
        md.t1_ns = 0;
        md.mirror_session = 0;
        md.mirror_origin = ORIGIN_MIRROR_TRIM;
        md.dq = 0;
        md.dt = 0;
        md.log_a = 0;
        md.log_b = 0;
        md.log_c = 0;
        md.exp_key = 0;
        md.g_raw = 0;
        md.g = 0;
        md.drop = false;
        md.hairpin = 0;
        transition select(ig_intr_md.ingress_port[6:0]) {
            PKTGEN_PORT_IN_PIPE: parse_pktgen;
            RECIRC_PORT_IN_PIPE: parse_control;
            default: parse_ethernet;
        }
    }
    state parse_pktgen {
        pkt.extract(hdr.pktgen);
        transition parse_control;
    }
    state parse_control {
        // A control packet: the sharebuf header, then (UPDATE: a trimmed data packet) Ethernet.
        pkt.extract(hdr.sb);
        transition select(hdr.sb.kind) {
            SB_UPDATE: parse_ethernet;
            default: accept;
        }
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_VLAN: parse_vlan;
            default: accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlan);
        transition select(hdr.vlan.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (5, 0, IP_PROTO_TCP): parse_tcp;
            (5, 0, IP_PROTO_UDP): parse_udp;
            default: accept;
        }
    }
    state parse_tcp {
        pkt.extract(hdr.tcp);
        transition accept;
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition accept;
    }
}

// ---------------------------------------------------------------------------------------------
// Ingress: forwarding and classification, shared by every program
// ---------------------------------------------------------------------------------------------
control SbForward(inout headers_t hdr, inout ig_meta_t md,
                  in ingress_intrinsic_metadata_t ig_intr_md,
                  inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                  inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action to_port(PortId_t port, bit<16> port_index, bit<16> qbase) {
        ig_tm_md.ucast_egress_port = port;
        md.port_index = port_index;
        md.qbase = qbase;
    }
    action unknown() {
        // sharebufd floods an unknown destination; this program knows only its static MACs.
        ig_dprsr_md.drop_ctl = 1;
        md.drop = true;
    }
    // [[static_macs]]: MAC -> port.
    table forward {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { to_port; unknown; }
        default_action = unknown();
        size = 4096;
    }

    action set_class(bit<8> class_id, QueueId_t qid, bit<8> role, bit<8> group) {
        md.class_id = class_id;
        md.qid = qid;
        md.qid16 = (bit<16>)qid;
        md.role = role;
        md.group = group;
    }
    // [classify] dscp and [[classes]]: (ingress port, DSCP) -> class; a port's default_class for
    // what no DSCP entry maps (the lower-priority entries with the DSCP wildcarded).
    table classify {
        key = {
            ig_intr_md.ingress_port : ternary;
            hdr.ipv4.dscp : ternary;
            hdr.ipv4.isValid() : ternary;
        }
        actions = { set_class; }
        default_action = set_class(0, 0, ROLE_INCAST, GROUP_LOW);
        size = 512;
    }

    action set_cells(bit<32> cells) {
        md.cells = cells;
    }
    // The frame's cells, ceil(frame bytes / cell bytes), from the IPv4 total length (a range per
    // cell count); non-IP frames count as a full-size frame (the default).
    table cells_of_length {
        key = { hdr.ipv4.total_len : range; }
        actions = { set_cells; }
        default_action = set_cells(20);
        size = 256;
    }

    // The queue's register index (an execute()'s index must be one field: SB_STEP).
    SB_STEP(qindex_of, md.qindex = md.qbase + md.qid16;)
    // sharebufd never sends a frame back out of the port it came in by (its destination is on
    // that port: a bridge filters it); the twin drops it too. The ports are compared through
    // their difference, since a gateway tests a field against a constant only.
    SB_STEP(hairpin_of, md.hairpin = ig_tm_md.ucast_egress_port ^ ig_intr_md.ingress_port;)

    apply {
        forward.apply();
        hairpin_of.apply();
        if (md.hairpin == 0) {
            ig_dprsr_md.drop_ctl = 1;
            md.drop = true;
        }
        classify.apply();
        cells_of_length.apply();
        qindex_of.apply();
        ig_tm_md.qid = md.qid;
        md.bridge.class_id = md.class_id;
        md.bridge.port_index = md.port_index;
        md.bridge.qindex = md.qindex;
    }
}

// ---------------------------------------------------------------------------------------------
// Ingress: the probe path of dt.p4 and protean.p4
// ---------------------------------------------------------------------------------------------
// A packet-generator packet becomes the probe of queue `packet_id`: routed through that queue,
// marked as a control packet for egress.
control SbProbeRoute(inout headers_t hdr, inout ig_meta_t md,
                     inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                     inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action probe_queue(PortId_t port, QueueId_t qid, bit<16> qindex) {
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.qid = qid;
        hdr.sb.kind = SB_PROBE;
        hdr.sb.qindex = qindex;
        md.bridge.origin = ORIGIN_CONTROL;
        hdr.pktgen.setInvalid();
    }
    action no_such_queue() {
        ig_dprsr_md.drop_ctl = 1;
    }
    table probe_route {
        key = { hdr.pktgen.packet_id : exact; }
        actions = { probe_queue; no_such_queue; }
        default_action = no_such_queue();
        size = SB_MAX_QUEUES;
    }
    apply {
        probe_route.apply();
    }
}

// ---------------------------------------------------------------------------------------------
// Ingress deparser
// ---------------------------------------------------------------------------------------------
control SbIngressDeparser(packet_out pkt, inout headers_t hdr, in ig_meta_t md,
                          in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    // Mirror() with the condition on mirror_type: the form with the type as a constructor
    // argument fails in this bf-p4c ("Inconsistent mirror selectors", even with one emit).
    Mirror() mirror;
    apply {
        if (ig_dprsr_md.mirror_type == MIRROR_TYPE_I2E) {
            // The copy egress sees: a trimmed data packet (trim.p4), or a NOTIFY (trim.p4).
            mirror.emit<sb_meta_h>(md.mirror_session,
                                   {md.mirror_origin, md.class_id, md.port_index, md.qindex});
        }
        pkt.emit(md.bridge);
        pkt.emit(hdr.sb);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlan);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
    }
}

// ---------------------------------------------------------------------------------------------
// Egress parser and deparser
// ---------------------------------------------------------------------------------------------
parser SbEgressParser(packet_in pkt, out headers_t hdr, out eg_meta_t md,
                      out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(md.meta);
        md.mirror_session = 0;
        md.q_prev = 0;
        md.t_prev = 0;
        md.dq = 0;
        md.dt = 0;
        md.log_a = 0;
        md.log_b = 0;
        md.log_rate = 0;
        md.g_raw = 0;
        md.g = 0;
        transition select(md.meta.origin) {
            ORIGIN_CONTROL: parse_control;
            ORIGIN_MIRROR_CONTROL: parse_control;
            default: parse_ethernet;
        }
    }
    state parse_control {
        pkt.extract(hdr.sb);
        transition select(hdr.sb.kind) {
            SB_UPDATE: parse_ethernet;
            default: accept;
        }
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_VLAN: parse_vlan;
            default: accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlan);
        transition select(hdr.vlan.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    // UDP too: a trimmed UDP packet's length is rewritten in egress (trim.p4).
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (5, 0, IP_PROTO_UDP): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition accept;
    }
}

// Stamps a probe with its queue's depth and the time and sends a copy to the recirculation port
// (the original is dropped: a probe never leaves the switch).
control SbProbeStamp(inout headers_t hdr, inout eg_meta_t md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    action to_recirculation(MirrorId_t session) {
        md.mirror_session = session;
    }
    // The mirror session of the probes' copies: a multicast group of every pipe's recirculation
    // port, so each pipe's ingress registers see every queue (sharebuf-p4tables writes it).
    table recirculation_session {
        key = { eg_intr_md.egress_port : ternary; }
        actions = { to_recirculation; }
        default_action = to_recirculation(0);
        size = 8;
    }
    apply {
        // Said for every packet: the deparser's mirror test must not read an unwritten field
        // (p4testgen leaves it undefined, and then finds no path on which a data packet leaves).
        eg_dprsr_md.mirror_type = 0;
        // Nested: only a control packet has a sharebuf header to read (see dt.p4's apply).
        if (md.meta.origin == ORIGIN_CONTROL) {
            if (hdr.sb.kind == SB_PROBE) {
                hdr.sb.depth = (bit<32>)eg_intr_md.deq_qdepth;
                hdr.sb.tstamp = eg_prsr_md.global_tstamp[31:0];
                recirculation_session.apply();
                md.mirror_origin = ORIGIN_MIRROR_CONTROL;
                eg_dprsr_md.mirror_type = MIRROR_TYPE_E2E;
                eg_dprsr_md.drop_ctl = 1;
            }
        }
    }
}

control SbEgressDeparser(packet_out pkt, inout headers_t hdr, in eg_meta_t md,
                         in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() mirror;  // as in the ingress deparser
    Checksum() ipv4_checksum;
    apply {
        if (hdr.ipv4.isValid()) {
            hdr.ipv4.hdr_checksum = ipv4_checksum.update({
                hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
                hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
                hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
                hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        }
        if (eg_dprsr_md.mirror_type == MIRROR_TYPE_E2E) {
            mirror.emit<sb_meta_h>(md.mirror_session,
                                   {md.mirror_origin, md.meta.class_id, md.meta.port_index,
                                    md.meta.qindex});
        }
        // Recirculated control packets keep their sharebuf header; data leaves as it came.
        pkt.emit(hdr.sb);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlan);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.udp);
    }
}

#endif
