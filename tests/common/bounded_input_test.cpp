// Bounded input: files that are not regular (a FIFO, a device) are refused at once, sizes are
// capped, and JSON nesting is measured without recursion.
#include "common/bounded_input.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sharebuf::common {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("sharebuf-bounded-" + std::to_string(getpid()) + "-" + name))
      .string();
}

TEST(ReadRegularFile, ReadsARegularFileUpToItsLimit) {
  const std::string path = temp("ok");
  std::ofstream(path) << "hello";
  EXPECT_EQ(read_regular_file(path, 5, "the test file"), "hello");
  EXPECT_THAT([&] { read_regular_file(path, 4, "the test file"); },
              ThrowsMessage<InputError>(HasSubstr("has 5 bytes, more than the 4 allowed")));
  std::filesystem::remove(path);
}

// A FIFO with no writer would block open() for reading; a device never ends. Both are refused
// at once.
TEST(ReadRegularFile, RefusesAFifoAndADeviceAtOnce) {
  const std::string fifo = temp("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT([&] { read_regular_file(fifo, 1 << 20, "the forest model"); },
              ThrowsMessage<InputError>(HasSubstr("the forest model is not a regular file")));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  std::filesystem::remove(fifo);
  EXPECT_THAT([] { read_regular_file("/dev/zero", 1 << 20, "the model"); },
              ThrowsMessage<InputError>(HasSubstr("not a regular file")));
  EXPECT_THAT([] { read_regular_file("/nonexistent/x", 10, "the model"); },
              ThrowsMessage<InputError>(HasSubstr("/nonexistent/x: cannot open the model")));
}

// /proc files are regular but report size 0: they are read up to the limit.
TEST(ReadRegularFile, ReadsAFileThatReportsSizeZero) {
  const std::string status = read_regular_file("/proc/self/status", 1 << 20, "status");
  EXPECT_THAT(status, HasSubstr("Name:"));
  EXPECT_THROW(read_regular_file("/proc/self/status", 16, "status"), InputError);
}

TEST(JsonNestingDepth, CountsArraysAndObjectsAndSkipsStrings) {
  EXPECT_EQ(json_nesting_depth("42"), 0u);
  EXPECT_EQ(json_nesting_depth(R"({"a": [1, {"b": []}]})"), 4u);
  EXPECT_EQ(json_nesting_depth(R"({"a": "[[[[{{{{"})"), 1u);
  EXPECT_EQ(json_nesting_depth(R"(["quote \" [[[", [1]])"), 2u);
  EXPECT_EQ(json_nesting_depth(R"(["backslash \\", [[1]]])"), 3u);
}

TEST(JsonNestingDepth, StopsEarlyOnDeepNesting) {
  const std::string deep(1'000'000, '[');
  EXPECT_GT(json_nesting_depth(deep), kMaxJsonDepth);
  EXPECT_EQ(json_nesting_depth(std::string(64, '[') + std::string(64, ']')), 64u);
}

}  // namespace
}  // namespace sharebuf::common
