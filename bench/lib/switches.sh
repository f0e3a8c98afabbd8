# The switches the benchmarks compare, started and stopped on a testbed made by
# scripts/testbed.sh (source that first). Shared by bench/forwarding_bench.sh and
# bench/idle_latency.sh so both measure the same configurations.
#   bench_start_switch NAME   start NAME between the testbed's ports p1 and p2, then wait until
#                             host 1 reaches host 2 (learning, OVS flow setup)
#   bench_stop_switch NAME    stop it and leave the ports as they were; with BENCH_KEEP_DIR set,
#                             keep what it ran there: sharebufd's effective configuration as
#                             effective-NAME.toml, sharebuf-floor's command line as
#                             effective-NAME.txt (the others are set up as written below)
#   bench_switch_label NAME   what NAME is, for tables
#   bench_switch_pid NAME     the process whose CPU time is the running switch's own (sharebufd,
#                             sharebuf-floor, ovs-vswitchd); nothing for the bridge and the XDP
#                             redirect, whose work is the kernel's in the senders' context
#   bench_cpu_ticks PID       that process's CPU time so far (all threads, user + system), in ticks
#   bench_interleave REPS FN NAME...
#                             for each repetition, each NAME in turn: start it, FN NAME REP, stop
#                             it, so a spell of host noise falls on one repetition of every
#                             switch rather than on all repetitions of one
# NAMEs:
#   sharebufd          cs, unshaped, defaults
#   sharebufd-credence policy credence (oracle none)
#   sharebufd-credence2 policy credence with pipelines = 2 (a state per RX worker's ports)
#   sharebufd-smallbuf, sharebufd-bigbuf
#                      a tenth (2100 cells) and ten times (210000 cells) the default's buffer
#   sharebufd-nopark   rx_park_after = 0: one RX worker per port at idle too
#   sharebufd-1rx      rx_threads = 1: one RX thread for both ports
#   sharebufd-rt       realtime_priority = 10: the datapath threads at SCHED_FIFO
#   sharebufd-spin     rx_threads = 1, rx_busy_poll = 200us
#   sharebufd-spinshort rx_busy_poll = 100us: spin-then-block, so a busy worker skips wake-ups
#   sharebufd-spinlong poll_mode = "adaptive" with rx_busy_poll = 20ms: spins across a 10 ms ping
#                      gap (a core while traffic comes at least every 20 ms), blocks after
#   sharebufd-adaptive poll_mode = "adaptive": spin 200 us after the last frame, then block
#   sharebufd-busypoll poll_mode = "busy-poll": the first RX worker never blocks (the other parks)
#   sharebufd-xdp-busypoll
#                      rx_io = "af_xdp" and poll_mode = "busy-poll": the AF_XDP sockets prefer
#                      busy polling too (SO_PREFER_BUSY_POLL, budget 64)
#   sharebufd-xdp2     rx_io = tx_io = "af_xdp": AF_XDP both ways (frames leave through the
#                      sockets' TX rings)
#   sharebufd-xdp2-busypoll
#                      the same with poll_mode = "busy-poll"
#                      (both with the ports' sockets on one shared UMEM, af_xdp_umem's default:
#                      frames queued in their receive chunks and sent from them)
#   sharebufd-xdp2-copy, sharebufd-xdp2-busypoll-copy
#                      the same two with af_xdp_umem = "per-socket": a UMEM per socket, every
#                      frame copied into cells and out again (before the shared UMEM)
#   sharebufd-percpu   rx_mode = "per-cpu": one RX worker per CPU, pinned, reading the frames the
#                      kernel received on its CPU
#   sharebufd-baseline sharebufd's defaults, run from another build ($SHAREBUFD_BASELINE: e.g. the
#                      commit before a change, for a before/after comparison in one run);
#                      sharebufd-VARIANT-baseline: that variant's configuration from that build
#   sharebufd-xdp      rx_io = "af_xdp": ports receive through AF_XDP sockets (the switch's own XDP
#                      program in place of the testbed's while it runs)
#   sharebufd-cpu0, sharebufd-cpu1
#                      defaults, every thread pinned to CPU 0 (1) with taskset after the start
#   sharebufd-rtcpu0   realtime_priority = 10 and every thread on CPU 0: with the ping on CPU 0
#                      (idle_latency.sh --ping-cpu 0) the request's wake-up preempts the ping
#   floor              sharebuf-floor (tools/floor_forwarder.cpp): sharebufd's AF_PACKET port I/O
#                      with nothing between, one thread for both ports, blocking (sharebufd at idle)
#   floor-2t           the same, one thread per port (sharebufd's unparked workers, sending inline)
#   floor-spin         the same, one thread that never blocks (a polling floor: a core at idle)
#   bridge             a Linux bridge
#   ovs                Open vSwitch, userspace datapath (netdev) over AF_PACKET
#   ovs-afxdp          the same with AF_XDP ports (generic XDP on veth where native is refused)
#   xdp-redirect       the kernel's XDP redirect between p1 and p2 (scripts/xdp_redirect.c on
#                      each, native mode, sending every frame out of the other): no switch at
#                      all, the fastest a frame crosses these veths; NAPI on every link end (the
#                      hosts' ends need it to take redirected frames). xdp-tools' `xdp-bench
#                      redirect-map` does the same one way only: a second one is refused (its
#                      lock file)
# NAME@ORDER runs NAME with the testbed's links in another order (scripts/testbed.sh,
# tb_link_order: napi, switch, flow, off), e.g. sharebufd@off: the kernel's own order, in which a
# sender's frames are reordered when it transmits from two CPUs. Without it, TB_LINK_ORDER.
# Processes a run leaves behind inside the switch namespace end with the testbed's cleanup.
# shellcheck shell=bash

