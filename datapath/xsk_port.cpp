#include "datapath/xsk_port.h"

#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "datapath/clocks.h"
#include "datapath/link_control.h"

namespace sharebuf::datapath {
namespace {

// Queues tried per interface; binding stops at the first the interface does not have.
constexpr uint32_t kMaxQueues = 64;

std::runtime_error sys_error(const std::string& ifname, const std::string& what) {
  return std::runtime_error("port '" + ifname + "' (rx_io af_xdp): " + what + ": " +
                            std::strerror(errno));
}

int bpf(int cmd, bpf_attr& attr) {
  return static_cast<int>(syscall(SYS_bpf, cmd, &attr, sizeof attr));
}

uint32_t round_up_pow2(uint32_t v) {
  uint32_t p = 1;
  while (p < v)
    p <<= 1;
  return p;
}

bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn i{};
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.src_reg = src & 0xf;
  i.off = off;
  i.imm = imm;
  return i;
}

}  // namespace

void XskPort::load_program(int ifindex, uint32_t queues) {
  bpf_attr attr{};
  attr.map_type = BPF_MAP_TYPE_XSKMAP;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = queues;
  std::strncpy(attr.map_name, "sharebuf_xsks", sizeof attr.map_name - 1);
  map_fd_ = bpf(BPF_MAP_CREATE, attr);
  if (map_fd_ < 0) throw sys_error(name_, "bpf(BPF_MAP_CREATE, XSKMAP)");

  // In C:
  //   if (bpf_xdp_adjust_meta(ctx, -8) == 0) {
  //     __u64 *meta = (void *)(long)ctx->data_meta;
  //     if ((void *)(meta + 1) <= (void *)(long)ctx->data) *meta = bpf_ktime_get_ns();
  //   }
  //   return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
  // The stamp (CLOCK_MONOTONIC as the frame reaches the port) travels in the metadata in front of
  // the frame, which the socket copies with it: the RX worker's wake-up and ring-to-RX hops. A
  // queue without a socket passes its frames to the kernel (the map lookup's default).
  constexpr uint8_t kMeta = offsetof(xdp_md, data_meta), kData = offsetof(xdp_md, data),
                    kQueue = offsetof(xdp_md, rx_queue_index);
  const bpf_insn prog[] = {
      insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),  // r6 = ctx
      insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, -8),
      insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_xdp_adjust_meta),
      insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 7, 0),  // failed: to the redirect
      insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns),
      insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_6, kMeta, 0),
      insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_3, BPF_REG_6, kData, 0),
      insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_4, BPF_REG_2, 0, 0),
      insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_4, 0, 0, 8),
      insn(BPF_JMP | BPF_JGT | BPF_X, BPF_REG_4, BPF_REG_3, 1, 0),  // meta + 8 > data: skip
      insn(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_2, BPF_REG_0, 0, 0),
      insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_6, kQueue, 0),
      insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd_),
      insn(0, 0, 0, 0, 0),  // the upper half of the 64-bit immediate
      insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, XDP_PASS),
      insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map),
      insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  };
  // The verifier's explanation if it refuses the program (per call: ports open one by one, but
  // nothing here should depend on that).
  std::vector<char> log(4096, '\0');
  static const char license[] = "GPL";
  attr = bpf_attr{};
  attr.prog_type = BPF_PROG_TYPE_XDP;
  attr.insns = reinterpret_cast<uint64_t>(prog);
  attr.insn_cnt = sizeof prog / sizeof prog[0];
  attr.license = reinterpret_cast<uint64_t>(license);
  attr.log_buf = reinterpret_cast<uint64_t>(log.data());
  attr.log_size = static_cast<uint32_t>(log.size());
  attr.log_level = 1;
  std::strncpy(attr.prog_name, "sharebuf_xsk", sizeof attr.prog_name - 1);
  prog_fd_ = bpf(BPF_PROG_LOAD, attr);
  if (prog_fd_ < 0) throw sys_error(name_, std::string("bpf(BPF_PROG_LOAD): ") + log.data());

  // Keep the program the interface has (the testbed's pass-through program, say) to put back.
  const std::optional<XdpState> state = read_xdp(ifindex);
  if (!state) throw std::runtime_error("port '" + name_ + "': cannot read its XDP programs");
  if (state->attached != XDP_ATTACHED_NONE && state->driver_prog_id == 0) {
    throw std::runtime_error("port '" + name_ +
                             "' (rx_io af_xdp): the interface has an XDP program in generic or "
                             "offload mode; the switch attaches its own in driver mode");
  }
  if (state->driver_prog_id != 0) {
    attr = bpf_attr{};
    attr.prog_id = state->driver_prog_id;
    previous_prog_fd_ = bpf(BPF_PROG_GET_FD_BY_ID, attr);
    if (previous_prog_fd_ < 0)
      throw sys_error(name_, "bpf(BPF_PROG_GET_FD_BY_ID) of its XDP program");
  }
}

