#include "policies/params.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/units.h"

namespace sharebuf::policies {
namespace {

std::string between(double min, double max) {
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
    case ParamType::kDuration:
      return "duration";
    case ParamType::kRate:
      return "rate";
  }
  return "?";
}

std::string range_text(const ParamSpec& spec) {
  if (spec.type == ParamType::kString) {
    std::string out;
    for (size_t i = 0; i < spec.choices.size(); ++i)
      out += spec.choices[i] == ',' ? std::string(", ") : std::string(1, spec.choices[i]);
    return out;
  }
  if (spec.type == ParamType::kBool) return "true, false";
  if (spec.type == ParamType::kDuration || spec.type == ParamType::kRate) {
    // The largest unit that divides the bound: 1000000000 ns is "1 s", 64000 bit/s "64 kbit/s".
    static constexpr std::pair<double, const char*> kTime[] = {
        {1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
    static constexpr std::pair<double, const char*> kRates[] = {
        {1e9, "Gbit/s"}, {1e6, "Mbit/s"}, {1e3, "kbit/s"}, {1, "bit/s"}};
    auto unit = [&](double v) {
      for (const auto& [scale, name] : spec.type == ParamType::kDuration ? kTime : kRates) {
        if (v >= scale && std::fmod(v, scale) == 0) {
          return std::to_string(static_cast<uint64_t>(v / scale)) + " " + name;
        }
      }
      return std::string("0");
    };
    return unit(spec.min) + " – " + unit(spec.max);
  }
  auto num = [](double v) {
    if (v >= 18446744073709551615.0) return std::string("2^64 − 1");
    // 1/1024 and the like: powers of two below one, as the alphas are documented.
    if (v > 0 && v < 1) {
      const double inv = 1 / v;
      if (inv == std::round(inv) &&
          (static_cast<uint64_t>(inv) & (static_cast<uint64_t>(inv) - 1)) == 0)
        return "1/" + std::to_string(static_cast<uint64_t>(inv));
    }
    if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
    std::ostringstream out;
    out << v;
    return out.str();
  };
  // A bound the policy checks against the buffer itself (static's caps): no declared maximum.
  if (spec.max >= 1e12 && spec.max < 18446744073709551615.0) return "≥ " + num(spec.min);
  return num(spec.min) + " – " + num(spec.max);
}

ParamReader::ParamReader(std::string_view policy, const Params& params,
                         std::span<const ParamSpec> specs)
    : ParamReader(Subject{"policy '" + std::string(policy) + "'"}, params, specs) {}

ParamReader::ParamReader(Subject subject, const Params& params, std::span<const ParamSpec> specs)
    : subject_(std::move(subject.text)), params_(params), specs_(specs) {
  if (!params.values.is_object()) {
    throw ConfigError((params.origin.empty() ? "" : params.origin + ": ") + subject_ +
                      ": parameters must be a table of key = value");
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
  throw ConfigError((where.empty() ? "" : where + ": ") + subject_ + ": key '" + std::string(key) +
                    "': " + std::string(problem));
}

const nlohmann::json* ParamReader::find(std::string_view key) const {
  auto it = params_.values.find(key);
  return it == params_.values.end() ? nullptr : &*it;
}

const ParamSpec& ParamReader::spec(std::string_view key, ParamType type) const {
  for (const ParamSpec& s : specs_) {
    if (s.name == key && s.type == type) return s;
  }
  throw std::logic_error(subject_ + " reads key '" + std::string(key) + "' as " +
                         std::string(to_string(type)) + " but does not declare it so");
}

double ParamReader::number(std::string_view key) const {
  const ParamSpec& s = spec(key, ParamType::kNumber);
  const nlohmann::json* v = find(key);
  double d = 0;
  if (v == nullptr) {
    d = std::stod(std::string(s.default_value));
  } else {
    if (!v->is_number()) fail(key, "must be a number, got " + v->dump());
    d = v->get<double>();
    if (!std::isfinite(d) || d < s.min || d > s.max) {
      fail(key, "must be " + between(s.min, s.max) + ", got " + v->dump());
    }
  }
  values_[std::string(key)] = d;
  return d;
}

uint64_t ParamReader::integer(std::string_view key) const {
  const ParamSpec& s = spec(key, ParamType::kInteger);
  const nlohmann::json* v = find(key);
  uint64_t n = 0;
  if (v == nullptr) {
    n = std::stoull(std::string(s.default_value));
  } else {
    if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<int64_t>() < 0)) {
      fail(key, "must be a non-negative integer, got " + v->dump());
    }
    n = v->get<uint64_t>();
    // Compared as doubles: the declared bounds are doubles, and 2^64 - 1 rounds up to 2^64.
    if (static_cast<double>(n) < s.min || static_cast<double>(n) > s.max) {
      fail(key, "must be " + between(s.min, s.max) + ", got " + v->dump());
    }
  }
  values_[std::string(key)] = n;
  return n;
}

int64_t ParamReader::signed_integer(std::string_view key) const {
  const ParamSpec& s = spec(key, ParamType::kInteger);
  const nlohmann::json* v = find(key);
  int64_t n = 0;
  if (v == nullptr) {
    n = std::stoll(std::string(s.default_value));
  } else {
    if (!v->is_number_integer()) fail(key, "must be an integer, got " + v->dump());
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      fail(key, "must be " + between(s.min, s.max) + ", got " + v->dump());
    n = v->get<int64_t>();
    if (static_cast<double>(n) < s.min || static_cast<double>(n) > s.max) {
      fail(key, "must be " + between(s.min, s.max) + ", got " + v->dump());
    }
  }
  values_[std::string(key)] = n;
  return n;
}

// A duration or a rate: a string with its unit, parsed as the configuration file parses it.
static uint64_t with_unit(const ParamReader& r, const ParamSpec& s, const nlohmann::json* v,
                          uint64_t (*parse)(std::string_view), nlohmann::json& record) {
  if (v == nullptr) {
    record = std::string(s.default_value);
    return parse(s.default_value);
  }
  if (!v->is_string()) {
    r.fail(s.name, "must be a string with a unit (e.g. \"" + std::string(s.default_value) +
                       "\"), got " + v->dump());
  }
  uint64_t x = 0;
  try {
    x = parse(v->get<std::string>());
  } catch (const std::invalid_argument& e) {
    r.fail(s.name, e.what());
  }
  if (static_cast<double>(x) < s.min || static_cast<double>(x) > s.max)
    r.fail(s.name, "must be " + range_text(s) + ", got " + v->dump());
  record = *v;
  return x;
}

uint64_t ParamReader::duration_ns(std::string_view key) const {
  return with_unit(*this, spec(key, ParamType::kDuration), find(key), common::parse_duration_ns,
                   values_[std::string(key)]);
}

uint64_t ParamReader::rate_bps(std::string_view key) const {
  return with_unit(*this, spec(key, ParamType::kRate), find(key), common::parse_rate_bps,
                   values_[std::string(key)]);
}

bool ParamReader::boolean(std::string_view key) const {
  const ParamSpec& s = spec(key, ParamType::kBool);
  const nlohmann::json* v = find(key);
  bool b = s.default_value == "true";
  if (v != nullptr) {
    if (!v->is_boolean()) fail(key, "must be true or false, got " + v->dump());
    b = v->get<bool>();
  }
  values_[std::string(key)] = b;
  return b;
}

std::string ParamReader::choice(std::string_view key) const {
  const ParamSpec& s = spec(key, ParamType::kString);
  const nlohmann::json* v = find(key);
  std::string out(s.default_value);
  if (v != nullptr) {
    std::vector<std::string_view> options;
    for (std::string_view rest = s.choices; !rest.empty();) {
      const size_t comma = rest.find(',');
      options.push_back(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    std::string list;
    for (std::string_view o : options)
      list += (list.empty() ? "\"" : ", \"") + std::string(o) + "\"";
    if (!v->is_string()) fail(key, "must be one of " + list + ", got " + v->dump());
    out = v->get<std::string>();
    if (std::find(options.begin(), options.end(), out) == options.end()) {
      fail(key, "must be one of " + list + ", got " + v->dump());
    }
  }
  values_[std::string(key)] = out;
  return out;
}

std::optional<std::string> ParamReader::text(std::string_view key) const {
  spec(key, ParamType::kString);
  const nlohmann::json* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) fail(key, "must be a string, got " + v->dump());
  values_[std::string(key)] = *v;
  return v->get<std::string>();
}

std::optional<std::vector<double>> ParamReader::number_or_list(std::string_view key) const {
  const ParamSpec& s = spec(key, ParamType::kNumberOrList);
  const nlohmann::json* v = find(key);
  if (v == nullptr) return std::nullopt;
  std::vector<double> out;
  auto take = [&](const nlohmann::json& x, std::string_view what) {
    if (!x.is_number()) fail(key, std::string(what) + " must be a number, got " + x.dump());
    const double d = x.get<double>();
    if (!std::isfinite(d) || d < s.min || d > s.max) {
      fail(key, std::string(what) + " must be " + between(s.min, s.max) + ", got " + x.dump());
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
  values_[std::string(key)] = *v;
  return out;
}

}  // namespace sharebuf::policies
