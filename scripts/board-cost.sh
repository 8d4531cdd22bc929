#!/usr/bin/env bash
# What an open live board costs: CPU of the board and of the daemon over a window while
# nothing happens, and while the selected agent's pane is flooded with output; the same window
# without a board is the baseline. The board runs in a pane of the server it watches (the case
# where its own drawing comes back to it as output events).
#
#   scripts/board-cost.sh [--seconds N] PANECTL
#
# Runs its own tmux server (private socket and directories, removed at the end); only
# processes this script started are ended.
set -euo pipefail

seconds=10
while [ $# -gt 1 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--seconds N] PANECTL" >&2; exit 2; }
panectl=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)

work=$(mktemp -d)
export TMUX_TMPDIR="$work" XDG_RUNTIME_DIR="$work/run" XDG_STATE_HOME="$work/state" \
    XDG_CONFIG_HOME="$work/config"
unset TMUX
mkdir -p "$work/run" "$work/rules"
cp "$root/scripts/programs/fake_agent.toml" "$work/rules/"
socket="board-cost"
cleanup() {
    "$panectl" -L "$socket" daemon stop >/dev/null 2>&1 || true
    tmux -L "$socket" kill-server 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

ticks=$(getconf CLK_TCK)
# CPU seconds (user + system) of a process, times 1000.
cpu_ms() { awk -v t="$ticks" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / t) }' "/proc/$1/stat"; }

tmux -L "$socket" -f /dev/null new-session -d -s main -x 100 -y 30 \
    "python3 $root/scripts/programs/fake_agent.py $work/received 0.5"
"$panectl" -L "$socket" daemon --detach --rules-dir "$work/rules" >/dev/null
sleep 2
daemon=$("$panectl" -L "$socket" daemon status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
tty=$(tmux -L "$socket" display -p -t %0 '#{pane_tty}')

# CPU ms of the daemon (and of the board, if a pid is given) over the window, while $1 runs.
window() {
    local what=$1 board=${2:-} d0 b0=0 b1=0
    d0=$(cpu_ms "$daemon")
    [ -z "$board" ] || b0=$(cpu_ms "$board")
    case "$what" in
        idle) sleep "$seconds" ;;
        flood) timeout "$seconds" sh -c "while :; do seq 1 2000 > $tty; done" || true ;;
    esac
    [ -z "$board" ] || b1=$(cpu_ms "$board")
    echo "$(( $(cpu_ms "$daemon") - d0 )) $(( b1 - b0 ))"
}

read -r idle_daemon _ < <(window idle)
read -r flood_daemon _ < <(window flood)
tmux -L "$socket" new-session -d -s board -x 80 -y 24 "exec $panectl -L $socket board"
sleep 2
board=$(tmux -L "$socket" display -p -t board: '#{pane_pid}')
read -r idle_daemon_b idle_board < <(window idle "$board")
read -r flood_daemon_b flood_board < <(window flood "$board")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else printf "%.2fx", a / b }'; }
printf '%-28s %12s %12s %8s %10s\n' "CPU ms over ${seconds}s" "no board" "board open" "ratio" "board"
printf '%-28s %12s %12s %8s %10s\n' "daemon, idle" "$idle_daemon" "$idle_daemon_b" \
    "$(ratio "$idle_daemon_b" "$idle_daemon")" "$idle_board"
printf '%-28s %12s %12s %8s %10s\n' "daemon, selected pane flood" "$flood_daemon" "$flood_daemon_b" \
    "$(ratio "$flood_daemon_b" "$flood_daemon")" "$flood_board"
