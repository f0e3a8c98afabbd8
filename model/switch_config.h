// SwitchConfig: the typed, validated description of one switch — buffer, policy, traffic classes,
// classification, ports, static MACs — that every engine is built from. config/ produces it from a
// TOML file (config/switch_config_reader.h); tests build it directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "buffer/shared_buffer.h"
#include "model/ingress_meters.h"
#include "model/mac_table.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::model {

// kDrr visits the queues in index order (cyclic); kDrrActive keeps Shreedhar and Varghese's
// active list (model/scheduler.h).
enum class SchedulerKind : uint8_t { kStrictPriority, kRoundRobin, kDrr, kDrrActive };
std::string_view to_string(SchedulerKind k) noexcept;

enum class ClassifyMode : uint8_t { kDscp, kPcp, kRules };
std::string_view to_string(ClassifyMode m) noexcept;

// What happens to a frame of a class when the buffer refuses it (the policy's verdict or the
// pool): dropped, or cut to its headers and sent through the egress port's trim queue
// (model/frame_trim.h).
// return-to-sender (SFC): the cut copy goes back out of the ingress port, addresses swapped.
enum class OverflowAction : uint8_t { kDrop, kTrim, kReturnToSender };
std::string_view to_string(OverflowAction a) noexcept;  // "drop", "trim", "return-to-sender"

// [trimming]: how refused frames of `overflow = "trim"` classes are cut.
struct TrimConfig {
  uint32_t size = 128;      // trim_size: bytes on the wire kept (never below the headers)
  bool fix_lengths = true;  // trim_fix_lengths: IP/UDP lengths and checksums made valid
  int dscp = -1;            // trim_dscp: DSCP of trimmed copies; -1 keeps it
  // return_dscp: DSCP of returned headers, and the mark by which an arriving frame is known to
  // be one (never returned again); -1 keeps the DSCP (a copy returned here is still never
  // returned again by this switch).
  int return_dscp = -1;
  // mode "tofino-approx" (model/tofino_approx.h): per-pipeline ingress meters, deflect-on-drop
  // through an emulated recirculation port, congestion notifications; "ideal" trims what the
  // buffer refuses. The pipelines are the RX workers ([trimming] pipelines sets rx_threads).
  bool tofino_approx = false;
  // NDP's option: when a trim class's arrival would overflow its queue, with this probability
  // the queue's newest frame is trimmed instead and the arrival admitted (0: off); `seed` seeds
  // each RX worker's coin.
  double trim_newest = 0;
  uint64_t seed = 1;
  // header_reserve: trimmed headers (of `size` bytes) each port keeps room for outside the shared
  // pool's contention, as NDP keeps a header queue apart from its 8-packet data queue; taken
  // from the buffer at start when a class trims or returns (header_reserve_cells()).
  uint32_t header_reserve = 8;
  // header_full: a trimmed copy its trim queue refuses (reserve full, then the policy or the
  // pool) goes back to its sender (NDP) instead of being dropped.
  bool header_full_return = true;
  MeterVariant meters = MeterVariant::kThreeMeters;
  uint64_t line_rate_bps = 0;  // the meters' 100 % for ports without a `rate`
  uint32_t meter_burst_bytes = 12'000;
  // The pessimistic meter's share of the line rate (half-pessimistic: twice it, at most the line
  // rate): the paper's 25 % and 50 % (section 4, for its four pipelines, which pessimistic all at
  // once send the line rate together). Until 2026-11-29 the default was one over the pipelines,
  // which with two made half-pessimistic the line rate, the same as optimistic.
  double pessimistic_share = 0.25;
  uint64_t t0_ns = 6'000;        // pessimistic this long after a notification
  uint64_t t1_ns = 12'000;       // half-pessimistic until this long after it (Figure 3)
  uint64_t recirc_rate_bps = 0;  // 0: the egress port's line rate
  uint32_t recirc_queue_bytes = 65'536;
  uint64_t recirc_latency_ns = 1'000;
};

