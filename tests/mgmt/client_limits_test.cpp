// Who gets a control connection when the daemon is full: operators always, the other peers
// within their uid's share, and never at an operator's cost.
#include "mgmt/client_limits.h"

#include <vector>

#include <gtest/gtest.h>

namespace sharebuf::mgmt {
namespace {

ClientSlot guest(uint32_t uid, uint64_t idle_since, bool watching = false, bool busy = false) {
  return {uid, false, watching, busy, idle_since};
}
ClientSlot op(uint64_t idle_since, bool busy = false) {
  return {0, true, false, busy, idle_since};
}

const ClientLimits kSixteen{
    .max_clients = 16, .operator_reserve = 4, .max_clients_per_uid = 64, .max_watches_per_uid = 4};

TEST(ClientLimits, BelowEveryLimitEveryoneIsAccepted) {
  std::vector<ClientSlot> open{guest(1000, 1), op(2)};
  EXPECT_EQ(admit(open, guest(1000, 9), kSixteen).kind, Admission::Kind::kAccept);
  EXPECT_EQ(admit(open, op(9), kSixteen).kind, Admission::Kind::kAccept);
}

// N1: other peers' watches fill their share; the operator still gets a free slot.
TEST(ClientLimits, WatchersOfAnotherPeerLeaveTheOperatorsReserve) {
  std::vector<ClientSlot> open;
  for (uint64_t i = 0; i < 12; ++i)
    open.push_back(guest(65534, i, /*watching=*/true));
  // A thirteenth from the same peer can only take the place of one of its own, the idlest.
  const Admission g = admit(open, guest(65534, 99), kSixteen);
  ASSERT_EQ(g.kind, Admission::Kind::kEvict);
  EXPECT_EQ(g.victim, 0u);
  EXPECT_EQ(admit(open, op(99), kSixteen).kind, Admission::Kind::kAccept);
}

// When every slot is taken the operator closes another peer's client, even a busy one, before an
// operator's; the other peers never close an operator's client.
TEST(ClientLimits, AFullServerMakesRoomForAnOperatorAtAnotherPeersCost) {
  std::vector<ClientSlot> open;
  for (uint64_t i = 0; i < 4; ++i)
    open.push_back(op(i));  // the operators idle longest
  for (uint64_t i = 0; i < 12; ++i)
    open.push_back(guest(1000, 10 + i, false, /*busy=*/true));
  const Admission a = admit(open, op(99), kSixteen);
  ASSERT_EQ(a.kind, Admission::Kind::kEvict);
  EXPECT_FALSE(open[a.victim].is_operator);
  EXPECT_EQ(open[a.victim].idle_since_ns, 10u);
  // A non-busy other peer goes first.
  open[8].busy = false;
  EXPECT_EQ(admit(open, op(99), kSixteen).victim, 8u);
  // The other peers, all busy, cannot take an operator's place: the newcomer is refused.
  open[8].busy = true;
  const Admission g = admit(open, guest(2000, 99), kSixteen);
  EXPECT_EQ(g.kind, Admission::Kind::kRefuse);
  EXPECT_NE(g.reason.find("operator_reserve"), std::string::npos) << g.reason;
}

TEST(ClientLimits, OnlyOperatorsLeftAnIdleOneMakesRoomABusyOneNever) {
  std::vector<ClientSlot> open;
  for (uint64_t i = 0; i < 16; ++i)
    open.push_back(op(i, /*busy=*/i < 3));
  const Admission a = admit(open, op(99), kSixteen);
  ASSERT_EQ(a.kind, Admission::Kind::kEvict);
  EXPECT_EQ(a.victim, 3u);
  for (auto& s : open)
    s.busy = true;
  EXPECT_EQ(admit(open, op(99), kSixteen).kind, Admission::Kind::kRefuse);
}

// N2: a peer looping connect() holds at most its uid's share; beyond it, it is refused, and the
// operator's connections are never the ones closed.
TEST(ClientLimits, APeerIsRefusedPastItsUidsShare) {
  const ClientLimits limits{.max_clients = 1024,
                            .operator_reserve = 8,
                            .max_clients_per_uid = 64,
                            .max_watches_per_uid = 4};
  std::vector<ClientSlot> open{op(0)};
  for (uint64_t i = 0; i < 64; ++i)
    open.push_back(guest(65534, 1 + i));
  const Admission a = admit(open, guest(65534, 99), limits);
  EXPECT_EQ(a.kind, Admission::Kind::kRefuse);
  EXPECT_NE(a.reason.find("max_clients_per_uid"), std::string::npos) << a.reason;
  EXPECT_EQ(admit(open, guest(1000, 99), limits).kind, Admission::Kind::kAccept);
}

TEST(ClientLimits, WatchesArePerUidForOtherPeersOnly) {
  std::vector<ClientSlot> open;
  for (uint64_t i = 0; i < 4; ++i)
    open.push_back(guest(65534, i, /*watching=*/true));
  EXPECT_NE(watch_refusal(open, guest(65534, 9), kSixteen).find("max_watches_per_uid"),
            std::string::npos);
  EXPECT_TRUE(watch_refusal(open, guest(1000, 9), kSixteen).empty());
  EXPECT_TRUE(watch_refusal(open, op(9), kSixteen).empty());
}

}  // namespace
}  // namespace sharebuf::mgmt