BENCH_OVS_DIR=""

bench_switch_label() {
  if [[ $1 == *@* ]]; then
    local base
    base=$(bench_switch_label "${1%@*}") || return 1
    case "${1##*@}" in
      off) echo "$base, links in the kernel's order" ;;
      flow) echo "$base, links in flow order (RPS)" ;;
      napi) echo "$base, links in order (NAPI)" ;;
      switch) echo "$base, NAPI on the switch's link ends only" ;;
      *) return 1 ;;
    esac
    return 0
  fi
  if [[ $1 == sharebufd*-baseline ]]; then
    local base
    base=$(bench_switch_label "${1%-baseline}") || return 1
    echo "$base, baseline build"
    return 0
  fi
  case "$1" in
    sharebufd) echo "sharebufd (cs, unshaped, defaults)" ;;
    sharebufd-credence) echo "sharebufd, policy credence" ;;
    sharebufd-credence2) echo "sharebufd, policy credence, pipelines = 2" ;;
    sharebufd-smallbuf) echo "sharebufd, buffer 2100 cells" ;;
    sharebufd-bigbuf) echo "sharebufd, buffer 210000 cells" ;;
    sharebufd-nopark) echo "sharebufd, rx_park_after = 0" ;;
    sharebufd-1rx) echo "sharebufd, rx_threads = 1" ;;
    sharebufd-rt) echo "sharebufd, realtime_priority = 10" ;;
    sharebufd-spin) echo "sharebufd, rx_threads = 1, rx_busy_poll = 200us" ;;
    sharebufd-spinshort) echo "sharebufd, rx_busy_poll = 100us" ;;
    sharebufd-spinlong) echo "sharebufd, poll_mode = adaptive (20ms)" ;;
    sharebufd-adaptive) echo "sharebufd, poll_mode = adaptive (200us)" ;;
    sharebufd-busypoll) echo "sharebufd, poll_mode = busy-poll" ;;
    sharebufd-xdp-busypoll) echo "sharebufd, rx_io = af_xdp, poll_mode = busy-poll" ;;
    sharebufd-xdp2) echo "sharebufd, rx_io = tx_io = af_xdp" ;;
    sharebufd-xdp2-busypoll) echo "sharebufd, rx_io = tx_io = af_xdp, poll_mode = busy-poll" ;;
    sharebufd-xdp2-copy) echo "sharebufd, rx_io = tx_io = af_xdp, af_xdp_umem = per-socket" ;;
    sharebufd-xdp2-busypoll-copy) echo "sharebufd, rx_io = tx_io = af_xdp, poll_mode = busy-poll, af_xdp_umem = per-socket" ;;
    sharebufd-percpu) echo "sharebufd, rx_mode = per-cpu" ;;
    sharebufd-xdp) echo "sharebufd, rx_io = af_xdp" ;;
    sharebufd-cpu0) echo "sharebufd, all threads on CPU 0" ;;
    sharebufd-cpu1) echo "sharebufd, all threads on CPU 1" ;;
    sharebufd-rtcpu0) echo "sharebufd, realtime_priority = 10, all threads on CPU 0" ;;
    floor) echo "floor: AF_PACKET I/O only, 1 thread" ;;
    floor-2t) echo "floor: AF_PACKET I/O only, a thread per port" ;;
    floor-spin) echo "floor: AF_PACKET I/O only, 1 thread, polling" ;;
    bridge) echo "Linux bridge" ;;
    ovs) echo "OVS userspace (netdev, AF_PACKET)" ;;
    ovs-afxdp) echo "OVS userspace (netdev, AF_XDP ports)" ;;
    xdp-redirect) echo "kernel XDP redirect (no switch)" ;;
    *) return 1 ;;
  esac
}