bool XskPort::open_socket(Sock& s, int ifindex, uint32_t queue, uint32_t frames,
                          uint32_t tx_frames) {
  s.queue = queue;
  s.fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (s.fd < 0) throw sys_error(name_, "socket(AF_XDP)");
  // The receive buffers, then (queue 0 with transmit) the transmit chunks; or the shared area,
  // which the first socket registers and the others share (bind, below).
  const bool share = shared_ != nullptr && shared_->owner_fd >= 0;
  if (shared_ != nullptr) {
    s.owns_umem = false;
    s.umem = shared_->base();
    s.umem_bytes = shared_->store().bytes();
  } else {
    s.umem_bytes = size_t{frames + tx_frames} * frame_size_;
    void* mem = mmap(nullptr, s.umem_bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (mem == MAP_FAILED) throw sys_error(name_, "mmap UMEM");
    s.umem = static_cast<uint8_t*>(mem);
  }
  if (!share) {
    xdp_umem_reg reg{};
    reg.addr = reinterpret_cast<uint64_t>(s.umem);
    reg.len = s.umem_bytes;
    reg.chunk_size = frame_size_;
    reg.headroom = 0;
    if (setsockopt(s.fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof reg) != 0)
      throw sys_error(name_, "setsockopt XDP_UMEM_REG");
  }
  const int n = static_cast<int>(frames);
  // Without transmit the completion ring is never used, but a UMEM must have one. With it, it
  // has room for every transmit chunk, so the kernel never finds it full.
  const int completions = tx_frames != 0 ? static_cast<int>(tx_frames) : 64;
  if (setsockopt(s.fd, SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof n) != 0 ||
      setsockopt(s.fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &completions, sizeof completions) != 0 ||
      setsockopt(s.fd, SOL_XDP, XDP_RX_RING, &n, sizeof n) != 0) {
    throw sys_error(name_, "setsockopt XDP rings");
  }
  if (tx_frames != 0 &&
      setsockopt(s.fd, SOL_XDP, XDP_TX_RING, &completions, sizeof completions) != 0)
    throw sys_error(name_, "setsockopt XDP_TX_RING");
  xdp_mmap_offsets off{};
  socklen_t len = sizeof off;
  if (getsockopt(s.fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &len) != 0)
    throw sys_error(name_, "getsockopt XDP_MMAP_OFFSETS");
  auto map_ring = [&](Ring& r, const xdp_ring_offset& o, uint32_t entries, size_t entry_bytes,
                      off_t pgoff, const char* what) {
    r.map_bytes = o.desc + entries * entry_bytes;
    r.map =
        mmap(nullptr, r.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, s.fd, pgoff);
    if (r.map == MAP_FAILED) {
      r.map = nullptr;
      throw sys_error(name_, std::string("mmap ") + what);
    }
    auto* base = static_cast<uint8_t*>(r.map);
    r.producer = reinterpret_cast<uint32_t*>(base + o.producer);
    r.consumer = reinterpret_cast<uint32_t*>(base + o.consumer);
    r.desc = base + o.desc;
    r.mask = entries - 1;
  };
  map_ring(s.fill, off.fr, frames, sizeof(uint64_t), XDP_UMEM_PGOFF_FILL_RING, "fill ring");
  map_ring(s.completion, off.cr, static_cast<uint32_t>(completions), sizeof(uint64_t),
           XDP_UMEM_PGOFF_COMPLETION_RING, "completion ring");
  map_ring(s.rx, off.rx, frames, sizeof(xdp_desc), XDP_PGOFF_RX_RING, "RX ring");
  if (tx_frames != 0) {
    map_ring(s.tx, off.tx, tx_frames, sizeof(xdp_desc), XDP_PGOFF_TX_RING, "TX ring");
    s.tx.flags = reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(s.tx.map) + off.tx.flags);
  }

  sockaddr_xdp addr{};
  addr.sxdp_family = AF_XDP;
  addr.sxdp_ifindex = static_cast<uint32_t>(ifindex);
  addr.sxdp_queue_id = queue;
  // need_wakeup: the kernel says when a transmit needs a sendto() (in copy mode, always). A
  // socket sharing a UMEM may not say: it has the registering socket's mode and need_wakeup
  // (net/xdp/xsk.c, xsk_bind()), which asks for it whenever the area is shared.
  if (share) {
    addr.sxdp_flags = XDP_SHARED_UMEM;
    addr.sxdp_shared_umem_fd = static_cast<uint32_t>(shared_->owner_fd);
  } else {
    addr.sxdp_flags = XDP_COPY | (tx_frames != 0 || shared_ != nullptr ? XDP_USE_NEED_WAKEUP : 0);
  }
  // EBUSY: another AF_XDP socket holds the queue. A socket closed a moment ago (this switch's
  // own, stopped and started again) still does: the kernel lets go of the queue in deferred work
  // under the RTNL lock (net/xdp/xsk_buff_pool.c, xp_release_deferred()), which other link
  // changes can hold up. So wait for that a bounded while before calling the queue taken.
  constexpr auto kBusyWait = std::chrono::seconds(3);
  const auto give_up = std::chrono::steady_clock::now() + kBusyWait;
  bool waited = false;
  while (bind(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    if (queue > 0 && err == EINVAL) return false;  // the interface has no such queue
    if (err != EBUSY || std::chrono::steady_clock::now() >= give_up) {
      errno = err;
      throw sys_error(name_, "bind to queue " + std::to_string(queue) +
                                 (err == EBUSY ? " (an AF_XDP socket still held it after " +
                                                     std::to_string(kBusyWait.count()) + " s)"
                                               : std::string()));
    }
    if (!waited)
      spdlog::info("port '{}': queue {} still held by a closed AF_XDP socket; waiting", name_,
                   queue);
    waited = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (shared_ != nullptr && !share) shared_->owner_fd = s.fd;
  // Every receive buffer to the kernel: after the bind, so that a queue the interface does not
  // have takes no chunk of a shared UMEM (no frame comes before the XDP program is attached).
  auto* fill = static_cast<uint64_t*>(s.fill.desc);
  for (uint32_t i = 0; i < frames; ++i)
    fill[i] = shared_ != nullptr ? take_shared_chunk() : uint64_t{i} * frame_size_;
  s.fill.cached_prod = frames;
  __atomic_store_n(s.fill.producer, frames, __ATOMIC_RELEASE);
  return true;
}

uint32_t XskPort::rx_frames_for(uint32_t frames) noexcept {
  return round_up_pow2(std::max<uint32_t>(frames, 64));
}

uint64_t XskPort::take_shared_chunk() {
  uint64_t chunk = 0;
  if (!shared_->store().take(&chunk))
    throw std::runtime_error("port '" + name_ +
                             "' (af_xdp_umem shared): no free chunk left in the shared UMEM (" +
                             std::to_string(shared_->store().chunks()) +
                             " chunks; a port with more receive queues than two needs more)");
  return chunk;
}

XskPort::XskPort(const std::string& ifname, int ifindex, uint32_t mtu, uint32_t frames,
                 bool busy_poll, uint32_t tx_frames, XskUmem* shared)
    : name_(ifname), ifindex_(ifindex), shared_(shared) {
  if (tx_frames != 0) tx_frames = round_up_pow2(std::max<uint32_t>(tx_frames, 64));
  frames = rx_frames_for(frames);
  // Ethernet header and two VLAN tags beside the MTU, behind the kernel's headroom.
  frame_size_ = mtu + 14 + 8 + kHeadroom <= 2048 ? 2048 : 4096;
  if (shared_ != nullptr) {
    if (frame_size_ > shared_->store().chunk_bytes())
      throw std::runtime_error("port '" + name_ + "': MTU " + std::to_string(mtu) +
                               " does not fit the shared UMEM's chunks of " +
                               std::to_string(shared_->store().chunk_bytes()) + " bytes");
    frame_size_ = shared_->store().chunk_bytes();
  }
  burst_sock_.resize(256);
  try {
    load_program(ifindex, kMaxQueues);
    // A socket per queue, until the interface has no more (bind says EINVAL).
    for (uint32_t q = 0; q < kMaxQueues; ++q) {
      socks_.emplace_back();
      if (!open_socket(socks_.back(), ifindex, q, frames, q == 0 ? tx_frames : 0)) {
        close_sock(socks_.back());
        socks_.pop_back();
        break;
      }
      bpf_attr attr{};
      attr.map_fd = static_cast<uint32_t>(map_fd_);
      attr.key = reinterpret_cast<uint64_t>(&q);
      attr.value = reinterpret_cast<uint64_t>(&socks_.back().fd);
      if (bpf(BPF_MAP_UPDATE_ELEM, attr) != 0)
        throw sys_error(name_, "bpf(BPF_MAP_UPDATE_ELEM) for queue " + std::to_string(q));
    }
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) throw sys_error(name_, "epoll_create1");
    for (const Sock& s : socks_) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u32 = s.queue;
      if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, s.fd, &ev) != 0) throw sys_error(name_, "epoll_ctl");
    }
    try {
      set_xdp_program(name_, ifindex, prog_fd_);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string(e.what()) +
                               " (rx_io af_xdp needs driver-mode XDP and an MTU the program takes "
                               "without fragments, on veth up to about 3.5 KB; this one's is " +
                               std::to_string(mtu) + ")");
    }
    attached_ = true;
    if (busy_poll) enable_busy_poll();
    if (tx_frames != 0) {
      tx_frames_ = tx_frames;
      tx_umem_ = socks_[0].umem;
      tx_free_.reserve(tx_frames);
      // Popped from the back: the lowest chunks first.
      for (uint32_t i = tx_frames; i-- > 0;)
        tx_free_.push_back(
            (shared_ != nullptr ? take_shared_chunk() : uint64_t{frames + i} * frame_size_) +
            kHeadroom);
    }
  } catch (...) {
    close_all();
    throw;
  }
  drops();  // nothing counted before the start
}

