#include "datapath/port_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <set>

#include "common/safe_output.h"

namespace sharebuf::datapath {
namespace {

constexpr size_t kMaxRecordBytes = 512;

std::runtime_error sys_error(const std::string& path, const char* what) {
  return std::runtime_error("port lock " + path + ": " + what + ": " + std::strerror(errno));
}

std::string read_all(int fd) {
  std::string text(kMaxRecordBytes, '\0');
  const ssize_t n = pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return text;
}

template <typename T>
bool parse_number(std::string_view s, T& out, int base = 10) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

std::string format_port_record(const PortRecord& r) {
  char mac[16];
  std::snprintf(mac, sizeof mac, "%012llx", static_cast<unsigned long long>(r.mac));
  return "pid " + std::to_string(r.pid) + "\nifname " + r.ifname + "\nmac " + mac +
         "\npromisc_before " + (r.promisc_before ? "1" : "0") + "\nup_before " +
         (r.up_before ? "1" : "0") + "\nend\n";
}

std::optional<PortRecord> parse_port_record(std::string_view text) {
  PortRecord r;
  unsigned seen = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    if (eol == std::string_view::npos) return std::nullopt;  // cut short while written
    const std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol + 1);
    const size_t sp = line.find(' ');
    const std::string_view key = line.substr(0, sp);
    const std::string_view value = sp == std::string_view::npos ? "" : line.substr(sp + 1);
    bool ok = true;
    if (key == "pid") {
      ok = parse_number(value, r.pid) && r.pid > 0;
      seen |= 1;
    } else if (key == "ifname") {
      r.ifname = value;
      ok = !value.empty();
      seen |= 2;
    } else if (key == "mac") {
      ok = parse_number(value, r.mac, 16);
      seen |= 4;
    } else if (key == "promisc_before" || key == "up_before") {
      ok = value == "0" || value == "1";
      (key == "up_before" ? r.up_before : r.promisc_before) = value == "1";
      seen |= key == "up_before" ? 16 : 8;
    } else if (key == "end") {
      return seen == 31 ? std::optional<PortRecord>(r) : std::nullopt;
    } else {
      ok = false;
    }
    if (!ok) return std::nullopt;
  }
  return std::nullopt;
}

PortLock::PortLock(const std::string& dir, const std::string& key, const std::string& what) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw std::runtime_error("port lock directory " + dir + ": cannot create it: " + ec.message());
  }
  // Whoever may write to the directory could swap the lock file, or plant one that makes the
  // daemon write its record into another file (common/safe_output.h).
  if (const std::string why = common::unsafe_directory(dir); !why.empty())
    throw std::runtime_error("port lock directory ([switch] port_lock_dir): " + why);
  path_ = dir + "/" + key + ".lock";
  // An owner that exits cleanly unlinks the file after we opened it but before we locked it: our
  // lock would then be on a file nobody else sees. Lock, then check that the path still names
  // the file we locked; otherwise try again with the new one.
  for (int attempt = 0;; ++attempt) {
    const int fd =
        open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd < 0) throw sys_error(path_, "cannot open");
    struct stat opened {};
    if (fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode)) {
      close(fd);
      throw std::runtime_error("port lock " + path_ + ": not a regular file");
    }
    // A lock file is created by a sharebufd (this user); one owned by another user, or with a
    // second name elsewhere (a hard link), was planted: writing our record would write there.
    if (opened.st_uid != geteuid() || opened.st_nlink != 1) {
      close(fd);
      throw std::runtime_error("port lock " + path_ + ": owned by uid " +
                               std::to_string(opened.st_uid) + " with " +
                               std::to_string(opened.st_nlink) +
                               " link(s); a sharebufd's lock file is its own with one link; "
                               "remove it if no sharebufd runs");
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const auto owner = parse_port_record(read_all(fd));
      close(fd);
      if (err == EWOULDBLOCK) {
        throw PortInUse(what + " is in use by another sharebufd" +
                        (owner ? " (pid " + std::to_string(owner->pid) + ")" : std::string()) +
                        " (lock " + path_ + ")");
      }
      errno = err;
      throw sys_error(path_, "cannot lock");
    }
    struct stat named {};
    if (stat(path_.c_str(), &named) == 0 && named.st_ino == opened.st_ino &&
        named.st_dev == opened.st_dev) {
      fd_ = fd;
      break;
    }
    close(fd);
    if (attempt == 8) throw std::runtime_error("port lock " + path_ + ": keeps being replaced");
  }
  previous_ = parse_port_record(read_all(fd_));
}

