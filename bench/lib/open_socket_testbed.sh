# shellcheck shell=bash
# The testbed of the control-socket attack benchmarks (docs/security.md): two hosts through
# sharebufd with 1 Gbit/s ports, a control socket every user may open (mode 0666) and
# admin_group set, so that `nobody` is a read-only peer. Needs scripts/testbed.sh.

# open_socket_testbed [LINES]: builds and starts it; LINES go into [control] too.
open_socket_testbed() {
  tb_init
  tb_create 2
  chmod 711 "$TB_DIR"  # nobody may reach the socket inside it
  export TB_CONTROL_EXTRA="socket_mode = \"0666\"
admin_group = \"staff\"
${1:-}"
  tb_write_config "$TB_DIR/sw.toml" dt 1Gbit "21000 cells"
  tb_start_switch "$TB_DIR/sw.toml"
}

# hostile_peer ARGS...: tests/netns/hostile_peer.py as nobody against the testbed's socket. Start
# it with &: it execs, so that $! is the peer itself.
hostile_peer() {
  exec /usr/bin/python3 "$TB_ROOT/tests/netns/hostile_peer.py" "$@" --socket "$TB_DIR/ctl.sock" \
    --user nobody
}
