// SharebufQueueDisc: the egress queues of one port of a sharebuf switch inside ns-3 (C++17). Every
// port's queue disc of a switch node shares one SwitchFacade (sim/ns3/switch_facade.h): the
// switch's SharedBuffer, admission step and policy decide what each port keeps, and the port's
// scheduler what it sends. The packets stay in ns-3, in the node's PacketStore, keyed by the
// handle the buffer holds for them; a push-out (LQD) evicts packets of any port of the node.
//
// Departures: a frame leaves the shared buffer when the link is free to send it (the device asks
// one frame early, as its own queue holds one: the queue disc answers only once the previous
// frame's transmission ends), always in an event of its own behind the arrivals of that instant;
// the policy hears of the departure at its last bit, as in the live switch and the replay.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "ns3/queue-disc.h"
#include "sim/ns3/switch_facade.h"

namespace sharebuf::sim {

class SharebufQueueDisc;

// The packets a switch node's buffer holds, by handle, with the queue disc that holds each.
class PacketStore {
 public:
  uint64_t put(ns3::Ptr<ns3::QueueDiscItem> item, SharebufQueueDisc* owner);
  ns3::Ptr<ns3::QueueDiscItem> take(uint64_t handle);
  // A packet the buffer pushed out: its queue disc counts it dropped.
  void evict(uint64_t handle);
  size_t size() const { return items_.size(); }

 private:
  struct Held {
    ns3::Ptr<ns3::QueueDiscItem> item;
    SharebufQueueDisc* owner;
  };
  std::unordered_map<uint64_t, Held> items_;
  uint64_t next_ = 1;
};

// One switch node: its facade and its packet store.
struct SharebufSwitchNode {
  std::shared_ptr<SwitchFacade> facade;
  PacketStore store;
};

class SharebufQueueDisc : public ns3::QueueDisc {
 public:
  static ns3::TypeId GetTypeId();
  SharebufQueueDisc();
  // Binds this queue disc to port `port` of `node` (before the simulation starts).
  void Attach(std::shared_ptr<SharebufSwitchNode> node, uint32_t port);
  // Counted as dropped here after a push-out (called by PacketStore::evict).
  void Evicted(ns3::Ptr<const ns3::QueueDiscItem> item);

  // Frame bytes the buffer accounts for a packet of `ip_bytes`: what the point-to-point link
  // carries (PPP's 2-byte header), so the serialisation the policy is told of (bytes x 8 / rate)
  // is the link's, and a replay of the recorded arrivals departs at the same times.
  static uint32_t FrameBytes(uint32_t ip_bytes) { return ip_bytes + 2; }

 private:
  bool DoEnqueue(ns3::Ptr<ns3::QueueDiscItem> item) override;
  ns3::Ptr<ns3::QueueDiscItem> DoDequeue() override;
  bool CheckConfig() override;
  void InitializeParams() override;

  void Wake();
  void WakeNow();

  std::shared_ptr<SharebufSwitchNode> node_;
  uint32_t port_ = 0;
  uint64_t busy_until_ns_ = 0;  // the link sends the last frame handed to it until then
  bool wake_pending_ = false;
  bool in_wake_ = false;  // inside WakeNow: the one place a frame may leave
};

}  // namespace sharebuf::sim
