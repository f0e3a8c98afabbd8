#include "datapath/xsk_umem.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace sharebuf::datapath {
namespace {

uint8_t* map_area(size_t bytes) {
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (mem == MAP_FAILED)
    throw std::runtime_error("af_xdp shared UMEM: mmap of " + std::to_string(bytes >> 20) +
                             " MiB: " + std::strerror(errno));
  return static_cast<uint8_t*>(mem);
}

}  // namespace

XskUmem::XskUmem(uint32_t chunk_bytes, uint32_t chunks)
    : base_(map_area(size_t{chunk_bytes} * chunks)),
      bytes_(size_t{chunk_bytes} * chunks),
      store_(reinterpret_cast<std::byte*>(base_), chunk_bytes, chunks) {
  for (uint32_t i = chunks; i-- > 0;)
    store_.give(uint64_t{i} * chunk_bytes);  // the lowest chunks on top
}

XskUmem::~XskUmem() {
  munmap(base_, bytes_);
}

uint32_t XskUmem::chunks_for(uint32_t ports, uint32_t rx_frames, uint32_t tx_frames,
                             uint32_t buffer_cells, uint32_t max_queued) noexcept {
  const uint64_t per_port = 2 * uint64_t{rx_frames} + tx_frames;
  const uint64_t total = uint64_t{ports} * per_port + std::min(buffer_cells, max_queued);
  return static_cast<uint32_t>(std::min<uint64_t>(total, UINT32_MAX / 4096));
}

}  // namespace sharebuf::datapath
