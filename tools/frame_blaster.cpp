// sharebuf-blaster: sends minimum-size (64-byte on the wire) frames out of an interface as fast
// as one core can, for a bounded time, to measure how many frames per second a switch delivers;
// or, with --frame-bytes and --pps, a paced stream of frames of one size (a precise offered load:
// e.g. twice a port's line rate to check Protean's gradient reads 1), or of several sizes in
// turn (--frame-bytes 60,590,1514: a mix, as the soak sends).
// The frames are IPv4/UDP, or with --ethertype raw frames of that EtherType (e.g. 0x88b5, IEEE
// local experimental), which the receiving host's kernel discards right away: with UDP, most of
// the time goes into the receiver's stack (routing, ICMP port unreachable), not the switch.
// AF_PACKET with PACKET_QDISC_BYPASS and sendmmsg batches of 64 (--batch): on the development
// machine one core sends roughly 0.5-1 Mpps into a veth, which is what limits it. --tx-ring sends
// through a PACKET_TX_RING instead (each frame copied into a ring slot, one send() per batch), to
// measure what a switch would save by sending that way (bench/host_bounds.sh).
//   sharebuf-blaster --interface eth0 --dst-mac 02:5b:00:00:00:02 --src-ip 198.18.0.1
//                    --dst-ip 198.18.0.2 --seconds 5 [--pps N]
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "model/checksum.h"
#include "model/mac_table.h"

namespace {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint32_t parse_ipv4(const std::string& s) {
  in_addr a{};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) throw CLI::ValidationError("bad IPv4 address: " + s);
  return ntohl(a.s_addr);
}

