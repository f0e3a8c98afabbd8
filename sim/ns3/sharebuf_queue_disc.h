// sharebuf's shared-buffer switch as ns-3 queue discs (C++17, ns-3.37).
//
// A SharebufSwitch is one switch: its SwitchFacade (sim/ns3/switch_facade.h: the SharedBuffer,
// admission step, policy, classifier, schedulers and ECN marking of the live switch), aggregated
// to an ns-3 node. Every SharebufQueueDisc on that node's devices is one of its ports: the
// switch's policy decides what each port keeps, the port's scheduler what it sends, and a
// push-out (LQD) or a reclaim (Occamy) may evict packets of any port of the node.
//
// Two ways to make one:
// - ns-3's usual way: TrafficControlHelper::SetRootQueueDisc("sharebuf::SharebufQueueDisc", ...)
//   on the node's devices, configured by attributes (a sharebufd TOML configuration as text or
//   file, overridden by Policy, BufferSize, QueuesPerPort, Scheduler). The first of a node's
//   queue discs to initialise builds the node's switch from its attributes; the others must carry
//   the same. Without [[ports]] in the configuration, the ports are the node's devices that have
//   a sharebuf queue disc, in device order, each at its device's DataRate.
// - SharebufSwitch::Install(node, facade) with a facade built in code (sharebuf-sim does this);
//   the queue discs then leave the configuration attributes empty.
//
// Accounting is ns-3's own: each port holds one internal queue per sharebuf queue, so GetStats(),
// GetNPackets() and the Enqueue, Dequeue, Drop, DropBeforeEnqueue, DropAfterDequeue and Mark trace
// sources report what the switch did. A refused packet is dropped before enqueue with the policy's
// reason ("threshold", "pool_full", "prediction", ...); a pushed-out or reclaimed packet is
// dequeued from its internal queue and dropped after dequeue with reason "pushed_out" or
// "reclaimed" (how ns-3's AQMs drop a packet they already hold); an ECN mark goes through
// QueueDisc::Mark with reason "ecn_threshold".
//
// Departures: a frame leaves the shared buffer when the link is free to send it (the device asks
// one frame early, as its own queue holds one: the queue disc answers only once the previous
// frame's transmission ends). The ports of a switch depart in rounds, one event behind every
// event already due at that instant, lowest port first (sim/same_instant.h, the replay's order:
// the arrivals of an instant are admitted before any departure of that instant frees cells).
// The policy hears of a departure at its last bit, as in the live switch and the replay.
//
// Arrivals may be held to the end of their instant (DeferArrival): a forwarding layer that does
// (sharebuf-sim's FabricRouting) has the arrivals of one instant admitted in the order of the port
// they came in on, not ns-3's event order, which a run split across MPI ranks changes (a packet
// from another rank is scheduled when its message arrives, not when it was sent). Such an
// arrival's ingress device is known, and becomes its ingress port.
//
// Trimming (a class's overflow "trim" or "return-to-sender"; docs/ns3.md): the switch model cuts
// a refused or pushed-out packet, and this switch makes the cut copy a packet: the original's IP
// header and the first bytes of its payload, the copy's length in all, its DSCP rewritten as
// [trimming] says; a returned copy has its IP addresses and L4 ports swapped. The copy enters its
// port's queue disc once the packet it was cut from is counted (received there, then enqueued in
// its internal queue: the switch model counts it arriving at its trim queue too) and leaves when
// the buffer sends it. Under
// mode "tofino-approx" a deflected packet is kept until it leaves its recirculation port, in the
// departure round of that instant, after its departures (the replay's order). Trimming needs
// the ingress port (return-to-sender, NDP's header_full bounces, the per-pipeline meters):
// arrivals through DeferArrival have it; a switch fed otherwise (an ns-3 program's own routing)
// refuses a trimming class at its first packet.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ns3/node.h"
#include "ns3/queue-disc.h"
#include "ns3/traced-value.h"
#include "sim/ns3/switch_facade.h"

namespace sharebuf::sim {

class SharebufQueueDisc;

class SharebufSwitch : public ns3::Object {
 public:
  static ns3::TypeId GetTypeId();
  SharebufSwitch();
  ~SharebufSwitch() override;

  // Makes `node`'s switch from `facade` (before the simulation starts): its queue discs then
  // name their ports with the Port attribute (default: device order). Fatal if it has one.
  static ns3::Ptr<SharebufSwitch> Install(ns3::Ptr<ns3::Node> node,
                                          std::unique_ptr<SwitchFacade> facade);

  // The switch (after it is built: Install, or the first queue disc's initialisation).
  SwitchFacade& GetFacade() const;
  bool IsBuilt() const { return facade_ != nullptr; }
  // The queue disc of a port (nullptr before it initialised).
  SharebufQueueDisc* GetPort(uint32_t port) const;
  // Packets held in the shared buffer, all ports.
  size_t GetNPackets() const { return held_.size(); }
  // Runs `forward` (the arrival's way into a port's queue disc) at the end of this instant, with
  // the instant's other deferred arrivals in ascending `order` (the ingress port: a link delivers
  // one packet per instant), before the instant's departure round. `ingress`: the device it came
  // in on, which names its ingress port to the switch (nullptr: unknown).
  void DeferArrival(uint32_t order, std::function<void()> forward,
                    const ns3::NetDevice* ingress = nullptr);
  // The switch port of `device` (-1: not one of its ports).
  int32_t PortOf(const ns3::NetDevice* device) const;

