// FrameCapture: writes frames the datapath sees to a pcap file (libpcap), for debugging drops and
// for recording a live run that sharebuf-replay can play back: either the copies a policy refused
// (one record per refused copy), or every frame received, once, as it arrived.
// The pcap header's timestamp is the arrival time (CLOCK_REALTIME); the ports are not in classic
// pcap, so a replay maps them from the learned MACs or a config (sharebuf-replay --help).
//
// Thread-safety: RX workers call offer() concurrently. The file is written under a mutex taken
// with try_lock: a worker that finds it busy counts the frame as missed instead of waiting, so
// capturing never blocks the datapath. Frames pushed out of a queue later (LQD) are not captured.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

struct pcap;
struct pcap_dumper;

namespace sharebuf::datapath {

class FrameCapture {
 public:
  enum class Mode : uint8_t { kDrops, kAll };

  // Opens `path` for writing; throws std::runtime_error naming the problem.
  FrameCapture(const std::string& path, Mode mode, uint64_t max_bytes);
  ~FrameCapture();
  FrameCapture(const FrameCapture&) = delete;
  FrameCapture& operator=(const FrameCapture&) = delete;

  Mode mode() const noexcept { return mode_; }
  void offer(std::span<const uint8_t> frame) noexcept;
  // Flushes and closes the file; later offers are ignored.
  void finish() noexcept;
  nlohmann::json status() const;

 private:
  std::string path_;
  Mode mode_;
  uint64_t max_bytes_;
  std::mutex mutex_;
  pcap* pcap_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  std::atomic<uint64_t> frames_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> missed_{0};    // the file was busy
  std::atomic<uint64_t> over_cap_{0};  // the size cap was reached
  std::atomic<bool> open_{false};
};

}  // namespace sharebuf::datapath
