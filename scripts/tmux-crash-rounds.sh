#!/usr/bin/env bash
# Runs the reproductions of the tmux crashes that control clients provoke (docs/tmux-crashes.md)
# for many rounds and counts the rounds in which the tmux server crashed.
#
#   scripts/tmux-crash-rounds.sh [--rounds N] [--tmux PATH] [--panectl PATH] [--large-env] MODE...
#
# MODE:
#   sessions-none      4 sessions created one after another, each split three times and tiled,
#                      no control client (the floor);
#   sessions-plain     the same, with a plain `tmux -C attach-session -t sN` started for each
#                      new session (what a naive control-mode client does: the baseline);
#   sessions-panectl   the same, with the panectl daemon attaching to each new session;
#   shutdown-panectl   the daemon stops (SIGTERM) while `kill-server` runs.
# --large-env gives the control clients (plain ones and the daemon) a 400 KB environment, which
# makes the session race far more likely. Every server runs in the foreground (`tmux -D`) as a
# child of this script, so a crash is seen as the signal that ended it. Each round uses its own
# socket and runtime directories, all removed at the end; only processes this script started
# are ended.
set -euo pipefail

rounds=100
tmux_bin=$(command -v tmux)
panectl_bin=""
large_env=""
modes=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --tmux) tmux_bin=$2; shift 2 ;;
        --panectl) panectl_bin=$2; shift 2 ;;
        --large-env) large_env=1; shift ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) modes+=("$1"); shift ;;
    esac
done
[ ${#modes[@]} -gt 0 ] || { echo "give at least one MODE (see --help)" >&2; exit 2; }
if [ -z "$panectl_bin" ]; then
    panectl_bin="$(cd "$(dirname "$0")/.." && pwd)/target/release/panectl"
fi
for mode in "${modes[@]}"; do
    case "$mode" in
        sessions-none|sessions-plain) ;;
        sessions-panectl|shutdown-panectl)
            [ -x "$panectl_bin" ] || { echo "no panectl at $panectl_bin (cargo build --release)" >&2; exit 2; } ;;
        *) echo "unknown mode $mode" >&2; exit 2 ;;
    esac
done

work=$(mktemp -d)
started=()
cleanup() {
    for pid in "${started[@]}"; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# A 400 KB environment: 48 variables of 8000 bytes.
: >"$work/pad.env"
if [ -n "$large_env" ]; then
    pad=$(head -c 8000 /dev/zero | tr '\0' x)
    for i in $(seq 0 47); do printf 'export PANECTL_PAD_%s=%s\n' "$i" "$pad" >>"$work/pad.env"; done
fi

alive() { [ -r "/proc/$1/stat" ] && ! grep -q ') Z' "/proc/$1/stat"; }

# Starts a server in the foreground on a socket of its own; sets $dir and $server.
start_server() {
    dir=$(mktemp -d -p "$work")
    mkdir -p "$dir/bin"
    ln -s "$tmux_bin" "$dir/bin/tmux"
    mkfifo "$dir/hold"
    export PATH="$dir/bin:$base_path"
    export TMUX_TMPDIR="$dir" XDG_RUNTIME_DIR="$dir/run" XDG_STATE_HOME="$dir/state"
    unset TMUX
    tmux -L r -f /dev/null -D </dev/null >/dev/null 2>&1 &
    server=$!
    started+=("$server")
    for _ in $(seq 200); do [ -S "$dir/tmux-$(id -u)/r" ] && break; sleep 0.01; done
    tmux -L r new-session -d -s base -x 160 -y 48
}

# Starts a process of the round in the background, with the large environment if asked.
round_start() {
    # shellcheck disable=SC1091 # made above
    ( . "$work/pad.env"; exec "$@" ) <>"$dir/hold" >>"$dir/round.log" 2>&1 &
    round_pids+=($!)
    started+=($!)
}

# Ends the round's processes, then the server; sets $result to crash if the server died of a
# signal (before or during kill-server), else ok.
finish_round() {
    local pid status=0
    for pid in "${round_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${round_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    tmux -L r kill-server 2>/dev/null || true
    wait "$server" 2>/dev/null || status=$?
    if [ "$status" -gt 128 ]; then result=crash; else result=ok; fi
    rm -rf "$dir"
}

start_daemon() {
    round_start "$panectl_bin" -L r daemon
    for _ in $(seq 250); do "$panectl_bin" -L r health >/dev/null 2>&1 && break; sleep 0.02; done
}

sessions_round() {
    local mode=$1 i
    round_pids=()
    start_server
    [ "$mode" = sessions-panectl ] && start_daemon
    for i in 1 2 3 4; do
        tmux -L r new-session -d -s "s$i" -x 160 -y 48 2>/dev/null || true
        [ "$mode" = sessions-plain ] && round_start tmux -L r -C attach-session -t "s$i"
        for _ in 1 2 3; do tmux -L r split-window -t "s$i" 2>/dev/null || true; done
        tmux -L r select-layout -t "s$i" tiled 2>/dev/null || true
    done
    sleep 0.5
    finish_round
}

shutdown_round() {
    local name
    round_pids=()
    start_server
    for name in a b c; do
        tmux -L r new-session -d -s "$name"
        tmux -L r split-window -t "$name"
    done
    start_daemon
    sleep 1.2
    kill -TERM "${round_pids[0]}"
    tmux -L r kill-server 2>/dev/null || true
    finish_round
}

base_path=$PATH
echo "tmux: $("$tmux_bin" -V) ($tmux_bin); rounds: $rounds; large environment: ${large_env:-no}"
for mode in "${modes[@]}"; do
    crashes=0
    for _ in $(seq "$rounds"); do
        case "$mode" in
            shutdown-panectl) shutdown_round ;;
            *) sessions_round "$mode" ;;
        esac
        [ "$result" = crash ] && crashes=$((crashes + 1))
    done
    echo "$mode: $crashes crashes in $rounds rounds"
done
