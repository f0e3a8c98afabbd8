// Bounded input: what sharebuf reads from files and sockets that someone else controls — a
// configuration, a Credence model named in a control request, a request line — is checked
// before anything expensive or recursive touches it.
//   read_regular_file(): opens without blocking (a FIFO's open would wait for a writer, a device
//     would stream forever), accepts only a regular file, and reads at most a given size, so a
//     request naming /dev/zero or a FIFO gets an error at once instead of hanging or exhausting
//     the daemon.
//   json_nesting_depth(): the deepest [ / { nesting of a JSON text, found by one linear scan that
//     skips strings, so a request nested 70 000 levels deep is refused before nlohmann::json
//     builds (and recursively copies and destroys) it.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sharebuf::common {

// The deepest JSON nesting sharebuf accepts anywhere (requests, models, files).
inline constexpr size_t kMaxJsonDepth = 64;

// Thrown by read_regular_file(); the message names the file and the reason.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The contents of `path` if it is a regular file of at most `max_bytes`; `what` names it in
// errors ("the forest model", "the configuration file"). Never blocks on a FIFO or device.
std::string read_regular_file(const std::string& path, size_t max_bytes, std::string_view what);

// The deepest nesting of arrays and objects in `text` (0 for a scalar). Strings, including
// escaped quotes, are skipped. Stops counting past `stop_at` (returns a value > stop_at).
size_t json_nesting_depth(std::string_view text, size_t stop_at = kMaxJsonDepth) noexcept;

}  // namespace sharebuf::common
