// StderrSink: sharebufd's log sink. Logging must never stop or stall the switch, whoever reads
// stderr: a line is written only when stderr can take it now (poll() with no wait), so a reader
// that is gone (EPIPE: SIGPIPE is ignored) or stopped reading (a full pipe, a paused terminal)
// costs lines, never a thread. Lines that could not be written are counted (lost()), and the next
// line written after a loss says how many were lost. The level is colored on a terminal.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include <spdlog/sinks/base_sink.h>

namespace sharebuf::mgmt {

class StderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit StderrSink(int fd = 2);
  // Lines not written since the start (a dead or full stderr).
  uint64_t lost() const noexcept { return lost_.load(std::memory_order_relaxed); }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}

 private:
  // Writes all of `data` if the descriptor can take it now; false if not (nothing or part).
  bool write_now(const char* data, size_t size) noexcept;

  int fd_;
  bool color_;
  std::atomic<uint64_t> lost_{0};
  uint64_t reported_ = 0;  // lost lines already announced (under the sink's mutex)
};

}  // namespace sharebuf::mgmt
