# shellcheck shell=bash
# sharebuf testbed library: N host namespaces star-connected to one switch namespace by veth
# pairs, sharebufd on the switch side. Source it, then call tb_init before anything else; it
# installs an EXIT/INT/TERM trap that tears down everything this run created, also on failure.
#
# Conventions (docs/testbeds.md): namespaces "<prefix>-sw" and "<prefix>-h<i>", a unique prefix per
# run; host i has eth0 = 198.18.0.<i>/24 (198.18.0.0/15 is reserved for benchmarking; addresses
# exist only inside our namespaces) and MAC 02:5b:00:00:00:<i>; the switch's port i is "p<i>".
# Offloads (tx checksum, TSO, GSO, GRO) are off on both ends of every veth.
#
# Links keep their frames in order (TB_LINK_ORDER, see tb_link_order): a veth without NAPI hands
# a frame to the backlog of the CPU that sent it, so a sender that transmits from two CPUs (a TCP
# sender does: from its application's CPU and from the one its ACKs arrive on) has its frames
# reordered on the link, which a cable never does. Hosts' eth0 get a FIFO qdisc (a NIC's transmit
# queue), so a full link holds frames back rather than dropping them; on Linux 6.18 a frame held
# back that way sometimes reaches the switch after later ones (docs/measurements/
# datapath-latency-log.md, "A full port ring reorders the link").

TB_PREFIX=""
TB_HOSTS=0
TB_DIR=""
TB_SWITCH_PID=""
TB_PIDS=()
TB_RESTORE_ALLOWED_CC=""
TB_CPU_CGROUP=""  # tb_cpu_limit's cgroup, removed at cleanup
# napi (default): every link end has an XDP program that passes every frame (scripts/
# xdp_pass.c), which makes veth receive through NAPI: one ring per end, drained in the order the
# frames were sent, mostly on the sender's CPU; flow: RPS by flow hash over all CPUs, each flow in
# order but its receive work moved to the CPU its hash picks; off: the kernel's default; switch:
# napi on the switch's ends, the kernel's default on the hosts'.
TB_LINK_ORDER=${TB_LINK_ORDER:-napi}
# Transmit and receive queues of every veth end (default 1). veth hands a frame to the peer's
# receive queue with the number of the transmit queue it left by (XPS or the flow hash picks it).
TB_VETH_QUEUES=${TB_VETH_QUEUES:-1}

tb_log() { printf '[testbed %s] %s\n' "$TB_PREFIX" "$*" >&2; }
tb_die() { tb_log "error: $*"; exit 1; }

