#!/usr/bin/env bash
# The daemon's resident memory (VmRSS) with many idle connections on its TCP listener (each a
# half-sent request, as a client that holds connections sends), and after they close, for each
# binary given, interleaved round by round so that all see the same machine.
#
#   scripts/api-connection-memory.sh [--connections N] [--rounds R] NAME=PATH [NAME=PATH...]
#
# Prints a line per round and binary, then the median of each and its ratio to the first.
# Each round runs its own tmux server (private socket and directories, removed at the end);
# only processes this script started are ended. Needs python3 (the client holding the
# connections).
set -euo pipefail

connections=3000
rounds=3
binaries=()
while [ $# -gt 0 ]; do
    case "$1" in
        --connections) connections=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *=*) binaries+=("$1"); shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ ${#binaries[@]} -gt 0 ] || { echo "give NAME=PATH of at least one panectl" >&2; exit 2; }
ulimit -n $((connections * 2 + 1024))

work=$(mktemp -d)
started=()
cleanup() {
    for pid in "${started[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# Opens N connections to $1:$2, each with half a request; writes "open" to $3 once all are, then
# holds them until $4 exists, closes them and writes "closed".
cat >"$work/hold.py" <<'EOF'
import os, socket, sys, time
host, port, n, flag, done = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
held = []
for _ in range(n):
    s = socket.create_connection((host, port))
    try:
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: panectl\r\nX-Slow: ")
    except OSError:
        pass
    held.append(s)
open(flag, "w").write("open")
while not os.path.exists(done):
    time.sleep(0.05)
for s in held:
    s.close()
EOF

measure() {
    local bin=$1 dir server daemon port
    dir=$(mktemp -d -p "$work")
    export TMUX_TMPDIR="$dir" XDG_RUNTIME_DIR="$dir/run" XDG_STATE_HOME="$dir/state"
    unset TMUX
    tmux -L mem -f /dev/null -D </dev/null >/dev/null 2>&1 &
    server=$!
    started+=("$server")
    for _ in $(seq 200); do [ -S "$dir/tmux-$(id -u)/mem" ] && break; sleep 0.01; done
    tmux -L mem new-session -d -s main -x 120 -y 40 /bin/sh
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$bin" -L mem daemon --listen "127.0.0.1:$port" >"$dir/daemon.log" 2>&1 &
    daemon=$!
    started+=("$daemon")
    for _ in $(seq 500); do "$bin" -L mem health --json >/dev/null 2>&1 && break; sleep 0.02; done
    sleep 2
    local before open after
    before=$(rss_kb "$daemon")
    python3 "$work/hold.py" 127.0.0.1 "$port" "$connections" "$dir/open" "$dir/done" &
    local holder=$!
    started+=("$holder")
    for _ in $(seq 1500); do [ -e "$dir/open" ] && break; sleep 0.02; done
    sleep 2
    open=$(rss_kb "$daemon")
    touch "$dir/done"
    wait "$holder" 2>/dev/null || true
    sleep 3
    after=$(rss_kb "$daemon")
    kill -TERM "$daemon"; wait "$daemon" 2>/dev/null || true
    tmux -L mem kill-server 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    rm -rf "$dir"
    echo "$before $open $after"
}

declare -A before_kb open_kb after_kb
for round in $(seq "$rounds"); do
    for entry in "${binaries[@]}"; do
        name=${entry%%=*}
        read -r b o a < <(measure "${entry#*=}")
        before_kb[$name]+="$b "
        open_kb[$name]+="$o "
        after_kb[$name]+="$a "
        echo "round $round $name: RSS $b kB idle, $o kB with $connections connections, $a kB after they closed"
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
first=""
echo
echo "| binary | RSS idle | with $connections connections | after they closed | open ratio | after ratio |"
echo "|---|---|---|---|---|---|"
for entry in "${binaries[@]}"; do
    name=${entry%%=*}
    b=$(echo "${before_kb[$name]}" | median)
    o=$(echo "${open_kb[$name]}" | median)
    a=$(echo "${after_kb[$name]}" | median)
    if [ -z "$first" ]; then first="$o $a"; fi
    read -r fo fa <<<"$first"
    awk -v n="$name" -v b="$b" -v o="$o" -v a="$a" -v fo="$fo" -v fa="$fa" 'BEGIN {
        printf "| %s | %.1f MB | %.1f MB | %.1f MB | %.2fx | %.2fx |\n",
            n, b / 1024, o / 1024, a / 1024, (fo > 0 ? o / fo : 0), (fa > 0 ? a / fa : 0) }'
done
