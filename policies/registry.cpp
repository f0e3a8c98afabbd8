#include "policies/registry.h"

#include <array>
#include <string>

#include "policies/abm.h"
#include "policies/credence.h"
#include "policies/cs.h"
#include "policies/dt.h"
#include "policies/edt.h"
#include "policies/fab.h"
#include "policies/fb.h"
#include "policies/fba.h"
#include "policies/ib.h"
#include "policies/lqd.h"
#include "policies/occamy.h"
#include "policies/protean.h"
#include "policies/reverie.h"
#include "policies/smartbuf.h"
#include "policies/static.h"

namespace sharebuf::policies {
namespace {

template <typename P>
std::unique_ptr<Policy> make(const Params& params, const PolicyEnv& env) {
  return std::make_unique<P>(params, env);
}

template <typename P>
constexpr PolicyInfo info(std::string_view summary) {
  return PolicyInfo{P::kName, summary, std::span<const ParamSpec>(P::kParams), &make<P>};
}

const std::array kBuiltins = {
    info<CsPolicy>("Complete Sharing: accept while the frame fits in the pool"),
    info<StaticPolicy>("Complete Partitioning: a fixed cap per queue"),
    info<DtPolicy>("Dynamic Thresholds: Q[q] < alpha * (B - Occ)"),
    info<EdtPolicy>("Enhanced DT: CS while a burst grows from an empty queue, DT otherwise"),
    info<ProteanPolicy>("Protean: CS for short flows, DT for long, gradient-scaled DT for incasts"),
    info<SmartbufPolicy>(
        "Smartbuf: DT, capped during a burst by learned demands of similar bursts"),
    info<FbPolicy>("FB: alpha * (1/N_p) * gamma * (B - Occ), per priority group"),
    info<FbaPolicy>("FBA: DT with per-queue alphas recomputed periodically from FB's factors"),
    info<AbmPolicy>("ABM: FB's factors with a large alpha for a flow's first RTT"),
    info<LqdPolicy>("Longest Queue Drop: push out from the longest queue when full"),
    info<CredencePolicy>("Credence: drop-tail following LQD's queue lengths, with an ML oracle"),
    info<FabPolicy>("FAB: DT with a large alpha for a flow's first bytes since it (re)started"),
    info<IbPolicy>("IB: DT with approximate fair dropping (AFD) of queues over their fair share"),
    info<OccamyPolicy>(
        "Occamy: DT, and head drops from queues over it with the spare memory bandwidth"),
    info<ReveriePolicy>(
        "Reverie: a low-pass filtered queue length against alpha * Rem / congested queues"),
};

}  // namespace

std::span<const PolicyInfo> builtin_policies() noexcept {
  return kBuiltins;
}

const PolicyInfo* find_policy(std::string_view name) noexcept {
  for (const PolicyInfo& p : kBuiltins) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::unique_ptr<Policy> make_policy(std::string_view name, const Params& params,
                                    const PolicyEnv& env) {
  const PolicyInfo* info = find_policy(name);
  if (info == nullptr) {
    std::string known;
    for (const PolicyInfo& p : kBuiltins)
      known += (known.empty() ? "" : ", ") + std::string(p.name);
    throw ConfigError((params.origin.empty() ? "" : params.origin + ": ") + "unknown policy '" +
                      std::string(name) + "' (known policies: " + known + ")");
  }
  if (env.layout == nullptr) throw ConfigError("policy '" + std::string(name) + "': no layout");
  return info->make(params, env);
}

namespace {

// A '|' inside a cell would end it; the help texts use none, but escape to be safe.
std::string cell(std::string_view text) {
  std::string out;
  for (char ch : text)
    out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

// One parameter's cells after its name: type, default, range, meaning.
std::string param_cells(const ParamSpec& s) {
  return std::string(to_string(s.type)) + " | " +
         (s.default_value.empty() ? std::string("none") : "`" + cell(s.default_value) + "`") +
         " | " + (s.type == ParamType::kString && s.choices.empty() ? "any" : cell(range_text(s))) +
         " | " + cell(s.help) + " |\n";
}

}  // namespace

std::string params_markdown() {
  std::string out =
      "| policy | parameter | type | default | range | meaning |\n|---|---|---|---|---|---|\n";
  for (const PolicyInfo& p : builtin_policies()) {
    for (const ParamSpec& s : p.params)
      out += "| `" + std::string(p.name) + "` | `" + std::string(s.name) + "` | " + param_cells(s);
  }
  return out;
}

std::string params_markdown(std::string_view policy) {
  const PolicyInfo* info = find_policy(policy);
  if (info == nullptr) throw ConfigError("unknown policy '" + std::string(policy) + "'");
  if (info->params.empty()) return "It has no parameters.\n";
  std::string out = "| parameter | type | default | range | meaning |\n|---|---|---|---|---|\n";
  for (const ParamSpec& s : info->params)
    out += "| `" + std::string(s.name) + "` | " + param_cells(s);
  return out;
}

}  // namespace sharebuf::policies
