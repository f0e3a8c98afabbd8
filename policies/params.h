// Policy parameters: the untyped table a policy is configured from (a TOML table or a JSON
// object, converted by config/ into JSON values with the file/line of every key), the declared
// parameter list of each policy, and ParamReader, which turns the table into a typed config.
//
// Each policy declares its parameters once, in its kParams table (name, type, default, range or
// choices, help). ParamReader takes defaults, ranges and choices from there, and records every
// value it hands out, so the policy's params() (what policy.get and policy.set report, and what
// rebuilds an equal policy), policy.list, sharebuf-replay --list and the parameter table of
// docs/policies.md (params_markdown(); a test keeps the page equal to it) all come from the
// one table.
//
// Validation is strict and happens before anything is committed: an unknown key, a wrong type or
// a value out of range throws ConfigError whose message names where the key came from, the
// policy and the key — e.g. `sharebuf.toml:14:1: policy 'dt': unknown key 'alhpa' (known keys:
// alpha)`.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/config_error.h"

namespace sharebuf::policies {

// Configuration errors are common::ConfigError (common/config_error.h); the policies' name for it.
using ConfigError = common::ConfigError;

struct Params {
  nlohmann::json values = nlohmann::json::object();
  std::string origin;  // where the table came from, e.g. "sharebuf.toml [policy]"
  std::map<std::string, std::string, std::less<>> key_origins;  // key -> "file:line:column"

  // The most precise location known for `key`.
  std::string where(std::string_view key) const;
};

// kDuration and kRate: a string with a unit as in the configuration file ("6us", "10Gbit"; bare
// numbers are nanoseconds and bits per second), held as ns and bit/s; min and max in those units.
enum class ParamType { kNumber, kInteger, kBool, kString, kNumberOrList, kDuration, kRate };

std::string_view to_string(ParamType t) noexcept;

struct ParamSpec {
  std::string_view name;
  ParamType type;
  // The default: a literal the reader parses ("1.0", "64", "true", "none"), or for a default
  // the policy computes (kNumberOrList only), its description, e.g. "B / number of queues".
  std::string_view default_value;
  std::string_view help;
  double min = 0;  // kNumber, kInteger (negative allowed when min < 0), kNumberOrList,
                   // kDuration, kRate: the accepted range, inclusive
  double max = 0;
  std::string_view choices = {};  // kString: the accepted values, comma-separated; empty: any
  // What the documentation shows as the default when the value above means something else
  // ("keep" for a DSCP of -1, "one per RX worker"); empty: the value itself.
  std::string_view default_doc = {};
};

// The range or choices of a parameter as documented, e.g. "1/1024 – 1024", "none, forest".
std::string range_text(const ParamSpec& spec);

class ParamReader {
 public:
  // What the table configures, as error messages name it: "policy 'dt'", "[trimming]".
  struct Subject {
    std::string text;
  };
  // Rejects keys that are not in `specs` right away.
  ParamReader(std::string_view policy, const Params& params, std::span<const ParamSpec> specs);
  ParamReader(Subject subject, const Params& params, std::span<const ParamSpec> specs);

  // The value of a declared key, or its declared default; checked against the declared range or
  // choices. Reading a key that `specs` does not declare with this type is a programming error
  // (std::logic_error).
  double number(std::string_view key) const;
  uint64_t integer(std::string_view key) const;
  int64_t signed_integer(std::string_view key) const;  // kInteger whose range goes below 0
  uint64_t duration_ns(std::string_view key) const;
  uint64_t rate_bps(std::string_view key) const;
  bool boolean(std::string_view key) const;
  std::string choice(std::string_view key) const;               // kString with choices
  std::optional<std::string> text(std::string_view key) const;  // kString, any; nullopt if absent
  // A single number (returned as a one-element list) or a list of numbers; nullopt if absent.
  std::optional<std::vector<double>> number_or_list(std::string_view key) const;

  // Whether the table gives `key` (a declared key; absent ones read as their default).
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // Every value handed out so far (defaults included), by key: the policy's params().
  const nlohmann::json& values() const noexcept { return values_; }

  [[noreturn]] void fail(std::string_view key, std::string_view problem) const;

 private:
  const nlohmann::json* find(std::string_view key) const;
  const ParamSpec& spec(std::string_view key, ParamType type) const;

  std::string subject_;
  const Params& params_;
  std::span<const ParamSpec> specs_;
  mutable nlohmann::json values_ = nlohmann::json::object();
};

}  // namespace sharebuf::policies
