// XskUmem: one memory area that every AF_XDP port's sockets share ([switch] af_xdp_umem =
// "shared", with rx_io = tx_io = "af_xdp"). The first socket registers it with the kernel as
// its UMEM; every later one, on any port and queue, binds with XDP_SHARED_UMEM and rings of its
// own. Its chunks are one pool (buffer/chunk_store.h) that the sockets' fill rings, their
// transmit chunks and queued frames draw from, so a frame received into a chunk can wait in the
// shared buffer where it is and leave through another port's TX ring without a copy in user
// space (VPP's af_xdp plugin shares its buffers so; Open vSwitch copies into the egress port's
// UMEM, lib/netdev-afxdp.c, "TODO: avoid this copy").
// Thread-safety: owner_fd belongs to the thread opening and closing ports (the daemon's main
// thread); the store is thread-safe.
#pragma once

#include <cstdint>

#include "buffer/chunk_store.h"

namespace sharebuf::datapath {

class XskUmem {
 public:
  // `chunks` chunks of `chunk_bytes` (2048 or 4096), all free. Throws std::runtime_error if the
  // memory cannot be had.
  XskUmem(uint32_t chunk_bytes, uint32_t chunks);
  ~XskUmem();
  XskUmem(const XskUmem&) = delete;
  XskUmem& operator=(const XskUmem&) = delete;

  uint8_t* base() const noexcept { return base_; }
  buffer::ChunkStore& store() noexcept { return store_; }
  // The socket that registered the area with the kernel and that the others share it through;
  // -1 until one did (or after it closed: the next socket registers it again, at the same
  // offsets).
  int owner_fd = -1;

  // How many chunks a switch needs: per AF_XDP port its receive buffers for two queues (more
  // queues draw on the rest) and its transmit chunks, and one per frame the buffer may hold
  // (each is at least a cell), up to `max_queued` (beyond, frames are copied into cells).
  static uint32_t chunks_for(uint32_t ports, uint32_t rx_frames, uint32_t tx_frames,
                             uint32_t buffer_cells, uint32_t max_queued = 32768) noexcept;

 private:
  uint8_t* base_ = nullptr;
  size_t bytes_ = 0;
  buffer::ChunkStore store_;
};

}  // namespace sharebuf::datapath
