/* sharebuf's P4 twins (p4/README.md): the headers every program parses.
 *
 * Data packets: Ethernet, an optional 802.1Q tag, IPv4, TCP or UDP (the fields forwarding, classification and trimming
 * read). Control packets: one sharebuf header, carried by the probes that take a queue's depth
 * from egress to ingress (dt.p4, protean.p4), the SYNC packets that walk FB's queues (fb.p4),
 * and trimming's UPDATE / NOTIFY congestion signals (trim.p4). A control packet comes from the
 * packet generator or from a recirculation port, never from a front-panel port, so the parser
 * tells the two apart by the ingress port alone (as ndp.p4 does).
 */
#ifndef SHAREBUF_HEADERS_P4
#define SHAREBUF_HEADERS_P4

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_VLAN = 0x8100;
const bit<8> IP_PROTO_TCP = 6;
const bit<8> IP_PROTO_UDP = 17;

header ethernet_h {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16> ether_type;
}

// An 802.1Q tag: parsed so that tagged frames are classified and trimmed as untagged ones are.
header vlan_h {
    bit<3> pcp;
    bit<1> dei;
    bit<12> vid;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4> version;
    bit<4> ihl;
    bit<6> dscp;
    bit<2> ecn;
    bit<16> total_len;
    bit<16> identification;
    bit<3> flags;
    bit<13> frag_offset;
    bit<8> ttl;
    bit<8> protocol;
    bit<16> hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

header tcp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4> data_offset;
    bit<4> res;
    bit<8> flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

// The kinds of sharebuf control packets.
const bit<8> SB_PROBE = 1;   // a queue's depth and the time, egress -> ingress (dt, protean)
const bit<8> SB_SYNC = 2;    // FB's walk over the queues (fb)
const bit<8> SB_UPDATE = 3;  // a deflected packet, trimmed, back in its own pipe (trim)
const bit<8> SB_NOTIFY = 4;  // the congestion signal multicast to every pipe (trim)

// One header for every control packet; the fields a kind does not use are zero.
header sharebuf_h {
    bit<8> kind;
    bit<16> qindex;      // the queue (port x queues_per_port + queue) the packet is about
    bit<32> depth;       // cells, from egress_intrinsic_metadata_t.deq_qdepth
    bit<32> tstamp;      // ns, the egress global timestamp (low 32 bits)
    // PROBE (protean.p4): the queue's smoothed gradient (Q.8) that egress computed, and the log2
    // factor of its incast threshold (log2 of the gradient, when over buildup, plus log2
    // alpha_incast, Q.8) that ingress multiplies by Rem.
    int<32> gradient;
    int<32> log_scale;
    // SYNC (fb.p4): the walk's position and what it has summed so far.
    bit<16> last_qindex;  // the walk ends after this queue
    bit<16> port_count;   // congested queues seen on the current port
    bit<16> high_count;   // congested queues of the high priority group
    bit<16> low_count;    // ... of the low priority group
    bit<32> occupied;     // cells summed over the queues walked
    // UPDATE / NOTIFY (trim.p4): the egress port whose queue overflowed.
    bit<16> port;
}

struct headers_t {
    pktgen_timer_header_t pktgen;
    sharebuf_h sb;
    ethernet_h ethernet;
    vlan_h vlan;
    ipv4_h ipv4;
    tcp_h tcp;
    udp_h udp;
}

#endif
