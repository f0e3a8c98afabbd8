// MacTable: the learning bridge's forwarding table. Source MACs are learned per ingress port and
// age out after `ageing_ns` without traffic; static entries never age and are never relearned.
//
// Lookups run on every RX worker for every frame, so they take no lock: a fixed-size open-
// addressing table of atomics (linear probing, capacity a power of two). Learning a new MAC or a
// move takes a mutex (rare: once per host, then only on moves); refreshing a known MAC is one
// relaxed store of its timestamp. An expired entry reads as a miss and is reused by the next
// insert that probes past it.
//
// Thread-safety: lookup()/learn() from any RX worker; insert of static entries before start.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace sharebuf::model {

using MacAddress = uint64_t;  // the 48-bit address in the low bits

MacAddress mac_from_bytes(const uint8_t* bytes) noexcept;
std::optional<MacAddress> parse_mac(std::string_view text) noexcept;
std::string format_mac(MacAddress mac);

class MacTable {
 public:
  static constexpr uint16_t kNoPort = 0xffff;

  MacTable(uint32_t capacity, uint64_t ageing_ns);

  // Returns the port the address was learned on, or kNoPort.
  uint16_t lookup(MacAddress mac, uint64_t now_ns) const noexcept;
  // Records that `mac` was seen on `port` at now_ns. Returns false if the table is full.
  bool learn(MacAddress mac, uint16_t port, uint64_t now_ns) noexcept;
  // A permanent entry (config's static MACs).
  bool add_static(MacAddress mac, uint16_t port) noexcept;

  uint32_t size_approx(uint64_t now_ns) const noexcept;
  uint64_t ageing_ns() const noexcept { return ageing_ns_; }

 private:
  static constexpr uint64_t kEmpty = 0;
  static constexpr uint64_t kValid = 1ull << 63;
  static constexpr uint64_t kStatic = ~0ull;  // last_seen of a static entry

  struct Entry {
    std::atomic<uint64_t> key{kEmpty};  // kValid | mac
    std::atomic<uint16_t> port{kNoPort};
    std::atomic<uint64_t> last_seen_ns{0};
  };

  uint32_t slot_of(MacAddress mac) const noexcept;
  bool live(const Entry& e, uint64_t now_ns) const noexcept;
  bool insert(MacAddress mac, uint16_t port, uint64_t last_seen) noexcept;

  uint32_t mask_;
  uint64_t ageing_ns_;
  std::unique_ptr<Entry[]> entries_;
  std::mutex insert_mu_;
};

}  // namespace sharebuf::model
