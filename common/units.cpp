#include "common/units.h"

#include <cctype>
#include <cmath>
#include <stdexcept>
#include <string>

namespace sharebuf::common {
namespace {

struct Quantity {
  double value;
  std::string unit;  // lower-cased, spaces removed
};

Quantity split(std::string_view text, std::string_view what) {
  std::string s;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  }
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'))
    ++i;
  if (i == 0) {
    throw std::invalid_argument("'" + std::string(text) + "' is not a " + std::string(what) +
                                " (it must start with a number)");
  }
  Quantity q;
  try {
    size_t used = 0;
    q.value = std::stod(s.substr(0, i), &used);
    if (used != i) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw std::invalid_argument("'" + std::string(text) + "': bad number");
  }
  for (size_t j = i; j < s.size(); ++j) {
    q.unit += static_cast<char>(std::tolower(static_cast<unsigned char>(s[j])));
  }
  return q;
}

// Checked before converting: a double at or past 2^63 has no llround, and a value that wrapped or
// saturated would be taken silently for another.
uint64_t to_integer(double v, std::string_view text) {
  if (!std::isfinite(v) || v < 0 || v >= 9223372036854775808.0) {
    throw std::invalid_argument("'" + std::string(text) + "' is out of range (at most 2^63 - 1)");
  }
  return static_cast<uint64_t>(std::llround(v));
}

}  // namespace

uint64_t parse_size_cells(std::string_view text, uint32_t cell_bytes) {
  const Quantity q = split(text, "size");
  if (q.unit.empty() || q.unit == "cells" || q.unit == "cell") {
    if (q.value != std::floor(q.value)) {
      throw std::invalid_argument("'" + std::string(text) + "': cells are whole numbers");
    }
    return to_integer(q.value, text);
  }
  double bytes;
  if (q.unit == "b" || q.unit == "bytes") {
    bytes = q.value;
  } else if (q.unit == "kb") {
    bytes = q.value * 1e3;
  } else if (q.unit == "mb") {
    bytes = q.value * 1e6;
  } else if (q.unit == "gb") {
    bytes = q.value * 1e9;
  } else if (q.unit == "kib") {
    bytes = q.value * 1024;
  } else if (q.unit == "mib") {
    bytes = q.value * 1024 * 1024;
  } else if (q.unit == "gib") {
    bytes = q.value * 1024 * 1024 * 1024;
  } else {
    throw std::invalid_argument("'" + std::string(text) +
                                "': unknown size unit (use cells, B, KB, MB, GB, KiB, MiB, GiB)");
  }
  return to_integer(std::ceil(bytes / cell_bytes), text);
}

uint64_t parse_rate_bps(std::string_view text) {
  Quantity q = split(text, "rate");
  if (q.unit.ends_with("/s")) q.unit.resize(q.unit.size() - 2);
  if (q.unit.ends_with("bps") && q.unit != "bps") {
    q.unit.resize(q.unit.size() - 3);
    q.unit += "bit";  // "Mbps" -> "mbit": rates are always bits per second here
  }
  double scale;
  if (q.unit.empty() || q.unit == "bit" || q.unit == "bps") {
    scale = 1;
  } else if (q.unit == "kbit") {
    scale = 1e3;
  } else if (q.unit == "mbit") {
    scale = 1e6;
  } else if (q.unit == "gbit") {
    scale = 1e9;
  } else {
    throw std::invalid_argument(
        "'" + std::string(text) +
        "': unknown rate unit (use bit, kbit, Mbit, Gbit, e.g. \"100Mbit\")");
  }
  return to_integer(q.value * scale, text);
}

uint64_t parse_duration_ns(std::string_view text) {
  const Quantity q = split(text, "duration");
  double scale;
  if (q.unit.empty() || q.unit == "ns") {
    scale = 1;
  } else if (q.unit == "us") {
    scale = 1e3;
  } else if (q.unit == "ms") {
    scale = 1e6;
  } else if (q.unit == "s") {
    scale = 1e9;
  } else if (q.unit == "min") {
    scale = 60e9;
  } else {
    throw std::invalid_argument("'" + std::string(text) +
                                "': unknown time unit (use ns, us, ms, s, min)");
  }
  return to_integer(q.value * scale, text);
}

}  // namespace sharebuf::common