# tb_init [PREFIX]: unique prefix (default sb<pid><random>), work dir, cleanup trap.
tb_init() {
  [ "$(id -u)" -eq 0 ] || tb_die "needs root (network namespaces)"
  for tool in ip ethtool; do command -v "$tool" >/dev/null || tb_die "missing '$tool' (./run.sh deps)"; done
  TB_PREFIX=${1:-sb$(printf '%x%02x' $$ $((RANDOM % 256)))}
  TB_DIR=$(mktemp -d "/tmp/${TB_PREFIX}.XXXX")
  trap tb_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

tb_ns_sw() { echo "${TB_PREFIX}-sw"; }
tb_ns_host() { echo "${TB_PREFIX}-h$1"; }
tb_ip() { echo "198.18.0.$1"; }
tb_mac() { printf '02:5b:00:00:00:%02x' "$1"; }
# tb_exec HOST CMD...: run in host namespace HOST (a number) or "sw".
tb_exec() {
  local h=$1
  shift
  ip netns exec "$(tb_ns_of "$h")" "$@"
}

# tb_ns_of HOST: the namespace of host HOST (a number) or of the switch (sw).
tb_ns_of() {
  if [ "$1" = sw ]; then tb_ns_sw; else tb_ns_host "$1"; fi
}

# tb_create N [cc] [ecn] [rto_min]: N hosts with TCP congestion control cc (default cubic), ECN
# (0/1, default 0) and rto_min (default 200ms).
tb_create() {
  local n=$1 cc=${2:-cubic} ecn=${3:-0} rto=${4:-200ms}
  TB_HOSTS=$n
  grep -qw "$cc" /proc/sys/net/ipv4/tcp_available_congestion_control ||
    tb_die "TCP congestion control '$cc' is not available in this kernel ($(cat /proc/sys/net/ipv4/tcp_available_congestion_control))"
  # A namespace may only pick an algorithm the host allows; allow it for this run, restored on exit.
  local allowed
  allowed=$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control)
  if ! grep -qw "$cc" <<<"$allowed"; then
    TB_RESTORE_ALLOWED_CC=$allowed
    sysctl -qw net.ipv4.tcp_allowed_congestion_control="$allowed $cc"
  fi
  ip netns add "$(tb_ns_sw)"
  ip -n "$(tb_ns_sw)" link set lo up
  local i
  for i in $(seq 1 "$n"); do
    local ns tmp_h tmp_s
    ns=$(tb_ns_host "$i")
    tmp_h="${TB_PREFIX}h$i"
    tmp_s="${TB_PREFIX}s$i"
    ip netns add "$ns"
    ip link add "$tmp_h" numtxqueues "$TB_VETH_QUEUES" numrxqueues "$TB_VETH_QUEUES" type veth \
      peer name "$tmp_s" numtxqueues "$TB_VETH_QUEUES" numrxqueues "$TB_VETH_QUEUES"
    ip link set "$tmp_h" netns "$ns"
    ip link set "$tmp_s" netns "$(tb_ns_sw)"
    ip -n "$ns" link set "$tmp_h" name eth0
    ip -n "$(tb_ns_sw)" link set "$tmp_s" name "p$i"
    ip -n "$ns" link set eth0 address "$(tb_mac "$i")"
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    ip -n "$(tb_ns_sw)" link set "p$i" up
    ip -n "$ns" addr add "$(tb_ip "$i")/24" dev eth0
    ip netns exec "$ns" ethtool -K eth0 tx off tso off gso off gro off >/dev/null 2>&1 || true
    ip netns exec "$(tb_ns_sw)" ethtool -K "p$i" tx off tso off gso off gro off >/dev/null 2>&1 || true
    tb_link_order "$ns" eth0
    tb_link_order "$(tb_ns_sw)" "p$i"
    # A host's NIC has a transmit queue; veth has none (noqueue), and through NAPI (above) it
    # drops what finds its ring full: hundreds of a TCP sender's segments per 4 s at 2 Gbit/s.
    # With a qdisc the kernel holds them back instead (veth stops its queue while the ring is
    # full), as a NIC does, and the link loses nothing.
    tb_host_queue "$i" fifo
    ip netns exec "$ns" sysctl -qw net.ipv4.tcp_congestion_control="$cc"
    ip netns exec "$ns" sysctl -qw net.ipv4.tcp_ecn="$ecn"
    ip -n "$ns" route change 198.18.0.0/24 dev eth0 proto kernel scope link src "$(tb_ip "$i")" rto_min "$rto"
    ip -n "$ns" -6 addr flush dev eth0 2>/dev/null || true
  done
  tb_log "created $n hosts (cc $cc, ecn $ecn, rto_min $rto) around $(tb_ns_sw)"
}

# tb_link_order NS DEV [ORDER]: applies ORDER (default TB_LINK_ORDER) to what DEV (in namespace
# NS) receives: its XDP program and its receive queues' rps_cpus (sysfs as `ip netns exec` mounts
# it for NS).
tb_link_order() {
  local ns=$1 dev=$2 order=${3:-$TB_LINK_ORDER} mask=0
  case "$order" in
    off | napi) ;;
    switch) if [ "$ns" = "$(tb_ns_sw)" ]; then order=napi; else order=off; fi ;;
    flow) mask=$(printf '%x' $(((1 << $(nproc)) - 1))) ;;
    *) tb_die "link order (TB_LINK_ORDER) must be napi, switch, flow or off, not '$order'" ;;
  esac
  if [ "$order" = napi ]; then
    [ -f "$TB_DIR/xdp_pass.o" ] ||
      clang -O2 -target bpf -c "$TB_ROOT/scripts/xdp_pass.c" -o "$TB_DIR/xdp_pass.o" ||
      tb_die "cannot build scripts/xdp_pass.c (clang with the bpf target: ./run.sh deps)"
    ip -force -n "$ns" link set dev "$dev" xdpdrv obj "$TB_DIR/xdp_pass.o" sec xdp.frags ||
      tb_die "cannot attach an XDP program to $dev in $ns (TB_LINK_ORDER=flow needs none)"
  else
    ip -n "$ns" link set dev "$dev" xdpdrv off 2>/dev/null || true
  fi
  ip netns exec "$ns" sh -c 'for q in /sys/class/net/$1/queues/rx-*; do echo "$2" >"$q/rps_cpus"; done' \
    _ "$dev" "$mask" 2>/dev/null || [ "$order" != flow ] ||
    tb_die "could not set rps_cpus of $dev in $ns (a kernel without CONFIG_RPS?)"
}

