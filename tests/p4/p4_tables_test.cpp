// sharebuf-p4tables (p4/tables/p4_tables.h): the entries it generates are the tables the
// software uses — a ternary match over the generated log2 entries and an exact match over the
// exp2 entries give what TofinoArithmetic gives, and protean.p4's probe pass, run step by step
// on nothing but the generated JSON, computes the thresholds ProteanPolicy computes with
// `arithmetic = "tofino"` — FB's Shift entries are within a factor of sqrt(2) of Eq. 3, and a
// configuration the program or the hardware cannot represent is refused by name.
#include "p4/tables/p4_tables.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "buffer/buffer_state.h"
#include "config/switch_config_reader.h"
#include "model/ingress_meters.h"
#include "model/overflow_step.h"
#include "model/tofino_approx.h"
#include "policies/protean.h"
#include "policies/registry.h"
#include "policies/tofino_arithmetic.h"
#include "tests/fixtures/occupancy.h"

namespace sharebuf::p4 {
namespace {

using nlohmann::json;

model::SwitchConfig example(const std::string& program) {
  return config::load_switch_config(std::string(SHAREBUF_SOURCE_DIR) + "/p4/examples/" + program +
                                    ".toml");
}

const json& table(const json& tables, const std::string& name) {
  for (const json& t : tables["tables"]) {
    if (t["table"] == name) return t;
  }
  throw std::runtime_error("no table " + name);
}

uint64_t number(const json& v) {
  return v.is_string() ? std::stoull(v.get<std::string>(), nullptr, 0) : v.get<uint64_t>();
}

// A table as the switch would hold it: ternary (value, mask) -> result, exact key -> result.
struct Ternary {
  std::map<uint32_t, std::map<uint32_t, int64_t>> by_mask;
  explicit Ternary(const json& t) {
    for (const json& e : t["entries"]) {
      const json& k = e["match"].begin().value();
      by_mask[static_cast<uint32_t>(number(k["mask"]))][static_cast<uint32_t>(number(k["value"]))] =
          e["data"]["value"].get<int64_t>();
    }
  }
  int64_t lookup(uint32_t x, int64_t miss) const {
    int matches = 0;
    int64_t out = miss;
    for (const auto& [mask, entries] : by_mask) {
      const auto it = entries.find(x & mask);
      if (it != entries.end()) {
        out = it->second;
        ++matches;
      }
    }
    EXPECT_LE(matches, 1) << x;
    return out;
  }
};
struct Exact {
  std::map<uint64_t, int64_t> values;
  explicit Exact(const json& t) {
    for (const json& e : t["entries"])
      values[number(e["match"].begin().value()["exact"])] = e["data"]["value"].get<int64_t>();
  }
  int64_t lookup(uint64_t k, int64_t miss) const {
    const auto it = values.find(k);
    return it == values.end() ? miss : it->second;
  }
};

TEST(P4Tables, TheLogAndExpEntriesAreTheSoftwaresTables) {
  const json tables = generate_p4_tables(example("protean"), {.program = "protean"});
  const policies::TofinoArithmetic& a = policies::tofino_arithmetic();
  for (const char* inst :
       {"Egress.log2_dq", "Egress.log2_dt", "Egress.log2_g", "Ingress.log2_rem"}) {
    const Ternary log2(table(tables, std::string("pipe.Protean") + inst + ".log2"));
    std::mt19937 rng(11);
    for (int i = 0; i < 20000; ++i) {
      const uint32_t x = static_cast<uint32_t>(rng()) >> (rng() % 32);
      ASSERT_EQ(log2.lookup(x, policies::TofinoArithmetic::kLogOfZero), a.log2(x)) << inst << x;
    }
  }
  const Exact gradient(table(tables, "pipe.ProteanEgress.exp_gradient.exp2"));
  for (int32_t s = -2048; s < 5888; s += 7)
    ASSERT_EQ(gradient.lookup(static_cast<uint64_t>(s + 2048), 0), a.exp_gradient(s)) << s;
  for (const char* inst : {"exp_threshold", "exp_long"}) {
    const Exact cells(table(tables, std::string("pipe.ProteanIngress.") + inst + ".exp2"));
    for (int32_t t = 0; t < 16384; t += 5)  // past 8191: the software's clamp, as entries
      ASSERT_EQ(cells.lookup(static_cast<uint64_t>(t), 0), a.exp_cells(t)) << inst << t;
  }
}

// protean.p4 and dt.p4 admit on the sign bit of the 32-bit Q - T: every threshold their cells
// tables can give must stay below 2^31, or a large enough T would read as "Q above T" and drop
// where the software admits (a gradient of 4096x line rate did it with B = 2^19 - 1).
TEST(P4Tables, NoCellsEntryReachesTheSignBit) {
  for (const char* program : {"protean", "dt"}) {
    const json tables = generate_p4_tables(example(program), {.program = program});
    int checked = 0;
    for (const json& t : tables["tables"]) {
      const std::string name = t["table"];
      if (name.find(".exp2") == std::string::npos || name.find("exp_gradient") != std::string::npos)
        continue;
      for (const json& e : t["entries"]) {
        ASSERT_LT(e["data"]["value"].get<uint64_t>(), uint64_t{1} << 31) << program << " " << name;
        ++checked;
      }
    }
    EXPECT_GT(checked, 8000) << program;
  }
  EXPECT_EQ(policies::tofino_arithmetic().exp_cells(1 << 20),
            policies::TofinoArithmetic::kMaxCells);
}

// One port with one queue, so each probe's batch is the whole buffer: the P4 program's Rem is
// B - Q as the software's view gives it.
const char* kOneQueue = R"([buffer]
size = "20000 cells"
[policy]
name = "protean"
arithmetic = "tofino"
alpha_incast = 0.5
alpha_long = 0.25
beta = 0.125
buildup = 1.5
[[classes]]
name = "incast"
role = "incast"
[[classes]]
name = "long"
role = "long"
[[ports]]
interface = "p1"
rate = "10Gbit"
)";

TEST(P4Tables, ProteanProbePassOnTheGeneratedEntriesIsTheSoftware) {
  const model::SwitchConfig cfg = config::parse_switch_config(kOneQueue, "one.toml");
  const json tables = generate_p4_tables(cfg, {.program = "protean"});
  const std::string ig = "pipe.ProteanIngress.", eg = "pipe.ProteanEgress.";
  const json& eg_params = table(tables, eg + "gradient_params")["default_action"]["data"];
  const json& ig_params = table(tables, ig + "protean_params")["default_action"]["data"];
  const int64_t capacity = cfg.buffer.capacity_cells, buildup = eg_params["buildup"];
  const int64_t log_incast = eg_params["log_incast"], log_long = ig_params["log_long"];
  const int64_t log_rate =
      table(tables, eg + "queue_rate")["entries"][0]["data"]["log_cells_per_ns"];
  const int shift = tables["compile"]["defines"]["SB_BETA_SHIFT"];
  const Ternary log2_dq(table(tables, eg + "log2_dq.log2")),
      log2_dt(table(tables, eg + "log2_dt.log2"));
  const Ternary log2_g(table(tables, eg + "log2_g.log2")),
      log2_rem(table(tables, ig + "log2_rem.log2"));
  const Exact exp_gradient(table(tables, eg + "exp_gradient.exp2"));
  const Exact exp_threshold(table(tables, ig + "exp_threshold.exp2")),
      exp_long(table(tables, ig + "exp_long.exp2"));
  const int64_t kZero = policies::TofinoArithmetic::kLogOfZero;
  auto cells = [](const Exact& t, int64_t k) -> int64_t {
    if (k < 0) return 0;
    return t.lookup(static_cast<uint64_t>(k), 0);  // keyed on the logarithm, no clamp
  };

  // The software, fed the same samples.
  const buffer::BufferConfig bc = model::buffer_config(cfg);
  buffer::BufferLayout layout(bc.capacity_cells, bc.cell_bytes, bc.ports);
  buffer::BufferState state(layout);
  const buffer::BufferView view = buffer::BufferView::exact(state);
  const policies::PolicyEnv env = model::policy_env(cfg, layout);
  policies::ProteanPolicy software(cfg.policy_params, env);

  // protean.p4's registers for queue 0: egress's Qprev, Tprev and g, ingress's Rem.
  int64_t q_prev = 0, t_prev = 0, g = 0;
  std::mt19937 rng(3);
  uint32_t q = 0;
  uint64_t t = 0;
  int scaled = 0;
  for (int i = 0; i < 4000; ++i) {
    t += 5000 + rng() % 20000;
    // Bursts: rise at up to about 8x line rate (15.6 cells per us at 10 Gbit/s), then drain.
    const uint32_t step = static_cast<uint32_t>(200 + rng() % 800);
    q = (i / 40) % 2 == 0 ? std::min<uint32_t>(q + step, 15000) : q - std::min(q, step);
    testing::set_queue_cells(state, 0, q);
    software.on_dequeue({.now_ns = t, .queue = 0}, view);

    // The probe's egress pass of p4/protean.p4 (Algorithm 2's gradient), on the JSON alone.
    const int64_t dq = std::llabs(static_cast<int64_t>(q) - q_prev);
    const int64_t dt = static_cast<int64_t>(t) - t_prev;
    int64_t g_raw = 0;
    if (dq != 0 && dt != 0) {
      const int64_t s = log2_dq.lookup(static_cast<uint32_t>(dq), kZero) -
                        log2_dt.lookup(static_cast<uint32_t>(dt), kZero) - log_rate;
      const int64_t k = s + 2048;
      g_raw = k < 0 ? 0 : exp_gradient.lookup(static_cast<uint64_t>(std::min<int64_t>(k, 7935)), 0);
      if (q < q_prev) g_raw = -g_raw;
    }
    g = g - (g >> shift) + (g_raw >> shift);
    q_prev = q;
    t_prev = static_cast<int64_t>(t);
    const int64_t log_scale =
        g > buildup && q != 0 ? log2_g.lookup(static_cast<uint32_t>(g), kZero) - 2048 + log_incast
                              : log_incast;
    // Its ingress pass: the product with Rem.
    const int64_t rem = capacity - q;
    const int64_t log_b = log2_rem.lookup(static_cast<uint32_t>(rem), kZero);
    const int64_t thr = cells(exp_threshold, log_scale + log_b);
    const int64_t long_thr = cells(exp_long, log_long + log_b);
    scaled += g > buildup ? 1 : 0;

    ASSERT_EQ(std::lround(software.gradient(0) * 256), g) << "sample " << i;
    ASSERT_EQ(static_cast<int64_t>(software.incast_threshold(0, view)), thr) << "sample " << i;
    ASSERT_EQ(static_cast<int64_t>(software.threshold_cells(0, 1, view)), long_thr) << i;
  }
  EXPECT_GT(scaled, 100);  // the burst branch was exercised
  testing::set_queue_cells(state, 0, 0);
}

// FB's Shift entries are within sqrt(2) of Eq. 3, and every key the data pass can form has one:
// counts up to one above the most queues (a queue counted by the last SYNC walk and found empty by
// this one counts twice), which take the most's entry; a miss would drop the frame (no_room).
TEST(P4Tables, FbShiftsAreWithinASquareRootOfTwoOfEquationThree) {
  const model::SwitchConfig cfg = example("fb");
  const json tables = generate_p4_tables(cfg, {.program = "fb"});
  const json& shifts = table(tables, "pipe.FbIngress.fb_shift");
  ASSERT_GT(shifts["entries"].size(), 100u);
  // p4/examples/fb.toml: 3 ports x 8 queues; queue 0 of each port high (3), the others low (21).
  std::set<std::tuple<size_t, int, int>> keys;
  for (const json& e : shifts["entries"]) {
    const size_t c = e["match"]["md.class_id"]["exact"];
    keys.insert({c, e["match"]["n_p"]["exact"].get<int>(), e["match"]["n"]["exact"].get<int>()});
  }
  for (size_t c = 0; c < cfg.classes.size(); ++c) {
    const int max_np = c == 0 ? 3 : 21;
    // From 0: a queue that filled after the last SYNC walk reads counts of 0 (counted as 1).
    for (int n_p = 0; n_p <= max_np + 1; ++n_p) {
      for (int n = 0; n <= 9; ++n)
        EXPECT_TRUE(keys.count({c, n_p, n})) << "class " << c << " n_p " << n_p << " n " << n;
    }
  }
  for (const json& e : shifts["entries"]) {
    const size_t c = e["match"]["md.class_id"]["exact"];
    const double max_np = c == 0 ? 3 : 21;
    const double n_p = std::max(1.0, std::min(e["match"]["n_p"]["exact"].get<double>(), max_np));
    const double n = std::max(1.0, std::min(e["match"]["n"]["exact"].get<double>(), 8.0));
    const double alpha = c == 0 ? 0.8 : 0.6;  // tcp is high (0.8), udp* low (0.6)
    const std::string action = e["action"];
    const bool right = action.find("shift_right_") != std::string::npos;
    const int k = std::stoi(action.substr(action.rfind('_') + 1));
    const double factor = std::ldexp(1.0, right ? -k : k);
    const double exact = alpha / (n_p * n);
    EXPECT_LE(std::abs(std::log2(factor / exact)), 0.5 + 1e-9) << action << " " << n_p << " " << n;
  }
}

// A probe weighs 39 B in the traffic manager and the port's shaper charges it: one per queue per
// interval through every data port (dt.p4, protean.p4), one pass per queue through the
// recirculation port (fb.p4's SYNC walk). Above 1 % of a port the entries say so, with the
// interval that would keep under it.
TEST(P4Tables, ProbesAreChargedToThePortsTheyPassAndWarnedAboveOnePercent) {
  const json dt = generate_p4_tables(example("dt"), {.program = "dt"});
  ASSERT_EQ(dt["probe_load"]["ports"].size(), 3u);
  for (const json& p : dt["probe_load"]["ports"]) {
    EXPECT_EQ(p["probes_per_interval"], 3);
    EXPECT_DOUBLE_EQ(p["bps"].get<double>(), 3 * 39 * 8 / 1e-3);  // every 1 ms
    EXPECT_DOUBLE_EQ(p["share"].get<double>(), 3 * 39 * 8 / 1e-3 / 100e6);
  }
  EXPECT_TRUE(dt["warnings"].empty()) << dt["warnings"];

  model::SwitchConfig fast = example("protean");
  fast.buffer.probe_interval_ns = 10'000;  // the examples' interval before: 94 % of a port
  const json protean = generate_p4_tables(fast, {.program = "protean"});
  EXPECT_NEAR(protean["probe_load"]["max_share"].get<double>(), 0.936, 1e-9);
  ASSERT_EQ(protean["warnings"].size(), 3u);
  EXPECT_NE(protean["warnings"][0].get<std::string>().find(
                "probes take 93.6 % of port 'p1' (100 Mbit/s; 3 x 39 B every 10 us): [buffer] "
                "probe_interval of at least 936 us"),
            std::string::npos)
      << protean["warnings"][0];

  const json fb = generate_p4_tables(example("fb"), {.program = "fb"});
  EXPECT_TRUE(fb["probe_load"]["ports"].empty());  // SYNC walks pass no data port
  EXPECT_DOUBLE_EQ(fb["probe_load"]["recirculation"]["bps"].get<double>(),
                   24 * 39 * 8 / 10e-6);  // 3 ports x 8 queues every 10 us
  EXPECT_TRUE(fb["warnings"].empty()) << fb["warnings"];
  model::SwitchConfig fb_fast = example("fb");
  fb_fast.buffer.probe_interval_ns = 1'000;
  EXPECT_EQ(generate_p4_tables(fb_fast, {.program = "fb"})["warnings"].size(), 1u);
}

// Each pipe's ingress decides for the frames arriving on its ports and keeps its own registers:
// with ports in two pipes every stamped probe goes to both pipes' recirculation ports (one
// multicast mirror session), so neither pipe's Rem misses the other's queues.
TEST(P4Tables, ProbesReachEveryPipe) {
  const json one = generate_p4_tables(example("dt"), {.program = "dt"});
  const json two = generate_p4_tables(example("dt"), {.program = "dt", .dev_ports = {0, 128, 136}});
  EXPECT_EQ(one["pipes"], 1);
  EXPECT_EQ(two["pipes"], 2);
  ASSERT_EQ(two["multicast_groups"].size(), 1u);
  EXPECT_EQ(two["multicast_groups"][0]["ports"], json::array({69, 128 + 69}));
  const json& session = two["mirror_sessions"][0];
  EXPECT_EQ(session["multicast_group"], two["multicast_groups"][0]["id"]);
  for (const json& e : table(two, "pipe.DtEgress.probe_stamp.recirculation_session")["entries"])
    EXPECT_EQ(e["data"]["session"], session["id"]);
  EXPECT_THROW(
      generate_p4_tables(example("dt"), {.program = "dt", .dev_ports = {0, 128, 136}, .pipes = 1}),
      P4TablesError);
}

// trim.p4's three meters run at the rates the software's meters do (IngressPortState: line,
// twice the pessimistic share at most the line, the share), from the one [trimming]
// pessimistic_share, whose default is the paper's 25 % whatever the pipelines: with the example's
// two pipelines, one over the pipelines (the rule before 2026-11-29) made half-pessimistic the
// line rate.
TEST(P4Tables, TrimMetersRunAtTheSoftwaresRatesThePapersByDefault) {
  for (const double share : {0.0, 0.5, 0.1}) {
    model::SwitchConfig cfg = example("trim");
    if (share > 0) cfg.trim.pessimistic_share = share;
    model::TofinoApprox tofino(model::rx_workers(cfg), {100'000'000});
    model::configure_tofino(tofino, cfg);
    const double p = tofino.settings.pessimistic_share.load();
    EXPECT_DOUBLE_EQ(p, share > 0 ? share : 0.25);
    const double line = 100e6;
    const std::map<std::string, double> software = {
        {"meter_optimistic", line},
        {"meter_halftimistic", std::min(line, 2 * p * line)},
        {"meter_pessimistic", p * line}};
    const json tables = generate_p4_tables(cfg, {.program = "trim"});
    std::map<std::string, int> seen;
    for (const json& m : tables["meters"]) {
      const std::string inst =
          m["meter"].get<std::string>().substr(m["meter"].get<std::string>().rfind('.') + 1);
      ASSERT_TRUE(software.count(inst)) << inst;
      EXPECT_NEAR(m["cir_kbps"].get<double>() * 1000, software.at(inst), 1000) << inst << share;
      EXPECT_EQ(m["pir_kbps"], m["cir_kbps"]);
      ++seen[inst];
    }
    EXPECT_EQ(seen.size(), 3u);
  }
}

// trim.p4's port state, emulated as the program computes it on its generated entries: 32-bit
// registers on the 32-bit nanosecond clock, a NOTIFY writing t0_reg = now + t0_ns and
// t1_reg = now + t1_ns (trim_params), every data packet running t0_active and t1_active (time
// left modulo 2^32 within SB_T_WINDOW_NS; a register past its time moved to just behind now),
// the state picking the meter. p4testgen cannot run it (its Tofino target makes every meter
// green), so this is the check that the program's arithmetic is the software's: against
// IngressPortState (model/ingress_meters.h, the paper's pseudo-code, section 4: pessimistic
// while now <= t0_reg) on notifications and packets at random times and at each boundary,
// across the clock's wrap at 2^32 ns. (What the 32-bit clock cannot tell: a port idle for
// about 4.29 s less the window; the packets here come more often.)
TEST(P4Tables, TrimPortStateOnTheGeneratedEntriesIsTheSoftwares) {
  const model::SwitchConfig cfg = example("trim");
  const json tables = generate_p4_tables(cfg, {.program = "trim"});
  const json& params = table(tables, "pipe.TrimIngress.trim_params")["default_action"]["data"];
  const auto t0_ns = params["t0_ns"].get<uint32_t>();
  const auto t1_ns = params["t1_ns"].get<uint32_t>();
  const auto window = tables["compile"]["defines"]["SB_T_WINDOW_NS"].get<uint32_t>();
  struct Program {  // one egress port's registers in one pipe
    uint32_t t0 = 0, t1 = 0;
    static bool active(uint32_t& reg, uint32_t now, uint32_t window) {  // t0_active, t1_active
      const uint32_t left = reg - now;
      if (left <= window) return true;
      reg = now - 1;
      return false;
    }
    model::PortTrimState on_data(uint32_t now, uint32_t window) {
      const bool in_t0 = active(t0, now, window);
      const bool in_t1 = active(t1, now, window);
      return in_t0   ? model::PortTrimState::kPessimistic
             : in_t1 ? model::PortTrimState::kHalfPessimistic
                     : model::PortTrimState::kOptimistic;
    }
  };
  const model::IngressMeterSettings s{.t0_ns = cfg.trim.t0_ns, .t1_ns = cfg.trim.t1_ns};
  std::mt19937_64 rng(11);
  for (int run = 0; run < 20; ++run) {
    Program program;
    model::IngressPortState software;
    // The 32-bit clock wraps within the run: it starts 40 ms before 2^32 (and a few runs at 0).
    uint64_t now = run < 3 ? 1 : (uint64_t{1} << 32) - 40'000'000 + rng() % 1'000'000;
    std::vector<uint64_t> boundaries;
    for (int step = 0; step < 4000; ++step) {
      const uint64_t r = rng() % 100;
      if (r < 3) {  // a NOTIFY
        program.t0 = static_cast<uint32_t>(now) + t0_ns;
        program.t1 = static_cast<uint32_t>(now) + t1_ns;
        software.notify(now, s);
        boundaries = {now + t0_ns - 1, now + t0_ns, now + t0_ns + 1,
                      now + t1_ns - 1, now + t1_ns, now + t1_ns + 1};
      } else {
        const model::PortTrimState p = program.on_data(static_cast<uint32_t>(now), window);
        ASSERT_EQ(p, software.state(now))
            << "at " << now << " ns (run " << run << ", step " << step << ")";
      }
      // The next event: at a boundary of the last notification, or up to 3 ms later.
      if (!boundaries.empty() && rng() % 4 == 0) {
        std::erase_if(boundaries, [&](uint64_t b) { return b <= now; });
        if (!boundaries.empty()) {
          now = boundaries.front();
          continue;
        }
      }
      now += 1 + rng() % 3'000'000;
    }
  }
}

// trim.p4's mirror sessions cut every packet at trim_size, so it must hold the longest headers the
// program parses; the t0/t1 registers compare on a wrapping clock within the longest period, a
// compile definition.
TEST(P4Tables, TrimmingCutsBelowNoHeaderAndBoundsItsTimers) {
  model::SwitchConfig cfg = example("trim");
  const json tables = generate_p4_tables(cfg, {.program = "trim"});
  EXPECT_EQ(tables["compile"]["defines"]["SB_T_WINDOW_NS"], 12'000'000);  // T1 = 12 ms
  for (const json& m : tables["mirror_sessions"]) {
    if (m["direction"] == "ingress" && m.contains("queue")) {
      EXPECT_EQ(m["max_pkt_len"], 138);
    }
  }
  cfg.trim.size = 137;
  try {
    generate_p4_tables(cfg, {.program = "trim"});
    ADD_FAILURE() << "a trim_size below the longest headers was accepted";
  } catch (const P4TablesError& e) {
    EXPECT_NE(std::string(e.what()).find("14 + 4 + 60 + 60"), std::string::npos) << e.what();
  }
}

// Before the first probe batch the registers hold what the software's probe registers hold: the
// empty buffer, Rem = B, and the thresholds of an empty queue in it — not zeros, which would
// drop every frame until the first batch came back.
TEST(P4Tables, RegistersStartAtTheEmptyBuffer) {
  const model::SwitchConfig cfg = example("protean");
  const json tables = generate_p4_tables(cfg, {.program = "protean"});
  std::map<std::string, json> regs;
  for (const json& r : tables["registers"])
    regs[r["register"]] = r;
  ASSERT_EQ(regs.size(), 3u);
  const uint32_t b = cfg.buffer.capacity_cells;
  EXPECT_EQ(regs["pipe.ProteanIngress.rem"]["value"], b);

  const buffer::BufferConfig bc = model::buffer_config(cfg);
  buffer::BufferLayout layout(bc.capacity_cells, bc.cell_bytes, bc.ports);
  buffer::BufferState state(layout);
  const buffer::BufferView view = buffer::BufferView::exact(state);
  policies::ProteanPolicy software(cfg.policy_params, model::policy_env(cfg, layout));
  const json& incast = regs["pipe.ProteanIngress.incast_thr"];
  EXPECT_EQ(incast["count"], layout.num_queues());
  EXPECT_EQ(incast["value"].get<double>(), software.incast_threshold(0, view));
  const uint8_t long_class = 2;  // p4/examples/protean.toml's third class
  EXPECT_EQ(regs["pipe.ProteanIngress.long_thr"]["value"],
            software.threshold_cells(0, long_class, view));

  for (const std::string program : {"dt", "fb"}) {
    const json t = generate_p4_tables(example(program), {.program = program});
    ASSERT_EQ(t["registers"].size(), 1u) << program;
    EXPECT_EQ(t["registers"][0]["value"], example(program).buffer.capacity_cells) << program;
  }
}

TEST(P4Tables, WhatTheProgramsCannotRepresentIsRefusedByName) {
  auto error = [](const std::string& program, const std::string& toml,
                  std::vector<uint16_t> dev_ports = {}) -> std::string {
    try {
      generate_p4_tables(config::parse_switch_config(toml, "x.toml"),
                         {.program = program, .dev_ports = std::move(dev_ports)});
    } catch (const P4TablesError& e) {
      return e.what();
    }
    return "";
  };
  const std::string ports =
      "[[ports]]\ninterface = \"a\"\nrate = \"1Gbit\"\nqueues = 2\n"
      "[[ports]]\ninterface = \"b\"\nrate = \"1Gbit\"\nqueues = 2\n";
  const std::string dt = "[buffer]\nsize = \"1000 cells\"\n[policy]\nname = \"dt\"\n" + ports;
  EXPECT_EQ(error("dt", dt), "");
  EXPECT_NE(error("dt", "[buffer]\nsize = \"1000 cells\"\ncell_bytes = 64\n" + ports)
                .find("cell_bytes is 64: Tofino's cells are 80 bytes"),
            std::string::npos);
  EXPECT_NE(error("dt", "[buffer]\nsize = \"600000 cells\"\n" + ports).find("19-bit"),
            std::string::npos);
  EXPECT_NE(error("dt",
                  "[buffer]\nsize = \"1000 cells\"\n[[ports]]\ninterface = \"a\"\nqueues = "
                  "2\n[[ports]]\ninterface = \"b\"\nqueues = 3\n")
                .find("every port needs the same number"),
            std::string::npos);
  EXPECT_NE(error("protean", dt).find("protean.p4 is the twin of 'protean'"), std::string::npos);
  EXPECT_NE(error("protean",
                  "[buffer]\nsize = \"1000 cells\"\n[policy]\nname = \"protean\"\n"
                  "beta = 0.3\n" +
                      ports)
                .find("beta must be 1, 1/2, 1/4"),
            std::string::npos);
  EXPECT_NE(error("protean",
                  "[buffer]\nsize = \"1000 cells\"\n[policy]\nname = \"protean\"\n"
                  "[[classes]]\nname = \"x\"\nalpha = 2.0\n" +
                      ports)
                .find("'x' sets its own alpha"),
            std::string::npos);
  const std::string fb_ports = "[buffer]\nsize = \"1000 cells\"\n[policy]\nname = \"fb\"\n" + ports;
  EXPECT_NE(error("fb",
                  "[buffer]\nsize = \"1000 cells\"\n[policy]\nname = \"fb\"\n[[ports]]\n"
                  "interface = \"a\"\nqueues = 2\nscheduler = \"sp\"\n")
                .find("scheduler is 'sp'"),
            std::string::npos);
  EXPECT_NE(error("trim", dt).find("no class has overflow = \"trim\""), std::string::npos);
  EXPECT_NE(error("dt", dt, {1}).find("--dev-ports lists 1 device ports for 2"), std::string::npos);
  EXPECT_NE(error("dt", dt, {1, 68}).find("68 is not a free front-panel device port"),
            std::string::npos);
  EXPECT_NE(error("ecn", dt).find("unknown program 'ecn'"), std::string::npos);
  EXPECT_NE(error("fb", fb_ports, {0, 128}).find("fb.p4's SYNC walk reads one pipe's"),
            std::string::npos);
  EXPECT_EQ(error("fb", fb_ports, {0, 127}), "");
}

// A route to one port is a forward entry like a static MAC; an ECMP group is refused by name
// (the programs have no action selector), not silently forwarded to its first member.
TEST(P4Tables, ARouteIsAForwardEntryAndAnEcmpGroupIsRefused) {
  model::SwitchConfig cfg = example("dt");
  const size_t before =
      table(generate_p4_tables(cfg, {.program = "dt"}), "pipe.DtIngress.fwd.forward")["entries"]
          .size();
  cfg.routes.push_back({0x020000000042ull, {1}});
  const json one = generate_p4_tables(cfg, {.program = "dt"});
  const json& entries = table(one, "pipe.DtIngress.fwd.forward")["entries"];
  ASSERT_EQ(entries.size(), before + 1);
  EXPECT_EQ(entries[0]["match"]["hdr.ethernet.dst_addr"]["exact"], "0x20000000042");
  EXPECT_EQ(entries[0]["data"]["port_index"], 1);
  cfg.routes.back().ports = {0, 1};
  try {
    generate_p4_tables(cfg, {.program = "dt"});
    ADD_FAILURE() << "an ECMP route was accepted";
  } catch (const P4TablesError& e) {
    EXPECT_NE(std::string(e.what()).find("ECMP group of 2 ports"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sharebuf::p4
