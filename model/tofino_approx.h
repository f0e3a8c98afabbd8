// TofinoApprox: trimming as the paper builds it on Tofino (trimming paper, sections 3-4),
// for `[trimming] mode = "tofino-approx"`. Each ingress pipeline — an RX worker with the ports it
// reads; `pipelines` groups ports onto workers as rx_threads does (port p: pipeline p mod N) —
// keeps its own meters per egress port (model/ingress_meters.h) and trims what they colour
// red before the buffer sees it. A frame its meters let through and the buffer refuses is
// deflected on drop: its full length queues at the pipeline's emulated recirculation port
// (`recirc_rate`, `recirc_queue` bytes deep, in the shared buffer's cells; a frame that does not
// fit is dropped), is trimmed
// by mirroring as it leaves (`recirc_latency` later) into the egress port's trim queue, and
// its departure sends a congestion notification to every pipeline, which arrives one more
// recirculation latency later and puts the port pessimistic there.
//
// A pipeline's state is reached only under its lock: its own worker takes it per frame
// (uncontended), another worker only when it reads that pipeline's ports (answers, parked
// workers) or releases deflected frames. Each notification is queued at every pipeline with the
// time it reaches that pipeline's ingress and acts then, as the hardware's NOTIFY packets do one
// by one: a later notification never hides an earlier one that has not arrived yet.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "buffer/shared_buffer.h"
#include "common/spin_lock.h"
#include "model/ingress_meters.h"
#include "policies/policy.h"

namespace sharebuf::model {

class TofinoApprox {
 public:
  // A deflected frame on its way through the recirculation port: its trimmed copy (cut when
  // deflected; the port still carries and times its full length), and where it goes.
  struct Deflected {
    std::vector<uint8_t> cut;
    policies::ArrivalContext from;  // the refused frame's queue, port, class
    buffer::FrameMeta meta;
    uint64_t leave_ns = 0;  // leaves the recirculation port (serialised + recirc latency)
    uint32_t cells = 0;     // the full frame's cells, held in the shared buffer until it leaves
  };

  // Recirculation-port and meter settings the RX workers read (live: SwitchControl).
  struct Settings {
    std::atomic<uint8_t> variant{static_cast<uint8_t>(MeterVariant::kThreeMeters)};
    std::atomic<uint32_t> burst_bytes{12'000};
    std::atomic<double> pessimistic_share{0.25};
    std::atomic<uint64_t> t0_ns{6'000};
    std::atomic<uint64_t> t1_ns{12'000};
    std::atomic<uint64_t> recirc_rate_bps{0};
    std::atomic<uint32_t> recirc_queue_bytes{65'536};
    std::atomic<uint64_t> recirc_latency_ns{1'000};
  };

  // Per egress port, summed over pipelines.
  struct PortCounters {
    std::atomic<uint64_t> ingress_trimmed{0};  // trimmed by a meter
    std::atomic<uint64_t> deflected{0};        // refused by the buffer, into a recirculation port
    // Refused, and the recirculation port's queue was full or the shared buffer had no cells.
    std::atomic<uint64_t> deflect_dropped{0};
    std::atomic<uint64_t> notifications{0};   // deflected frames that left and notified
    std::atomic<uint64_t> to_pessimistic{0};  // state changes a pipeline's frames saw
    std::atomic<uint64_t> to_half{0};
    std::atomic<uint64_t> to_optimistic{0};
    // Most frames a recirculation port's queue held (not yet serialised) after taking one of this
    // port's: the paper's stability metric, "maximum DoD queue size". A gauge, restarted by
    // reset_peaks().
    std::atomic<uint32_t> deflect_queue_peak{0};
  };

  // `line_rate_bps[p]`: the meters' 100 % for egress port p.
  TofinoApprox(uint32_t pipelines, std::vector<uint64_t> line_rate_bps);

  uint32_t pipelines() const noexcept { return static_cast<uint32_t>(pipes_.size()); }
  uint32_t pipeline_of(uint32_t in_port) const noexcept { return in_port % pipelines(); }

  // A data frame from `in_port` for `out_port`: applies notifications that have arrived, runs
  // the meters; true when the frame is to be trimmed at ingress.
  bool meter(uint32_t in_port, uint32_t out_port, uint32_t bytes, uint64_t now_ns) noexcept;

  // Deflect-on-drop of a frame the buffer refused, already cut into `d.cut` (`wire_bytes`: its
  // full length). Its cells are taken from the shared buffer outside every queue (on a Tofino it
  // waits in the recirculation port's traffic-manager queue) until it leaves. False when the
  // recirculation port's queue has no room or the buffer has no free cells: dropped.
  bool deflect(uint32_t in_port, Deflected&& d, uint32_t wire_bytes, uint64_t now_ns,
               buffer::BufferState& buffer);

  void reset_peaks() noexcept;

  // Whether any recirculation port holds frames (one relaxed load per pipeline).
  bool any_deflected() const noexcept;
  // When the first frame held by a recirculation port leaves it; UINT64_MAX if none is held.
  uint64_t next_departure_ns() const;
  // Takes every deflected frame that has left its recirculation port by `now_ns` into `out`
  // (appended), returns its cells to `buffer` and broadcasts their notifications to every
  // pipeline.
  void take_departed(uint64_t now_ns, std::vector<Deflected>& out, buffer::BufferState& buffer);
  // Drops every frame still in a recirculation port, returning its cells (shutdown).
  void discard_all(buffer::BufferState& buffer);

  Settings settings;
  PortCounters& counters(uint32_t port) noexcept { return counters_[port]; }
  const PortCounters& counters(uint32_t port) const noexcept { return counters_[port]; }
  uint64_t line_rate_bps(uint32_t port) const noexcept { return line_rate_[port]; }
  // The state pipeline `pipe` has for `port` at `now_ns` (reporting; takes the pipeline's lock).
  PortTrimState state(uint32_t pipe, uint32_t port, uint64_t now_ns) const;

 private:
  struct Note {
    uint64_t at_ns;  // reaches this pipeline's ingress
    uint32_t port;   // the egress port it is about
  };
  struct Pipeline {
    explicit Pipeline(size_t ports) : states(ports) {}
    common::SpinLock lock;
    std::vector<IngressPortState> states;
    std::deque<Note> notes;        // notifications on their way here, in arrival order
    std::deque<Deflected> recirc;  // the recirculation port's queue, in departure order
    uint64_t recirc_free_ns = 0;   // when its wire is free
    std::atomic<uint32_t> recirc_frames{0};
  };
  IngressMeterSettings meter_settings(uint32_t out_port) const noexcept;
  // Under pipe.lock: every notification that has reached `pipe` by `now_ns` acts, in order.
  void apply_notes(Pipeline& pipe, uint64_t now_ns) const noexcept;

  std::vector<uint64_t> line_rate_;
  std::vector<std::unique_ptr<Pipeline>> pipes_;
  std::unique_ptr<PortCounters[]> counters_;
};

}  // namespace sharebuf::model
