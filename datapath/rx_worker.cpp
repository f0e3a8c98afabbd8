#include "datapath/rx_worker.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/spin_lock.h"
#include "datapath/egress_path.h"
#include "model/admission_step.h"
#include "model/checksum.h"
#include "model/ecn.h"

namespace sharebuf::datapath {

void RxWorker::run() {
  buffer::CellCache cache(core_.buffer().pool());
  // Any frame a ring slot of any port holds (this worker may read other ports' rings: answers,
  // parked workers' rings), with its VLAN tag put back (the MTU may grow while running).
  uint32_t max_frame = 0;
  for (const auto& port : core_.ports)
    max_frame = std::max(max_frame, port->io->rx_capacity());
  scratch_.resize(max_frame + 4);
  // Push-outs copy their victims here (no allocation under the push-out lock): room for 64
  // frames of the largest size.
  overflow_.reserve(max_frame + 4);
  // [switch] poll_mode (model/switch_config.h): adaptive spins spin_ns after the last frame,
  // busy-poll never blocks.
  const model::PollMode poll_mode = core_.config().poll_mode;
  const uint64_t spin_ns =
      poll_mode == model::PollMode::kAdaptive ? core_.config().rx_busy_poll_ns : 0;
  const bool busy_poll = poll_mode == model::PollMode::kBusyPoll;
  const uint64_t park_after_ns = core_.config().rx_park_after_ns;
  const bool parking = !per_cpu_ && park_after_ns != 0 && core_.rx_parking.size() > 1;
  const bool leader = worker_ == 0;
  // Blocks at most this long when idle: a worker that may park parks after that.
  const int idle_ms = parking && !leader
                          ? static_cast<int>(std::max<uint64_t>(
                                1, (core_.config().rx_park_after_ns + 999'999) / 1'000'000))
                          : 100;
  SwitchCore::RxParking& me = *core_.rx_parking[worker_];
  std::vector<pollfd> fds;
  uint64_t last_activity = monotonic_ns();
  uint32_t busy_rounds = 0;
  bool woke = false;  // poll() blocked and returned: the next frame measures the wake-up
  while (!core_.stop_rx.load(std::memory_order_relaxed)) {
    // A batch boundary: no policy or capture pointer is held across it (datapath/epochs.h).
    core_.epochs.enter(slot_);
    bool any = false;
    for (uint32_t p : ports_) {
      if (drain(p, cache, woke) != 0) {
        any = true;
        woke = false;
      }
    }
    if (parking && leader) any |= drain_parked(cache, woke);
    // Frames in an emulated recirculation port (trimming's Tofino approximation) leave it at
    // their time: the worker sleeps no longer than until the first one leaves.
    const bool recirculating = release_deflected(cache);
    // A frame sent inline to another worker's port is often answered before sendmmsg returns
    // (the receiving host's kernel replies in the same softirq), so the answer is in that port's
    // ring now: take it, rather than let it wait for that port's worker to wake up. Only while
    // that worker is asleep: a running one reads its ring itself, and taking its frames from
    // this core, with its ring's lines moving between the cores, cost TCP a fifth of its
    // goodput (docs/datapath-latency.md).
    for (uint64_t a = std::exchange(answer_ports_, 0); a != 0; a &= a - 1) {
      const uint32_t p = static_cast<uint32_t>(__builtin_ctzll(a));
      if (core_.ports[p]->rx_asleep.load(std::memory_order_relaxed))
        any |= drain(p, cache, false) != 0;
    }
    woke = false;
    if (any) {
      last_activity = monotonic_ns();
      if (++busy_rounds % 64 == 0) collect_socket_stats();
      continue;
    }
    // About to wait: what the sockets counted during the work is reported now, not at the next
    // busy spell (a getsockopt per port, once per idle transition).
    if (busy_rounds != 0) {
      collect_socket_stats();
      busy_rounds = 0;
    }
    // Optional busy polling (off by default: the target machines have 2 cores) catches the next
    // frame without a wake-up, e.g. a reply arriving on another port this worker serves.
    if (spin_ns != 0 && monotonic_ns() - last_activity < spin_ns) {
      common::cpu_relax();
      continue;
    }
    if (busy_poll) {
      // Never blocks; a worker other than the first still parks when its rings stay empty, so
      // at idle one core polls every port (as one PMD thread would), not one per worker.
      if (parking && !leader && !recirculating && monotonic_ns() - last_activity >= park_after_ns) {
        core_.epochs.idle(slot_);
        park();
        last_activity = monotonic_ns();
        continue;
      }
      for (uint32_t p : ports_)
        core_.ports[p]->io->rx_poke(lane_);
      common::cpu_relax();
      continue;
    }
    // A recirculating frame's departure bounds the sleep (to the nanosecond: E7's recirculation
    // latency is 1 ms, a whole poll() tick); spinning through it took a core from the egress
    // threads on a 2-core machine.
    timespec until_departure{};
    const timespec* wait = nullptr;
    if (recirculating) {
      const uint64_t next = core_.switch_model.tofino().next_departure_ns();
      const uint64_t now = monotonic_ns();
      if (next <= now) continue;
      const uint64_t ns =
          std::min<uint64_t>(next - now, static_cast<uint64_t>(idle_ms) * 1'000'000);
      until_departure = {static_cast<time_t>(ns / 1'000'000'000),
                         static_cast<long>(ns % 1'000'000'000)};
      wait = &until_departure;
    }
    core_.epochs.idle(slot_);
    fds.clear();
    for (uint32_t p : ports_)
      fds.push_back({core_.ports[p]->io->rx_fd(lane_), POLLIN, 0});
    if (parking && leader) {
      // seq_cst pairs with the parking worker's store: a worker that parked before this load
      // has its rings polled here; one that parks after it wakes us through wake_fd.
      for (size_t w = 1; w < core_.rx_parking.size(); ++w) {
        if (!core_.rx_parking[w]->parked.load(std::memory_order_seq_cst)) continue;
        for (uint32_t p : core_.rx_parking[w]->ports)
          fds.push_back({core_.ports[p]->io->rx_fd(), POLLIN, 0});
      }
    }
    fds.push_back({me.wake_fd, POLLIN, 0});
    fds.push_back({core_.stop_fd, POLLIN, 0});
    set_asleep(ports_, true);
    const timespec idle{idle_ms / 1000, static_cast<long>(idle_ms % 1000) * 1'000'000};
    const int ready = ppoll(fds.data(), fds.size(), wait != nullptr ? wait : &idle, nullptr);
    set_asleep(ports_, false);
    woke = false;  // a ring woke us (not a parking worker's note, not stop)
    for (size_t i = 0; ready > 0 && i + 2 < fds.size(); ++i)
      woke |= (fds[i].revents & POLLIN) != 0;
    if (ready > 0 && (fds[fds.size() - 2].revents & POLLIN) != 0) {
      uint64_t count;
      [[maybe_unused]] const ssize_t r = read(me.wake_fd, &count, sizeof count);
    }
    if (ready == 0 && parking && !leader && !recirculating) park();
  }
  core_.epochs.idle(slot_);
  collect_socket_stats();
}

bool RxWorker::drain_parked(buffer::CellCache& cache, bool& woke) {
  bool any = false;
  for (size_t w = 1; w < core_.rx_parking.size(); ++w) {
    SwitchCore::RxParking& other = *core_.rx_parking[w];
    if (!other.parked.load(std::memory_order_acquire)) continue;
    for (uint32_t p : other.ports) {
      const uint32_t n = drain(p, cache, woke);
      if (n != 0) {
        any = true;
        woke = false;
      }
      if (n >= kUnparkBurst && other.parked.exchange(false, std::memory_order_acq_rel)) {
        other.unparks.fetch_add(1, std::memory_order_relaxed);
        const uint64_t one = 1;
        [[maybe_unused]] const ssize_t r = write(other.wake_fd, &one, sizeof one);
        break;
      }
    }
  }
  return any;
}

void RxWorker::park() {
  SwitchCore::RxParking& me = *core_.rx_parking[worker_];
  SwitchCore::RxParking& first = *core_.rx_parking[0];
  // seq_cst pairs with the first worker's load as it builds its poll set (run()).
  me.parks.fetch_add(1, std::memory_order_relaxed);
  me.parked.store(true, std::memory_order_seq_cst);
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t w = write(first.wake_fd, &one, sizeof one);
  pollfd fds[2] = {{me.wake_fd, POLLIN, 0}, {core_.stop_fd, POLLIN, 0}};
  set_asleep(me.ports, true);
  while (me.parked.load(std::memory_order_acquire) &&
         !core_.stop_rx.load(std::memory_order_relaxed)) {
    if (poll(fds, 2, -1) > 0 && (fds[0].revents & POLLIN) != 0) {
      uint64_t count;
      [[maybe_unused]] const ssize_t r = read(me.wake_fd, &count, sizeof count);
    }
  }
  me.parked.store(false, std::memory_order_relaxed);  // stopping: not parked any more
  set_asleep(me.ports, false);
}

void RxWorker::set_asleep(const std::vector<uint32_t>& ports, bool asleep) noexcept {
  // Per-CPU workers share every port, and answers come back in their own lanes (rx_worker.h).
  if (per_cpu_) return;
  for (uint32_t p : ports)
    core_.ports[p]->rx_asleep.store(asleep, std::memory_order_relaxed);
}

uint32_t RxWorker::drain(uint32_t p, buffer::CellCache& cache, bool woke) {
  PortRuntime& port = *core_.ports[p];
  // acquire pairs with the previous reader's release: its ring position is visible. Uncontended
  // but for the moments another worker takes the answers to what it sent (run()). A per-CPU
  // lane has one reader only.
  if (!per_cpu_ && port.rx_owned.exchange(true, std::memory_order_acquire)) return 0;
  const uint32_t n = port.io->rx_burst(burst_.data(), kBurst, lane_);
  if (n == 0) {
    if (!per_cpu_) port.rx_owned.store(false, std::memory_order_release);
    return 0;
  }
  port_ = p;
  // acquire pairs with the release store of a newly published policy.
  policies::Policy& policy = core_.policy();
  // Published before the burst's time is read, so a worker releasing deflected frames either
  // sees it or read its own clock first (both seq_cst): no frame that left the recirculation
  // port after this burst's time returns before the burst is admitted. Releases by another
  // worker while this one was preempted mid-burst freed the cells the rest of the burst found:
  // the live switch deflected every refused frame where the replay dropped eleven (CI,
  // EngineParity.TrimmingTofinoApprox).
  SwitchCore::RxParking& me = *core_.rx_parking[worker_];
  me.admitting_ns.store(monotonic_ns(), std::memory_order_seq_cst);
  const uint64_t now = monotonic_ns();
  const uint64_t real_now = realtime_ns();  // the ring stamps' clock (hop_latency.h)
  const buffer::BufferView view = model::ingress_view(policy, core_.buffer(), now);
  if (woke)
    port.latency.record_since_ring(HopLatency::kWakeup, burst_[0].ring_realtime_ns, real_now);
  policy.begin_burst();  // nothing below calls the policy's egress hooks (flush_pending is after)
  // Frames that reached the ring while the burst was handled join it, up to kBurst: one send
  // (flush_pending) then carries them all. Taking only what was there at first cost one TCP
  // stream about 4 % of its goodput (docs/measurements/datapath-latency-log.md, "The port
  // interface").
  uint32_t total = 0;
  // A shared AF_XDP UMEM: a unicast frame may stay queued in its chunk (handle()).
  const bool chunks =
      port.io->rx_chunks() != nullptr && port.io->rx_chunks() == core_.buffer().pool().chunks();
  uint64_t kept = 0;
  for (uint32_t got = n; got != 0;
       got = total < kBurst ? port.io->rx_burst(burst_.data(), kBurst - total, lane_) : 0) {
    for (uint32_t i = 0; i < got; ++i) {
      RxFrame& rx = burst_[i];
      port.latency.record_since_ring(HopLatency::kRingToRx, rx.ring_realtime_ns, real_now);
      frame_ns_ = ring_arrival_ns(rx, now, real_now);
      offer_ = chunks ? buffer::ChunkOffer{.begin = reinterpret_cast<const std::byte*>(rx.data),
                                           .len = rx.len}
                      : buffer::ChunkOffer{};
      handle(rx, policy, view, now, cache);
      if (offer_.taken) {
        rx.kept = true;  // rx_release gives the receive side offer_.refill instead
        rx.refill = offer_.refill;
        ++kept;
      }
    }
    port.io->rx_release(lane_);
    total += got;
  }
  policy.end_burst();
  me.admitting_ns.store(SwitchCore::RxParking::kNotAdmitting, std::memory_order_release);
  if (!per_cpu_) port.rx_owned.store(false, std::memory_order_release);
  me.frames.fetch_add(total, std::memory_order_relaxed);
  if (kept != 0) port.counters.rx_kept_in_chunk.fetch_add(kept, std::memory_order_relaxed);
  flush_pending(cache);
  return total;
}

void RxWorker::collect_socket_stats() {
  for (uint32_t p : ports_) {
    PortRuntime& port = *core_.ports[p];
    const PortIo::SocketStats s = port.io->rx_socket_stats(lane_);
    port.counters.ring_drops.fetch_add(s.drops, std::memory_order_relaxed);
    port.counters.socket_frames.fetch_add(s.frames, std::memory_order_relaxed);
  }
}

void RxWorker::note_arrival_order(uint64_t ring_realtime_ns, uint32_t flow_hash) noexcept {
  PortRuntime& port = *core_.ports[port_];
  // Per flow (a bucket of flow hashes): two flows received on two CPUs interleave without either
  // being reordered, but with one stamp per port a single frame of another flow taken on the
  // other CPU made every frame of a stream's backlog count: 3.9 % of a TCP stream's port in one
  // CI run, more than 3 % in 3 of 3 runs under two CPU hogs here; per flow, 0 in 5 of 5 with
  // one to three hogs (tests/netns/rx_per_cpu.sh).
  std::atomic<uint64_t>& newest_of_flow =
      port.rx_newest_stamp[(flow_hash >> 16) % PortRuntime::kOrderBuckets];
  uint64_t newest = newest_of_flow.load(std::memory_order_relaxed);
  while (ring_realtime_ns > newest) {
    if (newest_of_flow.compare_exchange_weak(newest, ring_realtime_ns, std::memory_order_relaxed))
      return;
  }
  if (ring_realtime_ns < newest)
    port.counters.rx_out_of_order.fetch_add(1, std::memory_order_relaxed);
}

void RxWorker::flush_pending(buffer::CellCache& cache) {
  // An idle port: send inline instead of waking its egress worker (see egress_path.h), once per
  // burst so one kick carries every frame of the burst. If frames remain (shaper, ring full,
  // budget), the worker takes over.
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the worker's sleep check
  for (uint64_t pending = pending_ports_; pending != 0; pending &= pending - 1) {
    const uint32_t out_port = static_cast<uint32_t>(__builtin_ctzll(pending));
    EgressSignal& signal = core_.ports[out_port]->signal;
    if (!signal.sleeping.load(std::memory_order_relaxed)) continue;
    EgressPath path(core_, out_port);
    if (!path.try_acquire()) {
      signal.wake();
      continue;
    }
    const EgressPath::Result r = path.send_burst(cache, kInlineBudget);
    const bool more = r.staged != 0 || path.any_queued();
    path.release();
    if (more) signal.wake();
    if (std::find(ports_.begin(), ports_.end(), out_port) == ports_.end())
      answer_ports_ |= uint64_t{1} << out_port;
  }
  pending_ports_ = 0;
}

void RxWorker::handle(const RxFrame& rx, policies::Policy& policy, const buffer::BufferView& view,
                      uint64_t now_ns, buffer::CellCache& cache) {
  PortRuntime& port = *core_.ports[port_];
  PortCounters& c = port.counters;
  c.rx_frames.fetch_add(1, std::memory_order_relaxed);
  c.rx_bytes.fetch_add(rx.wire_len, std::memory_order_relaxed);
  if (rx.len < rx.wire_len) {
    c.truncated.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // The ring slot is ours until released, so the frame may be edited in place (ECN, checksums).
  std::span<uint8_t> frame(const_cast<uint8_t*>(rx.data), rx.len);
  if (rx.vlan_valid && rx.len >= 12 && rx.len + 4 <= scratch_.size()) {
    // The kernel stripped the tag into the ring header; put it back so it is forwarded.
    std::memcpy(scratch_.data(), rx.data, 12);
    scratch_[12] = static_cast<uint8_t>(rx.vlan_tpid >> 8);
    scratch_[13] = static_cast<uint8_t>(rx.vlan_tpid);
    scratch_[14] = static_cast<uint8_t>(rx.vlan_tci >> 8);
    scratch_[15] = static_cast<uint8_t>(rx.vlan_tci);
    std::memcpy(scratch_.data() + 16, rx.data + 12, rx.len - 12);
    frame = std::span<uint8_t>(scratch_.data(), rx.len + 4);
  }
  if (FrameCapture* cap = core_.capture.load(std::memory_order_acquire);
      cap != nullptr && cap->mode() == FrameCapture::Mode::kAll) {
    // Every arrival once, before any ECN mark, at the time admission uses for it (its burst's),
    // or at the time it reached the port's ring, which the trimming meters use: a replay of the
    // recording sees its arrival then (stamps=ring: E7's agreement; replayed meters given a
    // burst's one time trimmed 18 % more).
    cap->offer(frame, static_cast<uint16_t>(port_), cap->ring_stamps() ? frame_ns_ : now_ns);
  }
  const model::ParsedFrame parsed = model::parse_frame(frame);
  if (!parsed.ok()) {
    c.malformed[static_cast<size_t>(parsed.error)].fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (per_cpu_) note_arrival_order(rx.ring_realtime_ns, model::flow_hash(parsed));
  if (rx.checksum_partial && model::complete_l4_checksum(frame, parsed)) {
    if (c.checksum_completed.fetch_add(1, std::memory_order_relaxed) == 0) {
      spdlog::warn(
          "port {}: frames arrive with partial checksums (checksum offload on the "
          "sender's veth); completing them in software. Turn it off: ethtool -K <dev> "
          "tx off",
          port.config.name);
    }
  }
  // The model's ingress step (model/switch_model.h): forwarding, then per copy its queue, ECN
  // decision and context — what the replay and ns-3 run too.
  model::SwitchModel& sm = core_.switch_model;
  const model::SwitchModel::Forward fw = sm.forward(parsed, static_cast<uint16_t>(port_), now_ns);
  if (parsed.dst_is_group() && port.storm.enabled()) {
    port.storm_lock.lock();
    const bool allowed = port.storm.allow(now_ns);
    port.storm_lock.unlock();
    if (!allowed) {
      c.storm_dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }

  const uint8_t class_id = sm.classifier().classify(parsed, static_cast<uint16_t>(port_));
  CeState ce;
  if (fw.kind == model::SwitchModel::Forward::Kind::kFiltered) {
    c.filtered.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (fw.kind == model::SwitchModel::Forward::Kind::kUnicast) {
    // Its only copy: it may stay in its chunk (buffer/cell_pool.h, ChunkOffer). A flooded
    // frame's copies do not, as the CE marks they take in turn change the bytes they share.
    if (offer_.begin != nullptr) cache.offer = &offer_;
    admit_copy(fw.port, frame, parsed, class_id, ce, policy, view, now_ns, cache);
    cache.offer = nullptr;
    return;
  }
  // Unknown unicast, broadcast, multicast: one copy per other port (none to a fabric port), each
  // admitted on its own, in port order.
  c.flooded.fetch_add(1, std::memory_order_relaxed);
  for (uint64_t to = fw.flood; to != 0; to &= to - 1) {
    const auto out = static_cast<uint32_t>(std::countr_zero(to));
    admit_copy(out, frame, parsed, class_id, ce, policy, view, now_ns, cache);
  }
}

void RxWorker::admit_copy(uint32_t out_port, std::span<uint8_t> frame,
                          const model::ParsedFrame& parsed, uint8_t class_id, CeState& ce,
                          policies::Policy& policy, const buffer::BufferView& view, uint64_t now_ns,
                          buffer::CellCache& cache) {
  PortRuntime& out = *core_.ports[out_port];
  const uint32_t l2_header = parsed.l3_offset != 0 ? parsed.l3_offset : (parsed.has_vlan ? 18 : 14);
  // The MTU may change while running (Switch::check_links); the staging slot does not.
  if (frame.size() > out.io->mtu() + l2_header || frame.size() > out.io->tx_capacity()) {
    out.counters.oversize.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const uint32_t bytes = static_cast<uint32_t>(frame.size());
  model::SwitchModel::Copy copy =
      core_.switch_model.copy_to(out_port, {.class_id = class_id,
                                            .bytes = bytes,
                                            .ect = parsed.ect(),
                                            .flow_hash = model::flow_hash(parsed),
                                            .in_port = static_cast<uint16_t>(port_),
                                            .now_ns = now_ns});
  const uint32_t q = copy.ctx.queue;
  // The model's CE decision, carried out on the bytes. The copies of a flooded frame share them:
  // a copy whose queue does not mark takes the frame back as it came.
  if (copy.mark_ce && !ce.marked) {
    ce.undo = model::ce_undo(frame, parsed);
    ce.marked = model::mark_ce(frame, parsed);
    if (!ce.marked) {  // not an IP frame the mark fits in: unmarked
      copy.mark_ce = false;
      copy.meta.flags &= static_cast<uint8_t>(~buffer::kFlagEcnMarked);
    }
  } else if (!copy.mark_ce && ce.marked) {
    model::undo_ce(frame, parsed, ce.undo);
    ce.marked = false;
  }
  // Admission with the class's overflow action (trimming, return-to-sender, deflect-on-drop):
  // model/overflow_step.h, the code the replay and ns-3 run too.
  const model::OverflowStep::Result r = overflow_.admit(
      policy, view, cache, copy.ctx, model::OverflowStep::Frame{frame.first(bytes), &parsed},
      copy.meta, port_, frame_ns_, *this);
  const model::AdmissionOutcome& outcome = r.outcome;
  if (outcome.waited_out &&
      core_.buffer().stats(q).stalled_pkts.load(std::memory_order_relaxed) == 1) {
    spdlog::warn(
        "port {} queue {}: an arrival was refused after waiting {} ms for cells an egress "
        "thread held (the host descheduled it); counted as pool_full and pool_full_stalled: a "
        "drop of the emulation, not of the buffer (warned once per queue)",
        core_.ports[out_port]->config.name, q - core_.buffer().layout().first_queue(out_port),
        buffer::SharedBuffer::kVictimWait.count());
  }
  if (FrameCapture* cap = core_.capture.load(std::memory_order_acquire);
      cap != nullptr && !outcome.enqueued && cap->mode() == FrameCapture::Mode::kDrops) {
    cap->offer(frame.first(bytes), static_cast<uint16_t>(port_), now_ns);
  }
  if (!outcome.enqueued && !r.copy_enqueued) return;
  core_.ports[port_]->latency.record(HopLatency::kRxToQueued, monotonic_ns() - now_ns);
  core_.switch_model.admitted(copy, outcome);  // the CE mark of an enqueued copy counted
}

void RxWorker::enqueued(uint32_t queue, bool) {
  pending_ports_ |= uint64_t{1} << core_.buffer().layout().port_of(queue);
}

bool RxWorker::release_deflected(buffer::CellCache& cache) {
  if (!core_.switch_model.tofino().any_deflected()) return false;
  policies::Policy& policy = core_.policy();
  // Up to now, or to the earliest burst another worker is admitting: what left after that burst's
  // time returns after it (the worker admitting it releases it at its next round).
  uint64_t now = monotonic_ns();
  for (const auto& w : core_.rx_parking)
    now = std::min(now, w->admitting_ns.load(std::memory_order_seq_cst));
  const bool more = overflow_.release_deflected(policy, cache, now, *this);
  // Only when a copy was queued: flush_pending's fence is not free, and this runs every round
  // while a recirculation port holds frames.
  if (pending_ports_ != 0) flush_pending(cache);
  return more;
}

}  // namespace sharebuf::datapath