# tb_host_queue I fifo|none: host I's eth0 with the testbed's transmit queue (a FIFO of 1000
# frames, as a NIC's) or with none (veth's default: a frame that finds the peer's ring full is
# dropped, where the FIFO holds it back and can deliver it after later ones).
tb_host_queue() {
  case "$2" in
    fifo) ip netns exec "$(tb_ns_host "$1")" tc qdisc replace dev eth0 root pfifo limit 1000 ;;
    none) ip netns exec "$(tb_ns_host "$1")" tc qdisc del dev eth0 root 2>/dev/null || true ;;
    *) tb_die "tb_host_queue: fifo or none, not '$2'" ;;
  esac || tb_die "cannot set host $1's eth0 transmit queue to $2 (tc)"
}

# tb_host_tx_dropped I: frames host I's eth0 has dropped on transmit since it was created.
tb_host_tx_dropped() { tb_exec "$1" cat /sys/class/net/eth0/statistics/tx_dropped; }

# tb_set_link_order ORDER: applies ORDER to both ends of every link of the testbed (for benchmarks
# that compare orders on one testbed).
tb_set_link_order() {
  local i
  for i in $(seq 1 "$TB_HOSTS"); do
    tb_link_order "$(tb_ns_host "$i")" eth0 "$1"
    tb_link_order "$(tb_ns_sw)" "p$i" "$1"
  done
}

# tb_start_switch CONFIG [extra sharebufd args...]: starts sharebufd in the switch namespace with
# its stats file at $TB_DIR/stats.json (TB_STATS_FILE to put it elsewhere) and its log at
# $TB_DIR/sharebufd.log (TB_SWITCH_STDERR: where its stderr goes instead, e.g. a FIFO whose
# reader appends to that log); waits until it runs.
tb_start_switch() {
  local config=$1
  shift
  local bin=${SHAREBUFD:-$TB_ROOT/build/mgmt/sharebufd}
  [ -x "$bin" ] || tb_die "sharebufd not built at $bin (./run.sh build)"
  # Emptied here, not by the background job's redirection: that may run after the first check
  # below, which would then find the previous daemon's "running:" line and return before this
  # one has its control socket.
  : >"$TB_DIR/sharebufd.log"
  # A sanitizer build (run.sh test runs some tests against them) writes its reports beside the
  # log, as sanitizer.PID; tb_cleanup fails the run if there is one. A plain build ignores these.
  local opt="log_path=$TB_DIR/sanitizer"
  TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}$opt" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}$opt" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}$opt" \
    ip netns exec "$(tb_ns_sw)" "$bin" --config "$config" \
    --stats-file "${TB_STATS_FILE:-$TB_DIR/stats.json}" --socket "$TB_DIR/ctl.sock" "$@" \
    >"$TB_DIR/sharebufd.out" 2>"${TB_SWITCH_STDERR:-$TB_DIR/sharebufd.log}" &
  TB_SWITCH_PID=$!
  local i
  for i in $(seq 1 50); do
    grep -q "running:" "$TB_DIR/sharebufd.log" 2>/dev/null && return 0
    kill -0 "$TB_SWITCH_PID" 2>/dev/null || { cat "$TB_DIR/sharebufd.log" >&2; tb_die "sharebufd exited at start"; }
    sleep 0.1
  done
  tb_die "sharebufd did not start within 5 s"
}

