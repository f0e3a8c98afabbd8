#include "model/classifier.h"

#include <gtest/gtest.h>

#include "tests/model/frame_builder.h"

namespace sharebuf::model {
namespace {

SwitchConfig three_classes(ClassifyMode mode) {
  SwitchConfig c;
  c.classify = mode;
  c.classes.resize(3);
  c.classes[0].traffic.name = "default";
  c.classes[1].traffic.name = "voice";
  c.classes[1].queue = 1;
  c.classes[1].dscp = {46};
  c.classes[1].pcp = {5};
  c.classes[2].traffic.name = "bulk";
  c.classes[2].queue = 2;
  c.classes[2].ecn_threshold_cells = 30;
  c.classes[2].dscp = {8};
  c.ports = {PortConfig{.name = "p1", .default_class = 0},
             PortConfig{.name = "p2", .default_class = 2}};
  return c;
}

uint8_t classify(const Classifier& c, const testing::FrameSpec& s, uint16_t port) {
  const auto f = testing::build_frame(s);
  return c.classify(parse_frame(f), port);
}

TEST(Classifier, ByDscpWithPortDefaults) {
  const Classifier c(three_classes(ClassifyMode::kDscp));
  EXPECT_EQ(classify(c, {.dscp = 46}, 0), 1);
  EXPECT_EQ(classify(c, {.dscp = 8}, 0), 2);
  EXPECT_EQ(classify(c, {.dscp = 0}, 1), 2);  // unmapped DSCP: port p2's default
  EXPECT_EQ(c.queue_of(1), 1u);
  EXPECT_EQ(c.ecn_threshold_cells(2), 30u);
}

TEST(Classifier, ByPcp) {
  const Classifier c(three_classes(ClassifyMode::kPcp));
  EXPECT_EQ(classify(c, {.vlan = true, .pcp = 5}, 0), 1);
  EXPECT_EQ(classify(c, {.vlan = false, .dscp = 46}, 0), 0);  // untagged: default
}

TEST(Classifier, ByRulesFirstMatchWins) {
  SwitchConfig cfg = three_classes(ClassifyMode::kRules);
  cfg.rules = {RuleConfig{.proto = 17, .dst_port = 5001, .class_id = 1},
               RuleConfig{.src_ip = 0xc6120000, .src_prefix = 24, .class_id = 2},
               RuleConfig{.proto = 6, .class_id = 1}};
  const Classifier c(cfg);
  EXPECT_EQ(classify(c, {.proto = 17, .dst_port = 5001}, 0), 1);
  EXPECT_EQ(classify(c, {.proto = 17, .dst_port = 5002}, 0), 2);  // second rule: 198.18.0.0/24
  EXPECT_EQ(classify(c, {.ipv6 = true, .proto = 6}, 0), 1);
  EXPECT_EQ(classify(c, {.ipv6 = true, .proto = 17}, 1), 2);  // no rule: p2's default
}

}  // namespace
}  // namespace sharebuf::model
