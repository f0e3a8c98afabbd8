// The overflow step: one frame copy's admission together with its class's overflow action —
// trimming's whole decision path (trimming paper, sections 3-4; NDP; SFC): the Tofino
// approximation's ingress meters, the policy's verdict (admission_step.h) with NDP's trim_newest,
// trimmed or returned copies of refused and pushed-out frames into their trim queues (the port's
// header reserve first), the header_full fallback back to the sender, SFC's early return above a
// threshold, deflect-on-drop into a recirculation port and the trimmed copies that leave it.
//
// The live RX workers and the replay both run it, so trimming has one implementation. They
// differ only in what a frame is: the live switch has its bytes (a cut copy is trim_frame()'s,
// with lengths, checksums and DSCP fixed); the replay has synthetic bytes without headers (a cut
// copy is then the frame's first `trim_size` bytes, and a returned copy is never recognised as
// one: replayed arrivals carry no DSCP).
//
// Not thread-safe: one per RX worker (its scratch space, evicted frames and trim_newest coin);
// the shared state it reaches (buffer, policy, TofinoApprox, TrimSettings) is safe to share.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "buffer/shared_buffer.h"
#include "model/admission_step.h"
#include "model/frame_parser.h"
#include "model/frame_trim.h"
#include "model/switch_config.h"
#include "model/tofino_approx.h"
#include "model/trim_settings.h"
#include "policies/policy.h"

namespace sharebuf::model {

// The Tofino approximation's settings from [trimming] (the meters' pessimistic share defaults to
// the paper's 25 %).
void configure_tofino(TofinoApprox& tofino, const SwitchConfig& config);

class OverflowStep {
 public:
  // Told of every frame the step puts into a queue, in the order it does so: the arrival itself
  // (copy false; not when it was refused) and each cut copy (copy true). The live RX worker notes
  // the port to send from; the replay tracks which arrival each queued frame is.
  class Sink {
   public:
    virtual void enqueued(uint32_t queue, bool copy) = 0;

   protected:
    ~Sink() = default;
  };

  // A frame as the step sees it: its bytes and, when it has real headers, how they parse.
  struct Frame {
    std::span<const uint8_t> bytes;
    const ParsedFrame* parsed = nullptr;  // null: synthetic bytes (the replay)
  };

  struct Result {
    AdmissionOutcome outcome;    // the arrival's own admission
    bool copy_enqueued = false;  // a cut copy of the refused arrival went on instead
  };

  // `synthetic`: frames have no headers (the replay); `seed`: trim_newest's coin.
  OverflowStep(buffer::SharedBuffer& buffer, const TrimSettings& trim, TofinoApprox& tofino,
               bool header_full_return, bool synthetic, uint64_t seed);

  // Room for frames up to `max_frame` bytes: push-outs copy their victims without allocating
  // under the push-out lock (64 of them), cuts copy into scratch space.
  void reserve(uint32_t max_frame);

  // Admits `frame` (`ctx` and `meta` describe it) arriving at ingress port `in_port` under its
  // class's overflow action. `meter_ns`: when it reached the ingress pipeline (the meters' clock).
  Result admit(policies::Policy& policy, const buffer::BufferView& view, buffer::CellCache& cache,
               const policies::ArrivalContext& ctx, Frame frame, const buffer::FrameMeta& meta,
               uint32_t in_port, uint64_t meter_ns, Sink& sink);

  // The deflected frames the last release_deflected() took out of their recirculation ports (their
  // cut copies were admitted, or refused, at their trim queues).
  const std::vector<TofinoApprox::Deflected>& released() const noexcept { return departed_; }

  // The frames the last admit() took out of the buffer for its arrival (pushed out, reclaimed),
  // as copies: ns-3's queue disc tells ns-3 which of its packets are gone.
  const buffer::EvictedFrames& evicted() const noexcept { return evicted_; }

  // Deflected frames that have left their recirculation ports by `now_ns`, trimmed, admitted to
  // their trim queues; whether frames remain in a recirculation port.
  bool release_deflected(policies::Policy& policy, buffer::CellCache& cache, uint64_t now_ns,
                         Sink& sink);

 private:
  // The cut (trim) or returned copy of `frame` sent toward `via`'s trim queue; true if enqueued.
  // Refused there, a trimmed copy goes back to its sender when [trimming] header_full says so.
  bool send_cut_copy(uint32_t out_port, Frame frame, const policies::ArrivalContext& ctx,
                     const buffer::FrameMeta& meta, policies::Policy& policy,
                     const buffer::BufferView& view, buffer::CellCache& cache,
                     bool return_to_sender, Sink& sink);
  // The cut copy in scratch_; its length, 0 when the frame gets none.
  size_t cut(Frame frame, const buffer::FrameMeta& meta, uint32_t via, bool return_to_sender);
  TrimOptions trim_options(uint32_t via, bool return_to_sender) const noexcept;
  uint32_t trim_queue_of(uint32_t port) const noexcept;
  void deflect(uint32_t in_port, uint32_t out_port, Frame frame,
               const policies::ArrivalContext& ctx, const buffer::FrameMeta& meta);
  // The overflow action of the frames evicted for the arrival since the last call (evicted_).
  void trim_evicted(policies::Policy& policy, const buffer::BufferView& view,
                    buffer::CellCache& cache, uint64_t now_ns, Sink& sink);
  // admit_frame's RefusalHook for trim_newest: with that probability the queue's newest frame,
  // if it is a trimming class's and at least as large, is trimmed instead.
  static bool trim_newest_instead(void* self, const policies::ArrivalContext& ctx);

  buffer::SharedBuffer& buffer_;
  const TrimSettings& trim_;
  TofinoApprox& tofino_;
  bool header_full_return_;
  bool synthetic_;
  uint64_t rng_;
  std::vector<uint8_t> scratch_;                   // the copy being cut
  std::vector<TofinoApprox::Deflected> departed_;  // left a recirculation port this round
  buffer::EvictedFrames evicted_;  // frames taken out for the arrival under way (admit())
  size_t trimmed_upto_ = 0;        // of those, the ones trim_evicted has seen
  struct Admission {               // what trim_newest_instead needs of the admission under way
    policies::Policy* policy = nullptr;
    const buffer::BufferView* view = nullptr;
    buffer::CellCache* cache = nullptr;
    Sink* sink = nullptr;
  } current_;
};

}  // namespace sharebuf::model
