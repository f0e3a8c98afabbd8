// Policy parameters: the untyped table a policy is configured from (a TOML table or a JSON
// object, converted by mgmt/ into JSON values with the file/line of every key), the declared
// parameter list of each policy, and ParamReader, which turns the table into a typed config.
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

namespace sharebuf::policies {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Params {
  nlohmann::json values = nlohmann::json::object();
  std::string origin;  // where the table came from, e.g. "sharebuf.toml [policy]"
  std::map<std::string, std::string, std::less<>> key_origins;  // key -> "file:line:column"

  // The most precise location known for `key`.
  std::string where(std::string_view key) const;
};

enum class ParamType { kNumber, kInteger, kBool, kString, kNumberOrList };

std::string_view to_string(ParamType t) noexcept;

struct ParamSpec {
  std::string_view name;
  ParamType type;
  std::string_view default_value;  // as documented, e.g. "1.0" or "B / number of queues"
  std::string_view help;
};

class ParamReader {
 public:
  // Rejects keys that are not in `specs` right away.
  ParamReader(std::string_view policy, const Params& params, std::span<const ParamSpec> specs);

  double number(std::string_view key, double fallback, double min, double max) const;
  uint64_t integer(std::string_view key, uint64_t fallback, uint64_t min, uint64_t max) const;
  bool boolean(std::string_view key, bool fallback) const;
  std::string choice(std::string_view key, std::string_view fallback,
                     std::initializer_list<std::string_view> options) const;
  // A single number (returned as a one-element list) or a list of numbers; nullopt if absent.
  std::optional<std::vector<double>> number_or_list(std::string_view key, double min,
                                                    double max) const;

  [[noreturn]] void fail(std::string_view key, std::string_view problem) const;

 private:
  const nlohmann::json* find(std::string_view key) const;

  std::string policy_;
  const Params& params_;
};

}  // namespace sharebuf::policies
