// Safe output: a file planted at the target or at a temporary name is replaced, never followed or
// written into; a directory every user may write to without the sticky bit is refused.
#include "common/safe_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sharebuf::common {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class SafeOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sharebuf-safe-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directory(dir_);
    fs::permissions(dir_, fs::perms::owner_all);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

TEST_F(SafeOutput, WritesAndReplacesAFile) {
  const fs::path target = dir_ / "stats.json";
  replace_file(target, "one\n");
  EXPECT_EQ(read(target), "one\n");
  replace_file(target, "two\n");
  EXPECT_EQ(read(target), "two\n");
  // No temporary file is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

// A symbolic link planted at the target, or at the name the daemon once used for its temporary
// file, is replaced: the file it points to is never written.
TEST_F(SafeOutput, APlantedSymlinkIsReplacedNotFollowed) {
  const fs::path victim = dir_ / "victim";
  std::ofstream(victim) << "secret";
  const fs::path target = dir_ / "stats.json";
  fs::create_symlink(victim, target);
  fs::create_symlink(victim, dir_ / "stats.json.tmp");
  replace_file(target, "stats\n");
  EXPECT_EQ(read(victim), "secret");
  EXPECT_FALSE(fs::is_symlink(target));
  EXPECT_EQ(read(target), "stats\n");
}

// A regular file planted at the target (by its owner, another user) is replaced by a new file:
// the planted inode keeps its contents, so whoever planted it holds no handle on the new one.
TEST_F(SafeOutput, APlantedRegularFileIsReplacedByANewFile) {
  const fs::path target = dir_ / "stats.json";
  std::ofstream(target) << "planted";
  const int held = open(target.c_str(), O_RDONLY);
  ASSERT_GE(held, 0);
  struct stat before {};
  fstat(held, &before);
  replace_file(target, "stats\n");
  struct stat after {};
  stat(target.c_str(), &after);
  EXPECT_NE(before.st_ino, after.st_ino);
  char buf[16] = {};
  EXPECT_EQ(pread(held, buf, sizeof buf, 0), 7);
  EXPECT_STREQ(buf, "planted");
  close(held);
}

TEST_F(SafeOutput, RefusesAWorldWritableDirectoryWithoutTheStickyBit) {
  fs::permissions(dir_, fs::perms::all);  // 0777, no sticky bit
  EXPECT_THAT([&] { replace_file(dir_ / "stats.json", "x"); },
              ThrowsMessage<OutputError>(HasSubstr("has no sticky bit")));
  EXPECT_FALSE(fs::exists(dir_ / "stats.json"));
  // With the sticky bit (as /tmp) it is fine.
  fs::permissions(dir_, fs::perms::all | fs::perms::sticky_bit);
  replace_file(dir_ / "stats.json", "x");
  EXPECT_EQ(read(dir_ / "stats.json"), "x");
}

// The directory above the target counts too: whoever may write to it can rename the target's
// directory away and put one of their own in its place.
TEST_F(SafeOutput, RefusesAnUnsafeDirectoryAboveTheTarget) {
  fs::create_directory(dir_ / "sub");
  fs::permissions(dir_, fs::perms::all);
  EXPECT_THAT(unsafe_directory((dir_ / "sub").string()), HasSubstr(dir_.string()));
  EXPECT_THAT([&] { replace_file(dir_ / "sub" / "stats.json", "x"); },
              ThrowsMessage<OutputError>(HasSubstr("has no sticky bit")));
}

TEST_F(SafeOutput, AMissingDirectoryIsAnError) {
  EXPECT_THAT([&] { replace_file(dir_ / "nope" / "stats.json", "x"); },
              ThrowsMessage<OutputError>(HasSubstr("No such file or directory")));
}

TEST_F(SafeOutput, InstallWithoutOverwriteKeepsWhatIsThere) {
  const fs::path target = dir_ / "capture.pcap";
  std::ofstream(target) << "old";
  std::string temp;
  close(create_temporary(dir_.string(), "capture.pcap", 0640, &temp));
  EXPECT_THAT([&] { install_file(temp, target, false); },
              ThrowsMessage<OutputError>(HasSubstr("it exists")));
  EXPECT_EQ(read(target), "old");
  EXPECT_FALSE(fs::exists(temp));  // removed on failure
  close(create_temporary(dir_.string(), "capture.pcap", 0640, &temp));
  install_file(temp, target, true);
  EXPECT_EQ(read(target), "");
}

}  // namespace
}  // namespace sharebuf::common