bench_switch_pid() {
  case "$1" in
    sharebufd* | floor*) echo "$TB_SWITCH_PID" ;;
    ovs*) cat "$BENCH_OVS_DIR/vswitchd.pid" ;;
  esac
}

bench_cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

bench_start_switch() {
  bench_switch_label "$1" >/dev/null || tb_die "unknown switch '$1'"
  [[ $1 != *@* ]] || tb_set_link_order "${1##*@}"
  set -- "${1%@*}"
  local conf=$TB_DIR/sw.toml
  case "$1" in
    sharebufd*)
      # NAME-baseline: NAME's configuration, run from the baseline build.
      local variant=${1%-baseline} baseline=0
      [ "$variant" = "$1" ] || baseline=1
      local policy=cs size="21000 cells" TB_POLICY_PARAMS=${TB_POLICY_PARAMS:-}
      case "$variant" in
        sharebufd-credence) policy=credence ;;
        sharebufd-credence2) policy=credence TB_POLICY_PARAMS='pipelines = 2' ;;
        sharebufd-smallbuf) size="2100 cells" ;;
        sharebufd-bigbuf) size="210000 cells" ;;
      esac
      tb_write_config "$conf" "$policy" 0 "$size"
      local extra=""
      case "$variant" in
        sharebufd-nopark) extra='rx_park_after = 0' ;;
        sharebufd-1rx) extra='rx_threads = 1' ;;
        sharebufd-rt | sharebufd-rtcpu0) extra='realtime_priority = 10' ;;
        sharebufd-spin) extra='rx_threads = 1\nrx_busy_poll = "200us"' ;;
        sharebufd-spinshort) extra='rx_busy_poll = "100us"' ;;
        sharebufd-spinlong) extra='poll_mode = "adaptive"\nrx_busy_poll = "20ms"' ;;
        sharebufd-adaptive) extra='poll_mode = "adaptive"' ;;
        sharebufd-busypoll) extra='poll_mode = "busy-poll"' ;;
        sharebufd-xdp-busypoll) extra='rx_io = "af_xdp"\npoll_mode = "busy-poll"' ;;
        sharebufd-xdp2) extra='rx_io = "af_xdp"\ntx_io = "af_xdp"' ;;
        sharebufd-xdp2-busypoll) extra='rx_io = "af_xdp"\ntx_io = "af_xdp"\npoll_mode = "busy-poll"' ;;
        sharebufd-xdp2-copy) extra='rx_io = "af_xdp"\ntx_io = "af_xdp"\naf_xdp_umem = "per-socket"' ;;
        sharebufd-xdp2-busypoll-copy) extra='rx_io = "af_xdp"\ntx_io = "af_xdp"\npoll_mode = "busy-poll"\naf_xdp_umem = "per-socket"' ;;
        sharebufd-percpu) extra='rx_mode = "per-cpu"' ;;
        sharebufd-xdp) extra='rx_io = "af_xdp"' ;;
      esac
      [ -z "$extra" ] || sed -i "s/^\[switch\]/[switch]\n$extra/" "$conf"
      if [ "$baseline" = 1 ]; then
        [ -x "${SHAREBUFD_BASELINE:-}" ] || tb_die "$1: set SHAREBUFD_BASELINE to a sharebufd binary"
        SHAREBUFD=$SHAREBUFD_BASELINE tb_start_switch "$conf"
      else
        tb_start_switch "$conf"
      fi
      case "$variant" in
        sharebufd-cpu0 | sharebufd-rtcpu0) taskset -a -p -c 0 "$TB_SWITCH_PID" >/dev/null ;;
        sharebufd-cpu1) taskset -a -p -c 1 "$TB_SWITCH_PID" >/dev/null ;;
      esac
      ;;
    floor*)
      local bin=${SHAREBUF_FLOOR:-$(dirname "$(dirname "${SHAREBUFD:-$TB_ROOT/build/mgmt/sharebufd}")")/tools/sharebuf-floor}
      [ -x "$bin" ] || tb_die "sharebuf-floor not built at $bin (./run.sh build)"
      local args=(--port p1 --port p2)
      case "$1" in
        floor-2t) args+=(--threads 2) ;;
        floor-spin) args+=(--spin) ;;
      esac
      BENCH_FLOOR_CMD="sharebuf-floor ${args[*]}"
      : >"$TB_DIR/floor.out"
      # TB_SWITCH_PID, like sharebufd's: tb_stop_switch ends it, tb_cleanup too, and the benchmarks
      # read its CPU time from it.
      ip netns exec "$(tb_ns_sw)" "$bin" "${args[@]}" >"$TB_DIR/floor.out" 2>&1 &
      TB_SWITCH_PID=$!
      local _
      for _ in $(seq 1 50); do
        grep -q "running:" "$TB_DIR/floor.out" && break
        kill -0 "$TB_SWITCH_PID" 2>/dev/null || { cat "$TB_DIR/floor.out" >&2; tb_die "sharebuf-floor exited at start"; }
        sleep 0.1
      done
      grep -q "running:" "$TB_DIR/floor.out" || tb_die "sharebuf-floor did not start within 5 s"
      ;;
    bridge)
      tb_exec sw ip link add br0 type bridge
      tb_exec sw ip link set p1 master br0
      tb_exec sw ip link set p2 master br0
      tb_exec sw ip link set br0 up
      ;;
    ovs | ovs-afxdp)
      BENCH_OVS_DIR="$TB_DIR/ovs"
      local d=$BENCH_OVS_DIR
      mkdir -p "$d"
      ovsdb-tool create "$d/conf.db" /usr/share/openvswitch/vswitch.ovsschema
      tb_exec sw ovsdb-server "$d/conf.db" --remote="punix:$d/db.sock" \
        --pidfile="$d/ovsdb.pid" --unixctl="$d/ovsdb.ctl" --detach --no-chdir \
        --log-file="$d/ovsdb.log"
      tb_exec sw ovs-vsctl --db="unix:$d/db.sock" --no-wait init
      tb_exec sw ovs-vswitchd "unix:$d/db.sock" --pidfile="$d/vswitchd.pid" \
        --unixctl="$d/vswitchd.ctl" --detach --no-chdir --log-file="$d/vswitchd.log"
      tb_exec sw ovs-vsctl --db="unix:$d/db.sock" add-br br0 -- set bridge br0 datapath_type=netdev
      local p afxdp=()
      # AF_XDP ports need their own XDP program on the switch's ends (it makes veth use NAPI too).
      if [ "$1" = ovs-afxdp ]; then
        for p in p1 p2; do tb_exec sw ip link set "$p" xdpdrv off 2>/dev/null || true; done
      fi
      for p in p1 p2; do
        [ "$1" = ovs-afxdp ] && afxdp=(-- set interface "$p" type=afxdp options:xdp-mode=best-effort)
        tb_exec sw ovs-vsctl --db="unix:$d/db.sock" add-port br0 "$p" "${afxdp[@]}"
      done
      tb_exec sw ip link set br0 up
      ;;
    xdp-redirect)
      # A redirected frame leaves through the target veth's peer, which takes it only with NAPI
      # (an XDP program): the order 'napi' puts one on every end, then the switch ends get the
      # redirect, each built for the other's ifindex.
      tb_set_link_order napi
      local p q sw
      sw=$(tb_ns_sw)
      for p in p1 p2; do
        q=p1
        [ "$p" = p2 ] || q=p2
        clang -O2 -target bpf -DTARGET_IFINDEX="$(ip netns exec "$sw" cat "/sys/class/net/$q/ifindex")" \
          -c "$TB_ROOT/scripts/xdp_redirect.c" -o "$TB_DIR/xdp_redirect_$p.o" ||
          tb_die "cannot build scripts/xdp_redirect.c (clang with the bpf target: ./run.sh deps)"
        ip -force -n "$sw" link set dev "$p" xdpdrv obj "$TB_DIR/xdp_redirect_$p.o" sec xdp ||
          tb_die "cannot attach the XDP redirect to $p"
      done
      ;;
  esac
  local _
  for _ in $(seq 1 50); do
    tb_exec 1 ping -c 1 -W 1 -q "$(tb_ip 2)" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  tb_die "$1: hosts cannot reach each other"
}

