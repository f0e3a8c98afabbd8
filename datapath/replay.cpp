#include "datapath/replay.h"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "buffer/accounting_check.h"
#include "datapath/admission_step.h"
#include "policies/registry.h"

namespace sharebuf::datapath {
namespace {

using buffer::BufferLayout;
using buffer::kNoCell;

// Simulated egress of one port: round robin over its queues at the port's rate.
struct PortClock {
  uint64_t busy_until_ns = 0;
  uint32_t next_queue = 0;  // round-robin pointer, relative to the port's first queue
};

class ReplayEngine {
 public:
  ReplayEngine(const ReplaySetup& setup, const std::string& policy_name,
               const policies::Params& params)
      : setup_(setup),
        buffer_(setup.buffer),
        cache_(buffer_.pool()),
        ports_(buffer_.layout().num_ports()) {
    if (setup.port_rate_bps.size() != buffer_.layout().num_ports()) {
      throw std::invalid_argument("replay: one port rate per port is required");
    }
    env_.layout = &buffer_.layout();
    env_.classes = setup.classes;
    env_.port_rate_bps = setup.port_rate_bps;
    env_.queue_class = setup.queue_class;
    policy_ = policies::make_policy(policy_name, params, env_);
    policy_->on_install(buffer_.exact_view());
  }

  ReplayResult run(const std::vector<ReplayArrival>& arrivals, uint64_t end_ns) {
    static const std::array<std::byte, BufferLayout::kMaxFrameBytes> kPayload{};
    const BufferLayout& layout = buffer_.layout();
    for (const ReplayArrival& a : arrivals) {
      if (a.time_ns > end_ns) break;
      if (a.queue >= layout.num_queues()) throw std::invalid_argument("replay: bad queue id");
      advance_all(a.time_ns);
      const uint32_t port = layout.port_of(a.queue);
      const uint32_t bytes = std::min<uint32_t>(a.bytes, BufferLayout::kMaxFrameBytes);
      policies::ArrivalContext ctx{.now_ns = a.time_ns,
                                   .queue = a.queue,
                                   .port = static_cast<uint16_t>(port),
                                   .class_id = a.class_id,
                                   .cells = layout.cells_for(bytes),
                                   .bytes = bytes};
      const buffer::FrameMeta meta{.arrival_ns = a.time_ns, .class_id = a.class_id};
      admit_frame(*policy_, buffer_, cache_, buffer_.view(), ctx,
                  std::span<const std::byte>(kPayload.data(), bytes), meta);
      // An idle port starts sending the moment a frame arrives.
      PortClock& clock = ports_[port];
      clock.busy_until_ns = std::max(clock.busy_until_ns, a.time_ns);
      advance(port, a.time_ns);
    }
    advance_all(end_ns);
    return report();
  }

 private:
  void advance_all(uint64_t now_ns) {
    for (uint32_t p = 0; p < ports_.size(); ++p)
      advance(p, now_ns);
  }

  // Starts every transmission on port p that begins at or before now_ns.
  void advance(uint32_t p, uint64_t now_ns) {
    const BufferLayout& layout = buffer_.layout();
    PortClock& clock = ports_[p];
    const uint32_t first = layout.first_queue(p);
    const uint32_t n = layout.queues_on_port(p);
    while (clock.busy_until_ns <= now_ns) {
      uint32_t head = kNoCell;
      uint32_t q = 0;
      for (uint32_t i = 0; i < n && head == kNoCell; ++i) {
        q = first + (clock.next_queue + i) % n;
        head = buffer_.dequeue(q);
        if (head != kNoCell) clock.next_queue = (q - first + 1) % n;
      }
      if (head == kNoCell) return;
      const buffer::PacketDescriptor d = buffer_.pool().descriptor(head);
      const uint64_t start = clock.busy_until_ns;
      buffer_.stats(q).dequeued_bytes.fetch_add(d.bytes, std::memory_order_relaxed);
      buffer_.release(cache_, head);
      policy_->on_dequeue(policies::DequeueEvent{.now_ns = start,
                                                 .queue = q,
                                                 .port = static_cast<uint16_t>(p),
                                                 .class_id = d.class_id,
                                                 .cells = d.cells,
                                                 .bytes = d.bytes,
                                                 .sojourn_ns = start - d.arrival_ns},
                          buffer_.view());
      // Serialisation time at the port's rate, at least 1 ns so time always moves.
      const uint64_t tx_ns =
          std::max<uint64_t>(1, (uint64_t{d.bytes} * 8 * 1'000'000'000ull) /
                                    std::max<uint64_t>(1, setup_.port_rate_bps[p]));
      clock.busy_until_ns = start + tx_ns;
    }
  }

  ReplayResult report() {
    ReplayResult r;
    r.policy = std::string(policy_->name());
    r.accounting_errors = buffer::check_accounting(buffer_);
    r.peak_total_cells = buffer_.state().peak_total_cells();
    for (uint32_t q = 0; q < buffer_.layout().num_queues(); ++q) {
      const buffer::QueueStats& s = buffer_.stats(q);
      QueueReport qr;
      qr.arrivals = s.received_pkts.load();
      qr.enqueued = s.enqueued_pkts.load();
      qr.transmitted = s.dequeued_pkts.load();
      for (size_t i = 0; i < buffer::kNumDropReasons; ++i)
        qr.dropped[i] = s.dropped_pkts[i].load();
      qr.peak_cells = buffer_.state().peak_queue_cells(q);
      qr.final_cells = buffer_.state().queue_cells(q);
      r.queues.push_back(qr);
    }
    buffer_.drain_all(cache_);
    return r;
  }

  const ReplaySetup& setup_;
  buffer::SharedBuffer buffer_;
  buffer::CellCache cache_;
  std::vector<PortClock> ports_;
  policies::PolicyEnv env_;
  std::unique_ptr<policies::Policy> policy_;
};

}  // namespace

ReplayResult run_replay(const ReplaySetup& setup, const std::string& policy_name,
                        const policies::Params& params, const std::vector<ReplayArrival>& arrivals,
                        uint64_t end_ns) {
  ReplayEngine engine(setup, policy_name, params);
  return engine.run(arrivals, end_ns);
}

}  // namespace sharebuf::datapath
