#include "mgmt/stderr_sink.h"

#include <limits.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

namespace sharebuf::mgmt {
namespace {

std::string_view color_of(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return "\033[37m";
    case spdlog::level::debug:
      return "\033[36m";
    case spdlog::level::info:
      return "\033[32m";
    case spdlog::level::warn:
      return "\033[33m\033[1m";
    case spdlog::level::err:
      return "\033[31m\033[1m";
    case spdlog::level::critical:
      return "\033[1m\033[41m";
    default:
      return {};
  }
}

}  // namespace

StderrSink::StderrSink(int fd) : fd_(fd), color_(isatty(fd) == 1) {}

bool StderrSink::write_now(const char* data, size_t size) noexcept {
  // At most PIPE_BUF bytes per write: a pipe that polls writable has a free page, so such a write
  // never blocks (a longer one could wait for the reader).
  while (size != 0) {
    pollfd p{fd_, POLLOUT, 0};
    int ready;
    while ((ready = poll(&p, 1, 0)) < 0 && errno == EINTR) {
    }
    if (ready != 1 || (p.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) return false;
    const ssize_t n = write(fd_, data, size < PIPE_BUF ? size : PIPE_BUF);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // EPIPE (SIGPIPE is ignored), EAGAIN, ENOSPC, ...
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void StderrSink::sink_it_(const spdlog::details::log_msg& msg) {
  spdlog::memory_buf_t formatted;
  formatter_->format(msg, formatted);
  std::string line;
  const uint64_t lost = lost_.load(std::memory_order_relaxed);
  if (lost != reported_) {
    line =
        "[" + std::to_string(lost - reported_) + " log line(s) lost: stderr could not take them]\n";
  }
  const std::string_view text(formatted.data(), formatted.size());
  if (color_ && msg.color_range_end > msg.color_range_start) {
    line.append(text.substr(0, msg.color_range_start));
    line.append(color_of(msg.level));
    line.append(text.substr(msg.color_range_start, msg.color_range_end - msg.color_range_start));
    line.append("\033[0m");
    line.append(text.substr(msg.color_range_end));
  } else {
    line.append(text);
  }
  if (write_now(line.data(), line.size())) {
    reported_ = lost;
  } else {
    lost_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace sharebuf::mgmt
