// common::data_file: the copy installed beside the program (PREFIX/bin -> PREFIX/share/sharebuf)
// wins over the source tree's, which is read only when there is none. This test binary stands
// for an installed program: a file put into BUILD/share/sharebuf, beside its own folder as
// share/ is beside bin/, must be the one found.
#include "common/data_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sharebuf::common {
namespace {

namespace fs = std::filesystem;

TEST(DataFiles, TheInstalledCopyBesideTheProgramWinsOverTheSourceTree) {
  const std::string name = "data-files-test-" + std::to_string(getpid()) + ".txt";
  const fs::path source = fs::path(SHAREBUF_SOURCE_DIR) / "data" / name;
  EXPECT_EQ(fs::path(data_file(name)), source) << "nothing installed: the source tree's";
  EXPECT_EQ(fs::path(data_file("credence-forest.json")),
            fs::path(SHAREBUF_SOURCE_DIR) / "data" / "credence-forest.json");

  const fs::path share = fs::read_symlink("/proc/self/exe").parent_path() / "../share/sharebuf";
  fs::create_directories(share);
  const fs::path installed = share / name;
  std::ofstream(installed) << "installed\n";
  EXPECT_EQ(fs::canonical(data_file(name)), fs::canonical(installed));
  EXPECT_EQ(fs::canonical(data_dir(name)), fs::canonical(share));
  fs::remove(installed);
  std::error_code ec;
  fs::remove(share, ec);  // only if this test made it and nothing else is there
  fs::remove(share.parent_path(), ec);
  EXPECT_EQ(fs::path(data_file(name)), source) << "removed: the source tree's again";
}

}  // namespace
}  // namespace sharebuf::common
