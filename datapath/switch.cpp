#include "datapath/switch.h"

#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "datapath/af_packet_port.h"
#include "datapath/egress_worker.h"
#include "datapath/port_lock.h"
#include "datapath/rx_worker.h"

namespace sharebuf::datapath {

Switch::Switch(const model::SwitchConfig& config)
    : core_(std::make_unique<SwitchCore>(config)),
      control_(std::make_unique<SwitchControl>(*core_)) {
  core_->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (core_->stop_fd < 0) throw std::runtime_error("eventfd failed");
  if (const size_t stale = remove_stale_port_locks(core_->config().port_lock_dir))
    warnings_.push_back("removed " + std::to_string(stale) + " lock file(s) in " +
                        core_->config().port_lock_dir +
                        " left by daemons whose network namespace is gone");
  const model::SwitchConfig& cfg = core_->config();
  if (cfg.rx_io == model::RxIo::kAfXdp && cfg.xdp_shared_umem && !core_->ports.empty()) {
    uint32_t mtu = 0, rx_frames = 0;
    for (const auto& port : core_->ports) {
      mtu = std::max(mtu, read_mtu(port->config.name));
      rx_frames = std::max(rx_frames, port->config.rx_ring_frames);
    }
    // Chunks as XskPort sizes its own: the MTU with two VLAN tags behind 256 bytes of headroom.
    const uint32_t chunk = mtu + 14 + 8 + 256 <= 2048 ? 2048 : 4096;
    umem_ = std::make_unique<XskUmem>(
        chunk, XskUmem::chunks_for(
                   static_cast<uint32_t>(core_->ports.size()), XskPort::rx_frames_for(rx_frames),
                   cfg.tx_io == model::TxIo::kAfXdp ? AfPacketPort::kXdpTxFrames : 0,
                   core_->buffer().pool().physical_cells()));
    core_->buffer().pool().attach_chunks(&umem_->store());
  }
  for (uint32_t p = 0; p < core_->ports.size(); ++p) {
    auto& port = core_->ports[p];
    // Claimed one by one: if a later port fails, core_'s destructor releases the earlier ones.
    port->claim = std::make_unique<PortClaim>(core_->config().port_lock_dir, port->config.name);
    port->link = port->claim->link();
    if (!port->claim->recovered().empty()) warnings_.push_back(port->claim->recovered());
    if (port->config.storm_pps != 0) port->storm.set_rate(port->config.storm_pps);
    const auto offloads = risky_offloads(read_offloads(port->config.name));
    if (!offloads.empty()) {
      std::string list;
      for (const auto& o : offloads)
        list += (list.empty() ? "" : ", ") + o;
      warnings_.push_back("port " + port->config.name + " has offloads on (" + list +
                          "): frames larger than the MTU or with partial checksums may reach the "
                          "switch; turn them off on both veth ends: ethtool -K " +
                          port->config.name + " tx off tso off gso off gro off");
    }
    // With rx_io af_xdp the switch attaches its own XDP program, which gives the port NAPI.
    if (std::thread::hardware_concurrency() > 1 && core_->config().rx_io != model::RxIo::kAfXdp &&
        read_driver(port->config.name) == "veth" && xdp_attached(port->link.ifindex) == false &&
        rps_steered(port->config.name, port->link.ifindex) == false) {
      warnings_.push_back(
          "port " + port->config.name +
          " is a veth without NAPI or RPS: the kernel processes each frame it receives on the CPU "
          "that sent it, so a sender transmitting from two CPUs (TCP does) has its frames "
          "reordered before they reach the switch, which a cable never does; keep them in order "
          "on both veth ends with an XDP program that passes every frame (it makes veth use NAPI; "
          "the netns testbed attaches scripts/xdp_pass.c) or RPS (docs/running.md)");
    }
    const uint32_t lanes =
        core_->config().rx_mode == model::RxMode::kPerCpu ? model::rx_workers(core_->config()) : 1;
    port->io = std::make_unique<AfPacketPort>(
        port->config.name, port->link.ifindex, port->link.mtu, port->config.rx_ring_frames,
        port->config.tx_batch, lanes, core_->config().rx_io == model::RxIo::kAfXdp,
        core_->config().poll_mode == model::PollMode::kBusyPoll,
        core_->config().tx_io == model::TxIo::kAfXdp, umem_.get());
    core_->apply_rate(p, port->config.rate_bps, port->link.mtu);
  }
}

Switch::Switch(const model::SwitchConfig& config, std::vector<std::unique_ptr<PortIo>> ports)
    : core_(std::make_unique<SwitchCore>(config)),
      control_(std::make_unique<SwitchControl>(*core_)) {
  if (ports.size() != core_->ports.size())
    throw std::invalid_argument("Switch: " + std::to_string(ports.size()) + " port I/Os for " +
                                std::to_string(core_->ports.size()) + " configured ports");
  core_->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (core_->stop_fd < 0) throw std::runtime_error("eventfd failed");
  for (size_t i = 0; i < ports.size(); ++i) {
    PortRuntime& port = *core_->ports[i];
    port.io = std::move(ports[i]);
    port.link.mtu = port.io->mtu();
    if (port.config.storm_pps != 0) port.storm.set_rate(port.config.storm_pps);
    core_->apply_rate(static_cast<uint32_t>(i), port.config.rate_bps, port.io->mtu());
  }
}

Switch::~Switch() {
  stop();
  release_queued();
  // Every AF_PACKET socket's close waits for an RCU grace period (the kernel's packet_release
  // calls synchronize_net): 20-48 ms each, one after the other 250 ms for 5 ports with both cores
  // busy, longer on a loaded host. Closed on one thread per port, the waits overlap.
  {
    std::vector<std::thread> closers;
    for (const auto& port : core_->ports)
      closers.emplace_back([&io = port->io] { io.reset(); });
    for (std::thread& t : closers)
      t.join();
  }
  // The ports' claims restore the interfaces as core_ goes.
  if (core_->stop_fd >= 0) close(core_->stop_fd);
  for (const auto& parking : core_->rx_parking)
    close(parking->wake_fd);
}

namespace {

// Datapath threads wake on every frame; on a loaded 2-core VM a normal-priority thread can wait
// behind others for its CPU. SCHED_FIFO lets it run at once (and it still blocks when idle).
void apply_priority(int priority) {
  if (priority == 0) return;
  sched_param param{};
  param.sched_priority = priority;
  if (const int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param); err != 0) {
    spdlog::warn("realtime_priority {}: cannot set SCHED_FIFO ({}); running at normal priority",
                 priority, std::strerror(err));
  }
}

// Per-CPU RX: the worker of lane `cpu` runs on that CPU, where the kernel received its frames.
// A CPU outside the daemon's affinity mask (taskset, cgroup cpuset) cannot be used; that worker
// then runs anywhere, still correct but waking across CPUs again.
void pin_to_cpu(uint32_t cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (const int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set); err != 0) {
    spdlog::warn(
        "rx_mode per-cpu: cannot pin the RX worker of CPU {} there ({}); it runs "
        "unpinned",
        cpu, std::strerror(err));
  }
}

