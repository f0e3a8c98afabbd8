// PortLock: one process's exclusive hold on one switch port, so two daemons never forward from
// the same interface (every frame would be switched twice).
//
// A lock file per interface, `<dir>/net<netns inode>-if<ifindex>.lock`, held with flock: the
// kernel drops the lock when the holder exits however it exits, SIGKILL included, so a held lock
// always means a live owner. The file also records what the owner found the interface like
// (PortRecord); a clean exit removes the file. A file that is there but not locked was therefore
// left by an owner that did not exit cleanly, and its record is the interface's state from before
// that owner: the next daemon restores that, not the promiscuous mode the crashed one left on.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sharebuf::datapath {

struct PortRecord {
  pid_t pid = 0;
  std::string ifname;
  uint64_t mac = 0;
  bool promisc_before = false;
  bool up_before = false;
};
std::string format_port_record(const PortRecord& r);
// nullopt if the text is not a complete record (a crash while writing it, or not ours).
std::optional<PortRecord> parse_port_record(std::string_view text);

// Another live process holds the port.
class PortInUse : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class PortLock {
 public:
  // Creates `dir` (0755) if needed and locks `<dir>/<key>.lock` without waiting. Throws PortInUse
  // naming `what` and the owner's pid if another process holds it, std::runtime_error naming the
  // path on any other failure.
  PortLock(const std::string& dir, const std::string& key, const std::string& what);
  ~PortLock();  // removes the file: this owner exited cleanly
  PortLock(const PortLock&) = delete;
  PortLock& operator=(const PortLock&) = delete;

  // The record the file held when it was locked: left by an owner that did not exit cleanly.
  const std::optional<PortRecord>& previous() const noexcept { return previous_; }
  // Replaces the file's record. Throws std::runtime_error naming the path.
  void write(const PortRecord& record);
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::optional<PortRecord> previous_;
};

// The lock key of an interface in the caller's network namespace.
std::string port_lock_key(int ifindex);

// Removes the lock files in `dir` that no one holds and whose network namespace is gone (no
// process, thread, open descriptor or /run/netns mount refers to it): a daemon killed with
// SIGKILL in a namespace that was then deleted leaves them, and their records describe interfaces
// that cannot come back. Returns how many went.
size_t remove_stale_port_locks(const std::string& dir);

}  // namespace sharebuf::datapath
