#include "datapath/frame_capture.h"

#include <pcap/pcap.h>
#include <time.h>

#include <stdexcept>

namespace sharebuf::datapath {

FrameCapture::FrameCapture(const std::string& path, Mode mode, uint64_t max_bytes)
    : path_(path), mode_(mode), max_bytes_(max_bytes) {
  pcap_ = pcap_open_dead(DLT_EN10MB, 65535);
  if (pcap_ == nullptr) throw std::runtime_error("capture: pcap_open_dead failed");
  dumper_ = pcap_dump_open(pcap_, path.c_str());
  if (dumper_ == nullptr) {
    const std::string err = pcap_geterr(pcap_);
    pcap_close(pcap_);
    throw std::runtime_error("capture: cannot write " + path + ": " + err);
  }
  bytes_ = 24;  // the pcap file header
  open_ = true;
}

FrameCapture::~FrameCapture() {
  finish();
}

void FrameCapture::offer(std::span<const uint8_t> frame) noexcept {
  if (!open_.load(std::memory_order_relaxed)) return;
  const uint64_t record = 16 + frame.size();
  if (bytes_.load(std::memory_order_relaxed) + record > max_bytes_) {
    over_cap_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) {
    missed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (dumper_ == nullptr) return;
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  pcap_pkthdr h{};
  h.ts.tv_sec = ts.tv_sec;
  h.ts.tv_usec = ts.tv_nsec / 1000;
  h.caplen = h.len = static_cast<bpf_u_int32>(frame.size());
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, frame.data());
  frames_.fetch_add(1, std::memory_order_relaxed);
  bytes_.fetch_add(record, std::memory_order_relaxed);
}

void FrameCapture::finish() noexcept {
  open_ = false;
  std::lock_guard lock(mutex_);
  if (dumper_ != nullptr) {
    pcap_dump_close(dumper_);
    dumper_ = nullptr;
  }
  if (pcap_ != nullptr) {
    pcap_close(pcap_);
    pcap_ = nullptr;
  }
}

nlohmann::json FrameCapture::status() const {
  return {{"path", path_},
          {"mode", mode_ == Mode::kAll ? "all" : "drops"},
          {"frames", frames_.load()},
          {"bytes", bytes_.load()},
          {"max_bytes", max_bytes_},
          {"missed_busy", missed_.load()},
          {"missed_over_cap", over_cap_.load()},
          {"open", open_.load()}};
}

}  // namespace sharebuf::datapath
