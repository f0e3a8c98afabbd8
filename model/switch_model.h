// SwitchModel: the switch every engine runs, assembled once from a SwitchConfig — the shared buffer
// (with trimming's header reserve), the policy environment and the policy slot, the classifier,
// the MAC table and the fabric's routes, trimming's settings and its Tofino approximation, and per
// port the scheduler, the departure clock and the probe charge — with its ingress step: forwarding
// (forward()), the class's queue on the egress port, the ECN decision and the arrival's context
// (copy_to()), and counting the mark of an admitted copy (admitted()). The admission and overflow
// step is OverflowStep (overflow_step(): one per thread), the departure step model/departure_step.h
// over its ports' schedulers.
//
// The live datapath (datapath/switch_core.h), the replay (sim/replay.h) and ns-3
// (sim/ns3/switch_facade.h) each construct one from the same configuration and add only what is
// theirs: threads and sockets, with the epoch swap around the policy slot; an event loop on a
// simulated clock; a QueueDisc. So a class maps to the same queue, a frame is marked, flooded,
// trimmed, pushed out or reclaimed alike in all three.
//
// Thread-safety: the buffer, the policy slot (an atomic pointer: install_policy from one thread),
// the MAC table and the atomics of TrimSettings and TofinoApprox are safe to share; each port's
// scheduler, departure clock and probe charge belong to whoever transmits from the port.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "buffer/shared_buffer.h"
#include "model/admission_step.h"
#include "model/classifier.h"
#include "model/departure_clock.h"
#include "model/fabric_table.h"
#include "model/frame_parser.h"
#include "model/mac_table.h"
#include "model/overflow_step.h"
#include "model/probe_charge.h"
#include "model/scheduler.h"
#include "model/switch_config.h"
#include "model/tofino_approx.h"
#include "model/trim_settings.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::model {

// Forwarding of a frame that arrived at `in_port` of a switch with `ports` ports: its source is
// learned in `macs` (unless it came in on a fabric port), its destination looked up in the
// fabric's routes (an ECMP group's member picked by the frame's flow hash), then in `macs`.
// kFiltered: the destination is on the ingress port, or a flood would reach no port; kFlood:
// unknown unicast, broadcast or multicast: one copy for every port in `flood` (every other port
// that is not a fabric port).
struct Forward {
  enum class Kind : uint8_t { kUnicast, kFlood, kFiltered };
  Kind kind = Kind::kFlood;
  uint16_t port = 0;   // kUnicast: the egress port
  uint64_t flood = 0;  // kFlood: bit p set for each egress port
};
Forward forward_frame(MacTable& macs, const FabricTable& fabric, const ParsedFrame& parsed,
                      uint16_t in_port, uint64_t now_ns, uint32_t ports) noexcept;

class SwitchModel {
 public:
  struct Options {
    // The policy environment's oracle labels (the replay: Credence's `perfect` oracle).
    std::shared_ptr<const std::vector<uint8_t>> oracle_labels;
    uint64_t now_ns = 0;  // the engine's clock when the policy is installed (probe registers)
  };

  // Throws std::invalid_argument (a header reserve that does not fit) or ConfigError (the
  // policy's parameters).
  explicit SwitchModel(const SwitchConfig& config, const Options& options);
  explicit SwitchModel(const SwitchConfig& config) : SwitchModel(config, Options{}) {}
  SwitchModel(const SwitchModel&) = delete;
  SwitchModel& operator=(const SwitchModel&) = delete;

  // The configuration it was built from; a live change of a port's rate updates it (and env()).
  const SwitchConfig& config() const noexcept { return config_; }
  void set_port_rate(uint32_t port, uint64_t rate_bps);

  buffer::SharedBuffer& buffer() noexcept { return buffer_; }
  const buffer::SharedBuffer& buffer() const noexcept { return buffer_; }
  const policies::PolicyEnv& env() const noexcept { return env_; }

  // The policy slot. policy(): the active policy (acquire: its installation is visible).
  policies::Policy& policy() const noexcept { return *policy_.load(std::memory_order_acquire); }
  // `name` with `params` on this switch's environment; throws ConfigError.
  std::unique_ptr<policies::Policy> make_policy(std::string_view name,
                                                const policies::Params& params) const;
  // Installs `next` on the buffer as it is at now_ns and publishes it; returns the policy it
  // replaced, which the caller frees once no thread can hold it (the live switch: epochs).
  std::unique_ptr<policies::Policy> install_policy(std::unique_ptr<policies::Policy> next,
                                                   uint64_t now_ns);

