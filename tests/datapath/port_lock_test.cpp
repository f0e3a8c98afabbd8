#include "datapath/port_lock.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace sharebuf::datapath {
namespace {

namespace fs = std::filesystem;

class PortLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/sharebuf-portlock-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& key) const { return dir_ + "/" + key + ".lock"; }

  std::string dir_;
};

PortRecord sample_record() {
  return PortRecord{.pid = 4242,
                    .ifname = "p1",
                    .mac = 0x025b00000001,
                    .promisc_before = false,
                    .up_before = true};
}

TEST(PortRecord, RoundTrips) {
  const PortRecord r = sample_record();
  const auto back = parse_port_record(format_port_record(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->pid, r.pid);
  EXPECT_EQ(back->ifname, r.ifname);
  EXPECT_EQ(back->mac, r.mac);
  EXPECT_EQ(back->promisc_before, r.promisc_before);
  EXPECT_EQ(back->up_before, r.up_before);
}

// A record cut short (a crash while it was written) or not ours says nothing.
TEST(PortRecord, RefusesIncompleteOrForeignText) {
  const std::string full = format_port_record(sample_record());
  for (size_t cut = 0; cut < full.size(); ++cut) {
    EXPECT_FALSE(parse_port_record(full.substr(0, cut)).has_value()) << "cut at " << cut;
  }
  EXPECT_FALSE(parse_port_record("hello\nend\n").has_value());
  EXPECT_FALSE(parse_port_record("pid -3\nifname p1\nmac 0\npromisc_before 0\nup_before 0\nend\n"));
  EXPECT_FALSE(parse_port_record("pid 3\nifname p1\nmac 0\npromisc_before 2\nup_before 0\nend\n"));
}

TEST_F(PortLockTest, SecondHolderIsRefusedWithTheOwnersPid) {
  PortLock first(dir_, "net1-if2", "port p1");
  first.write(sample_record());
  try {
    PortLock second(dir_, "net1-if2", "port p1");
    FAIL() << "a second lock on the same port was granted";
  } catch (const PortInUse& e) {
    EXPECT_NE(std::string(e.what()).find("port p1 is in use"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pid 4242"), std::string::npos) << e.what();
  }
  // Another port is not affected.
  EXPECT_NO_THROW(PortLock(dir_, "net1-if3", "port p2"));
}

TEST_F(PortLockTest, CleanReleaseRemovesTheRecord) {
  {
    PortLock lock(dir_, "net1-if2", "port p1");
    lock.write(sample_record());
    EXPECT_TRUE(fs::exists(path("net1-if2")));
  }
  EXPECT_FALSE(fs::exists(path("net1-if2")));
  PortLock again(dir_, "net1-if2", "port p1");
  EXPECT_FALSE(again.previous().has_value());
}

TEST_F(PortLockTest, CreatesItsDirectory) {
  const std::string nested = dir_ + "/a/b";
  PortLock lock(nested, "net1-if2", "port p1");
  EXPECT_TRUE(fs::exists(nested + "/net1-if2.lock"));
}

// An owner killed with SIGKILL leaves its record but not its lock: the next owner gets the port
// and the record (the interface's state from before the crashed owner).
TEST_F(PortLockTest, OwnerKilledLeavesItsRecordForTheNext) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      PortLock lock(dir_, "net1-if2", "port p1");
      PortRecord r = sample_record();
      r.pid = getpid();
      lock.write(r);
      const char c = 'x';
      if (write(ready[1], &c, 1) != 1) _exit(2);
      pause();
    } catch (...) {
      _exit(1);
    }
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  close(ready[1]);
  EXPECT_THROW(PortLock(dir_, "net1-if2", "port p1"), PortInUse);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  PortLock next(dir_, "net1-if2", "port p1");
  ASSERT_TRUE(next.previous().has_value());
  EXPECT_EQ(next.previous()->pid, child);
  EXPECT_TRUE(next.previous()->up_before);
  EXPECT_FALSE(next.previous()->promisc_before);
}

TEST_F(PortLockTest, RefusesASymlinkOrSpecialFileAtTheLockPath) {
  const std::string victim = dir_ + "/victim";
  std::ofstream(victim) << "keep me\n";
  fs::create_symlink(victim, path("net1-if2"));
  EXPECT_THROW(PortLock(dir_, "net1-if2", "port p1"), std::runtime_error);
  std::ifstream in(victim);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "keep me");
  ASSERT_EQ(mkfifo(path("net1-if3").c_str(), 0600), 0);
  EXPECT_THROW(PortLock(dir_, "net1-if3", "port p2"), std::runtime_error);
}

TEST(PortLockKey, NamesTheNamespaceAndTheInterface) {
  const std::string key = port_lock_key(7);
  EXPECT_EQ(key.rfind("net", 0), 0u) << key;
  EXPECT_NE(key.find("-if7"), std::string::npos) << key;
  EXPECT_EQ(key.find("net0-"), std::string::npos) << "network namespace inode unread: " << key;
}

// A daemon killed in a namespace that was then deleted leaves a file no one can use again: the
// next daemon removes it. A file of a live namespace (a crashed owner's record, which the next
// owner restores from), a held one, and anything not named like a lock stay.
TEST_F(PortLockTest, StaleLocksOfGoneNamespacesAreRemoved) {
  // Namespace inodes start at 0xF0000000: 1234 names one that cannot exist.
  const std::string gone = path("net1234-if3");
  const std::string held_gone = path("net1235-if3");
  const std::string ours = path(port_lock_key(3));
  const std::string other = dir_ + "/notes.txt";
  for (const auto& p : {gone, held_gone, ours, other})
    std::ofstream(p) << format_port_record(sample_record());
  {
    PortLock holder(dir_, "net1235-if3", "port x");
    EXPECT_EQ(remove_stale_port_locks(dir_), 1u);
    EXPECT_FALSE(fs::exists(gone));
    EXPECT_TRUE(fs::exists(held_gone));
  }
  EXPECT_TRUE(fs::exists(ours));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_EQ(remove_stale_port_locks(dir_), 0u);
}

}  // namespace
}  // namespace sharebuf::datapath