# tb_out_dir DIR: creates a results folder and prints its absolute path.
tb_out_dir() { mkdir -p "$1" && (cd "$1" && pwd); }

# tb_tg: the path of sharebuf-tg (SHAREBUF_TG, else the build); fails if it is not built.
tb_tg() {
  local tg=${SHAREBUF_TG:-$TB_ROOT/build/tools/sharebuf-tg}
  [ -x "$tg" ] || { echo "sharebuf-tg not built at $tg (./run.sh build)" >&2; return 1; }
  echo "$tg"
}

# tb_ndp: the path of sharebuf-ndp, the trim-aware transport (SHAREBUF_NDP, else the build).
tb_ndp() {
  local ndp=${SHAREBUF_NDP:-$TB_ROOT/build/tools/sharebuf-ndp}
  [ -x "$ndp" ] || { echo "sharebuf-ndp not built at $ndp (./run.sh build)" >&2; return 1; }
  echo "$ndp"
}

# tb_ctl ARGS...: sharebufctl against the running switch's control socket.
tb_ctl() {
  "${SHAREBUFCTL:-$TB_ROOT/build/mgmt/sharebufctl}" --socket "$TB_DIR/ctl.sock" "$@"
}

# tb_stop_switch: saves the switch's effective configuration (`sharebufctl config`: the file with
# what was set over it and changed live) as $TB_DIR/effective.toml, then SIGTERM, wait (bounded);
# returns sharebufd's exit status. A run keeps that file beside its results (tb_keep_effective).
tb_stop_switch() {
  [ -n "$TB_SWITCH_PID" ] || return 0
  local pid=$TB_SWITCH_PID rc=0 i
  TB_SWITCH_PID=""
  rm -f "$TB_DIR/effective.toml"
  # No control socket: a switch that has none (sharebuf-floor), nothing to read.
  if [ -S "$TB_DIR/ctl.sock" ]; then
    timeout 10 "${SHAREBUFCTL:-$TB_ROOT/build/mgmt/sharebufctl}" --socket "$TB_DIR/ctl.sock" config \
      >"$TB_DIR/effective.toml.part" 2>/dev/null &&
      mv "$TB_DIR/effective.toml.part" "$TB_DIR/effective.toml" ||
      tb_log "could not read the switch's effective configuration"
    rm -f "$TB_DIR/effective.toml.part"
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    tb_log "sharebufd did not stop within 5 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" || rc=$?
  return $rc
}

# tb_keep_effective OUT: copies the effective configuration of the switch tb_stop_switch last
# stopped to OUT (a results folder's effective-LABEL.toml): every run says what it ran.
tb_keep_effective() {
  [ -f "$TB_DIR/effective.toml" ] || tb_die "no effective configuration to keep for $1"
  cp "$TB_DIR/effective.toml" "$1"
}

# tb_snapshot_stats OUT: asks the running sharebufd for its counters (SIGUSR1) and copies the
# fresh stats JSON to OUT; prints the monotonic time (s) at which it was requested. Waits up to
# 10 s: a TSan build under a CPU hog per core once took more than 1 s (trim_transport), and says
# on stderr when it took more than one. A fresh file is one whose modification time, to the
# nanosecond, moved (sharebufd renames a new file over the old one); to the second only, two
# snapshots within one second waited in vain.
tb_snapshot_stats() {
  local out=$1 before="" start waited
  [ -f "$TB_DIR/stats.json" ] && before=$(stat -c %.9Y "$TB_DIR/stats.json" 2>/dev/null || true)
  cut -d' ' -f1 /proc/uptime
  start=${EPOCHREALTIME/./}
  kill -USR1 "$TB_SWITCH_PID"
  while :; do
    waited=$(((${EPOCHREALTIME/./} - start) / 1000))
    if [ -f "$TB_DIR/stats.json" ] && [ "$(stat -c %.9Y "$TB_DIR/stats.json")" != "$before" ]; then
      cp "$TB_DIR/stats.json" "$out"
      [ "$waited" -le 1000 ] || tb_log "sharebufd took $waited ms to write its stats"
      return 0
    fi
    [ "$waited" -le 10000 ] || tb_die "sharebufd did not write its stats within 10 s"
    sleep 0.01
  done
}