struct ClassConfig {
  policies::TrafficClass traffic;    // name, alpha, group, Protean role
  uint32_t queue = 0;                // queue index on the egress port
  uint32_t ecn_threshold_cells = 0;  // K: mark ECT frames while the queue holds more; 0 = off
  std::vector<uint8_t> dscp;         // DSCP values mapped to this class (mode "dscp")
  std::vector<uint8_t> pcp;          // 802.1p priorities mapped to this class (mode "pcp")
  OverflowAction overflow = OverflowAction::kDrop;
  // return-to-sender: also return a header copy of frames admitted while their queue holds more
  // than this (SFC's early signal); 0 = only refused frames.
  uint32_t return_threshold_cells = 0;
};

// A 5-tuple rule (mode "rules"); unset fields match anything. First match wins.
struct RuleConfig {
  std::optional<uint8_t> proto;
  std::optional<uint32_t> src_ip, dst_ip;  // IPv4, host order
  uint8_t src_prefix = 32, dst_prefix = 32;
  std::optional<uint16_t> src_port, dst_port;
  uint8_t class_id = 0;
};

struct PortConfig {
  std::string name;       // interface name
  uint64_t rate_bps = 0;  // shaped rate; 0 = unshaped
  uint32_t num_queues = 1;
  SchedulerKind scheduler = SchedulerKind::kRoundRobin;
  std::vector<uint32_t> weights;  // DRR weights per queue (quantum = weight x 1514 bytes)
  uint8_t default_class = 0;      // class of frames arriving here that match nothing
  uint32_t rx_ring_frames = 8192;
  uint32_t tx_batch = 64;  // frames per sendmmsg (1-64)
  // Storm control: broadcast and multicast frames arriving here beyond this many per second are
  // dropped at ingress (counted as storm_dropped); 0 = off.
  uint64_t storm_pps = 0;
  // Trimming: the queue (index on this port) trimmed copies leaving here go to, and the DSCP they
  // get toward this port (-1: [trimming] trim_dscp).
  uint32_t trim_queue = 0;
  int trim_dscp_toward = -1;
  // role = "fabric": a link to another switch of a fabric (model/fabric_table.h): frames arriving
  // here teach the MAC table nothing and no flooded copy leaves here; only routes cross it.
  bool fabric = false;
};

struct StaticMacConfig {
  MacAddress mac = 0;
  uint16_t port = 0;
};

// [[routes]]: frames for `mac` leave through `ports` — one port, or an ECMP group whose member a
// flow's hash picks (model/fabric_table.h).
struct RouteConfig {
  MacAddress mac = 0;
  std::vector<uint16_t> ports;
};

// How RX work is split over threads ([switch] rx_mode). kPerPort: one RX worker per port (or
// rx_threads of them, ports folded onto them), each reading its ports' rings. kPerCpu: one RX
// worker per CPU, pinned there, reading that CPU's lane of every port (af_packet_port.h): a
// frame is taken by a thread on the CPU the kernel received it on, so an idle exchange wakes no
// thread on another CPU (docs/datapath-latency.md, "Per-CPU RX").
enum class RxMode : uint8_t { kPerPort, kPerCpu };

// What a port receives through ([switch] rx_io). kAfPacket: a TPACKET_V2 ring. kAfXdp: AF_XDP
// sockets fed by an XDP program the switch attaches (datapath/xsk_port.h): less kernel work per
// frame in the sender's context, but no kernel timestamp per frame.
enum class RxIo : uint8_t { kAfPacket, kAfXdp };
// What a port transmits through ([switch] tx_io). kAfPacket: sendmmsg on an AF_PACKET socket.
// kAfXdp: the TX ring of the port's AF_XDP socket (needs rx_io = af_xdp), frames written
// straight into its transmit chunks (datapath/xsk_port.h).
enum class TxIo : uint8_t { kAfPacket, kAfXdp };

