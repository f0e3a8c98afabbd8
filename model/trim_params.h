// [trimming]'s keys, declared once (as the policies declare their parameters, policies/params.h):
// the configuration loader reads the section through them, trim.set reads its arguments through
// them, the effective configuration writes them back, and docs/configuration.md's [trimming] rows
// are generated from them (trim_params_markdown(); a test keeps the page equal to it). Each key's
// type, default, range or choices and meaning is here and nowhere else.
//
// Keys that trim.set may change are live; the others (pipelines, line_rate, header_reserve,
// header_full, seed) take effect at start only. A class's overflow and return_threshold and a
// port's trim_queue and trim_dscp_toward are declared in kTrimClassParams and kTrimPortParams:
// they sit in [[classes]] and [[ports]] in the file, and trim.set names the class or the port.
#pragma once

#include <array>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "model/switch_config.h"
#include "policies/params.h"

namespace sharebuf::model {

inline constexpr std::array<policies::ParamSpec, 19> kTrimParams{{
    {"trim_size", policies::ParamType::kInteger, "128",
     "bytes a trimmed frame keeps on the wire (SAI's default); frames no longer are sent "
     "whole",
     64, 9216, "", ""},
    {"trim_fix_lengths", policies::ParamType::kBool, "true",
     "make the cut copy a valid packet: IPv4 total length and header checksum, IPv6 payload "
     "length, UDP length, TCP/UDP checksum over what is left; false leaves the IP header "
     "claiming the whole packet. The cut never falls inside IPv4 options or IPv6 extension "
     "headers; fragments (first ones included) and IPv6 packets whose routing header has "
     "segments left are not trimmed (their class's frames are then dropped)",
     0, 0, "", ""},
    {"trim_dscp", policies::ParamType::kInteger, "-1",
     "DSCP of trimmed copies (-1 keeps theirs); the ECN bits are kept", -1, 63, "", "keep"},
    {"return_dscp", policies::ParamType::kInteger, "-1",
     "DSCP of returned headers (-1 keeps theirs), and the mark by which an arriving returned "
     "header is recognised and never returned again (a copy this switch returned is never "
     "returned again either way)",
     -1, 63, "", "keep"},
    {"trim_newest", policies::ParamType::kNumber, "0",
     "NDP's option: when an arrival of a `trim` class is refused for lack of room (the "
     "policy's threshold or a full pool), with this probability the queue's newest frame is "
     "trimmed instead and the arrival takes its place (counted `pushed_out` and "
     "`trimmed_newest` at the queue, the arrival enqueued, not dropped) — only if that frame "
     "is a `trim` class's (a drop class's would be lost, not trimmed) and at least as large "
     "as the arrival (so one overflow never cuts two frames). The NDP paper's switch uses ½; "
     "0 (off) is the default here. Ignored in `tofino-approx` mode, whose ingress cannot "
     "reach the queues",
     0, 1, "", ""},
    {"seed", policies::ParamType::kInteger, "1", "seeds each RX worker's coin for `trim_newest`", 0,
     18446744073709551615.0, "", ""},
    {"header_reserve", policies::ParamType::kInteger, "8",
     "trimmed headers (of `trim_size` bytes, rounded up to cells) each port keeps room for "
     "apart from the shared pool, as an NDP switch keeps a header queue apart from its "
     "8-packet data queue: a cut copy takes its trim queue's port reserve first, with no "
     "verdict of the policy, and only when that is full competes for the shared pool like "
     "any arrival (counted `header_reserve` at the trim queue when it took the reserve). Set "
     "aside at start when a class's `overflow` is `trim` or `return-to-sender` (not by "
     "`trim.set` later), so every policy sees a buffer smaller by ports × reserve "
     "(`buffer.header_reserve_cells` per port, `header_free_cells` per port in the stats). "
     "0: none. With 600 cells of 80 B and 5 ports the default takes 80 cells. NDP's own "
     "simulator (htsim) gives the header queue as many bytes as the data queue, eight "
     "full-size packets or hundreds of headers: that much per port would take most of a "
     "small shared buffer, so the reserve holds the data queue's packet count in headers and "
     "the shared pool the rest",
     0, 4096, "", ""},
    {"header_full", policies::ParamType::kString, "return-to-sender",
     "what becomes of a trimmed copy its trim queue refuses (reserve full, then the policy "
     "or the pool): `return-to-sender` (NDP): it goes back out of its ingress port through "
     "that port's trim queue, addresses swapped, DSCP `return_dscp` (counted "
     "`trimmed_dropped` at the trim queue and `bounced` at the data queue), dropped only if "
     "that is refused too; `drop`. Not for copies leaving a `tofino-approx` recirculation "
     "port",
     0, 0, "return-to-sender,drop", ""},
    {"mode", policies::ParamType::kString, "ideal",
     "`ideal`: trim what the buffer refuses (the idealised NDP switch). `tofino-approx`: "
     "trimming as the paper builds it on Tofino (section 4): each ingress pipeline meters "
     "every egress port and trims at ingress what its meter colours red (drop reason "
     "`meter`); a frame the buffer then refuses is deflected into the pipeline's "
     "recirculation port and trimmed as it leaves it, which notifies every pipeline. Applies "
     "to `overflow = \"trim\"` classes; needs every port's `rate` or `line_rate`",
     0, 0, "ideal,tofino-approx", ""},
    {"pipelines", policies::ParamType::kInteger, "0",
     "ingress pipelines = RX workers (sets `[switch] rx_threads`; port p on pipeline p mod "
     "N)",
     1, 64, "", "one per RX worker"},
    {"meters", policies::ParamType::kString, "three",
     "`three` (ndp.p4: single-rate meters at 100/50/25 % of line rate for the optimistic / "
     "half-pessimistic / pessimistic states), `two` (switch.p4: \"opti\" with PIR = line "
     "rate, CIR = half; \"pesi\" at a quarter) or `fixed`: one meter at the line rate "
     "whatever the notifications say (no pessimistic or half-pessimistic state), a frame the "
     "buffer refuses deflected — the paper's \"Tofino with per-destination meters in the "
     "ingress pipeline and Deflect-on-Drop\", the \"DoD\" curve of its Figure 5; or "
     "`mirror`: no meters, and a frame the buffer refuses is dropped while its header alone "
     "is mirrored through the pipeline's recirculation port (holding only the header's "
     "cells, serialised at `recirc_rate`, `recirc_latency` later in the trim queue; no "
     "notifications) — Mirror-on-Drop as Trident 4 and Spectrum 2 trim, the \"MoD\" curve of "
     "Figure 5",
     0, 0, "three,two,fixed,mirror", ""},
    {"meter_burst", policies::ParamType::kInteger, "12000",
     "bytes each meter's bucket holds (the virtual output queue it emulates)", 64, 16 << 20, "",
     ""},
    {"line_rate", policies::ParamType::kRate, "0",
     "the meters' 100 % for ports without a `rate`; 0: none", 0, 4e12, "", "none"},
    {"pessimistic_share", policies::ParamType::kNumber, "0.25",
     "the pessimistic meters' share of the line rate; half-pessimistic meters run at twice it, "
     "at most the line rate. The default is the paper's 25 % and 50 % (section 4), which it "
     "fixes for its four pipelines (every pipeline pessimistic sends the line rate together); "
     "one over `pipelines` keeps that sum for another count, but with two pipelines makes "
     "half-pessimistic the line rate, the same as optimistic (the default before 2026-11-29)",
     0.01, 1, "", ""},
    {"t0", policies::ParamType::kDuration, "6us",
     "a port is pessimistic until `t0` after a notification, as the paper's Figure 3 and its "
     "registers measure it; the default is the design of the paper's section 4 (its "
     "evaluation, section 6, uses 6 µs and 24 µs); scale it with the rate",
     0, 1e9, "", ""},
    {"t1", policies::ParamType::kDuration, "12us",
     "half-pessimistic until `t1` after the notification (none when `t1` ≤ `t0`), then "
     "optimistic: the paper's section 4 has a further 6 µs after `t0`. Before 2026-11-27 "
     "`t1` was the half-pessimistic period's length after `t0`: add `t0` to an old value",
     0, 1e9, "", ""},
    {"recirc_rate", policies::ParamType::kRate, "0",
     "rate of each pipeline's emulated recirculation port; 0: the egress port's rate", 0, 4e12, "",
     "the port's rate"},
    {"recirc_queue", policies::ParamType::kInteger, "65536",
     "bytes its queue holds (full frames); its frames take their cells from the shared "
     "buffer (`buffer.outside_cells` in the stats) until they leave, as on a Tofino; a "
     "deflected frame that does not fit, or finds no free cells, is dropped "
     "(`deflect_dropped`)",
     1500, 64 << 20, "", ""},
    {"recirc_latency", policies::ParamType::kDuration, "1us",
     "a recirculation pass: a deflected frame leaves this long after its serialisation, its "
     "notification arrives this long after that",
     0, 1e9, "", ""},
}};

inline constexpr std::array<policies::ParamSpec, 2> kTrimClassParams{{
    {"overflow", policies::ParamType::kString, "drop",
     "what happens to a frame of this class the buffer refuses (the policy's verdict or a full "
     "pool), or that LQD pushes out of its queue: `drop`, `trim` or `return-to-sender` "
     "(docs/configuration.md)",
     0, 0, "drop,trim,return-to-sender"},
    {"return_threshold", policies::ParamType::kInteger, "0",
     "with `return-to-sender`: frames admitted while their queue holds more than this (a size; a "
     "bare number is cells) also send a header copy back (0: only refused frames)",
     0, 1 << 30},
}};

inline constexpr std::array<policies::ParamSpec, 2> kTrimPortParams{{
    {"trim_queue", policies::ParamType::kInteger, "0",
     "the queue of this port that trimmed and returned headers go to", 0, 63},
    {"trim_dscp_toward", policies::ParamType::kInteger, "-1",
     "DSCP of the trimmed copies this port sends (-1: `trim_dscp`)", -1, 63},
}};

// The declaration of `name` in one of the tables above (a programming error if absent).
const policies::ParamSpec& trim_spec(std::span<const policies::ParamSpec> table,
                                     std::string_view name);

// "drop", "trim", "return-to-sender".
std::optional<OverflowAction> overflow_action(std::string_view name) noexcept;

// Whether trim.set may change `key` while the switch runs.
bool trim_key_live(std::string_view key) noexcept;

// Reads the [trimming] keys `r` holds into `t` (all of them, defaults for the absent ones, or
// with `only_given` just those the table gives). `pipelines` is the loader's (it sets rx_threads).
void read_trim_params(const policies::ParamReader& r, TrimConfig& t, bool only_given);

// Every key of `t` but pipelines, as the configuration file states it ("6000ns", "10000000bit").
nlohmann::json trim_params_json(const TrimConfig& t);

// The [trimming] rows of docs/configuration.md's table.
std::string trim_params_markdown();

}  // namespace sharebuf::model
