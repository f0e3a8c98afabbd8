#include "sim/ns3/sharebuf_queue_disc.h"

#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "sim/ns3/dscp_tag.h"

namespace sharebuf::sim {

NS_LOG_COMPONENT_DEFINE("SharebufQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(SharebufQueueDisc);

uint64_t PacketStore::put(ns3::Ptr<ns3::QueueDiscItem> item, SharebufQueueDisc* owner) {
  const uint64_t h = next_++;
  items_[h] = {item, owner};
  return h;
}

ns3::Ptr<ns3::QueueDiscItem> PacketStore::take(uint64_t handle) {
  auto it = items_.find(handle);
  if (it == items_.end()) return nullptr;
  ns3::Ptr<ns3::QueueDiscItem> item = it->second.item;
  items_.erase(it);
  return item;
}

void PacketStore::evict(uint64_t handle) {
  auto it = items_.find(handle);
  if (it == items_.end()) return;
  Held held = it->second;
  items_.erase(it);
  held.owner->Evicted(held.item);
}

ns3::TypeId SharebufQueueDisc::GetTypeId() {
  static ns3::TypeId tid = ns3::TypeId("sharebuf::SharebufQueueDisc")
                               .SetParent<ns3::QueueDisc>()
                               .SetGroupName("TrafficControl")
                               .AddConstructor<SharebufQueueDisc>();
  return tid;
}

SharebufQueueDisc::SharebufQueueDisc() : ns3::QueueDisc(ns3::QueueDiscSizePolicy::NO_LIMITS) {}

void SharebufQueueDisc::Attach(std::shared_ptr<SharebufSwitchNode> node, uint32_t port) {
  node_ = std::move(node);
  port_ = port;
}

void SharebufQueueDisc::Evicted(ns3::Ptr<const ns3::QueueDiscItem> item) {
  DropAfterDequeue(item, "pushed_out");
}

bool SharebufQueueDisc::DoEnqueue(ns3::Ptr<ns3::QueueDiscItem> item) {
  uint8_t dscp = 0;
  bool ect = false;
  if (auto ip = ns3::DynamicCast<ns3::Ipv4QueueDiscItem>(item)) {
    dscp = DscpTag::Of(static_cast<uint8_t>(ip->GetHeader().GetDscp()), *item->GetPacket());
    ect = ip->GetHeader().GetEcn() != ns3::Ipv4Header::ECN_NotECT;
  }
  const uint64_t now = static_cast<uint64_t>(ns3::Simulator::Now().GetNanoSeconds());
  const uint64_t handle = node_->store.put(item, this);
  const SwitchFacade::Outcome out = node_->facade->arrive(port_, FrameBytes(item->GetSize()), dscp,
                                                          ect, item->Hash(0), now, handle);
  for (uint64_t victim : out.evicted)
    node_->store.evict(victim);
  if (!out.admitted) {
    node_->store.take(handle);
    DropBeforeEnqueue(item, out.drop_reason.c_str());
    return false;
  }
  if (out.mark_ce) item->Mark();
  return true;
}

ns3::Ptr<ns3::QueueDiscItem> SharebufQueueDisc::DoDequeue() {
  const uint64_t now = static_cast<uint64_t>(ns3::Simulator::Now().GetNanoSeconds());
  // A frame leaves the shared buffer only in a wake-up event of its own, scheduled behind every
  // event already due at that instant: so the arrivals of an instant are admitted before any
  // departure of that instant frees cells, whoever asked first (an arrival to an idle port runs
  // the queue disc at once; the device asks for the next packet while it still sends the
  // previous one, as its own queue holds one). The replay's --order arrivals-first is this order.
  if (!in_wake_ || now < busy_until_ns_) {
    if (!wake_pending_) {
      wake_pending_ = true;
      ns3::Simulator::Schedule(ns3::NanoSeconds(now < busy_until_ns_ ? busy_until_ns_ - now : 0),
                               &SharebufQueueDisc::Wake, this);
    }
    return nullptr;
  }
  SwitchFacade::Departure d;
  if (!node_->facade->next(port_, now, &d)) return nullptr;
  busy_until_ns_ = now + node_->facade->transmit_ns(port_, d.bytes);
  return node_->store.take(d.handle);
}

void SharebufQueueDisc::Wake() {
  // Behind every event already due now (see DoDequeue).
  ns3::Simulator::ScheduleNow(&SharebufQueueDisc::WakeNow, this);
}

void SharebufQueueDisc::WakeNow() {
  wake_pending_ = false;
  in_wake_ = true;
  Run();
  in_wake_ = false;
}

bool SharebufQueueDisc::CheckConfig() {
  if (!node_) {
    NS_LOG_ERROR("SharebufQueueDisc: not attached to a switch (Attach)");
    return false;
  }
  return GetNQueueDiscClasses() == 0 && GetNPacketFilters() == 0 && GetNInternalQueues() == 0;
}

void SharebufQueueDisc::InitializeParams() {}

}  // namespace sharebuf::sim
