#include "buffer/accounting_check.h"

#include <sstream>

namespace sharebuf::buffer {
namespace {

template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

}  // namespace

std::vector<std::string> check_accounting(const SharedBuffer& buffer) {
  std::vector<std::string> errors;
  const BufferLayout& layout = buffer.layout();
  const BufferState& state = buffer.state();
  const CellPool& pool = buffer.pool();
  const uint32_t capacity = layout.capacity_cells();

  uint64_t sum_queue = 0;
  int32_t long_queues = 0;
  uint64_t sum_group[kNumPriorityGroups] = {};
  std::vector<uint64_t> sum_port(layout.num_ports(), 0);
  for (uint32_t q = 0; q < layout.num_queues(); ++q) {
    const QueueStats& s = buffer.stats(q);
    const uint64_t received = s.received_pkts.load();
    const uint64_t enqueued = s.enqueued_pkts.load();
    const uint64_t dequeued = s.dequeued_pkts.load();
    const uint64_t pushed = s.evicted();
    if (received != enqueued + s.dropped_before_enqueue()) {
      errors.push_back(str("queue ", q, ": received ", received, " != enqueued ", enqueued,
                           " + dropped before enqueue ", s.dropped_before_enqueue()));
    }
    // Walk the FIFO: its frames must match both the packet counters and the cell occupancy.
    uint64_t frames = 0;
    uint64_t cells = 0;
    for (uint32_t h = buffer.queue(q).peek_head(); h != kNoCell && frames <= pool.physical_cells();
         h = pool.descriptor(h).next) {
      ++frames;
      cells += pool.descriptor(h).cells;
    }
    if (frames != enqueued - dequeued - pushed) {
      errors.push_back(str("queue ", q, ": holds ", frames, " frames != enqueued ", enqueued,
                           " - dequeued ", dequeued, " - pushed out or reclaimed ", pushed));
    }
    if (cells != state.queue_cells(q)) {
      errors.push_back(str("queue ", q, ": frames hold ", cells, " cells but occupancy says ",
                           state.queue_cells(q)));
    }
    if (state.peak_queue_cells(q) > capacity) {
      errors.push_back(
          str("queue ", q, ": peak ", state.peak_queue_cells(q), " exceeds B ", capacity));
    }
    sum_queue += state.queue_cells(q);
    if (state.queue_cells(q) >= state.fair_share_cells()) ++long_queues;
    sum_port[layout.port_of(q)] += state.queue_cells(q);
    sum_group[static_cast<uint32_t>(layout.group_of(q))] += state.queue_cells(q);
  }
  if (long_queues != state.live().long_queues.load()) {
    errors.push_back(str(long_queues, " queues hold >= B/N cells but the counter says ",
                         state.live().long_queues.load()));
  }
  const uint32_t total = state.total_cells();
  const uint32_t outside = state.outside_cells();
  if (sum_queue + outside != total) {
    errors.push_back(str("sum of queue occupancy ", sum_queue, " + ", outside,
                         " cells outside the queues != total ", total));
  }
  for (uint32_t p = 0; p < layout.num_ports(); ++p) {
    if (sum_port[p] != state.port_cells(p)) {
      errors.push_back(str("port ", p, ": occupancy ", state.port_cells(p),
                           " != sum of its queues ", sum_port[p]));
    }
    if (state.peak_port_cells(p) > capacity) {
      errors.push_back(str("port ", p, ": peak exceeds B"));
    }
  }
  for (uint32_t g = 0; g < kNumPriorityGroups; ++g) {
    const auto group = static_cast<PriorityGroup>(g);
    if (sum_group[g] != state.group_cells(group)) {
      errors.push_back(str("group ", to_string(group), ": occupancy ", state.group_cells(group),
                           " != sum of its queues ", sum_group[g]));
    }
    if (state.peak_group_cells(group) > capacity) {
      errors.push_back(str("group ", to_string(group), ": peak exceeds B"));
    }
  }
  if (total > capacity) errors.push_back(str("total ", total, " exceeds B ", capacity));
  if (state.peak_total_cells() > capacity) {
    errors.push_back(str("peak total ", state.peak_total_cells(), " exceeds B ", capacity));
  }
  // Frames outside the queues (a recirculation port's) keep their bytes outside the pool.
  const uint32_t in_frames = pool.physical_cells() - pool.free_cells_approx();
  if (in_frames + outside != total) {
    errors.push_back(
        str("pool has ", in_frames, " cells in frames but accounting says ", total - outside));
  }
  return errors;
}

}  // namespace sharebuf::buffer
