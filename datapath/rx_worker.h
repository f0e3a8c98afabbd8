// RxWorker: the receive side of one or more ports (one per port by default; [switch] rx_threads
// folds several ports onto one thread). It reads frames from each port's RX ring in bursts,
// parses them, learns the source MAC, finds the out port(s), classifies, and admits one copy per
// out port into the shared buffer through the policy (model/admission_step.h), sending inline
// to an idle out port or waking its egress worker. After sending inline to a port another worker
// reads, it reads that port's ring once itself if that worker sleeps: the answer is often there
// already, and would otherwise wait for the worker to wake up (docs/datapath-latency.md). When its
// rings are empty it waits as [switch] poll_mode says (model/switch_config.h): blocks in poll()
// (interrupt), spins rx_busy_poll first (adaptive), or never blocks (busy-poll, poking each port's
// I/O so AF_XDP sockets busy-poll their device; a worker other than the first still parks).
//
// Parking: every RX worker wake-up costs tens of microseconds on a small VM (the thread wakes on
// the other vCPU), and a request and its answer arrive on different ports, so with one worker per
// port an idle exchange wakes two threads. A worker other than the first whose rings stay empty
// for [switch] rx_park_after (default 2 ms) parks: it hands its rings to the first worker, which
// polls and reads them beside its own, and sleeps until that worker finds one of them busy (a
// burst of kUnparkBurst frames) and wakes it. At idle one thread serves every port; under load
// each port has its worker again.
//
// Per-CPU RX ([switch] rx_mode = "per-cpu"): one worker per CPU, pinned there, reads lane `lane`
// (its CPU) of every port, which holds the frames the kernel received on that CPU. No ring is
// shared, so no parking and no rx_owned; an answer to what it sent inline arrives in its own lane
// (the receiving host's kernel replies on the CPU that delivered the request) and is read on the
// next round. A flow whose sender transmits from more than one CPU is split over lanes and can
// leave out of order — TCP does (from its application's CPU and from the CPU that processes its
// ACKs), which is why this mode is not the default (docs/datapath-latency.md, "Per-CPU RX");
// counted per port (rx_out_of_order, frames taken after a later-received one of their flow).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "buffer/cell_pool.h"
#include "datapath/port_io.h"
#include "datapath/rx_frame.h"
#include "datapath/switch_core.h"
#include "model/ecn.h"
#include "model/frame_trim.h"
#include "model/overflow_step.h"

namespace sharebuf::datapath {

class RxWorker : private model::OverflowStep::Sink {
 public:
  static constexpr uint32_t kBurst = 64;
  // Frames an RX worker sends inline for an idle port before handing over to its egress worker.
  static constexpr uint32_t kInlineBudget = 64;
  // A parked worker's ring that gives the first worker this many frames at once is busy: its
  // worker is woken to read it again.
  static constexpr uint32_t kUnparkBurst = 16;

  // `slot`: this thread's slot in core.epochs; `worker`: its index in core.rx_parking; `lane`:
  // the RX lane of each port it reads (per-CPU mode: its CPU; else 0).
  RxWorker(SwitchCore& core, std::vector<uint32_t> ports, uint32_t slot, uint32_t worker = 0,
           uint32_t lane = 0)
      : core_(core),
        ports_(std::move(ports)),
        slot_(slot),
        worker_(worker),
        lane_(lane),
        per_cpu_(core.config().rx_mode == model::RxMode::kPerCpu),
        // trim_newest's coin: a seeded sequence per worker, so a run with one worker repeats.
        overflow_(core.switch_model.overflow_step(worker, /*synthetic=*/false)) {}
  void run();

 private:
  void handle(const RxFrame& rx, policies::Policy& policy, const buffer::BufferView& view,
              uint64_t now_ns, buffer::CellCache& cache);
  // Admits deflected frames that have left their recirculation ports (the Tofino
  // approximation, OverflowStep::release_deflected) and sends them; whether frames remain there.
  bool release_deflected(buffer::CellCache& cache);
  // OverflowStep::Sink: a frame (or cut copy) entered `queue`: its port has something to send.
  void enqueued(uint32_t queue, bool copy) override;
  // The CE mark on a frame's bytes while its copies are admitted one by one: each copy carries
  // it or not as its own queue decides.
  struct CeState {
    bool marked = false;
    model::CeUndo undo;
  };
  void admit_copy(uint32_t out_port, std::span<uint8_t> frame, const model::ParsedFrame& parsed,
                  uint8_t class_id, CeState& ce, policies::Policy& policy,
                  const buffer::BufferView& view, uint64_t now_ns, buffer::CellCache& cache);

  // Reads one burst of port p's RX ring if no other worker is reading it; the frames read.
  uint32_t drain(uint32_t p, buffer::CellCache& cache, bool woke);
  // The first worker: reads the rings of parked workers, waking a worker whose ring is busy.
  bool drain_parked(buffer::CellCache& cache, bool& woke);
  // A worker other than the first, after rx_park_after without frames: parks until woken.
  void park();
  // Marks the rings of `ports` as read by a blocked worker (PortRuntime::rx_asleep), or not.
  void set_asleep(const std::vector<uint32_t>& ports, bool asleep) noexcept;
  // Sends inline for the idle ports this burst enqueued to, or wakes their egress workers.
  void flush_pending(buffer::CellCache& cache);

  // The kernel's counts of the worker's sockets (PortIo::rx_socket_stats) into the ports'
  // counters: every 64 busy rounds, before the worker blocks after work, and at the stop.
  void collect_socket_stats();
  // Per-CPU RX: counts a frame of port_ taken after one of the same flow (hash bucket) that the
  // kernel stamped later.
  void note_arrival_order(uint64_t ring_realtime_ns, uint32_t flow_hash) noexcept;

  SwitchCore& core_;
  std::vector<uint32_t> ports_;  // the ports this worker reads
  uint32_t slot_;                // epoch slot
  uint32_t worker_;              // index in core.rx_parking (0: the first worker)
  uint32_t lane_;                // the lane of each port's RX ring this worker reads
  bool per_cpu_;                 // per-CPU RX: lane_ of every port is this worker's alone
  uint32_t port_ = 0;            // the port of the burst being handled
  uint64_t frame_ns_ = 0;        // the frame being handled reached its ring (ring_arrival_ns)
  uint64_t pending_ports_ = 0;   // bit p: this burst enqueued a frame for port p (<= 64 ports)
  uint64_t answer_ports_ = 0;    // bit p: sent inline to port p, not ours: read its ring next
  std::array<RxFrame, kBurst> burst_;  // the frames of the burst being handled
  buffer::ChunkOffer offer_;           // the frame being handled, where it may stay in its chunk
  std::vector<uint8_t> scratch_;       // a frame with its VLAN tag put back
  model::OverflowStep overflow_;       // admission with trimming's overflow actions
};

}  // namespace sharebuf::datapath