# tb_snapshot_quiet OUT: tb_snapshot_stats once no frame arrives any more: snapshots every 0.25 s
# until two in a row count the same frames received in every queue, for at most 20 s. The
# counters balance (received = admitted + dropped) only at such a quiet point; hosts may still be
# sending after their tool returned (a transport's late retransmissions), and a frame counted
# received is admitted or dropped a moment later. Prints the last snapshot's time.
tb_snapshot_quiet() {
  local out=$1 prev="" sig t deadline=$((SECONDS + 20))
  while :; do
    t=$(tb_snapshot_stats "$out") || return 1
    sig=$(grep -o '"received": *[0-9]*' "$out" | tr -d ' \n')
    if [ -n "$sig" ] && [ "$sig" = "$prev" ]; then
      echo "$t"
      return 0
    fi
    [ "$SECONDS" -lt "$deadline" ] || tb_die "frames still arriving at sharebufd after 20 s"
    prev=$sig
    sleep 0.25
  done
}

# tb_bg HOST CMD...: start a background command in a namespace; remembered for cleanup.
tb_bg() {
  local ns
  ns=$(tb_ns_of "$1")
  shift
  # A simple command, not a function call: the forked child execs `ip`, which execs the command,
  # so $! is the command's own PID and killing it ends the command (a function run in the
  # background is a subshell whose death leaves the command running).
  ip netns exec "$ns" "$@" &
  TB_PIDS+=($!)
}

