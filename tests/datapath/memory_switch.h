// A whole switch over in-memory ports (datapath/memory_port.h), built from a TOML text: the RX
// and egress workers' unit tests run the real threads over it without root. At teardown the
// switch stops and the buffer's accounting identities must hold.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "buffer/accounting_check.h"
#include "config/switch_config_reader.h"
#include "datapath/memory_port.h"
#include "datapath/switch.h"
#include "datapath/switch_core.h"
#include "tests/model/frame_builder.h"

namespace sharebuf::testing {

class MemorySwitch {
 public:
  explicit MemorySwitch(std::string_view toml) {
    const model::SwitchConfig cfg = config::parse_switch_config(toml, "memory.toml");
    std::vector<std::unique_ptr<datapath::PortIo>> io;
    for (const model::PortConfig& p : cfg.ports) {
      auto port =
          std::make_unique<datapath::MemoryPort>(p.name, 1500, p.rx_ring_frames, p.tx_batch);
      ports_.push_back(port.get());
      io.push_back(std::move(port));
    }
    switch_ = std::make_unique<datapath::Switch>(cfg, std::move(io));
  }
  ~MemorySwitch() {
    switch_->stop();
    for (const std::string& e : buffer::check_accounting(core().buffer()))
      ADD_FAILURE() << "accounting: " << e;
    switch_->release_queued();
  }

  // Every port receives into and sends from chunks of `store`, which queued frames may stay in
  // (an AF_XDP shared UMEM, datapath/memory_port.h). Before start().
  void use_chunks(buffer::ChunkStore& store) {
    core().buffer().pool().attach_chunks(&store);
    for (datapath::MemoryPort* p : ports_)
      p->use_chunks(store);
  }
  void start() { switch_->start(); }
  void stop() { switch_->stop(); }
  datapath::MemoryPort& port(size_t i) { return *ports_.at(i); }
  datapath::SwitchCore& core() { return switch_->core(); }
  const datapath::PortCounters& counters(size_t i) { return core().ports.at(i)->counters; }
  // Frames the RX worker `w` took from rings so far.
  uint64_t worker_frames(size_t w) {
    return core().rx_parking.at(w)->frames.load(std::memory_order_relaxed);
  }
  // Port p's egress worker sleeps: its queues are empty and an RX worker may send inline.
  bool egress_asleep(size_t p) {
    return core().ports.at(p)->signal.sleeping.load(std::memory_order_relaxed);
  }
  bool all_egress_asleep() {
    for (size_t p = 0; p < ports_.size(); ++p)
      if (!egress_asleep(p)) return false;
    return true;
  }
  // No queue holds a frame, no ring and no recirculation port either. (Not the buffer's total:
  // it counts the ports' header reserve, [trimming] header_reserve.)
  bool quiet() {
    for (datapath::MemoryPort* p : ports_)
      if (p->rx_waiting() != 0) return false;
    for (uint32_t q = 0; q < core().buffer().layout().num_queues(); ++q)
      if (core().buffer().state().queue_cells(q) != 0) return false;
    return !core().switch_model.tofino().any_deflected();
  }

 private:
  std::vector<datapath::MemoryPort*> ports_;
  std::unique_ptr<datapath::Switch> switch_;
};

// Polls `pred` until it holds or `timeout` passes; whether it held. Generous: a loaded machine
// schedules the workers late, never wrongly.
inline bool eventually(const std::function<bool()>& pred,
                       std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// A UDP frame from host `src` to host `dst` (MACs 02:00:00:00:00:src/dst), `payload` bytes,
// numbered by its source port.
inline std::vector<uint8_t> udp_frame(uint8_t src, uint8_t dst, uint32_t payload = 64,
                                      uint16_t number = 1000) {
  return build_frame({.src_port = number, .payload = payload, .src_last = src, .dst_last = dst});
}

// The number udp_frame() gave a frame (its UDP source port), for untagged IPv4 frames.
inline uint16_t frame_number(const std::vector<uint8_t>& f) {
  return static_cast<uint16_t>(f.at(34) << 8 | f.at(35));
}

// Frames 0..n-1 from host 1 to host 2, numbered by udp_frame().
inline std::vector<std::vector<uint8_t>> numbered(uint16_t n, uint32_t payload = 64) {
  std::vector<std::vector<uint8_t>> frames;
  for (uint16_t i = 0; i < n; ++i)
    frames.push_back(udp_frame(1, 2, payload, i));
  return frames;
}

// The first n frames `port` sent are numbered 0..n-1, in that order.
inline ::testing::AssertionResult sent_in_order(const datapath::MemoryPort& port, uint16_t n) {
  const auto sent = port.sent();
  if (sent.size() < n) return ::testing::AssertionFailure() << sent.size() << " sent of " << n;
  for (uint16_t i = 0; i < n; ++i) {
    if (frame_number(sent[i]) != i)
      return ::testing::AssertionFailure()
             << "out of order: frame " << i << " is number " << frame_number(sent[i]);
  }
  return ::testing::AssertionSuccess();
}

}  // namespace sharebuf::testing