  Classifier& classifier() noexcept { return classifier_; }
  const Classifier& classifier() const noexcept { return classifier_; }
  MacTable& macs() noexcept { return macs_; }
  const FabricTable& fabric() const noexcept { return fabric_; }
  TrimSettings& trim() noexcept { return trim_; }
  const TrimSettings& trim() const noexcept { return trim_; }
  TofinoApprox& tofino() noexcept { return tofino_; }
  const TofinoApprox& tofino() const noexcept { return tofino_; }

  struct Port {
    Scheduler scheduler;
    DepartureClock clock;
    ProbeCharge probe_charge;
  };
  uint32_t ports() const noexcept { return static_cast<uint32_t>(ports_.size()); }
  Port& port(uint32_t p) noexcept { return ports_[p]; }

  // An overflow step for one thread (an RX worker, the replay, a QueueDisc's switch). `synthetic`:
  // its frames have no headers (the replay; a cut copy is then the frame's first trim_size
  // bytes). `worker` picks its trim_newest coin.
  OverflowStep overflow_step(uint32_t worker, bool synthetic);

  // --- The ingress step ---

  // Forwarding (forward_frame) in this switch's routes and MAC table.
  using Forward = model::Forward;
  Forward forward(const ParsedFrame& parsed, uint16_t in_port, uint64_t now_ns) noexcept {
    return forward_frame(macs_, fabric_, parsed, in_port, now_ns, ports());
  }

  // A frame's copy toward an egress port: its class's queue there (clamped to the port's last),
  // whether it gets CE (DCTCP marking on the instantaneous queue: an ECN-capable frame while the
  // queue holds more than the class's threshold), and what admission needs of it.
  struct Copy {
    policies::ArrivalContext ctx;
    buffer::FrameMeta meta;
    bool mark_ce = false;
  };
  struct CopyIn {
    uint8_t class_id = 0;
    uint32_t bytes = 0;
    bool ect = false;
    uint32_t flow_hash = 0;
    uint16_t in_port = 0;
    uint64_t now_ns = 0;
    uint64_t seq = 0;  // the replay's arrival number (Credence's perfect oracle)
    policies::FirstBdp first_bdp = policies::FirstBdp::kUnknown;
  };
  Copy copy_to(uint32_t out_port, const CopyIn& in) const noexcept {
    const buffer::BufferLayout& layout = buffer_.layout();
    const uint32_t k =
        std::min(classifier_.queue_of(in.class_id), layout.queues_on_port(out_port) - 1);
    return copy_into(layout.queue_id(out_port, k), in);
  }
  // The same into a given queue (a recorded arrival that names its queue).
  Copy copy_into(uint32_t queue, const CopyIn& in) const noexcept {
    const buffer::BufferLayout& layout = buffer_.layout();
    const uint32_t ecn_k = classifier_.ecn_threshold_cells(in.class_id);
    Copy c;
    c.mark_ce = ecn_k != 0 && in.ect && buffer_.state().queue_cells(queue) > ecn_k;
    c.ctx = {.now_ns = in.now_ns,
             .queue = queue,
             .port = static_cast<uint16_t>(layout.port_of(queue)),
             .class_id = in.class_id,
             .in_port = in.in_port,
             .cells = layout.cells_for(in.bytes),
             .bytes = in.bytes,
             .flow_hash = in.flow_hash,
             .seq = in.seq,
             .first_bdp = in.first_bdp};
    c.meta = {.arrival_ns = in.now_ns,
              .in_port = in.in_port,
              .class_id = in.class_id,
              .flags = static_cast<uint8_t>(c.mark_ce ? buffer::kFlagEcnMarked : 0)};
    return c;
  }
  // After the copy's admission: an enqueued copy that was marked counts as ecn_marked (in the
  // queue it went to). Whether the mark is kept: only by an enqueued copy.
  bool admitted(const Copy& c, const AdmissionOutcome& outcome) noexcept {
    if (!outcome.enqueued || !c.mark_ce) return false;
    buffer_.stats(outcome.queue).ecn_marked_pkts.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

 private:
  SwitchConfig config_;
  buffer::SharedBuffer buffer_;
  policies::PolicyEnv env_;
  std::atomic<policies::Policy*> policy_{nullptr};
  std::unique_ptr<policies::Policy> policy_owner_;
  Classifier classifier_;
  MacTable macs_;
  FabricTable fabric_;
  TrimSettings trim_;
  TofinoApprox tofino_;
  std::vector<Port> ports_;
};

}  // namespace sharebuf::model
