#include "policies/params.h"

#include <cmath>
#include <sstream>

namespace sharebuf::policies {
namespace {

std::string range_text(double min, double max) {
  std::ostringstream out;
  out << "between " << min << " and " << max;
  return out.str();
}

}  // namespace

std::string Params::where(std::string_view key) const {
  if (auto it = key_origins.find(key); it != key_origins.end()) return it->second;
  return origin;
}

std::string_view to_string(ParamType t) noexcept {
  switch (t) {
    case ParamType::kNumber:
      return "number";
    case ParamType::kInteger:
      return "integer";
    case ParamType::kBool:
      return "bool";
    case ParamType::kString:
      return "string";
    case ParamType::kNumberOrList:
      return "number or list of numbers";
  }
  return "?";
}

ParamReader::ParamReader(std::string_view policy, const Params& params,
                         std::span<const ParamSpec> specs)
    : policy_(policy), params_(params) {
  if (!params.values.is_object()) {
    throw ConfigError((params.origin.empty() ? "" : params.origin + ": ") + "policy '" + policy_ +
                      "': parameters must be a table of key = value");
  }
  for (const auto& [key, value] : params.values.items()) {
    bool known = false;
    for (const ParamSpec& s : specs)
      known = known || s.name == key;
    if (known) continue;
    std::string list;
    for (const ParamSpec& s : specs)
      list += (list.empty() ? "" : ", ") + std::string(s.name);
    fail(key, "unknown key (known keys: " + (list.empty() ? std::string("none") : list) + ")");
  }
}

void ParamReader::fail(std::string_view key, std::string_view problem) const {
  const std::string where = params_.where(key);
  throw ConfigError((where.empty() ? "" : where + ": ") + "policy '" + policy_ + "': key '" +
                    std::string(key) + "': " + std::string(problem));
}

const nlohmann::json* ParamReader::find(std::string_view key) const {
  auto it = params_.values.find(key);
  return it == params_.values.end() ? nullptr : &*it;
}

double ParamReader::number(std::string_view key, double fallback, double min, double max) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_number()) fail(key, "must be a number, got " + v->dump());
  const double d = v->get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    fail(key, "must be " + range_text(min, max) + ", got " + v->dump());
  }
  return d;
}

uint64_t ParamReader::integer(std::string_view key, uint64_t fallback, uint64_t min,
                              uint64_t max) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<int64_t>() < 0)) {
    fail(key, "must be a non-negative integer, got " + v->dump());
  }
  const uint64_t n = v->get<uint64_t>();
  if (n < min || n > max) {
    fail(key, "must be " + range_text(static_cast<double>(min), static_cast<double>(max)) +
                  ", got " + v->dump());
  }
  return n;
}

bool ParamReader::boolean(std::string_view key, bool fallback) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) fail(key, "must be true or false, got " + v->dump());
  return v->get<bool>();
}

std::string ParamReader::choice(std::string_view key, std::string_view fallback,
                                std::initializer_list<std::string_view> options) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return std::string(fallback);
  std::string list;
  for (std::string_view o : options)
    list += (list.empty() ? "\"" : ", \"") + std::string(o) + "\"";
  if (!v->is_string()) fail(key, "must be one of " + list + ", got " + v->dump());
  const std::string s = v->get<std::string>();
  for (std::string_view o : options) {
    if (o == s) return s;
  }
  fail(key, "must be one of " + list + ", got " + v->dump());
}

std::optional<std::vector<double>> ParamReader::number_or_list(std::string_view key, double min,
                                                               double max) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return std::nullopt;
  std::vector<double> out;
  auto take = [&](const nlohmann::json& x, std::string_view what) {
    if (!x.is_number()) fail(key, std::string(what) + " must be a number, got " + x.dump());
    const double d = x.get<double>();
    if (!std::isfinite(d) || d < min || d > max) {
      fail(key, std::string(what) + " must be " + range_text(min, max) + ", got " + x.dump());
    }
    out.push_back(d);
  };
  if (v->is_array()) {
    if (v->empty()) fail(key, "must not be an empty list");
    for (size_t i = 0; i < v->size(); ++i)
      take((*v)[i], "entry " + std::to_string(i));
  } else {
    take(*v, "value");
  }
  return out;
}

}  // namespace sharebuf::policies