PortLock::~PortLock() {
  // Unlink while still holding the lock, so no one can lock this file and believe they own it
  // after we close (the constructor's stat check).
  unlink(path_.c_str());
  close(fd_);
}

void PortLock::write(const PortRecord& record) {
  const std::string text = format_port_record(record);
  if (ftruncate(fd_, 0) != 0) throw sys_error(path_, "cannot truncate");
  if (pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    throw sys_error(path_, "cannot write");
  }
}

std::string port_lock_key(int ifindex) {
  struct stat ns {};
  const unsigned long long inode =
      stat("/proc/self/ns/net", &ns) == 0 ? static_cast<unsigned long long>(ns.st_ino) : 0;
  return "net" + std::to_string(inode) + "-if" + std::to_string(ifindex);
}

namespace {

// The inode of a network namespace named by a /proc link text "net:[4026531840]".
std::optional<uint64_t> netns_inode_of_link(const std::string& target) {
  uint64_t ino = 0;
  if (!target.starts_with("net:[") || !target.ends_with("]")) return std::nullopt;
  if (!parse_number(std::string_view(target).substr(5, target.size() - 6), ino))
    return std::nullopt;
  return ino;
}

// Every network namespace something still refers to: a task's namespace, an open descriptor, a
// bind mount under /run/netns (ip netns add).
std::set<uint64_t> live_netns_inodes() {
  namespace fs = std::filesystem;
  std::set<uint64_t> live;
  std::error_code ec;
  auto add_link = [&](const fs::path& link) {
    std::error_code e;
    const fs::path target = fs::read_symlink(link, e);
    if (!e)
      if (const auto ino = netns_inode_of_link(target.string())) live.insert(*ino);
  };
  for (const auto& proc : fs::directory_iterator("/proc", ec)) {
    const std::string pid = proc.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code e;
    for (const auto& task : fs::directory_iterator(proc.path() / "task", e))
      add_link(task.path() / "ns" / "net");
    for (const auto& fd : fs::directory_iterator(proc.path() / "fd", e))
      add_link(fd.path());
  }
  for (const char* dir : {"/run/netns", "/var/run/netns"}) {
    for (const auto& mount : fs::directory_iterator(dir, ec)) {
      struct stat st {};
      if (stat(mount.path().c_str(), &st) == 0) live.insert(static_cast<uint64_t>(st.st_ino));
    }
  }
  return live;
}

}  // namespace

size_t remove_stale_port_locks(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::optional<std::set<uint64_t>> live;  // read only if there is a lock file to judge
  size_t removed = 0;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t dash = name.find("-if");
    uint64_t ino = 0;
    if (!name.starts_with("net") || !name.ends_with(".lock") || dash == std::string::npos ||
        !parse_number(std::string_view(name).substr(3, dash - 3), ino) || ino == 0)
      continue;
    if (!live) live = live_netns_inodes();
    if (live->contains(ino)) continue;
    const int fd = open(entry.path().c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) continue;
    struct stat st {};
    // Unlinked while locked, as an owner's clean exit does, so a daemon that opened the file
    // meanwhile finds the path no longer names it and starts again (PortLock's constructor).
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        unlink(entry.path().c_str()) == 0)
      ++removed;
    close(fd);
  }
  return removed;
}

}  // namespace sharebuf::datapath
