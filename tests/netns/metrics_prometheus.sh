#!/usr/bin/env bash
# Debian's real Prometheus server scrapes sharebufd's [metrics] listener (1 s interval) while UDP
# at twice the port rate congests one port under DT; once the traffic stops, PromQL's answers
# equal the switch's own counters (sharebufctl): drops by reason, frames received and sent, bytes,
# the delay histogram's count and p99, the policy in force, and the target up.
source "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || fail "missing 'prometheus': ./run.sh deps installs it"
tb_init
tb_create 2
ip netns exec "$(tb_ns_sw)" ip link set lo up
# The switch's namespace is the run's own, so fixed ports cannot collide with another run.
tb_write_config "$TB_DIR/sw.toml" dt 100Mbit "4000 cells" 1 '
[[classes]]
name = "all"
alpha = 1.0
[metrics]
listen = "127.0.0.1:9464"'
tb_start_switch "$TB_DIR/sw.toml"
grep -q 'metrics on http://127.0.0.1:9464/metrics' "$TB_DIR/sharebufd.log" ||
  fail "sharebufd did not say where its metrics are"
printf '%s\n' 'global:' '  scrape_interval: 1s' '  scrape_timeout: 1s' 'scrape_configs:' \
  '  - job_name: sharebuf' '    static_configs:' "      - targets: ['127.0.0.1:9464']" \
  >"$TB_DIR/prometheus.yml"
tb_bg sw prometheus --config.file="$TB_DIR/prometheus.yml" --storage.tsdb.path="$TB_DIR/prom" \
  --web.listen-address=127.0.0.1:9090 --log.level=warn 2>"$TB_DIR/prometheus.log"
tb_bg 2 iperf3 -s -1 -p 5201
sleep 0.5
tb_exec 1 timeout 30 iperf3 -c "$(tb_ip 2)" -p 5201 -u -b 200M -l 1400 -t 3 >/dev/null ||
  fail "iperf3 failed"
ip netns exec "$(tb_ns_sw)" /usr/bin/python3 "$HERE/prom_compare.py" \
  --prometheus http://127.0.0.1:9090 --sharebufctl "${SHAREBUFCTL:-$TB_ROOT/build/mgmt/sharebufctl}" \
  --socket "$TB_DIR/ctl.sock" --port p2 --timeout 30 ||
  { tail -5 "$TB_DIR/prometheus.log" >&2; fail "Prometheus' answers differ from the switch's counters"; }
tb_stop_switch || fail "sharebufd exited with $?"
