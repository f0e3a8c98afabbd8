// TableReader: reads one TOML table strictly — typed getters, values with units, and an error
// naming file, line, column and key for a bad value or for any key nobody read (a typo must never
// silently fall back to a default). Shared by the switch's configuration
// (config/switch_config_reader.cpp), sharebufd's own sections (mgmt/config_loader.cpp) and
// sharebuf-sim's scenario files (sim/ns3/scenario.cpp).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include "common/config_error.h"
#include "policies/params.h"

namespace sharebuf::config {

using ConfigError = common::ConfigError;

// "file:line:column" of a node (just "file" when the node has no position; the node's own
// source name when it was parsed from another text, e.g. "--set run.seed").
std::string location(const std::string& file, const toml::source_region& src);

// Reads one TOML table strictly: typed getters, units, and an error for every key not read.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string file, std::string section)
      : table_(table), file_(std::move(file)), section_(std::move(section)) {}

  [[noreturn]] void fail(std::string_view key, const std::string& problem) const {
    const toml::node* n = table_.get(key);
    const std::string where = location(file_, n != nullptr ? n->source() : table_.source());
    throw ConfigError(where + ": " + section_ + " key '" + std::string(key) + "': " + problem);
  }
  [[noreturn]] void fail_table(const std::string& problem) const {
    throw ConfigError(location(file_, table_.source()) + ": " + section_ + ": " + problem);
  }

  const toml::node* get(std::string_view key) {
    used_.insert(std::string(key));
    return table_.get(key);
  }

  std::optional<std::string> string(std::string_view key) {
    const toml::node* n = get(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_string()) fail(key, "must be a string");
    return n->as_string()->get();
  }
  std::optional<int64_t> integer(std::string_view key, int64_t min, int64_t max) {
    const toml::node* n = get(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_integer()) fail(key, "must be an integer");
    const int64_t v = n->as_integer()->get();
    if (v < min || v > max) {
      fail(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) +
                    ", got " + std::to_string(v));
    }
    return v;
  }
  std::optional<double> number(std::string_view key, double min, double max) {
    const toml::node* n = get(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_number()) fail(key, "must be a number");
    const double v = n->value<double>().value_or(0);
    if (!(v >= min && v <= max)) {
      std::ostringstream out;
      out << "must be between " << min << " and " << max << ", got " << v;
      fail(key, out.str());
    }
    return v;
  }
  std::optional<bool> boolean(std::string_view key) {
    const toml::node* n = get(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_boolean()) fail(key, "must be true or false");
    return n->as_boolean()->get();
  }
  std::string choice(std::string_view key, std::string fallback,
                     std::initializer_list<std::string_view> options) {
    const auto s = string(key);
    if (!s) return fallback;
    for (std::string_view o : options) {
      if (o == *s) return *s;
    }
    std::string list;
    for (std::string_view o : options)
      list += (list.empty() ? "" : ", ") + std::string(o);
    fail(key, "must be one of " + list + ", got '" + *s + "'");
  }
  // A key declared in a ParamSpec table (model/trim_params.h): its range, or its default and
  // choices, come from the declaration.
  std::optional<int64_t> integer(std::string_view key, const policies::ParamSpec& spec) {
    return integer(key, static_cast<int64_t>(spec.min), static_cast<int64_t>(spec.max));
  }
  std::string choice(std::string_view key, const policies::ParamSpec& spec) {
    const auto s = string(key);
    if (!s) return std::string(spec.default_value);
    for (std::string_view rest = spec.choices; !rest.empty();) {
      const size_t comma = rest.find(',');
      if (rest.substr(0, comma) == *s) return *s;
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    fail(key, "must be one of " + policies::range_text(spec) + ", got '" + *s + "'");
  }
  // Integers are taken as is; strings go through a unit parser.
  template <typename Parse>
  std::optional<uint64_t> with_unit(std::string_view key, Parse&& parse) {
    const toml::node* n = get(key);
    if (n == nullptr) return std::nullopt;
    if (n->is_integer()) {
      const int64_t v = n->as_integer()->get();
      if (v < 0) fail(key, "must not be negative");
      return static_cast<uint64_t>(v);
    }
    if (!n->is_string()) fail(key, "must be a number or a string with a unit");
    try {
      return parse(n->as_string()->get());
    } catch (const std::invalid_argument& e) {
      fail(key, e.what());
    }
  }
  std::vector<int64_t> integer_list(std::string_view key, int64_t min, int64_t max) {
    std::vector<int64_t> out;
    const toml::node* n = get(key);
    if (n == nullptr) return out;
    const toml::array* a = n->as_array();
    if (a == nullptr) fail(key, "must be a list of integers");
    for (const toml::node& e : *a) {
      if (!e.is_integer()) fail(key, "must be a list of integers");
      const int64_t v = e.as_integer()->get();
      if (v < min || v > max) {
        fail(key, "entries must be between " + std::to_string(min) + " and " + std::to_string(max) +
                      ", got " + std::to_string(v));
      }
      out.push_back(v);
    }
    return out;
  }
  // Every key must have been read.
  void finish() const {
    for (const auto& [k, v] : table_) {
      if (!used_.contains(std::string(k.str()))) {
        std::string known;
        for (const auto& u : used_)
          known += (known.empty() ? "" : ", ") + u;
        throw ConfigError(location(file_, v.source()) + ": " + section_ + ": unknown key '" +
                          std::string(k.str()) + "' (known keys: " + known + ")");
      }
    }
  }
  const toml::table& table() const { return table_; }
  const std::string& file() const { return file_; }

 private:
  const toml::table& table_;
  std::string file_;
  std::string section_;
  std::set<std::string> used_;
};

// Array of tables (`[[name]]`); an absent key is an empty list.
std::vector<const toml::table*> tables_of(TableReader& parent, std::string_view key);

// A TOML value as JSON (policy parameters are JSON objects).
nlohmann::json to_json(const toml::node& n);

}  // namespace sharebuf::config
