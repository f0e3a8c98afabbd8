// [buffer]'s view keys, declared once (as the policies declare their parameters,
// policies/params.h): what admission reads — live counters or the probe registers — and how often,
// how late and by which path the registers are refreshed. The configuration loader reads [buffer]
// view, probe_interval, probe_delay and probe_path through these declarations, view.set checks its
// arguments against them (its `mode`, `probe_interval_us` and `probe_delay_us` are these keys, the
// durations in microseconds), the effective configuration writes them back, and
// docs/configuration.md's rows for them are generated from them (view_params_markdown(); a test
// keeps the page equal to it). view, probe_interval and probe_delay are live (view.set changes them
// on a running switch); probe_path takes a restart.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "buffer/buffer_view.h"
#include "policies/params.h"

namespace sharebuf::model {

inline constexpr std::array<policies::ParamSpec, 4> kViewParams{{
    {"view", policies::ParamType::kString, "exact",
     "what admission reads: `exact` live counters, or `probe` registers holding the buffer as it "
     "was at the latest probe-interval boundary at or before `probe_delay` ago (as Tofino's probe "
     "packets carry egress depths to ingress registers); egress-side policy hooks always see exact "
     "depths; view.set `mode`",
     0, 0, "exact,probe"},
    {"probe_interval", policies::ParamType::kDuration, "10us",
     "how often the probe registers are refreshed; view.set `probe_interval_us`", 1e3, 1e9},
    {"probe_delay",
     policies::ParamType::kDuration,
     "0ns",
     "how long a probe takes to reach ingress, at most 254 probe intervals; view.set "
     "`probe_delay_us`",
     0,
     1e9,
     {},
     "0"},
    {"probe_path", policies::ParamType::kString, "direct",
     "how a queue's depth reaches its register: `direct`, every queue's depth at the boundary "
     "(a snapshot); `queue`, as a Tofino probe packet brings it: each boundary's probe waits in "
     "the queue it measures behind the frames that arrived before it and reads the depth it "
     "leaves behind, `probe_delay` before ingress sees it (a building queue's register lags by "
     "its own queueing delay); takes a restart",
     0, 0, "direct,queue"},
}};

// The path a declared choice names ("direct", "queue"); nothing for any other name.
std::optional<buffer::ProbePath> probe_path(std::string_view name);

const policies::ParamSpec& view_spec(std::string_view name);

// The view a declared choice names ("exact", "probe"); nothing for any other name.
std::optional<buffer::ViewMode> view_mode(std::string_view name);

// Why `ns` is outside `name`'s declared range ("must be 1 us – 1 s"), or nothing.
std::optional<std::string> view_duration_error(std::string_view name, uint64_t ns);

// docs/configuration.md's rows for the view keys, in the [buffer] table.
std::string view_params_markdown();

}  // namespace sharebuf::model