 private:
  friend class SharebufQueueDisc;
  struct Held {
    ns3::Ptr<ns3::QueueDiscItem> item;
    SharebufQueueDisc* disc;
    uint32_t queue;
  };

  void DoDispose() override;
  void Register(uint32_t port, SharebufQueueDisc* disc);
  uint64_t NextHandle() { return next_handle_++; }
  void Hold(uint64_t handle, ns3::Ptr<ns3::QueueDiscItem> item, SharebufQueueDisc* disc,
            uint32_t queue);
  bool Take(uint64_t handle, Held* out);
  void Evict(uint64_t handle, const char* reason);
  // Port `port` is to start its next transmission at `at_ns` (in a departure round then).
  void RequestDeparture(uint32_t port, uint64_t at_ns);
  void RoundDue(uint64_t at_ns);
  void Round(uint64_t at_ns);
  void FlushArrivals();
  // A departure round at `at_ns` (a port's departure, a recirculation port's release).
  void ScheduleRound(uint64_t at_ns);
  // Trimming: each copy made a packet from its original (`originals`, by handle) and queued at its
  // port; the next release of a recirculation port scheduled.
  void PlaceCopies(const std::vector<SwitchFacade::Copy>& copies,
                   const std::unordered_map<uint64_t, ns3::Ptr<ns3::QueueDiscItem>>& originals);
  void ScheduleRelease();

  std::unique_ptr<SwitchFacade> facade_;
  std::string built_from_;  // the attributes that built it; empty after Install
  std::vector<SharebufQueueDisc*> ports_;
  std::unordered_map<uint64_t, Held> held_;
  uint64_t next_handle_ = 1;
  std::vector<uint64_t> due_ns_;  // per port: its next departure round, or kNoDeparture
  std::set<uint64_t> rounds_;     // instants with a round scheduled and not yet run
  struct Deferred {
    uint32_t order;
    std::function<void()> forward;
    int32_t ingress;  // its ingress port, -1 unknown
  };
  std::vector<Deferred> arrivals_;  // deferred, this instant
  bool flush_scheduled_ = false;
  int32_t ingress_ = -1;  // the ingress port of the arrival being forwarded now (FlushArrivals)
  // Deflected packets (tofino-approx), kept until they leave their recirculation port.
  std::unordered_map<uint64_t, ns3::Ptr<ns3::QueueDiscItem>> deflected_;
  ns3::TracedValue<uint32_t> buffer_cells_;  // the shared buffer's occupancy, cells
};

class SharebufQueueDisc : public ns3::QueueDisc {
 public:
  static ns3::TypeId GetTypeId();
  SharebufQueueDisc();
  ~SharebufQueueDisc() override;

  // After initialisation: the switch and the port this queue disc is.
  ns3::Ptr<SharebufSwitch> GetSwitch() const { return sw_; }
  uint32_t GetPort() const { return port_; }

  // Frame bytes the buffer accounts for a packet of `ip_bytes`: what the point-to-point link
  // carries (PPP's 2-byte header), so the serialisation the policy is told of (bytes x 8 / rate)
  // is the link's, and a replay of the recorded arrivals departs at the same times.
  static uint32_t FrameBytes(uint32_t ip_bytes) { return ip_bytes + 2; }

 private:
  friend class SharebufSwitch;

  bool DoEnqueue(ns3::Ptr<ns3::QueueDiscItem> item) override;
  ns3::Ptr<ns3::QueueDiscItem> DoDequeue() override;
  bool CheckConfig() override;
  void InitializeParams() override;
  void DoDispose() override;

  // Joins (or builds) the switch of the node whose device this queue disc is on.
  void JoinSwitch();
  std::string ConfigKey() const;
  std::unique_ptr<SwitchFacade> BuildFacade(ns3::Ptr<ns3::Node> node) const;
  // A departure round reached this port.
  void Depart();
  // A push-out or a reclaim (`reason`) took this packet of queue `queue` out of the shared buffer.
  void Evicted(ns3::Ptr<ns3::QueueDiscItem> item, uint32_t queue, const char* reason);
  // A cut copy the switch made, queued here (trimming): it enters through QueueDisc::Enqueue, so
  // ns-3 counts it received and enqueued, as the switch model counts it arriving at its queue.
  void EnqueueCopy(uint64_t handle, ns3::Ptr<ns3::QueueDiscItem> item, uint32_t queue);
  // Updates the PortCells and BufferCells traces.
  void Occupancy();

  // Attributes.
  std::string config_;
  std::string config_file_;
  std::string policy_;
  std::string buffer_size_;
  uint32_t queues_per_port_ = 0;
  std::string scheduler_;
  int32_t port_attr_ = -1;
  bool first_bdp_from_tags_ = false;

  ns3::Ptr<SharebufSwitch> sw_;
  ns3::Ptr<ns3::NetDevice> device_;  // the device whose root queue disc this is
  uint32_t port_ = 0;
  uint64_t busy_until_ns_ = 0;  // the link sends the last frame handed to it until then
  bool in_round_ = false;       // inside Depart: the one place a frame may leave
  // Set by EnqueueCopy for the DoEnqueue it calls: place this copy, do not ask the switch.
  struct CopyPlace {
    uint64_t handle;
    uint32_t queue;
  };
  std::optional<CopyPlace> copy_;
  ns3::TracedValue<uint32_t> port_cells_;  // this port's occupancy, cells
};

}  // namespace sharebuf::sim
