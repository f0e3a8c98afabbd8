// Units in configuration values: sizes ("21000 cells", "1.6MB", "64KiB", "1500B"), rates
// ("100Mbit", "1.5Gbit", "500kbit", "100Mbit/s") and durations ("10us", "1ms", "300s"). Bare
// numbers are cells, bits per second and nanoseconds. Decimal prefixes are powers of 1000,
// binary ones (KiB, MiB, GiB) powers of 1024. Each parser throws std::invalid_argument with a
// message that says what is accepted.
#pragma once

#include <cstdint>
#include <string_view>

namespace sharebuf::common {

// A size in cells: bytes are converted with ceil(bytes / cell_bytes).
uint64_t parse_size_cells(std::string_view text, uint32_t cell_bytes);
uint64_t parse_rate_bps(std::string_view text);
uint64_t parse_duration_ns(std::string_view text);

}  // namespace sharebuf::common
