#!/usr/bin/env bash
# Per-CPU RX ([switch] rx_mode = "per-cpu", rx_worker.h): one RX worker per CPU, each reading
# every port's lane for its CPU. A ping pinned to CPU c is received by the kernel on CPU c (veth
# delivers on the sending CPU), so worker c — and only worker c — takes its frames, both the
# request and the reply; a TCP stream goes through, and the books balance.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2
tb_write_config "$TB_DIR/sw.toml" dt 0 "21000 cells"
sed -i 's/^\[switch\]/[switch]\nrx_mode = "per-cpu"/' "$TB_DIR/sw.toml"
tb_start_switch "$TB_DIR/sw.toml"
cpus=$(getconf _NPROCESSORS_CONF)

worker_frames() {  # prints each RX worker's frame count, one line
  tb_ctl --json status >"$TB_DIR/status.json"
  /usr/bin/python3 - "$TB_DIR/status.json" "$cpus" <<'PY' || fail "status does not describe per-CPU RX"
import json, sys
st = json.load(open(sys.argv[1]))
w = st["rx_workers"]
ok = st["rx_mode"] == "per-cpu" and len(w) == int(sys.argv[2]) and all(x["ports"] == ["p1", "p2"] for x in w)
print(" ".join(str(x["frames"]) for x in w))
sys.exit(0 if ok else 1)
PY
}

worker_frames >/dev/null
for c in $(seq 0 $((cpus - 1))); do
  read -r -a before <<<"$(worker_frames)"
  tb_exec 1 taskset -c "$c" ping -c 20 -i 0.01 -W 1 -q "$(tb_ip 2)" | tail -1 ||
    fail "h1 cannot ping h2 from CPU $c"
  read -r -a after <<<"$(worker_frames)"
  for w in $(seq 0 $((cpus - 1))); do
    d=$((after[w] - before[w]))
    echo "ping on CPU $c: worker $w took $d frames"
    if [ "$w" -eq "$c" ]; then
      [ "$d" -ge 40 ] || fail "worker $c took $d frames of the 40 a ping on CPU $c sends and gets back"
    else
      # Background frames the hosts' kernels send from timers on any CPU (ARP, IPv6 neighbour
      # discovery) may reach another worker; a ping's 40 frames must not.
      [ "$d" -le 8 ] || fail "worker $w took $d frames during a ping on CPU $c (only its own CPU's frames)"
    fi
  done
done

tb_bg 2 iperf3 -s -1 -p 5201
sleep 0.3
tb_exec 1 timeout 20 iperf3 -c "$(tb_ip 2)" -p 5201 -t 2 -J >"$TB_DIR/tcp.json" || fail "iperf3 failed"
wait "${TB_PIDS[@]}" 2>/dev/null || true
TB_PIDS=()
/usr/bin/python3 -c "import json,sys; print('TCP %.0f Mbit/s' % (json.load(open(sys.argv[1]))['end']['sum_received']['bits_per_second'] / 1e6))" "$TB_DIR/tcp.json"

tb_stop_switch || fail "sharebufd exited with $?"
check_stats 'all(accounted(q) for p in s["ports"] for q in p["queues"])' \
  's["buffer"]["pool_free_cells"] == s["buffer"]["pool_physical_cells"]' \
  'port("p1")["rx_frames"] > 1000 and port("p2")["rx_frames"] > 1000' \
  'port("p1")["rx_out_of_order"] <= port("p1")["rx_frames"]'

echo "per-CPU RX: each CPU's frames go to its own worker"