// How an RX worker waits for frames ([switch] poll_mode). kInterrupt: it blocks in poll() as soon
// as its rings are empty (a wake-up per idle exchange, no CPU at idle). kAdaptive: it spins for
// rx_busy_poll after its last frame, then blocks: no wake-up while traffic flows, nothing spent
// at idle. kBusyPoll: it never blocks (a core per unparked worker, as a DPDK or OVS PMD thread);
// with rx_io = af_xdp its sockets also prefer busy polling (SO_PREFER_BUSY_POLL, budget 64).
enum class PollMode : uint8_t { kInterrupt, kAdaptive, kBusyPoll };
inline const char* poll_mode_name(PollMode m) noexcept {
  return m == PollMode::kBusyPoll   ? "busy-poll"
         : m == PollMode::kAdaptive ? "adaptive"
                                    : "interrupt";
}
// kAdaptive's spin time when rx_busy_poll is not given.
inline constexpr uint64_t kAdaptiveSpinDefaultNs = 200'000;

struct SwitchConfig {
  std::string name = "sharebuf";
  std::string source;  // where it was loaded from (for messages)
  buffer::BufferConfig buffer;
  std::string policy = "dt";
  policies::Params policy_params;
  std::vector<ClassConfig> classes;  // at least one; class id = index
  ClassifyMode classify = ClassifyMode::kDscp;
  std::vector<RuleConfig> rules;
  std::vector<PortConfig> ports;
  std::vector<StaticMacConfig> static_macs;
  std::vector<RouteConfig> routes;
  TrimConfig trim;
  uint64_t mac_ageing_ns = 300'000'000'000ull;
  uint32_t mac_table_size = 4096;
  bool drain_on_stop = false;  // on SIGTERM: transmit what is queued (true) or drop it (false)
  RxMode rx_mode = RxMode::kPerPort;
  RxIo rx_io = RxIo::kAfPacket;
  TxIo tx_io = TxIo::kAfPacket;
  // rx_io af_xdp: one UMEM all ports' AF_XDP sockets share, so that frames stay queued in the
  // chunks they were received into and leave without a copy ([switch] af_xdp_umem,
  // datapath/xsk_umem.h); false: a UMEM per socket, frames copied into cells.
  bool xdp_shared_umem = true;
  uint32_t rx_threads = 0;  // RX worker threads (per-port mode); 0 = one per port
  PollMode poll_mode = PollMode::kInterrupt;
  uint64_t rx_busy_poll_ns = 0;  // kAdaptive: an idle RX worker spins this long before blocking
  // An RX worker other than the first whose rings stay empty this long hands them to the first
  // (rx_worker.h: parking); 0 = never.
  uint64_t rx_park_after_ns = 2'000'000;
  int realtime_priority = 0;  // SCHED_FIFO priority of the datapath threads; 0 = normal
  // Where each port's lock file goes (datapath/port_lock.h): one daemon per port.
  std::string port_lock_dir = "/run/sharebuf/ports";
};

// The shared buffer a SwitchConfig implies: its ports' queues, each queue in the priority group of
// the first class mapped to it.
buffer::BufferConfig buffer_config(const SwitchConfig& config);
// Cells of header reserve per port (BufferState::set_header_reserve): header_reserve headers of
// trim_size bytes when a class's overflow action is trim or return-to-sender, else 0.
uint32_t header_reserve_cells(const SwitchConfig& config);

// How a port configured with `kind` and DRR `weights` shares its rate, as policies see it (FB's,
// ABM's and FBA's gamma, Credence's idle drain). The live switch and the replay both use it.
policies::PortScheduling port_scheduling(SchedulerKind kind, const std::vector<uint32_t>& weights);

// How many RX workers (ingress pipelines) the switch runs: per-port mode: rx_threads, or one per
// port (at most one per port); per-CPU mode: one per CPU of the machine (at most 64).
uint32_t rx_workers(const SwitchConfig& config) noexcept;
// The CPUs of the machine, as per-CPU RX counts them (CPU ids 0..n-1).
uint32_t machine_cpus() noexcept;
// Per port, the rate the Tofino approximation's meters take as 100 %: the port's shaped rate, else
// [trimming] line_rate (0 when neither is set: tofino-approx cannot run).
std::vector<uint64_t> meter_line_rates(const SwitchConfig& config);

// The policy environment (classes, port rates and schedulers, queue classes) a SwitchConfig
// implies: what sharebufd gives its policies.
policies::PolicyEnv policy_env(const SwitchConfig& config, const buffer::BufferLayout& layout);

}  // namespace sharebuf::model
