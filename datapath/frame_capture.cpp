#include "datapath/frame_capture.h"

#include <fcntl.h>
#include <pcap/pcap.h>
#include <sys/stat.h>
#include <unistd.h>

#include <time.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <stdexcept>

#include "common/safe_output.h"

namespace sharebuf::datapath {
namespace {

// A new file for writing, never through a symbolic link, never into a file someone else
// prepared: created exclusively under a random name in the target's directory and renamed to the
// target (common/safe_output.h), which must not exist unless `overwrite`, and then only as a
// regular file, which the new one replaces (its old inode is never written). A directory every
// user may write to without the sticky bit is refused.
FILE* open_new(const std::string& path, bool overwrite, std::string& err) {
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!overwrite) {
      err = "it exists (pass overwrite=true to replace a regular file)";
      return nullptr;
    }
    if (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode)) {
      err = S_ISLNK(st.st_mode) ? "it is a symbolic link" : "not a regular file";
      return nullptr;
    }
  }
  const std::filesystem::path target(path);
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
  int fd = -1;
  try {
    std::string temp;
    fd = common::create_temporary(dir, target.filename().string(), 0640, &temp);
    common::install_file(temp, path, overwrite);
  } catch (const common::OutputError& e) {
    if (fd >= 0) close(fd);
    err = e.what();
    return nullptr;
  }
  FILE* fp = fdopen(fd, "wb");
  if (fp == nullptr) {
    err = std::strerror(errno);
    close(fd);
  }
  return fp;
}

}  // namespace

FrameCapture::FrameCapture(const std::string& path, Mode mode, uint64_t max_bytes,
                           std::vector<std::string> port_names, bool overwrite)
    : path_(path), mode_(mode), max_bytes_(max_bytes) {
  timespec mono;
  timespec real;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  clock_offset_ns_ = (static_cast<int64_t>(real.tv_sec) - mono.tv_sec) * 1'000'000'000 +
                     (static_cast<int64_t>(real.tv_nsec) - mono.tv_nsec);
  pcap_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
  if (pcap_ == nullptr) throw std::runtime_error("capture: pcap_open_dead failed");
  if (port_names.empty()) {
    files_.push_back(path);
  } else {
    for (const std::string& p : port_names)
      files_.push_back(path + "-" + p + ".pcap");
  }
  for (const std::string& f : files_) {
    std::string err;
    FILE* fp = open_new(f, overwrite, err);
    pcap_dumper_t* d = fp != nullptr ? pcap_dump_fopen(pcap_, fp) : nullptr;
    if (d == nullptr) {
      if (fp != nullptr) {
        err = pcap_geterr(pcap_);
        std::fclose(fp);
      }
      file_locks_.resize(dumpers_.size());
      finish();
      throw std::runtime_error("capture: cannot write " + f + ": " + err);
    }
    dumpers_.push_back(d);
    file_locks_.push_back(std::make_unique<std::mutex>());
    bytes_ += 24;  // each file's header
  }
  open_ = true;
}

FrameCapture::~FrameCapture() {
  finish();
}

void FrameCapture::offer(std::span<const uint8_t> frame, uint16_t in_port,
                         uint64_t arrival_ns) noexcept {
  if (!open_.load(std::memory_order_relaxed)) return;
  const uint64_t record = 16 + frame.size();
  if (bytes_.load(std::memory_order_relaxed) + record > max_bytes_) {
    over_cap_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // open_ is cleared before finish() takes the locks, and finish() waits for every file lock, so
  // the lists do not change under a worker that got past the check above.
  const size_t i = dumpers_.size() == 1 ? 0 : std::min<size_t>(in_port, dumpers_.size() - 1);
  if (i >= dumpers_.size()) return;
  std::unique_lock lock(*file_locks_[i], std::try_to_lock);
  if (!lock.owns_lock()) {
    missed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (!open_.load(std::memory_order_relaxed)) return;
  pcap_dumper_t* d = dumpers_[i];
  if (arrival_ns == 0) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    arrival_ns =
        static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
  }
  const int64_t wall = static_cast<int64_t>(arrival_ns) + clock_offset_ns_;
  pcap_pkthdr h{};
  h.ts.tv_sec = static_cast<time_t>(wall / 1'000'000'000);
  h.ts.tv_usec = static_cast<suseconds_t>(wall % 1'000'000'000);  // nanoseconds in a nano file
  h.caplen = h.len = static_cast<bpf_u_int32>(frame.size());
  pcap_dump(reinterpret_cast<u_char*>(d), &h, frame.data());
  if (std::ferror(pcap_dump_file(d)) != 0) write_failed_.store(true, std::memory_order_relaxed);
  frames_.fetch_add(1, std::memory_order_relaxed);
  bytes_.fetch_add(record, std::memory_order_relaxed);
}

void FrameCapture::finish() noexcept {
  open_ = false;
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < dumpers_.size(); ++i) {
    std::lock_guard file(*file_locks_[i]);
    if (dumpers_[i] == nullptr) continue;
    errno = 0;
    if (pcap_dump_flush(dumpers_[i]) != 0 || std::ferror(pcap_dump_file(dumpers_[i])) != 0 ||
        write_failed_.load(std::memory_order_relaxed)) {
      if (write_error_.empty())
        write_error_ = files_[i] + ": " + (errno != 0 ? std::strerror(errno) : "write failed");
    }
    pcap_dump_close(dumpers_[i]);
    dumpers_[i] = nullptr;
  }
  if (pcap_ != nullptr) {
    pcap_close(pcap_);
    pcap_ = nullptr;
  }
}

std::string FrameCapture::write_error() const {
  std::lock_guard lock(mutex_);
  if (!write_error_.empty()) return write_error_;
  return write_failed_.load(std::memory_order_relaxed) ? "a write failed" : "";
}

nlohmann::json FrameCapture::status() const {
  return {{"path", path_},
          {"files", files_},
          {"mode", mode_ == Mode::kAll ? "all" : "drops"},
          {"stamps", ring_stamps_ ? "ring" : "admission"},
          {"frames", frames_.load()},
          {"bytes", bytes_.load()},
          {"max_bytes", max_bytes_},
          {"missed_busy", missed_.load()},
          {"missed_over_cap", over_cap_.load()},
          {"clock_offset_ns", clock_offset_ns_},
          {"write_error", write_failed_.load() ? nlohmann::json("a write failed") : nullptr},
          {"open", open_.load()}};
}

}  // namespace sharebuf::datapath