// `bytes` (60 + 4 FCS on a wire = 64 at least): Ethernet + IPv4 + UDP + zero payload.
std::vector<uint8_t> make_frame(uint64_t src_mac, uint64_t dst_mac, uint32_t src_ip,
                                uint32_t dst_ip, uint16_t dst_port, uint16_t bytes) {
  std::vector<uint8_t> f(bytes, 0);
  const uint16_t ip_len = static_cast<uint16_t>(bytes - 14);
  const uint16_t udp_len = static_cast<uint16_t>(ip_len - 20);
  for (int i = 0; i < 6; ++i) {
    f[i] = static_cast<uint8_t>(dst_mac >> (40 - 8 * i));
    f[6 + i] = static_cast<uint8_t>(src_mac >> (40 - 8 * i));
  }
  f[12] = 0x08;
  uint8_t* ip = &f[14];
  ip[0] = 0x45;
  ip[2] = static_cast<uint8_t>(ip_len >> 8);
  ip[3] = static_cast<uint8_t>(ip_len);
  ip[8] = 64;
  ip[9] = 17;
  for (int i = 0; i < 4; ++i) {
    ip[12 + i] = static_cast<uint8_t>(src_ip >> (24 - 8 * i));
    ip[16 + i] = static_cast<uint8_t>(dst_ip >> (24 - 8 * i));
  }
  const uint16_t csum = sharebuf::model::ipv4_header_checksum(ip, 20);
  ip[10] = static_cast<uint8_t>(csum >> 8);
  ip[11] = static_cast<uint8_t>(csum);
  uint8_t* udp = &f[34];
  udp[0] = 0x27;  // source port 10000
  udp[1] = 0x10;
  udp[2] = static_cast<uint8_t>(dst_port >> 8);
  udp[3] = static_cast<uint8_t>(dst_port);
  udp[4] = static_cast<uint8_t>(udp_len >> 8);
  udp[5] = static_cast<uint8_t>(udp_len);  // checksum 0 (none)
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "sharebuf-blaster: send UDP frames (64 bytes on the wire by default) as fast as one core "
      "can, or at --pps"};
  std::string iface, dst_mac_text, src_ip_text, dst_ip_text;
  double seconds = 5;
  uint64_t pps = 0;
  uint16_t dst_port = 9;
  std::vector<uint16_t> frame_bytes{60};
  std::string ethertype_text;
  bool tx_ring = false;
  int max_batch = 64;
  app.add_option("--interface", iface, "interface to send on")->required();
  app.add_option("--dst-mac", dst_mac_text, "destination MAC")->required();
  app.add_option("--src-ip", src_ip_text, "source IPv4 address")->required();
  app.add_option("--dst-ip", dst_ip_text, "destination IPv4 address")->required();
  app.add_option("--dst-port", dst_port, "destination UDP port")->capture_default_str();
  app.add_option("--seconds", seconds, "how long to send (0.1-600)")
      ->check(CLI::Range(0.1, 600.0))
      ->capture_default_str();
  app.add_option("--ethertype", ethertype_text,
                 "send raw frames of this EtherType (hex, e.g. 0x88b5) instead of IPv4/UDP");
  app.add_option("--pps", pps, "frames per second (0: as fast as possible)")->capture_default_str();
  app.add_option("--frame-bytes", frame_bytes,
                 "frame size without FCS, 60 to 1514; several (60,590,1514) are sent in turn")
      ->delimiter(',')
      ->check(CLI::Range(60, 1514))
      ->capture_default_str();
  app.add_flag("--tx-ring", tx_ring,
               "send through a PACKET_TX_RING (copy into a slot, one send() per batch) instead of "
               "sendmmsg");
  app.add_option("--batch", max_batch,
                 "frames per sendmmsg (or per send() with --tx-ring): what a call's own cost is "
                 "spread over")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const auto dst_mac = sharebuf::model::parse_mac(dst_mac_text);
  if (!dst_mac) {
    std::fprintf(stderr, "sharebuf-blaster: bad --dst-mac '%s'\n", dst_mac_text.c_str());
    return 2;
  }
  const int fd = socket(AF_PACKET, SOCK_RAW, 0);
  if (fd < 0) {
    std::perror("sharebuf-blaster: socket(AF_PACKET) (root needed)");
    return 1;
  }
  const int one = 1;
  setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_ifindex = static_cast<int>(if_nametoindex(iface.c_str()));
  if (addr.sll_ifindex == 0) {
    std::fprintf(stderr, "sharebuf-blaster: no interface '%s'\n", iface.c_str());
    return 1;
  }
  // The TX ring (when asked for) is set up before bind, as packet(7) wants.
  constexpr uint32_t kSlotBytes = 2048;
  constexpr uint32_t kSlots = 1024;
  uint8_t* ring = nullptr;
  if (tx_ring) {
    const int version = TPACKET_V2;
    tpacket_req req{};
    req.tp_block_size = 64 * kSlotBytes;
    req.tp_block_nr = kSlots / 64;
    req.tp_frame_size = kSlotBytes;
    req.tp_frame_nr = kSlots;
    void* mem = MAP_FAILED;
    if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version) == 0 &&
        setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof req) == 0) {
      mem = mmap(nullptr, size_t{kSlots} * kSlotBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    if (mem == MAP_FAILED) {
      std::perror("sharebuf-blaster: PACKET_TX_RING");
      return 1;
    }
    ring = static_cast<uint8_t*>(mem);
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("sharebuf-blaster: bind");
    return 1;
  }
  // The source MAC is the interface's own, so the switch learns it like any host's.
  uint64_t src_mac = 0;
  {
    std::FILE* f = std::fopen(("/sys/class/net/" + iface + "/address").c_str(), "r");
    char text[32] = {};
    if (f != nullptr && std::fgets(text, sizeof text, f) != nullptr) {
      src_mac = sharebuf::model::parse_mac(std::string(text, 17)).value_or(0);
    }
    if (f != nullptr) std::fclose(f);
  }
  std::vector<std::vector<uint8_t>> frames;
  for (const uint16_t bytes : frame_bytes) {
    frames.push_back(make_frame(src_mac, *dst_mac, parse_ipv4(src_ip_text), parse_ipv4(dst_ip_text),
                                dst_port, bytes));
  }
  if (!ethertype_text.empty()) {
    unsigned long type = 0x10000;
    try {
      type = std::stoul(ethertype_text, nullptr, 16);
    } catch (const std::exception&) {
    }
    if (type < 0x0600 || type > 0xffff) {
      std::fprintf(stderr, "sharebuf-blaster: --ethertype must be 0x0600..0xffff\n");
      return 2;
    }
    for (auto& frame : frames) {
      frame[12] = static_cast<uint8_t>(type >> 8);
      frame[13] = static_cast<uint8_t>(type);
    }
  }
  constexpr int kBatch = 64;
  std::array<iovec, kBatch> iov;
  std::array<mmsghdr, kBatch> msgs{};
  for (int i = 0; i < kBatch; ++i) {
    auto& frame = frames[static_cast<size_t>(i) % frames.size()];
    iov[i] = {frame.data(), frame.size()};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  const uint64_t start = now_ns();
  const uint64_t end = start + static_cast<uint64_t>(seconds * 1e9);
  uint64_t sent = 0;
  uint64_t errors = 0;
  uint32_t next = 0;  // --tx-ring: the next slot to fill
  for (uint64_t now = start; now < end; now = now_ns()) {
    int batch = max_batch;
    if (pps != 0) {
      const uint64_t due =
          static_cast<uint64_t>(static_cast<double>(now - start) * 1e-9 * static_cast<double>(pps));
      if (due <= sent) {
        usleep(50);
        continue;
      }
      batch = static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(max_batch), due - sent));
    }
    int n = 0;
    if (ring != nullptr) {
      // Fill up to `batch` free slots (the kernel frees a slot when its skb is gone), then one
      // send() hands them all to the kernel.
      for (; n < batch; ++n) {
        auto* hdr = reinterpret_cast<tpacket2_hdr*>(ring + size_t{next} * kSlotBytes);
        if (__atomic_load_n(&hdr->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_AVAILABLE) break;
        const auto& frame = frames[(sent + static_cast<uint64_t>(n)) % frames.size()];
        std::memcpy(reinterpret_cast<uint8_t*>(hdr) + TPACKET2_HDRLEN - sizeof(sockaddr_ll),
                    frame.data(), frame.size());
        hdr->tp_len = static_cast<uint32_t>(frame.size());
        __atomic_store_n(&hdr->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
        next = (next + 1) % kSlots;
      }
      if (send(fd, nullptr, 0, 0) < 0 && errno != EINTR) ++errors;
    } else {
      n = sendmmsg(fd, msgs.data(), static_cast<unsigned>(batch), 0);
    }
    if (n > 0) {
      sent += static_cast<uint64_t>(n);
    } else if (errno != EINTR) {
      ++errors;  // ENOBUFS: the device queue is full; keep going
    }
  }
  const double elapsed = static_cast<double>(now_ns() - start) * 1e-9;
  std::printf("{\"sent\": %lu, \"seconds\": %.3f, \"pps\": %.0f, \"send_errors\": %lu}\n", sent,
              elapsed, static_cast<double>(sent) / elapsed, errors);
  if (ring != nullptr) munmap(ring, size_t{kSlots} * kSlotBytes);
  close(fd);
  return 0;
}
