// FrameCapture: writes frames the datapath sees to a pcap file (libpcap), for debugging drops and
// for recording a live run that sharebuf-replay can play back: either the copies a policy refused
// (one record per refused copy), or every frame received, once, as it arrived.
// The pcap header's timestamp (nanosecond pcap) is the arrival time admission used for the frame
// (the RX batch's CLOCK_MONOTONIC reading) shifted by one fixed offset to wall-clock time, taken
// when the capture starts (status() reports it as clock_offset_ns): a replay then sees exactly
// the arrival times the live policy saw, and a script can align the file with the daemon's
// monotonic clock (watch samples' t_ns). The ports are not in classic pcap, so a replay maps them
// from the learned MACs or a config (sharebuf-replay --help).
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

  // Creates `path` for writing; throws std::runtime_error naming the problem. With `port_names`,
  // each ingress port gets its own file `<path>-<port>.pcap` (what sharebuf-replay's
  // --pcap FILE@PORT needs to learn where hosts are). A file is never opened through a symbolic
  // link and never replaces an existing one unless `overwrite`, and then only a regular file
  // (never a FIFO, a device or /proc's files). The caller decides where files may go.
  FrameCapture(const std::string& path, Mode mode, uint64_t max_bytes,
               std::vector<std::string> port_names = {}, bool overwrite = false);
  ~FrameCapture();
  FrameCapture(const FrameCapture&) = delete;
  FrameCapture& operator=(const FrameCapture&) = delete;

  Mode mode() const noexcept { return mode_; }
  // Mode kAll: stamp each frame with the time it reached its port's ring (what the trimming
  // meters use) instead of the time admission used (its RX burst's, up to one burst later).
  // Set before the capture is installed.
  void set_ring_stamps(bool ring) noexcept { ring_stamps_ = ring; }
  bool ring_stamps() const noexcept { return ring_stamps_; }
  // `arrival_ns`: the frame's arrival time on CLOCK_MONOTONIC (0: read the clock now).
  void offer(std::span<const uint8_t> frame, uint16_t in_port = 0,
             uint64_t arrival_ns = 0) noexcept;
  // Flushes and closes the file; later offers are ignored.
  void finish() noexcept;
  nlohmann::json status() const;
  // Why a write failed (disk full, file size limit, ...), or empty: a capture that lost frames
  // this way must not be reported as a success.
  std::string write_error() const;

 private:
  std::string path_;
  Mode mode_;
  bool ring_stamps_ = false;
  uint64_t max_bytes_;
  mutable std::mutex mutex_;  // guards the file list; each file has its own lock below
  std::vector<std::unique_ptr<std::mutex>> file_locks_;
  pcap* pcap_ = nullptr;
  std::vector<pcap_dumper_t*> dumpers_;  // one, or one per ingress port
  std::vector<std::string> files_;
  std::atomic<uint64_t> frames_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> missed_{0};    // the file was busy
  std::atomic<uint64_t> over_cap_{0};  // the size cap was reached
  std::atomic<bool> open_{false};
  int64_t clock_offset_ns_ = 0;  // CLOCK_REALTIME - CLOCK_MONOTONIC when the capture started
  std::atomic<bool> write_failed_{false};
  std::string write_error_;  // set under mutex_ by finish()
};

}  // namespace sharebuf::datapath
