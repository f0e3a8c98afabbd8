#include "datapath/frame_capture.h"

#include <pcap/pcap.h>
#include <time.h>

#include <stdexcept>

namespace sharebuf::datapath {

FrameCapture::FrameCapture(const std::string& path, Mode mode, uint64_t max_bytes,
                           std::vector<std::string> port_names)
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
    pcap_dumper_t* d = pcap_dump_open(pcap_, f.c_str());
    if (d == nullptr) {
      const std::string err = pcap_geterr(pcap_);
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
  frames_.fetch_add(1, std::memory_order_relaxed);
  bytes_.fetch_add(record, std::memory_order_relaxed);
}

void FrameCapture::finish() noexcept {
  open_ = false;
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < dumpers_.size(); ++i) {
    std::lock_guard file(*file_locks_[i]);
    if (dumpers_[i] != nullptr) pcap_dump_close(dumpers_[i]);
    dumpers_[i] = nullptr;
  }
  if (pcap_ != nullptr) {
    pcap_close(pcap_);
    pcap_ = nullptr;
  }
}

nlohmann::json FrameCapture::status() const {
  return {{"path", path_},
          {"files", files_},
          {"mode", mode_ == Mode::kAll ? "all" : "drops"},
          {"frames", frames_.load()},
          {"bytes", bytes_.load()},
          {"max_bytes", max_bytes_},
          {"missed_busy", missed_.load()},
          {"missed_over_cap", over_cap_.load()},
          {"clock_offset_ns", clock_offset_ns_},
          {"open", open_.load()}};
}

}  // namespace sharebuf::datapath
