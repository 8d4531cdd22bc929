#!/usr/bin/env bash
# CPU that panectl daemons cost while every pane is idle: 200 panes over 40 sessions, the
# daemon's and the tmux server's CPU over a window, for each binary given, interleaved round by
# round so that both see the same machine.
#
#   scripts/idle-cost.sh [--seconds N] [--rounds R] NAME=PATH [NAME=PATH...]
#
# Prints a line per round and binary, then the median of each and its ratio to the first.
# Each round runs its own tmux server (private socket and directories, removed at the end);
# only processes this script started are ended.
set -euo pipefail

seconds=30
rounds=3
binaries=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *=*) binaries+=("$1"); shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ ${#binaries[@]} -gt 0 ] || { echo "give NAME=PATH of at least one panectl" >&2; exit 2; }

work=$(mktemp -d)
started=()
cleanup() {
    for pid in "${started[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

ticks=$(getconf CLK_TCK)
# CPU seconds (user + system) of a process, times 1000.
cpu_ms() { awk -v t="$ticks" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / t) }' "/proc/$1/stat"; }

measure() {
    local bin=$1 dir server daemon s
    dir=$(mktemp -d -p "$work")
    export TMUX_TMPDIR="$dir" XDG_RUNTIME_DIR="$dir/run" XDG_STATE_HOME="$dir/state"
    unset TMUX
    tmux -L idle -f /dev/null -D </dev/null >/dev/null 2>&1 &
    server=$!
    started+=("$server")
    for _ in $(seq 200); do [ -S "$dir/tmux-$(id -u)/idle" ] && break; sleep 0.01; done
    for s in $(seq 0 39); do
        tmux -L idle new-session -d -s "s$s" -x 160 -y 48 /bin/sh
        for _ in 1 2 3 4; do tmux -L idle split-window -t "s$s" /bin/sh; tmux -L idle select-layout -t "s$s" tiled; done
    done
    local begun attached
    begun=$(date +%s%N)
    "$bin" -L idle daemon >"$dir/daemon.log" 2>&1 &
    daemon=$!
    started+=("$daemon")
    for _ in $(seq 1200); do
        [ "$("$bin" -L idle ls --json 2>/dev/null | grep -c '"sync": "live"' || true)" -ge 200 ] && break
        sleep 0.02
    done
    attached=$(( ($(date +%s%N) - begun) / 1000000 ))
    sleep 3
    local d0 t0 d1 t1
    d0=$(cpu_ms "$daemon"); t0=$(cpu_ms "$server")
    sleep "$seconds"
    d1=$(cpu_ms "$daemon"); t1=$(cpu_ms "$server")
    kill -TERM "$daemon"; wait "$daemon" 2>/dev/null || true
    tmux -L idle kill-server 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    rm -rf "$dir"
    echo "$((d1 - d0)) $((t1 - t0)) $attached"
}

declare -A daemon_ms tmux_ms start_ms
for round in $(seq "$rounds"); do
    for entry in "${binaries[@]}"; do
        name=${entry%%=*}
        read -r d t a < <(measure "${entry#*=}")
        daemon_ms[$name]+="$d "
        tmux_ms[$name]+="$t "
        start_ms[$name]+="$a "
        echo "round $round $name: daemon $d ms, tmux server $t ms of CPU in $seconds s; 200 panes live $a ms after start"
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
first=""
echo
echo "| binary | daemon CPU, median | tmux server CPU, median | daemon ratio | tmux ratio | start to 200 live panes, median |"
echo "|---|---|---|---|---|---|"
for entry in "${binaries[@]}"; do
    name=${entry%%=*}
    d=$(echo "${daemon_ms[$name]}" | median)
    t=$(echo "${tmux_ms[$name]}" | median)
    a=$(echo "${start_ms[$name]}" | median)
    if [ -z "$first" ]; then first="$d $t"; fi
    read -r fd ft <<<"$first"
    awk -v n="$name" -v d="$d" -v t="$t" -v fd="$fd" -v ft="$ft" -v s="$seconds" -v a="$a" 'BEGIN {
        printf "| %s | %d ms (%.2f%%) | %d ms (%.2f%%) | %.2fx | %.2fx | %d ms |\n",
            n, d, d / s / 10, t, t / s / 10, (fd > 0 ? d / fd : 0), (ft > 0 ? t / ft : 0), a }'
done