// Names the thread for top, perf sched and ps -L (at most 15 characters).
void name_thread(const std::string& name) {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace

void Switch::start() {
  if (running_) return;
  running_ = true;
  const int prio = core_->config().realtime_priority;
  const uint32_t n_ports = static_cast<uint32_t>(core_->ports.size());
  for (uint32_t p = 0; p < n_ports; ++p) {
    egress_threads_.emplace_back([this, p, prio] {
      apply_priority(prio);
      name_thread("sb-tx-" + core_->ports[p]->config.name);
      EgressWorker(*core_, p).run();
    });
  }
  const uint32_t n_rx = model::rx_workers(core_->config());
  const bool per_cpu = core_->config().rx_mode == model::RxMode::kPerCpu;
  if (core_->rx_parking.empty()) {
    for (uint32_t t = 0; t < n_rx; ++t) {
      auto parking = std::make_unique<SwitchCore::RxParking>();
      parking->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
      if (parking->wake_fd < 0) throw std::runtime_error("eventfd failed");
      // Per-CPU: every worker reads its lane of every port.
      for (uint32_t p = per_cpu ? 0 : t; p < n_ports; p += per_cpu ? 1 : n_rx)
        parking->ports.push_back(p);
      core_->rx_parking.push_back(std::move(parking));
    }
  }
  for (uint32_t t = 0; t < n_rx; ++t) {
    core_->rx_parking[t]->parked.store(false, std::memory_order_relaxed);
    const std::vector<uint32_t> ports = core_->rx_parking[t]->ports;
    rx_threads_.emplace_back([this, ports, prio, t, per_cpu] {
      if (per_cpu) pin_to_cpu(t);
      apply_priority(prio);
      name_thread((per_cpu ? "sb-rx-cpu" : "sb-rx") + std::to_string(t));
      RxWorker(*core_, ports, core_->rx_slot(t), t, per_cpu ? t : 0).run();
    });
  }
}

void Switch::stop() {
  if (!running_) return;
  running_ = false;
  core_->stop_rx.store(true, std::memory_order_relaxed);
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t w = write(core_->stop_fd, &one, sizeof one);
  for (auto& t : rx_threads_)
    t.join();
  rx_threads_.clear();
  if (core_->config().drain_on_stop) {
    // Give the egress workers up to 800 ms to send what is queued.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
    while (core_->buffer().state().total_cells() != 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  core_->stop_egress.store(true, std::memory_order_relaxed);
  for (auto& port : core_->ports)
    port->signal.wake();
  for (auto& t : egress_threads_)
    t.join();
  egress_threads_.clear();
}

std::vector<std::string> Switch::check_links() {
  std::vector<std::string> changes;
  for (auto& port : core_->ports) {
    const uint32_t now = read_mtu(port->config.name);
    const uint32_t before = port->io->mtu();
    if (now == 0 || now == before) continue;
    port->io->set_mtu(now);
    std::string msg = "port " + port->config.name + ": MTU changed from " + std::to_string(before) +
                      " to " + std::to_string(now) + "; frames sent out of it may now be up to " +
                      std::to_string(now) + " B of payload (larger ones are counted as oversize)";
    // The RX ring's slots were sized from the MTU at the start.
    const uint32_t ring_payload = port->io->rx_capacity() - 14;
    if (now > ring_payload) {
      msg += "; the RX ring holds frames of up to " + std::to_string(ring_payload) +
             " B of payload, so larger ones arriving on it are counted as truncated until "
             "sharebufd is restarted";
    }
    changes.push_back(std::move(msg));
  }
  return changes;
}

void Switch::release_queued() {
  buffer::CellCache cache(core_->buffer().pool());
  core_->buffer().drain_all(cache);
  core_->switch_model.tofino().discard_all(core_->buffer().state());
}

}  // namespace sharebuf::datapath