# A policy spec is NAME or NAME:key=value,key=value (e.g. protean:sync=probe,alpha_incast=0.8).
# tb_policy_name SPEC: NAME. tb_policy_params SPEC: the parameters as TOML lines for
# TB_POLICY_PARAMS (numbers and true/false as they are, anything else quoted).
# tb_policy_label SPEC: a name for files and tables, e.g. protean+sync=probe.
tb_policy_name() { echo "${1%%:*}"; }
tb_policy_params() {
  local spec=$1 kv key value
  [ "$spec" != "${spec%%:*}" ] || return 0
  IFS=, read -r -a kv <<<"${spec#*:}"
  for kv in "${kv[@]}"; do
    key=${kv%%=*} value=${kv#*=}
    if [[ "$value" =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ || "$value" == true || "$value" == false ]]; then
      echo "$key = $value"
    else
      echo "$key = \"$value\""
    fi
  done
}
tb_policy_label() { local s=${1/:/+}; echo "${s//,/+}"; }
# tb_split_specs LIST: one spec per line. Specs are separated by ';', or by ',' when none has
# parameters ("dt,cs,lqd"; "dt;protean:sync=probe,beta=0.5").
tb_split_specs() {
  if [[ "$1" == *";"* ]]; then
    tr ';' '\n' <<<"$1" | sed '/^$/d'
  elif [[ "$1" == *":"* ]]; then
    echo "$1"
  else
    tr ',' '\n' <<<"$1" | sed '/^$/d'
  fi
}

# tb_write_config FILE POLICY RATE [BUFFER] [QUEUES] [extra TOML appended]: a config for the star
# testbed, one port per host.
# TB_POLICY_PARAMS (optional): lines `key = value` added to the [policy] table.
# TB_BUFFER_EXTRA (optional): lines added to the [buffer] table (e.g. `view = "probe"`).
# TB_PORT_EXTRA (optional): lines added to every [[ports]] table (e.g. `tx_batch = 1`).
# TB_CAPTURE_DIR (optional): [control] capture_dir (default: the run's folder $TB_DIR).
# TB_MODEL_DIR (optional): [control] model_dir (default: $TB_DIR).
# TB_CONTROL_EXTRA (optional): lines added to the [control] table (e.g. `max_clients = 2048`).
tb_write_config() {
  local file=$1 policy=$2 rate=$3 size=${4:-"21000 cells"} queues=${5:-1} extra=${6:-}
  {
    echo "[switch]"
    echo "name = \"$TB_PREFIX\""
    echo "[buffer]"
    echo "size = \"$size\""
    echo "cell_bytes = 80"
    [ -z "${TB_BUFFER_EXTRA:-}" ] || printf '%s\n' "$TB_BUFFER_EXTRA"
    echo "[policy]"
    echo "name = \"$policy\""
    # Policy parameters, one `key = value` per line (TOML), from the environment.
    [ -z "${TB_POLICY_PARAMS:-}" ] || printf '%s\n' "$TB_POLICY_PARAMS"
    local i
    for i in $(seq 1 "$TB_HOSTS"); do
      echo "[[ports]]"
      echo "interface = \"p$i\""
      echo "rate = \"$rate\""
      echo "queues = $queues"
      [ -z "${TB_PORT_EXTRA:-}" ] || printf '%s\n' "$TB_PORT_EXTRA"
    done
    printf '%s\n' "$extra"
    # Captures (capture.start) may only go below this folder: the run's own, unless the caller
    # records somewhere else (TB_CAPTURE_DIR, e.g. an experiment's results folder).
    echo "[control]"
    echo "capture_dir = \"${TB_CAPTURE_DIR:-$TB_DIR}\""
    # Models named in policy.set requests are read only below this folder.
    echo "model_dir = \"${TB_MODEL_DIR:-$TB_DIR}\""
    [ -z "${TB_CONTROL_EXTRA:-}" ] || printf '%s\n' "$TB_CONTROL_EXTRA"
  } >"$file"
}

# tb_cpu_limit PID PERCENT: every thread of PID gets at most PERCENT of one CPU (a cgroup of the
# cpu controller, v1 or v2, named after the run; removed at cleanup). Returns 1 where no such
# cgroup can be made (no cpu controller mounted).
tb_cpu_limit() {
  local pid=$1 pct=$2 cg t
  if [ -w /sys/fs/cgroup/cpu ] && [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
    cg=/sys/fs/cgroup/cpu/$TB_PREFIX
    mkdir -p "$cg" && echo 100000 >"$cg/cpu.cfs_period_us" && echo $((pct * 1000)) >"$cg/cpu.cfs_quota_us" || return 1
  elif grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
    cg=/sys/fs/cgroup/$TB_PREFIX
    mkdir -p "$cg" && echo "$((pct * 1000)) 100000" >"$cg/cpu.max" || return 1
  else
    return 1
  fi
  TB_CPU_CGROUP=$cg
  if [ -e "$cg/tasks" ]; then
    for t in /proc/"$pid"/task/*; do echo "${t##*/}" >"$cg/tasks" || return 1; done
  else
    echo "$pid" >"$cg/cgroup.procs" || return 1
  fi
}

tb_cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  local pid
  for pid in "${TB_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${TB_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  TB_PIDS=()
  tb_stop_switch >/dev/null 2>&1 || true
  local report
  for report in "${TB_DIR:-/nonexistent}"/sanitizer.*; do
    [ -e "$report" ] || continue
    echo "[testbed ] sharebufd's sanitizer reported (${report##*/}):" >&2
    cat "$report" >&2
    [ "$rc" -ne 0 ] || rc=1
  done
  # Empty once its processes are gone; a cgroup that still has some stays.
  [ -z "$TB_CPU_CGROUP" ] || rmdir "$TB_CPU_CGROUP" 2>/dev/null || true
  if [ -n "$TB_PREFIX" ]; then
    local ns
    for ns in $(ip netns list | awk '{print $1}' | grep "^${TB_PREFIX}-" || true); do
      ip netns pids "$ns" 2>/dev/null | while read -r p; do kill -KILL "$p" 2>/dev/null || true; done
      ip netns del "$ns" 2>/dev/null || true
    done
  fi
  # Another run may have allowed the same algorithm meanwhile; restore only what we added.
  if [ -n "$TB_RESTORE_ALLOWED_CC" ] && [ -z "$(ip netns list | grep -v "^${TB_PREFIX}-" | head -1)" ]; then
    sysctl -qw net.ipv4.tcp_allowed_congestion_control="$TB_RESTORE_ALLOWED_CC" 2>/dev/null || true
  fi
  [ -n "${TB_KEEP_DIR:-}" ] || [ -z "$TB_DIR" ] || rm -rf "$TB_DIR"
  exit $rc
}

TB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