void XskPort::enable_busy_poll() {
  // The values of the kernel's AF_XDP sample with --busy-poll (samples/bpf/xdpsock_user.c,
  // apply_setsockopt(): 20 us, its default batch of 64): spin up to 20 us in a poll of the
  // device, at most 64 frames per poll, and prefer that poll to the device's softirq.
  const int prefer = 1, usecs = 20, budget = 64;
  for (const Sock& s : socks_) {
    if (setsockopt(s.fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &prefer, sizeof prefer) != 0 ||
        setsockopt(s.fd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof usecs) != 0 ||
        setsockopt(s.fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof budget) != 0) {
      spdlog::warn(
          "port '{}': AF_XDP busy polling refused by the kernel ({}); poll_mode "
          "\"busy-poll\" spins on the rings without it",
          name_, std::strerror(errno));
      return;
    }
  }
  busy_poll_ = true;
}

void XskPort::poke() noexcept {
  if (!busy_poll_) return;
  for (const Sock& s : socks_)
    recvfrom(s.fd, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
}

void XskPort::close_sock(Sock& s) noexcept {
  for (Ring* r : {&s.fill, &s.completion, &s.rx, &s.tx}) {
    if (r->map != nullptr) munmap(r->map, r->map_bytes);
    r->map = nullptr;
  }
  if (s.fd >= 0) close(s.fd);
  s.fd = -1;
  if (s.umem != nullptr && s.owns_umem) munmap(s.umem, s.umem_bytes);
  s.umem = nullptr;
}

XskPort::~XskPort() {
  close_all();
}

void XskPort::close_all() noexcept {
  if (attached_) {
    try {
      // Back to the interface's own program (or none).
      set_xdp_program(name_, ifindex_, previous_prog_fd_);
    } catch (...) {
      // The interface is gone, or the namespace: nothing to restore.
    }
    attached_ = false;
  }
  // The chunks this port's rings held are not given back to a shared UMEM: the kernel's share
  // of them cannot be told apart once the sockets are closed, and a port closes with the switch.
  for (Sock& s : socks_) {
    if (shared_ != nullptr && shared_->owner_fd == s.fd) shared_->owner_fd = -1;
    close_sock(s);
  }
  socks_.clear();
  for (int* fd : {&epoll_fd_, &prog_fd_, &map_fd_, &previous_prog_fd_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

uint32_t XskPort::peek_burst(RxFrame* frames, uint32_t max) noexcept {
  max = std::min<uint32_t>(max, static_cast<uint32_t>(burst_sock_.size()));
  burst_ = frames;
  burst_n_ = 0;
  uint32_t n = 0;
  for (; n < max; ++n) {
    // The frame that reached the port first, by the XDP program's stamps, of the queues' next
    // frames: the port is served in arrival order, as one ring (or a hardware port's FIFO) would
    // serve it, and no queue waits behind another that never runs empty.
    Sock* best = nullptr;
    const xdp_desc* best_desc = nullptr;
    uint64_t best_stamp = 0;
    for (Sock& s : socks_) {
      Ring& rx = s.rx;
      if (rx.cached_cons + s.held == rx.cached_prod) {
        // acquire pairs with the kernel's release of the producer index after writing the entry.
        rx.cached_prod = __atomic_load_n(rx.producer, __ATOMIC_ACQUIRE);
        if (rx.cached_cons + s.held == rx.cached_prod) continue;
      }
      const xdp_desc& d =
          static_cast<const xdp_desc*>(rx.desc)[(rx.cached_cons + s.held) & rx.mask];
      // The XDP program's stamp, 8 bytes in front of the frame (CLOCK_MONOTONIC).
      uint64_t stamp = 0;
      std::memcpy(&stamp, s.umem + d.addr - sizeof stamp, sizeof stamp);
      if (best == nullptr || stamp < best_stamp) {
        best = &s;
        best_desc = &d;
        best_stamp = stamp;
      }
    }
    if (best == nullptr) break;
    ++best->held;
    burst_sock_[n] = static_cast<uint32_t>(best - socks_.data());
    RxFrame& frame = frames[n];
    frame.kept = false;
    frame.refill = 0;
    frame.data = best->umem + best_desc->addr;
    frame.len = best_desc->len;
    frame.wire_len = best_desc->len;
    frame.vlan_valid = false;
    frame.vlan_tci = 0;
    frame.vlan_tpid = 0x8100;
    frame.checksum_partial = false;
    frame.ring_realtime_ns =
        best_stamp == 0 ? 0 : best_stamp + realtime_offset_ns_.load(std::memory_order_relaxed);
  }
  burst_n_ = n;
  return n;
}

void XskPort::release_burst() noexcept {
  // The buffers back to the kernel (it masks each address down to its chunk): each frame's own,
  // or for one that stays queued in its chunk the chunk taken in its place.
  for (uint32_t i = 0; i < burst_n_; ++i) {
    Sock& s = socks_[burst_sock_[i]];
    const RxFrame& f = burst_[i];
    static_cast<uint64_t*>(s.fill.desc)[s.fill.cached_prod++ & s.fill.mask] =
        f.kept ? f.refill : static_cast<uint64_t>(f.data - s.umem);
  }
  burst_n_ = 0;
  for (Sock& s : socks_) {
    if (s.held == 0) continue;
    released_.fetch_add(s.held, std::memory_order_relaxed);
    // Then the RX slots.
    s.rx.cached_cons += s.held;
    s.held = 0;
    __atomic_store_n(s.fill.producer, s.fill.cached_prod, __ATOMIC_RELEASE);
    __atomic_store_n(s.rx.consumer, s.rx.cached_cons, __ATOMIC_RELEASE);
  }
}

PortIo::SocketStats XskPort::socket_stats() noexcept {
  const uint64_t dropped = drops();
  const uint64_t released = released_.load(std::memory_order_relaxed);
  const uint64_t taken = released - released_reported_;
  released_reported_ = released;
  return {taken + dropped, dropped};
}

uint64_t XskPort::drops() noexcept {
  // Called now and then by the reader: follow NTP's adjustments of CLOCK_REALTIME.
  realtime_offset_ns_.store(realtime_ns() - monotonic_ns(), std::memory_order_relaxed);
  uint64_t delta = 0;
  for (Sock& s : socks_) {
    xdp_statistics st{};
    socklen_t len = sizeof st;
    if (getsockopt(s.fd, SOL_XDP, XDP_STATISTICS, &st, &len) != 0) continue;
    // Cumulative in the kernel: report what is new.
    const uint64_t total = st.rx_dropped + st.rx_ring_full;
    delta += total - std::min(total, s.counted);
    s.counted = total;
  }
  return delta;
}

}  // namespace sharebuf::datapath

namespace sharebuf::datapath {

void XskPort::reap_completions() noexcept {
  Ring& cr = socks_[0].completion;
  // acquire pairs with the kernel's release of the producer index after writing the entries.
  const uint32_t prod = __atomic_load_n(cr.producer, __ATOMIC_ACQUIRE);
  if (prod == cr.cached_cons) return;
  const auto* addrs = static_cast<const uint64_t*>(cr.desc);
  // A chunk sent from where a received frame was (shared UMEM) had the frame at the receive
  // side's offset: kHeadroom into its chunk again, as a transmit chunk.
  const uint64_t chunk_mask = ~uint64_t{frame_size_ - 1};
  for (uint32_t i = cr.cached_cons; i != prod; ++i)
    tx_free_.push_back((addrs[i & cr.mask] & chunk_mask) + kHeadroom);
  cr.cached_cons = prod;
  __atomic_store_n(cr.consumer, prod, __ATOMIC_RELEASE);
}

void XskPort::kick_tx(uint64_t* dropped) noexcept {
  Sock& s = socks_[0];
  // Copy mode sends at most 32 frames per sendto() and says EAGAIN when more wait; a full
  // device queue says EAGAIN too, with nothing taken. Kick until the ring is consumed or a call
  // takes nothing, at most a ring's worth of calls.
  for (uint32_t calls = 0; calls <= s.tx.mask; ++calls) {
    const uint32_t before = __atomic_load_n(s.tx.consumer, __ATOMIC_ACQUIRE);
    if (before == s.tx.cached_prod) return;
    if ((__atomic_load_n(s.tx.flags, __ATOMIC_RELAXED) & XDP_RING_NEED_WAKEUP) == 0) return;
    if (sendto(s.fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0) {
      // EBUSY: the device dropped one frame (veth: the peer's queue was full); it was consumed
      // and completed. ENOBUFS (no memory for an skb) and the rest: try again next kick.
      if (errno == EBUSY) {
        ++*dropped;
        continue;
      }
      if (errno != EAGAIN && errno != EINTR) return;
    }
    if (__atomic_load_n(s.tx.consumer, __ATOMIC_ACQUIRE) == before) return;
  }
}

uint32_t XskPort::tx_send(uint8_t* const* frames, const uint32_t* lens, uint32_t count,
                          uint64_t* dropped, uint32_t* unsent) noexcept {
  Sock& s = socks_[0];
  Ring& tx = s.tx;
  const uint32_t cons = __atomic_load_n(tx.consumer, __ATOMIC_ACQUIRE);
  const uint32_t room = tx.mask + 1 - (tx.cached_prod - cons);
  const uint32_t n = std::min(count, room);
  auto* descs = static_cast<xdp_desc*>(tx.desc);
  for (uint32_t i = 0; i < n; ++i) {
    xdp_desc& d = descs[(tx.cached_prod + i) & tx.mask];
    d.addr = static_cast<uint64_t>(frames[i] - tx_umem_);
    d.len = lens[i];
    d.options = 0;
  }
  tx.cached_prod += n;
  // release: the descriptors before the index that publishes them.
  __atomic_store_n(tx.producer, tx.cached_prod, __ATOMIC_RELEASE);
  kick_tx(dropped);
  reap_completions();
  *unsent = tx.cached_prod - __atomic_load_n(tx.consumer, __ATOMIC_ACQUIRE);
  return n;
}

void XskPort::tx_wait(int timeout_ms) noexcept {
  reap_completions();
  if (!tx_free_.empty()) return;
  // Every chunk is on the TX ring or in the kernel's hands. POLLOUT does not say that one came
  // back: it says the TX ring has room, which it has all along (the ring is as long as there are
  // chunks), so waiting in poll() returned at once and a device that makes no progress (a NIC
  // whose link is down) kept the egress worker spinning. So wait for a completion itself, in
  // short sleeps up to timeout_ms; each poll() also has copy mode's kernel send what is on the
  // ring.
  const uint64_t give_up = monotonic_ns() + uint64_t(std::max(timeout_ms, 0)) * 1'000'000;
  pollfd pfd{socks_[0].fd, POLLOUT, 0};
  for (;;) {
    poll(&pfd, 1, 0);
    reap_completions();
    if (!tx_free_.empty() || monotonic_ns() >= give_up) return;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

}  // namespace sharebuf::datapath
