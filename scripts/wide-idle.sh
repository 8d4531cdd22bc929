#!/usr/bin/env bash
# Idle cost of a daemon on 100 sessions x 10 panes (issue 39, item 3): the tmux server's and
# the daemon's CPU over a window once every pane is seeded, and the tmux commands the daemon
# sent meanwhile (health's `commands`). Each binary gets a server of its own, one after
# another in the same run, so that binaries compare against each other.
#
# Usage: scripts/wide-idle.sh [--seconds N] NAME=PANECTL...
#   --seconds: the idle window (default 20)
#
# Runs its own tmux servers (own sockets, no config), kills what it started, and prints a
# Markdown table. Needs tmux and python3.
set -euo pipefail

seconds=20
if [ "${1:-}" = "--seconds" ]; then
    seconds=${2:?--seconds needs a number}
    shift 2
fi
[ $# -gt 0 ] || {
    echo "usage: $0 [--seconds N] NAME=PANECTL..." >&2
    exit 2
}

ticks_per_second=$(getconf CLK_TCK)
# CPU time of a process, in clock ticks (user + system).
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }

work=""
daemon_pid=""
socket=""
cleanup() {
    if [ -n "$daemon_pid" ]; then
        kill "$daemon_pid" 2>/dev/null || true
        wait "$daemon_pid" 2>/dev/null || true
    fi
    if [ -n "$socket" ]; then
        tmux -L "$socket" -f /dev/null kill-server 2>/dev/null || true
    fi
    if [ -n "$work" ]; then
        rm -rf "$work"
    fi
    daemon_pid=""
    socket=""
    work=""
}
trap cleanup EXIT

echo "| daemon | tmux server CPU, idle | daemon CPU, idle | tmux commands sent, idle | start to 1000 panes live |"
echo "|---|---|---|---|---|"
for named in "$@"; do
    name=${named%%=*}
    panectl=$(realpath "${named#*=}")
    work=$(mktemp -d)
    export TMUX_TMPDIR="$work" XDG_RUNTIME_DIR="$work/run" XDG_STATE_HOME="$work/state" \
        XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config"
    mkdir -p "$XDG_RUNTIME_DIR"
    chmod 700 "$XDG_RUNTIME_DIR"
    unset TMUX
    socket="wide-idle-$$"
    tm() { tmux -L "$socket" -f /dev/null "$@"; }
    tm new-session -d -s w0 -x 200 -y 60
    for s in $(seq 0 99); do
        [ "$s" -gt 0 ] && tm new-session -d -s "w$s" -x 200 -y 60
        for _ in $(seq 1 9); do
            tm split-window -t "w$s" sh
            tm select-layout -t "w$s" tiled >/dev/null
        done
    done
    tmux_pid=$(tm display-message -p '#{pid}')
    started=$(date +%s.%N)
    "$panectl" -L "$socket" daemon --log-file "$work/daemon.log" --notify-desktop=false \
        </dev/null >/dev/null 2>&1 &
    daemon_pid=$!
    live=0
    for _ in $(seq 1 600); do
        live=$("$panectl" -L "$socket" ls --json 2>/dev/null | python3 -c \
            'import json,sys; print(sum(p["sync"] == "live" for p in json.load(sys.stdin)))' \
            2>/dev/null || echo 0)
        [ "$live" = 1000 ] && break
        sleep 0.2
    done
    live_after=$(python3 -c "import time; print(f'{time.time() - $started:.1f} s')")
    [ "$live" = 1000 ] || live_after="$live of 1000 after 120 s"
    sleep 5
    commands() { "$panectl" -L "$socket" health --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["commands"])'; }
    tmux_before=$(cpu "$tmux_pid")
    daemon_before=$(cpu "$daemon_pid")
    commands_before=$(commands)
    sleep "$seconds"
    tmux_used=$(($(cpu "$tmux_pid") - tmux_before))
    daemon_used=$(($(cpu "$daemon_pid") - daemon_before))
    sent=$(($(commands) - commands_before))
    share() { python3 -c "print(f'{$1 / $ticks_per_second:.2f} s ({100 * $1 / $ticks_per_second / $seconds:.1f}%)')"; }
    echo "| $name | $(share "$tmux_used") | $(share "$daemon_used") | $sent in $seconds s | $live_after |"
    cleanup
done
