#include "model/mac_table.h"

#include <cstdio>
#include <stdexcept>

namespace sharebuf::model {

MacAddress mac_from_bytes(const uint8_t* b) noexcept {
  MacAddress m = 0;
  for (int i = 0; i < 6; ++i)
    m = (m << 8) | b[i];
  return m;
}

std::optional<MacAddress> parse_mac(std::string_view text) noexcept {
  if (text.size() != 17) return std::nullopt;
  MacAddress m = 0;
  for (size_t i = 0; i < 17; ++i) {
    const char c = text[i];
    if (i % 3 == 2) {
      if (c != ':' && c != '-') return std::nullopt;
      continue;
    }
    int v;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      v = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    m = (m << 4) | static_cast<MacAddress>(v);
  }
  return m;
}

std::string format_mac(MacAddress mac) {
  char buf[18];
  std::snprintf(
      buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", static_cast<unsigned>((mac >> 40) & 0xff),
      static_cast<unsigned>((mac >> 32) & 0xff), static_cast<unsigned>((mac >> 24) & 0xff),
      static_cast<unsigned>((mac >> 16) & 0xff), static_cast<unsigned>((mac >> 8) & 0xff),
      static_cast<unsigned>(mac & 0xff));
  return buf;
}

MacTable::MacTable(uint32_t capacity, uint64_t ageing_ns) : ageing_ns_(ageing_ns) {
  uint32_t size = 16;
  while (size < capacity * 2)
    size <<= 1;  // load factor <= 1/2 keeps probes short
  mask_ = size - 1;
  entries_ = std::make_unique<Entry[]>(size);
}

uint32_t MacTable::slot_of(MacAddress mac) const noexcept {
  uint64_t h = mac * 0x9e3779b97f4a7c15ull;
  return static_cast<uint32_t>(h >> 40) & mask_;
}

bool MacTable::live(const Entry& e, uint64_t now_ns) const noexcept {
  const uint64_t seen = e.last_seen_ns.load(std::memory_order_relaxed);
  return seen == kStatic || now_ns - seen <= ageing_ns_ || seen > now_ns;
}

uint16_t MacTable::lookup(MacAddress mac, uint64_t now_ns) const noexcept {
  const uint64_t key = kValid | mac;
  for (uint32_t i = slot_of(mac), n = 0; n <= mask_; i = (i + 1) & mask_, ++n) {
    const Entry& e = entries_[i];
    // acquire pairs with the release store of `key` in insert(): port is then visible.
    const uint64_t k = e.key.load(std::memory_order_acquire);
    if (k == kEmpty) return kNoPort;
    if (k == key) return live(e, now_ns) ? e.port.load(std::memory_order_relaxed) : kNoPort;
  }
  return kNoPort;
}

bool MacTable::learn(MacAddress mac, uint16_t port, uint64_t now_ns) noexcept {
  const uint64_t key = kValid | mac;
  for (uint32_t i = slot_of(mac), n = 0; n <= mask_; i = (i + 1) & mask_, ++n) {
    Entry& e = entries_[i];
    const uint64_t k = e.key.load(std::memory_order_acquire);
    if (k == kEmpty) break;
    if (k != key) continue;
    const uint64_t seen = e.last_seen_ns.load(std::memory_order_relaxed);
    if (seen == kStatic) return true;  // static entries are never relearned
    if (e.port.load(std::memory_order_relaxed) == port) {
      if (now_ns != seen) e.last_seen_ns.store(now_ns, std::memory_order_relaxed);
      return true;
    }
    break;  // a move: take the slow path
  }
  return insert(mac, port, now_ns);
}

bool MacTable::add_static(MacAddress mac, uint16_t port) noexcept {
  return insert(mac, port, kStatic);
}

bool MacTable::insert(MacAddress mac, uint16_t port, uint64_t last_seen) noexcept {
  std::lock_guard guard(insert_mu_);
  const uint64_t key = kValid | mac;
  uint32_t reuse = mask_ + 1;  // first expired slot seen, if any
  for (uint32_t i = slot_of(mac), n = 0; n <= mask_; i = (i + 1) & mask_, ++n) {
    Entry& e = entries_[i];
    const uint64_t k = e.key.load(std::memory_order_relaxed);
    if (k == key) {
      if (e.last_seen_ns.load(std::memory_order_relaxed) == kStatic && last_seen != kStatic) {
        return true;
      }
      e.port.store(port, std::memory_order_relaxed);
      e.last_seen_ns.store(last_seen, std::memory_order_relaxed);
      return true;
    }
    if (k == kEmpty || (reuse > mask_ && last_seen != kStatic && !live(e, last_seen))) {
      if (k != kEmpty) {
        reuse = i;
        continue;  // keep probing: the key may still be further along
      }
      Entry& target = reuse <= mask_ ? entries_[reuse] : e;
      target.port.store(port, std::memory_order_relaxed);
      target.last_seen_ns.store(last_seen, std::memory_order_relaxed);
      target.key.store(key, std::memory_order_release);
      return true;
    }
  }
  if (reuse <= mask_) {
    Entry& target = entries_[reuse];
    target.port.store(port, std::memory_order_relaxed);
    target.last_seen_ns.store(last_seen, std::memory_order_relaxed);
    target.key.store(key, std::memory_order_release);
    return true;
  }
  return false;
}

uint32_t MacTable::size_approx(uint64_t now_ns) const noexcept {
  uint32_t n = 0;
  for (uint32_t i = 0; i <= mask_; ++i) {
    if (entries_[i].key.load(std::memory_order_relaxed) != kEmpty && live(entries_[i], now_ns)) ++n;
  }
  return n;
}

}  // namespace sharebuf::model
