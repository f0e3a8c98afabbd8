// The registry of built-in policies: one explicit list (a self-registering static would not
// survive static-library linking), looked up by the stable names the config and control socket
// use.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::policies {

struct PolicyInfo {
  std::string_view name;
  std::string_view summary;
  std::span<const ParamSpec> params;
  std::unique_ptr<Policy> (*make)(const Params&, const PolicyEnv&);
};

std::span<const PolicyInfo> builtin_policies() noexcept;
const PolicyInfo* find_policy(std::string_view name) noexcept;

// Every built-in policy's parameters as one Markdown table (policy, parameter, type, default,
// range, meaning): the table of docs/policies.md, generated from the declared kParams tables.
std::string params_markdown();
// One policy's parameters as a Markdown table (its page, docs/policies/NAME.md); ConfigError for
// an unknown name.
std::string params_markdown(std::string_view policy);

// Builds and validates a policy. Throws ConfigError for an unknown name (listing the known ones)
// or bad parameters (naming the key).
std::unique_ptr<Policy> make_policy(std::string_view name, const Params& params,
                                    const PolicyEnv& env);

}  // namespace sharebuf::policies
