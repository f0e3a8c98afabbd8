// CacheLineVector: a std::vector whose storage starts on a cache line and fills whole lines, so two
// vectors written by different threads never share a line (false sharing). Credence's per-pipeline
// state is a handful of small vectors per pipeline; from malloc they came out side by side, and
// two RX threads deciding for different pipelines then wrote the same lines.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace sharebuf::common {

inline constexpr std::size_t kCacheLine = 64;

template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() noexcept = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  static std::size_t bytes(std::size_t n) noexcept {
    return (n * sizeof(T) + kCacheLine - 1) / kCacheLine * kCacheLine;
  }
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (bytes(n), std::align_val_t{kCacheLine}));
  }
  // The unsized form: clang before 19 declares sized deallocation only with
  // -fsized-deallocation, and the fuzzing build is clang's.
  void deallocate(T* p, std::size_t) noexcept {
    ::operator delete (p, std::align_val_t{kCacheLine});
  }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using CacheLineVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace sharebuf::common