# bench_keep_in DIR: this run keeps what each switch ran in DIR (emptied first: this run's only).
bench_keep_in() {
  rm -rf "$1"
  export BENCH_KEEP_DIR=$1
}

bench_stop_switch() {
  case "${1%@*}" in
    sharebufd* | floor*)
      tb_stop_switch
      if [ -n "${BENCH_KEEP_DIR:-}" ]; then
        mkdir -p "$BENCH_KEEP_DIR"
        if [[ $1 == sharebufd* ]]; then
          tb_keep_effective "$BENCH_KEEP_DIR/effective-${1//@/-}.toml"
        else
          printf '%s\n' "$BENCH_FLOOR_CMD" >"$BENCH_KEEP_DIR/effective-${1//@/-}.txt"
        fi
      fi
      ;;
    bridge) tb_exec sw ip link del br0 ;;
    ovs | ovs-afxdp)
      local f
      for f in vswitchd ovsdb; do
        [ -f "$BENCH_OVS_DIR/$f.pid" ] && kill "$(cat "$BENCH_OVS_DIR/$f.pid")" 2>/dev/null || true
      done
      sleep 0.5
      tb_exec sw ip link del br0 2>/dev/null || true
      tb_exec sw ip link del ovs-netdev 2>/dev/null || true
      # A fresh database for the next OVS variant; AF_XDP ports leave an XDP program behind, and
      # the links get theirs back.
      rm -rf "$BENCH_OVS_DIR"
      tb_exec sw ip link set p1 xdp off 2>/dev/null || true
      tb_exec sw ip link set p2 xdp off 2>/dev/null || true
      ;;
    xdp-redirect) ;;  # the links get their own programs back below
  esac
  # Back to the testbed's own links (after another order, OVS's AF_XDP programs or the redirect).
  if [[ $1 == *@* || $1 == ovs* || $1 == xdp-redirect ]]; then tb_set_link_order "$TB_LINK_ORDER"; fi
}

bench_interleave() {
  local reps=$1 fn=$2 rep name
  shift 2
  for rep in $(seq 1 "$reps"); do
    for name in "$@"; do
      tb_log "== repetition $rep: $name"
      bench_start_switch "$name"
      "$fn" "$name" "$rep"
      bench_stop_switch "$name"
    done
  done
}
