#include "sim/ns3/sharebuf_queue_disc.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/integer.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/node-list.h"
#include "ns3/queue.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"
#include "sim/ns3/sender_tag.h"
#include "sim/same_instant.h"

namespace sharebuf::sim {

NS_LOG_COMPONENT_DEFINE("SharebufQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(SharebufSwitch);
NS_OBJECT_ENSURE_REGISTERED(SharebufQueueDisc);

namespace {

// One sharebuf queue of a port, as a queue disc's internal queue: it holds the packets the
// shared buffer admitted to that queue, so ns-3's own accounting and traces see them. The buffer
// decides; this queue only follows: packets leave it at the head (a transmission) or wherever a
// push-out takes them (the head or the tail of the sharebuf queue).
class PortQueue : public ns3::Queue<ns3::QueueDiscItem> {
 public:
  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid = ns3::TypeId("sharebuf::PortQueue")
                                 .SetParent<ns3::Queue<ns3::QueueDiscItem>>()
                                 .SetGroupName("TrafficControl")
                                 .AddConstructor<PortQueue>();
    return tid;
  }
  // Never full: the shared buffer is the limit.
  PortQueue() { SetMaxSize(ns3::QueueSize(ns3::QueueSizeUnit::PACKETS, UINT32_MAX)); }

  bool Enqueue(ns3::Ptr<ns3::QueueDiscItem> item) override {
    return DoEnqueue(GetContainer().end(), item);
  }
  ns3::Ptr<ns3::QueueDiscItem> Dequeue() override { return DoDequeue(GetContainer().begin()); }
  ns3::Ptr<ns3::QueueDiscItem> Remove() override { return DoRemove(GetContainer().begin()); }
  ns3::Ptr<const ns3::QueueDiscItem> Peek() const override {
    return DoPeek(GetContainer().begin());
  }

  // Takes `item` out as a dequeue (the Dequeue trace fires): the head for a transmission, the
  // head or the tail for a push-out. nullptr if it is not here.
  ns3::Ptr<ns3::QueueDiscItem> Take(const ns3::QueueDiscItem* item) {
    const auto& items = GetContainer();
    if (items.empty()) return nullptr;
    if (ns3::PeekPointer(items.front()) == item) return DoDequeue(items.begin());
    if (ns3::PeekPointer(items.back()) == item) return DoDequeue(std::prev(items.end()));
    for (auto it = items.begin(); it != items.end(); ++it) {
      if (ns3::PeekPointer(*it) == item) return DoDequeue(it);
    }
    return nullptr;
  }
};

NS_OBJECT_ENSURE_REGISTERED(PortQueue);

// The node and device a queue disc is the root of (a one-time search at initialisation: a queue
// disc knows neither).
bool FindDevice(const ns3::QueueDisc* disc, ns3::Ptr<ns3::Node>* node,
                ns3::Ptr<ns3::NetDevice>* device) {
  for (auto n = ns3::NodeList::Begin(); n != ns3::NodeList::End(); ++n) {
    ns3::Ptr<ns3::TrafficControlLayer> tc = (*n)->GetObject<ns3::TrafficControlLayer>();
    if (!tc) continue;
    for (uint32_t i = 0; i < (*n)->GetNDevices(); ++i) {
      if (PeekPointer(tc->GetRootQueueDiscOnDevice((*n)->GetDevice(i))) == disc) {
        *node = *n;
        *device = (*n)->GetDevice(i);
        return true;
      }
    }
  }
  return false;
}

// The node's devices whose root queue disc is a SharebufQueueDisc, in device order.
std::vector<ns3::Ptr<ns3::NetDevice>> SwitchDevices(ns3::Ptr<ns3::Node> node) {
  std::vector<ns3::Ptr<ns3::NetDevice>> out;
  ns3::Ptr<ns3::TrafficControlLayer> tc = node->GetObject<ns3::TrafficControlLayer>();
  for (uint32_t i = 0; tc && i < node->GetNDevices(); ++i) {
    if (ns3::DynamicCast<SharebufQueueDisc>(tc->GetRootQueueDiscOnDevice(node->GetDevice(i))))
      out.push_back(node->GetDevice(i));
  }
  return out;
}

uint64_t NowNs() {
  return static_cast<uint64_t>(ns3::Simulator::Now().GetNanoSeconds());
}

}  // namespace

// ---- SharebufSwitch ----

ns3::TypeId SharebufSwitch::GetTypeId() {
  static ns3::TypeId tid =
      ns3::TypeId("sharebuf::SharebufSwitch")
          .SetParent<ns3::Object>()
          .SetGroupName("TrafficControl")
          .AddConstructor<SharebufSwitch>()
          .AddTraceSource("BufferCells", "The shared buffer's occupancy, in cells",
                          ns3::MakeTraceSourceAccessor(&SharebufSwitch::buffer_cells_),
                          "ns3::TracedValueCallback::Uint32");
  return tid;
}

SharebufSwitch::SharebufSwitch() = default;
SharebufSwitch::~SharebufSwitch() = default;

void SharebufSwitch::DoDispose() {
  held_.clear();
  ports_.clear();
  ns3::Object::DoDispose();
}

ns3::Ptr<SharebufSwitch> SharebufSwitch::Install(ns3::Ptr<ns3::Node> node,
                                                 std::unique_ptr<SwitchFacade> facade) {
  NS_ABORT_MSG_IF(node->GetObject<SharebufSwitch>(),
                  "SharebufSwitch::Install: node " << node->GetId() << " has a switch");
  ns3::Ptr<SharebufSwitch> sw = ns3::CreateObject<SharebufSwitch>();
  sw->facade_ = std::move(facade);
  node->AggregateObject(sw);
  return sw;
}

SwitchFacade& SharebufSwitch::GetFacade() const {
  NS_ABORT_MSG_IF(!facade_,
                  "SharebufSwitch: not built yet (its queue discs build it when the "
                  "simulation starts)");
  return *facade_;
}

SharebufQueueDisc* SharebufSwitch::GetPort(uint32_t port) const {
  return port < ports_.size() ? ports_[port] : nullptr;
}

void SharebufSwitch::Register(uint32_t port, SharebufQueueDisc* disc) {
  ports_.resize(facade_->ports(), nullptr);
  due_ns_.resize(facade_->ports(), kNoDeparture);
  NS_ABORT_MSG_IF(port >= ports_.size(), "SharebufQueueDisc: port " << port << " of a switch of "
                                                                    << ports_.size() << " ports");
  NS_ABORT_MSG_IF(ports_[port] != nullptr && ports_[port] != disc,
                  "SharebufQueueDisc: two queue discs are port " << port << " of one switch");
  ports_[port] = disc;
}

void SharebufSwitch::Hold(uint64_t handle, ns3::Ptr<ns3::QueueDiscItem> item,
                          SharebufQueueDisc* disc, uint32_t queue) {
  held_.emplace(handle, Held{std::move(item), disc, queue});
}

bool SharebufSwitch::Take(uint64_t handle, Held* out) {
  auto it = held_.find(handle);
  if (it == held_.end()) return false;
  *out = std::move(it->second);
  held_.erase(it);
  return true;
}

void SharebufSwitch::Evict(uint64_t handle, const char* reason) {
  Held h;
  NS_ABORT_MSG_IF(!Take(handle, &h), "SharebufSwitch: the buffer evicted an unknown packet");
  h.disc->Evicted(h.item, h.queue, reason);
}

int32_t SharebufSwitch::PortOf(const ns3::NetDevice* device) const {
  for (size_t p = 0; p < ports_.size(); ++p)
    if (ports_[p] != nullptr && ns3::PeekPointer(ports_[p]->device_) == device)
      return static_cast<int32_t>(p);
  return -1;
}

namespace {

// The first four bytes of the L4 header (source and destination port, TCP and UDP alike)
// swapped, in a copy of `p` (its packet tags kept).
ns3::Ptr<ns3::Packet> SwapPorts(ns3::Ptr<ns3::Packet> p) {
  if (p->GetSize() < 4) return p;
  std::vector<uint8_t> bytes(p->GetSize());
  p->CopyData(bytes.data(), static_cast<uint32_t>(bytes.size()));
  std::swap(bytes[0], bytes[2]);
  std::swap(bytes[1], bytes[3]);
  ns3::Ptr<ns3::Packet> out =
      ns3::Create<ns3::Packet>(bytes.data(), static_cast<uint32_t>(bytes.size()));
  SenderTag tag;
  if (p->PeekPacketTag(tag)) out->AddPacketTag(tag);
  return out;
}

// The packet of a cut copy: `original`'s IP header and the first bytes of its payload, the copy's
// frame length in all (FrameBytes: the point-to-point header is the link's).
ns3::Ptr<ns3::QueueDiscItem> CopyPacket(ns3::Ptr<ns3::QueueDiscItem> original,
                                        const SwitchFacade::Copy& c) {
  auto ip = ns3::DynamicCast<ns3::Ipv4QueueDiscItem>(original);
  NS_ABORT_MSG_IF(!ip, "SharebufQueueDisc: trimming needs IPv4 packets");
  ns3::Ipv4Header h = ip->GetHeader();
  const uint32_t ip_bytes = c.bytes - std::min<uint32_t>(c.bytes, SharebufQueueDisc::FrameBytes(0));
  const uint32_t header = h.GetSerializedSize();
  const uint32_t payload =
      std::min(ip->GetPacket()->GetSize(), ip_bytes > header ? ip_bytes - header : 0);
  ns3::Ptr<ns3::Packet> p = ip->GetPacket()->CreateFragment(0, payload);
  h.SetPayloadSize(static_cast<uint16_t>(payload));
  if (c.dscp >= 0) h.SetDscp(static_cast<ns3::Ipv4Header::DscpType>(c.dscp));
  if (c.returned) {
    const ns3::Ipv4Address src = h.GetSource();
    h.SetSource(h.GetDestination());
    h.SetDestination(src);
    p = SwapPorts(p);
  }
  return ns3::Create<ns3::Ipv4QueueDiscItem>(p, ip->GetAddress(), ip->GetProtocol(), h);
}

}  // namespace

void SharebufSwitch::PlaceCopies(
    const std::vector<SwitchFacade::Copy>& copies,
    const std::unordered_map<uint64_t, ns3::Ptr<ns3::QueueDiscItem>>& originals) {
  for (const SwitchFacade::Copy& c : copies) {
    const auto it = originals.find(c.of);
    NS_ABORT_MSG_IF(it == originals.end(), "SharebufSwitch: a copy of an unknown packet");
    NS_ABORT_MSG_IF(c.port >= ports_.size() || ports_[c.port] == nullptr,
                    "SharebufSwitch: a copy for port " << c.port << ", which has no queue disc");
    ports_[c.port]->EnqueueCopy(c.handle, CopyPacket(it->second, c), c.queue);
  }
}

void SharebufSwitch::ScheduleRelease() {
  const uint64_t at = facade_->next_release_ns();
  if (at != UINT64_MAX) ScheduleRound(std::max(at, NowNs()));
}

void SharebufSwitch::ScheduleRound(uint64_t at_ns) {
  if (!rounds_.insert(at_ns).second) return;
  ns3::Simulator::Schedule(ns3::NanoSeconds(at_ns - NowNs()), &SharebufSwitch::RoundDue, this,
                           at_ns);
}

void SharebufSwitch::RequestDeparture(uint32_t port, uint64_t at_ns) {
  if (due_ns_[port] <= at_ns) return;  // a round at or before then reaches it already
  due_ns_[port] = at_ns;
  ScheduleRound(at_ns);
}

void SharebufSwitch::RoundDue(uint64_t at_ns) {
  // Behind every event already due now: the instant's arrivals come first (same_instant.h).
  ns3::Simulator::ScheduleNow(&SharebufSwitch::Round, this, at_ns);
}

void SharebufSwitch::DeferArrival(uint32_t order, std::function<void()> forward,
                                  const ns3::NetDevice* ingress) {
  arrivals_.push_back({order, std::move(forward), ingress != nullptr ? PortOf(ingress) : -1});
  if (flush_scheduled_) return;
  flush_scheduled_ = true;
  // Behind every event already due now, so behind every arrival of the instant: a packet's
  // reception is scheduled when it is sent (at least a serialisation earlier), or, from another
  // rank, when the window before this instant closes.
  ns3::Simulator::ScheduleNow(&SharebufSwitch::FlushArrivals, this);
}

void SharebufSwitch::FlushArrivals() {
  flush_scheduled_ = false;
  if (arrivals_.empty()) return;
  std::vector<Deferred> now;
  now.swap(arrivals_);
  std::stable_sort(now.begin(), now.end(),
                   [](const Deferred& a, const Deferred& b) { return a.order < b.order; });
  for (Deferred& a : now) {
    ingress_ = a.ingress;  // read by the queue disc the forwarding reaches, synchronously
    a.forward();
    ingress_ = -1;
  }
}

void SharebufSwitch::Round(uint64_t at_ns) {
  // The instant's arrivals first, whichever of the two events came first (same_instant.h); a port
  // they wake joins this round.
  FlushArrivals();
  rounds_.erase(at_ns);
  const uint32_t n = static_cast<uint32_t>(due_ns_.size());
  for (;;) {
    uint32_t port = 0;
    if (next_departure(
            n, [&](uint32_t p) { return due_ns_[p]; }, port) > at_ns)
      break;
    due_ns_[port] = kNoDeparture;
    ports_[port]->Depart();
  }
  // Deflected packets leaving their recirculation ports now, after the instant's departures (the
  // replay's order): their cut copies join their trim queues.
  if (facade_->next_release_ns() <= at_ns) {
    std::vector<uint64_t> left;
    const std::vector<SwitchFacade::Copy> copies = facade_->release(at_ns, &left);
    PlaceCopies(copies, deflected_);
    for (uint64_t h : left)
      deflected_.erase(h);
    ScheduleRelease();
  }
}

// ---- SharebufQueueDisc ----

ns3::TypeId SharebufQueueDisc::GetTypeId() {
  static ns3::TypeId tid =
      ns3::TypeId("sharebuf::SharebufQueueDisc")
          .SetParent<ns3::QueueDisc>()
          .SetGroupName("TrafficControl")
          .AddConstructor<SharebufQueueDisc>()
          .AddAttribute("Config",
                        "The switch's sharebufd configuration, TOML text ([buffer], [policy], "
                        "[[classes]], [classify], [[ports]] or a [ports] table of settings for "
                        "every port); docs/configuration.md",
                        ns3::StringValue(""), ns3::MakeStringAccessor(&SharebufQueueDisc::config_),
                        ns3::MakeStringChecker())
          .AddAttribute(
              "ConfigFile", "The same from a file (instead of Config)", ns3::StringValue(""),
              ns3::MakeStringAccessor(&SharebufQueueDisc::config_file_), ns3::MakeStringChecker())
          .AddAttribute("Policy",
                        "The buffer's policy, overriding the configuration's [policy]: a name "
                        "(\"dt\") or a TOML inline table (\"{name = \\\"abm\\\", alpha = 0.5}\")",
                        ns3::StringValue(""), ns3::MakeStringAccessor(&SharebufQueueDisc::policy_),
                        ns3::MakeStringChecker())
          .AddAttribute("BufferSize",
                        "The shared buffer's size, overriding [buffer] size (\"512KB\", "
                        "\"4000 cells\")",
                        ns3::StringValue(""),
                        ns3::MakeStringAccessor(&SharebufQueueDisc::buffer_size_),
                        ns3::MakeStringChecker())
          .AddAttribute("QueuesPerPort",
                        "Queues of every port, overriding [ports] queues (0: the configuration's)",
                        ns3::UintegerValue(0),
                        ns3::MakeUintegerAccessor(&SharebufQueueDisc::queues_per_port_),
                        ns3::MakeUintegerChecker<uint32_t>(0, 64))
          .AddAttribute("Scheduler",
                        "Every port's scheduler, overriding [ports] scheduler (\"rr\", \"sp\", "
                        "\"drr\")",
                        ns3::StringValue(""),
                        ns3::MakeStringAccessor(&SharebufQueueDisc::scheduler_),
                        ns3::MakeStringChecker())
          .AddAttribute("Port",
                        "The switch port this queue disc is (-1: its device's position among the "
                        "node's devices with a sharebuf queue disc)",
                        ns3::IntegerValue(-1),
                        ns3::MakeIntegerAccessor(&SharebufQueueDisc::port_attr_),
                        ns3::MakeIntegerChecker<int32_t>(-1, 4095))
          .AddAttribute("FirstBdpFromTags",
                        "The senders tag their flows' first bandwidth-delay product (SenderTag): "
                        "an untagged packet is not in it. Off: untagged packets leave ABM to its "
                        "flow table",
                        ns3::BooleanValue(false),
                        ns3::MakeBooleanAccessor(&SharebufQueueDisc::first_bdp_from_tags_),
                        ns3::MakeBooleanChecker())
          .AddTraceSource("PortCells", "This port's occupancy of the shared buffer, in cells",
                          ns3::MakeTraceSourceAccessor(&SharebufQueueDisc::port_cells_),
                          "ns3::TracedValueCallback::Uint32");
  return tid;
}

SharebufQueueDisc::SharebufQueueDisc() : ns3::QueueDisc(ns3::QueueDiscSizePolicy::NO_LIMITS) {}
SharebufQueueDisc::~SharebufQueueDisc() = default;

void SharebufQueueDisc::DoDispose() {
  sw_ = nullptr;
  ns3::QueueDisc::DoDispose();
}

std::string SharebufQueueDisc::ConfigKey() const {
  std::ostringstream k;
  k << config_.size() << ':' << config_ << '|' << config_file_ << '|' << policy_ << '|'
    << buffer_size_ << '|' << queues_per_port_ << '|' << scheduler_;
  return k.str();
}

std::unique_ptr<SwitchFacade> SharebufQueueDisc::BuildFacade(ns3::Ptr<ns3::Node> node) const {
  SwitchFacade::Spec spec;
  spec.source = "SharebufQueueDisc Config";
  spec.config = config_;
  if (!config_file_.empty()) {
    NS_ABORT_MSG_IF(!config_.empty(), "SharebufQueueDisc: set Config or ConfigFile, not both");
    std::ifstream in(config_file_);
    NS_ABORT_MSG_IF(!in, "SharebufQueueDisc ConfigFile: cannot read " << config_file_);
    spec.config.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    spec.source = config_file_;
  }
  if (!policy_.empty()) {
    const bool table = policy_.find('{') != std::string::npos;
    spec.overrides.push_back("policy=" + (table ? policy_ : "{name = \"" + policy_ + "\"}"));
  }
  if (!buffer_size_.empty()) spec.overrides.push_back("buffer.size=\"" + buffer_size_ + "\"");
  if (queues_per_port_ != 0)
    spec.overrides.push_back("ports.queues=" + std::to_string(queues_per_port_));
  if (!scheduler_.empty()) spec.overrides.push_back("ports.scheduler=\"" + scheduler_ + "\"");
  spec.override_origin = "SharebufQueueDisc attribute";
  for (ns3::Ptr<ns3::NetDevice> dev : SwitchDevices(node)) {
    ns3::DataRateValue rate;
    NS_ABORT_MSG_IF(!dev->GetAttributeFailSafe("DataRate", rate),
                    "SharebufQueueDisc: device " << dev->GetIfIndex() << " of node "
                                                 << node->GetId()
                                                 << " has no DataRate attribute: give the "
                                                    "switch its [[ports]] in Config");
    spec.port_rates_bps.push_back(rate.Get().GetBitRate());
  }
  try {
    return SwitchFacade::from_spec(spec);
  } catch (const std::exception& e) {
    NS_FATAL_ERROR("SharebufQueueDisc on node " << node->GetId() << ": " << e.what());
  }
  return nullptr;
}

void SharebufQueueDisc::JoinSwitch() {
  ns3::Ptr<ns3::Node> node;
  ns3::Ptr<ns3::NetDevice> device;
  NS_ABORT_MSG_IF(!FindDevice(this, &node, &device),
                  "SharebufQueueDisc: not the root queue disc of a node's device");
  sw_ = node->GetObject<SharebufSwitch>();
  if (!sw_) {
    sw_ = ns3::CreateObject<SharebufSwitch>();
    node->AggregateObject(sw_);
  }
  if (!sw_->IsBuilt()) {
    sw_->facade_ = BuildFacade(node);
    sw_->built_from_ = ConfigKey();
  } else if (sw_->built_from_.empty()) {
    NS_ABORT_MSG_IF(ConfigKey() != SharebufQueueDisc().ConfigKey(),
                    "SharebufQueueDisc on node "
                        << node->GetId()
                        << ": the node's switch was installed in code "
                           "(SharebufSwitch::Install); leave Config, ConfigFile, Policy, "
                           "BufferSize, QueuesPerPort and Scheduler unset");
  } else {
    NS_ABORT_MSG_IF(ConfigKey() != sw_->built_from_,
                    "SharebufQueueDisc on node "
                        << node->GetId()
                        << ": its queue discs configure the switch differently (every one of a "
                           "node's sharebuf queue discs needs the same Config, ConfigFile, "
                           "Policy, BufferSize, QueuesPerPort and Scheduler)");
  }
  if (port_attr_ >= 0) {
    port_ = static_cast<uint32_t>(port_attr_);
  } else {
    const auto devs = SwitchDevices(node);
    port_ = static_cast<uint32_t>(std::find(devs.begin(), devs.end(), device) - devs.begin());
  }
  device_ = device;
  sw_->Register(port_, this);
}

bool SharebufQueueDisc::CheckConfig() {
  // Fatal, not false: an ns-3 built without asserts ignores a false CheckConfig.
  NS_ABORT_MSG_IF(
      GetNQueueDiscClasses() != 0 || GetNPacketFilters() != 0 || GetNInternalQueues() != 0,
      "SharebufQueueDisc: takes no classes, filters or internal queues of its own (its switch's "
      "configuration makes its queues)");
  JoinSwitch();
  return true;
}

void SharebufQueueDisc::InitializeParams() {
  for (uint32_t k = 0; k < sw_->GetFacade().queues(port_); ++k)
    AddInternalQueue(ns3::CreateObject<PortQueue>());
}

bool SharebufQueueDisc::DoEnqueue(ns3::Ptr<ns3::QueueDiscItem> item) {
  if (copy_) {  // a cut copy the switch already placed (EnqueueCopy)
    const CopyPlace c = *copy_;
    copy_.reset();
    sw_->Hold(c.handle, item, this, c.queue);
    GetInternalQueue(c.queue)->Enqueue(item);
    Occupancy();
    return true;
  }
  SwitchFacade& facade = sw_->GetFacade();
  SwitchFacade::Arrival a;
  a.port = port_;
  a.bytes = FrameBytes(item->GetSize());
  if (auto ip = ns3::DynamicCast<ns3::Ipv4QueueDiscItem>(item)) {
    const SenderView v =
        SenderView::Of(static_cast<uint8_t>(ip->GetHeader().GetDscp()), *item->GetPacket());
    a.dscp = v.dscp;
    if (v.tagged) {
      a.first_bdp = v.first_bdp ? 1 : 0;
    } else if (first_bdp_from_tags_) {
      a.first_bdp = 0;
    }
    a.ect = ip->GetHeader().GetEcn() != ns3::Ipv4Header::ECN_NotECT;
  }
  a.flow_hash = item->Hash(0);
  a.in_port = sw_->ingress_;
  const uint64_t handle = sw_->NextHandle();
  SwitchFacade::Outcome out;
  try {
    out = facade.arrive(a, NowNs(), handle);
  } catch (const std::logic_error& e) {
    NS_FATAL_ERROR("SharebufQueueDisc on port " << port_ << ": " << e.what());
  }
  // Trimming: the packets the copies are cut from (this one, and those it pushed out).
  std::unordered_map<uint64_t, ns3::Ptr<ns3::QueueDiscItem>> originals;
  if (!out.copies.empty()) originals.emplace(handle, item);
  for (const SwitchFacade::Outcome::Evicted& victim : out.evicted) {
    if (!out.copies.empty() && sw_->held_.count(victim.handle) != 0)
      originals.emplace(victim.handle, sw_->held_.at(victim.handle).item);
    sw_->Evict(victim.handle, victim.reason);
  }
  if (out.deflected) sw_->deflected_.emplace(handle, item);
  if (!out.admitted) {
    DropBeforeEnqueue(item, out.drop_reason.c_str());
  } else {
    if (out.mark_ce) Mark(item, "ecn_threshold");
    sw_->Hold(handle, item, this, out.queue);
    GetInternalQueue(out.queue)->Enqueue(item);
  }
  // The copies after this packet is counted: a copy may enter this very queue disc, whose
  // QueueDisc::Enqueue checks that every packet it received was enqueued or dropped.
  sw_->PlaceCopies(out.copies, originals);
  sw_->ScheduleRelease();
  Occupancy();
  return out.admitted;
}

ns3::Ptr<ns3::QueueDiscItem> SharebufQueueDisc::DoDequeue() {
  const uint64_t now = NowNs();
  // A frame leaves the shared buffer only in its switch's departure round (same_instant.h).
  if (!in_round_ || now < busy_until_ns_) {
    sw_->RequestDeparture(port_, std::max(now, busy_until_ns_));
    return nullptr;
  }
  SwitchFacade& facade = sw_->GetFacade();
  SwitchFacade::Departure d;
  if (!facade.next(port_, now, &d)) return nullptr;
  busy_until_ns_ = now + facade.transmit_ns(port_, d.bytes);
  SharebufSwitch::Held h;
  NS_ABORT_MSG_IF(!sw_->Take(d.handle, &h), "SharebufQueueDisc: the buffer sent an unknown packet");
  NS_ABORT_MSG_IF(h.disc != this || h.queue != d.queue,
                  "SharebufQueueDisc: the buffer sent another port's packet");
  ns3::Ptr<ns3::QueueDiscItem> item =
      ns3::StaticCast<PortQueue>(GetInternalQueue(d.queue))->Take(ns3::PeekPointer(h.item));
  NS_ABORT_MSG_IF(!item, "SharebufQueueDisc: a sent packet was not in its internal queue");
  Occupancy();
  return item;
}

void SharebufQueueDisc::Depart() {
  in_round_ = true;
  Run();
  in_round_ = false;
}

void SharebufQueueDisc::Evicted(ns3::Ptr<ns3::QueueDiscItem> item, uint32_t queue,
                                const char* reason) {
  ns3::Ptr<ns3::QueueDiscItem> taken =
      ns3::StaticCast<PortQueue>(GetInternalQueue(queue))->Take(ns3::PeekPointer(item));
  NS_ABORT_MSG_IF(!taken, "SharebufQueueDisc: an evicted packet was not in its internal queue");
  DropAfterDequeue(taken, reason);
  Occupancy();
}

void SharebufQueueDisc::EnqueueCopy(uint64_t handle, ns3::Ptr<ns3::QueueDiscItem> item,
                                    uint32_t queue) {
  copy_ = CopyPlace{handle, queue};
  Enqueue(item);
  Run();  // asks for a departure round if the link is free (DoDequeue)
}

void SharebufQueueDisc::Occupancy() {
  const SwitchFacade& facade = sw_->GetFacade();
  uint32_t cells = 0;
  for (uint32_t k = 0; k < facade.queues(port_); ++k)
    cells += facade.queue_cells(port_, k);
  port_cells_ = cells;
  sw_->buffer_cells_ = facade.total_cells();
}

}  // namespace sharebuf::sim
