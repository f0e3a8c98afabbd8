// FrameCapture: writes frames the datapath sees to a pcap file (libpcap), for debugging drops and
// for recording a live run that sharebuf-replay can play back: either the copies a policy refused
// (one record per refused copy), or every frame received, once, as it arrived.
// The pcap header's timestamp is the arrival time (CLOCK_REALTIME); the ports are not in classic
// pcap, so a replay maps them from the learned MACs or a config (sharebuf-replay --help).
//
// Thread-safety: RX workers call offer() concurrently. A file is written under its own mutex taken
// with try_lock: a worker that finds it busy counts the frame as missed instead of waiting, so
// capturing never blocks the datapath; with one file per port (one RX worker each) nothing waits.
// Frames pushed out of a queue later (LQD) are not captured.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

struct pcap;
struct pcap_dumper;
typedef struct pcap_dumper pcap_dumper_t;

namespace sharebuf::datapath {

class FrameCapture {
 public:
  enum class Mode : uint8_t { kDrops, kAll };

  // Opens `path` for writing; throws std::runtime_error naming the problem. With `port_names`,
  // each ingress port gets its own file `<path>-<port>.pcap` (what sharebuf-replay's
  // --pcap FILE@PORT needs to learn where hosts are).
  FrameCapture(const std::string& path, Mode mode, uint64_t max_bytes,
               std::vector<std::string> port_names = {});
  ~FrameCapture();
  FrameCapture(const FrameCapture&) = delete;
  FrameCapture& operator=(const FrameCapture&) = delete;

  Mode mode() const noexcept { return mode_; }
  void offer(std::span<const uint8_t> frame, uint16_t in_port = 0) noexcept;
  // Flushes and closes the file; later offers are ignored.
  void finish() noexcept;
  nlohmann::json status() const;

 private:
  std::string path_;
  Mode mode_;
  uint64_t max_bytes_;
  std::mutex mutex_;  // guards the file list; each file has its own lock below
  std::vector<std::unique_ptr<std::mutex>> file_locks_;
  pcap* pcap_ = nullptr;
  std::vector<pcap_dumper_t*> dumpers_;  // one, or one per ingress port
  std::vector<std::string> files_;
  std::atomic<uint64_t> frames_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> missed_{0};    // the file was busy
  std::atomic<uint64_t> over_cap_{0};  // the size cap was reached
  std::atomic<bool> open_{false};
};

}  // namespace sharebuf::datapath
