#include "sim/ns3/sender_tag.h"

namespace sharebuf::sim {

NS_OBJECT_ENSURE_REGISTERED(SenderTag);

ns3::TypeId SenderTag::GetTypeId() {
  static ns3::TypeId tid =
      ns3::TypeId("sharebuf::SenderTag").SetParent<ns3::Tag>().AddConstructor<SenderTag>();
  return tid;
}

SenderView SenderView::Of(uint8_t header_dscp, const ns3::Packet& p) {
  SenderView v;
  SenderTag tag;
  if (p.PeekPacketTag(tag)) {
    v.tagged = true;
    v.dscp = tag.dscp();
    v.first_bdp = tag.first_bdp();
  }
  if (header_dscp != 0) v.dscp = header_dscp;
  return v;
}

}  // namespace sharebuf::sim
