#!/usr/bin/env bash
# Real full-screen programs under a daemon, with layouts changing under them, and at the end
# every pane's mirror compared with tmux's own screen (capture-pane -e, byte for byte), plus
# the daemon's watchdog divergences and its resyncs by reason.
#
# Usage: scripts/real-programs.sh PANECTL [ROUNDS [KEEP]]
#   PANECTL: the panectl binary (a release build: target/release/panectl)
#   ROUNDS:  layout operations (default 200)
#   KEEP:    a directory to copy the daemon's divergence records into (each is replayed
#            with `panectl replay --divergence` in the summary either way)
#
# Runs on its own tmux server (its own socket, no config), kills what it started, and prints a
# Markdown summary. Needs tmux, python3, vim, less, man, top and watch.
set -euo pipefail

panectl=$(realpath "$1")
rounds=${2:-200}
keep=${3:-}
work=$(mktemp -d)
export TMUX_TMPDIR="$work"
export XDG_RUNTIME_DIR="$work/run"
mkdir -p "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
unset TMUX
socket="real-programs-$$"
tm() { tmux -L "$socket" -f /dev/null "$@"; }
daemon_pid=""
cleanup() {
    if [ -n "$daemon_pid" ]; then
        kill "$daemon_pid" 2>/dev/null || true
        wait "$daemon_pid" 2>/dev/null || true
    fi
    tm kill-server 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# Text with wide, combining and emoji characters, 10,000 lines.
python3 - "$work/unicode.txt" <<'EOF'
import sys
words = ["plain", "日本語のテキスト", "café", "e\u0301te\u0301", "👍", "ℹ\ufe0f", "👨\u200d👩\u200d👧",
         "한국어", "Ελληνικά", "\t", "→", "✔", "漢字", "🇫🇷", "a\u0308"]
with open(sys.argv[1], "w") as f:
    for i in range(10000):
        f.write(f"{i:5} " + " ".join(words[(i * 7 + k) % len(words)] for k in range(i % 23)) + "\n")
EOF
seq 1 200000 > "$work/numbers.txt"

tm new-session -d -s editors -x 200 -y 50 "sh"
tm set-option -g default-shell /bin/sh
tm set-option -g history-limit 2000
"$panectl" -L "$socket" daemon --log-file "$work/daemon.log" &
daemon_pid=$!
for _ in $(seq 1 100); do
    "$panectl" -L "$socket" health --json >/dev/null 2>&1 && break
    sleep 0.1
done

# 5 sessions x 4 panes.
tm send-keys -t editors "vim -u NONE -c 'set encoding=utf-8' -O $work/unicode.txt $work/numbers.txt" Enter
tm split-window -t editors -h "less $work/unicode.txt"
tm split-window -t editors -v "man ls"
tm split-window -t editors -v "watch -n 0.2 'date; ls -la /usr/bin | head -20'"
tm new-session -d -s monitors -x 160 -y 45 "top -d 0.3"
tm split-window -t monitors -h "sh -c 'while :; do cat $work/unicode.txt; sleep 0.5; done'"
tm split-window -t monitors -v "sh -c 'yes \"\$(printf \"\\033[3%dmcolour\\033[m \" 1 2 3 4 5 6)\" | head -c 50000000; exec sleep 100000'"
tm split-window -t monitors -v "vim -u NONE $work/numbers.txt"
for name in one two three; do
    tm new-session -d -s "$name" -x 120 -y 35 "less $work/numbers.txt"
    tm split-window -t "$name" -h "sh -c 'for i in \$(seq 1 3000); do printf \"%s \\033[1m%s\\033[m é 日本\\n\" \$i \$(date +%N); done; exec sleep 100000'"
    tm split-window -t "$name" -v "vim -u NONE $work/unicode.txt"
    tm split-window -t "$name" -v "man tmux"
done
sleep 3

layouts=(even-horizontal even-vertical main-horizontal main-vertical tiled)
sessions=(editors monitors one two three)
started=$(date +%s.%N)
for round in $(seq 1 "$rounds"); do
    s=${sessions[$((round % 5))]}
    case $((round % 6)) in
    0) tm select-layout -t "$s" "${layouts[$((round % 5))]}" ;;
    1) tm resize-pane -t "$s.$((round % 4))" -x $((20 + round % 50)) 2>/dev/null || true ;;
    2) tm resize-window -t "$s" -x $((80 + round % 90)) -y $((20 + round % 30)) ;;
    3) tm resize-pane -Z -t "$s.$((round % 4))" ;;
    4) tm send-keys -t "$s.$((round % 4))" $'\x06' j j j G gg 2>/dev/null || true ;;
    5) tm send-keys -t "editors.0" "ixé日本👍 ℹ️ $round" Escape ;;
    esac
    sleep 0.05
done
elapsed=$(python3 -c "import time; print(f'{time.time() - $started:.1f}')")
# Unzoom everything, let the programs settle.
for s in "${sessions[@]}"; do
    tm select-layout -t "$s" tiled
done
sleep 4

panes=$(tm list-panes -a -F '#{pane_id}')
same=0
differ=0
details=""
for pane in $panes; do
    for _ in 1 2 3 4 5; do
        ours=$("$panectl" -L "$socket" screen --ansi "$pane" | python3 -c 'import sys; d=sys.stdin.buffer.read(); d=d.rstrip(b"\n"); d=d[:-3] if d.endswith(b"\x1b[m") else d; sys.stdout.buffer.write(d.rstrip(b"\n"))' | sha1sum)
        theirs=$(tm capture-pane -p -e -t "$pane" | python3 -c 'import sys; sys.stdout.buffer.write(sys.stdin.buffer.read().rstrip(b"\n"))' | sha1sum)
        [ "$ours" = "$theirs" ] && break
        sleep 1
    done
    if [ "$ours" = "$theirs" ]; then
        same=$((same + 1))
    else
        differ=$((differ + 1))
        details="$details $pane($(tm display -p -t "$pane" '#{pane_current_command}'))"
    fi
done
health=$("$panectl" -L "$socket" health --json)
divergences=$(echo "$health" | python3 -c 'import json,sys; print(json.load(sys.stdin)["divergences"])')
resyncs=$(echo "$health" | python3 -c 'import json,sys; print(json.load(sys.stdin)["resyncs"])')
early=$(echo "$health" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("early_answers", 0))')
reflows=$(grep -c "reflow differs" "$work/daemon.log" || true)

echo "| layout operations | time | panes | same as tmux | differ | divergences | early answers | resyncs | reseeds after a resize |"
echo "|---|---|---|---|---|---|---|---|---|"
echo "| $rounds | ${elapsed} s | $((same + differ)) | $same | $differ | $divergences | $early | $resyncs | $reflows |"
[ -n "$details" ] && echo "differ:$details"
grep "reflow differs\|differed from tmux" "$work/daemon.log" | head -20 | cut -c1-400 || true
for record in "$XDG_RUNTIME_DIR"/panectl/*.divergences/*.json; do
    [ -e "$record" ] || continue
    echo "record $(basename "$record"):"
    "$panectl" replay --divergence "$record" | cut -c1-400 || true
    if [ -n "$keep" ]; then
        mkdir -p "$keep"
        cp "$record" "$keep/"
    fi
done
if [ -n "$keep" ]; then
    mkdir -p "$keep"
    cp "$work/daemon.log" "$keep/"
fi
