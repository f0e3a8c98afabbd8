#include "sim/ns3/dscp_tag.h"

namespace sharebuf::sim {

NS_OBJECT_ENSURE_REGISTERED(DscpTag);

ns3::TypeId DscpTag::GetTypeId() {
  static ns3::TypeId tid =
      ns3::TypeId("sharebuf::DscpTag").SetParent<ns3::Tag>().AddConstructor<DscpTag>();
  return tid;
}

uint8_t DscpTag::Of(uint8_t header_dscp, const ns3::Packet& p) {
  if (header_dscp != 0) return header_dscp;
  DscpTag tag;
  return p.PeekPacketTag(tag) ? tag.dscp() : 0;
}

}  // namespace sharebuf::sim
