// SwitchControl: the one door through which management code (mgmt/: the control socket's
// commands, sharebufd's main thread) reaches a running datapath. It installs a policy, sets the
// view, reads counters and snapshots, starts and stops a capture, resets peaks and hop
// histograms, and reclaims what the workers no longer hold. mgmt includes this header, never
// switch_core.h, so the datapath's internals (ports, workers, epochs) can change behind it.
//
// Threading contract:
//   - Every method is for the control thread (one thread at a time; in sharebufd the control
//     server's thread), except stats_from_other_thread(), which any other thread may call.
//   - No method blocks on the datapath or waits for a worker. Reads are relaxed loads of
//     counters the workers keep, taken while the workers run (a snapshot is not one instant).
//     Writes publish with atomic stores: a new policy or capture is swapped in and the old one
//     retired through the epochs (datapath/epochs.h); reclaim() frees what no worker can hold.
//   - Objects returned by pointer or reference live until the next reclaim().
// Errors are values (ControlError: a code and a message), never exceptions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "buffer/buffer_view.h"
#include "datapath/frame_capture.h"
#include "model/switch_config.h"
#include "policies/params.h"
#include "policies/policy.h"

namespace sharebuf::datapath {

struct SwitchCore;

enum class ControlErrorCode {
  kInvalidArgument,  // a value the datapath refuses (policy parameters, view timing)
  kConflict,         // the request clashes with the current state (a capture is running)
  kNotFound,         // nothing to act on (no capture is running)
  kIo,               // a file could not be written
};
std::string_view to_string(ControlErrorCode code) noexcept;  // "invalid_argument", ...

struct ControlError {
  ControlErrorCode code;
  std::string message;
};

// A value or a ControlError.
template <class T>
class ControlResult {
 public:
  ControlResult(T value) : v_(std::move(value)) {}             // NOLINT: implicit, as std::expected
  ControlResult(ControlError error) : v_(std::move(error)) {}  // NOLINT
  bool ok() const noexcept { return v_.index() == 0; }
  const T& value() const { return std::get<0>(v_); }
  T& value() { return std::get<0>(v_); }
  const ControlError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, ControlError> v_;
};

// A change to trimming (SwitchControl::set_trimming): unset fields keep their value. Class fields
// need `class_name`, port fields `port`. Each value is within its declared range
// (model/trim_params.h): the callers read them through the declarations, which check them;
// set_trimming checks what the declarations cannot see (the class and the port exist, the trim
// queue is one of the port's, every port has a line rate for tofino-approx).
struct TrimUpdate {
  std::optional<uint32_t> trim_size;  // 64-9216 bytes
  std::optional<bool> trim_fix_lengths;
  std::optional<int> trim_dscp;    // -1 (keep) or 0-63
  std::optional<int> return_dscp;  // -1 (none) or 0-63
  std::optional<std::string> class_name;
  std::optional<model::OverflowAction> overflow;
  std::optional<uint32_t> return_threshold_cells;
  std::optional<std::string> port;
  std::optional<uint32_t> trim_queue;   // below the port's queue count
  std::optional<int> trim_dscp_toward;  // -1 (trim_dscp) or 0-63
  // The Tofino approximation (model/tofino_approx.h); `pipelines` is fixed at start.
  std::optional<bool> tofino_approx;  // mode: "tofino-approx" (kConflict when a port has no rate)
  std::optional<model::MeterVariant> meters;
  std::optional<uint32_t> meter_burst;      // bytes, 64 B - 16 MiB
  std::optional<double> pessimistic_share;  // 0.01 - 1 of the line rate
  std::optional<uint64_t> t0_ns, t1_ns;     // at most 1 s
  std::optional<uint64_t> recirc_rate_bps;  // 0: the egress port's line rate
  std::optional<uint32_t> recirc_queue;     // bytes, 1500 B - 64 MiB
  std::optional<uint64_t> recirc_latency_ns;
  std::optional<double> trim_newest;  // probability 0-1
};

// The TrimUpdate that makes a running switch take `t`'s values of `keys` (live keys only, as
// model/trim_params.h declares them).
TrimUpdate trim_update(const model::TrimConfig& t, const std::set<std::string, std::less<>>& keys);

struct ViewSettings {
  buffer::ViewMode mode;
  uint64_t probe_interval_ns;
  uint64_t probe_delay_ns;
};

class SwitchControl {
 public:
  explicit SwitchControl(SwitchCore& core) noexcept : core_(core) {}

  // What the switch is.
  const model::SwitchConfig& config() const noexcept;
  const policies::PolicyEnv& policy_env() const noexcept;

  // The active policy.
  std::string policy_name() const;
  nlohmann::json policy_params() const;
  nlohmann::json policy_describe() const;  // name, params, state, read through the live view
  // Builds `name` with `params` and swaps it in; returns the previous policy's name. Bad
  // parameters: kInvalidArgument with the reader's message (naming the key).
  ControlResult<std::string> install_policy(std::string_view name, const policies::Params& params);

  // A port's line (shaped) rate, live: the shaper and the departure clock take it at the port's
  // next burst, policies built from now on see it in policy_env() — the running one keeps the
  // rates it was built with, so the caller reinstalls it (install_policy). kNotFound for an
  // unknown port; kConflict while trimming's tofino-approx meters the start's rates.
  std::optional<ControlError> set_port_rate(std::string_view port, uint64_t rate_bps);

  // How admission reads occupancy. Unset fields keep their value; a timing the probe model
  // cannot keep is kInvalidArgument and changes nothing.
  ViewSettings view() const noexcept;
  std::optional<ControlError> set_view(std::optional<buffer::ViewMode> mode,
                                       std::optional<uint64_t> probe_interval_ns,
                                       std::optional<uint64_t> probe_delay_ns);

  // Trimming, live: what refused frames of each class become (model/trim_settings.h).
  // trimming(): every setting; set_trimming() checks the whole update first (kInvalidArgument,
  // kNotFound for an unknown class or port) and changes nothing if a field is refused.
  nlohmann::json trimming() const;
  std::optional<ControlError> set_trimming(const TrimUpdate& update);

  // Counters and snapshots. stats(): the whole switch (the stats file's JSON): buffer, policy,
  // per port its counters, hop histograms and queues. watch_sample(): time, totals, per queue
  // occupancy, threshold and drops. status(): buffer totals and the RX workers.
  nlohmann::json stats() const;
  nlohmann::json stats_from_other_thread() const;
  nlohmann::json watch_sample() const;
  nlohmann::json status() const;
  // Peaks and hop histograms start again (counters are subtracted by the caller's baseline).
  void reset_peaks() noexcept;
  // After stop and release of the queued frames: the accounting identities' violations.
  std::vector<std::string> check_accounting() const;
  // One line per port for the start-up log: interface, ifindex, MTU, rate, queues, scheduler.
  std::vector<std::string> describe_ports() const;

  // Captures. start: kConflict while one runs. stop: kNotFound if none runs, kIo if the file
  // is incomplete (the capture is stopped either way); else its final status.
  std::optional<std::string> capture_path() const;
  std::optional<ControlError> start_capture(std::unique_ptr<FrameCapture> capture);
  ControlResult<nlohmann::json> stop_capture();

  // Reclamation of retired policies and captures (datapath/epochs.h).
  size_t reclaim();
  size_t retired_pending() const noexcept;
  uint64_t reclaimed() const noexcept;

 private:
  SwitchCore& core_;
};

}  // namespace sharebuf::datapath
