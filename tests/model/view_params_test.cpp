// [buffer]'s view keys (model/view_params.h): the declared defaults are the buffer's, the declared
// ranges are the ones the loader and view.set enforce, and docs/configuration.md holds the rows
// generated from the declarations.
#include "model/view_params.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "buffer/shared_buffer.h"
#include "common/units.h"

namespace sharebuf::model {
namespace {

TEST(ViewParams, DeclaredDefaultsAreTheBuffers) {
  const buffer::BufferConfig b;
  EXPECT_EQ(view_mode(view_spec("view").default_value), b.view_mode);
  EXPECT_EQ(common::parse_duration_ns(view_spec("probe_interval").default_value),
            b.probe_interval_ns);
  EXPECT_EQ(common::parse_duration_ns(view_spec("probe_delay").default_value), b.probe_delay_ns);
  EXPECT_EQ(probe_path(view_spec("probe_path").default_value), b.probe_path);
}

TEST(ViewParams, RangesAndChoicesComeFromTheDeclarations) {
  EXPECT_FALSE(view_duration_error("probe_interval", 1'000));
  EXPECT_FALSE(view_duration_error("probe_interval", 1'000'000'000));
  EXPECT_EQ(view_duration_error("probe_interval", 999), "must be 1 us – 1 s");
  EXPECT_TRUE(view_duration_error("probe_delay", 1'000'000'001));
  EXPECT_FALSE(view_duration_error("probe_delay", 0));
  EXPECT_EQ(view_mode("probe"), buffer::ViewMode::kProbe);
  EXPECT_FALSE(view_mode("exac"));
  EXPECT_EQ(probe_path("queue"), buffer::ProbePath::kQueue);
  EXPECT_FALSE(probe_path("queued"));
}

TEST(ViewParams, DocsRowsAreTheDeclarations) {
  std::ifstream in(SHAREBUF_SOURCE_DIR "/docs/configuration.md");
  ASSERT_TRUE(in);
  std::stringstream page;
  page << in.rdbuf();
  std::istringstream rows(view_params_markdown());
  int n = 0;
  for (std::string row; std::getline(rows, row); ++n)
    EXPECT_NE(page.str().find("\n" + row + "\n"), std::string::npos)
        << "docs/configuration.md's [buffer] table lacks the declared row:\n"
        << row;
  EXPECT_EQ(n, static_cast<int>(kViewParams.size()));
}

}  // namespace
}  // namespace sharebuf::model
