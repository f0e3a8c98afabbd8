// SpinLock: a test-and-test-and-set lock for critical sections of a few stores (queue links, the
// pool's bulk free stack). On 2 cores a holder can be preempted, so after a short spin the waiter
// yields the CPU instead of burning its time slice. bench/buffer/packet_queue_bench.cpp compares
// it with std::mutex on the same queue.
#pragma once

#include <atomic>
#include <thread>

namespace sharebuf::common {

// Tells the core this is a spin-wait: frees pipeline resources for the other hyperthread and
// avoids a memory-order flush when the lock is released.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

class SpinLock {
 public:
  void lock() noexcept {
    // exchange(acquire) pairs with the store(release) in unlock().
    while (locked_.exchange(true, std::memory_order_acquire)) {
      int spins = 0;
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < 64) {
          cpu_relax();
        } else {
          std::this_thread::yield();
          spins = 0;
        }
      }
    }
  }
  bool try_lock() noexcept { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace sharebuf::common
