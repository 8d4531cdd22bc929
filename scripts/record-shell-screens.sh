#!/usr/bin/env bash
# Records screens of a plain shell (the `shell` provider) in a private tmux server, in the layout
# of fixtures/screens/README.md: fixtures/screens/shell/<bash version>/<status>--<scenario>.{txt,ansi,json}.
#
#   idle--fresh-start         a new bash, its prompt
#   processing--sleep         `sleep 30` running (no prompt below it)
#
# Each .json also has "command": the pane's #{pane_current_command}, which the shell's rules read.
#
# A shell's `completed` (a command ran, the prompt is back) looks like `idle` on one screen: the
# daemon's tracker tells them apart by the turn it saw (tests/integration/transcripts.rs).
#
# Usage: scripts/record-shell-screens.sh [OUT_DIR]   (default: fixtures/screens/shell)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out_root=${1:-fixtures/screens/shell}
version=$(bash -c 'echo "${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}.${BASH_VERSINFO[2]}"')
out=$out_root/$version
mkdir -p "$out"
socket=panectl-record-shell-$$
tmpdir=$(mktemp -d)
cleanup() {
    tmux -L "$socket" kill-server 2>/dev/null || true
    rm -rf "$tmpdir"
}
trap cleanup EXIT
unset TMUX
# No rc files: the screens do not depend on the machine's bash set-up (bash's own prompt).
env -i HOME="$tmpdir" TERM=screen PATH="$PATH" \
    tmux -L "$socket" -f /dev/null new-session -d -x 120 -y 40 "bash --norc --noprofile -i"
tmux -L "$socket" set-option -g status off

# capture STATUS SCENARIO DESCRIPTION
capture() {
    local status=$1 scenario=$2 description=$3 base
    base=$out/$status--$scenario
    sleep 0.5
    tmux -L "$socket" capture-pane -p -t %0 >"$base.txt"
    tmux -L "$socket" capture-pane -p -e -t %0 >"$base.ansi"
    local title command cursor_x cursor_y alternate
    title=$(tmux -L "$socket" display-message -p -t %0 '#{pane_title}')
    command=$(tmux -L "$socket" display-message -p -t %0 '#{pane_current_command}')
    cursor_x=$(tmux -L "$socket" display-message -p -t %0 '#{cursor_x}')
    cursor_y=$(tmux -L "$socket" display-message -p -t %0 '#{cursor_y}')
    alternate=$(tmux -L "$socket" display-message -p -t %0 '#{alternate_on}')
    python3 - "$base.json" "$version" "$status" "$scenario" "$title" "$cursor_x" "$cursor_y" \
        "$alternate" "$description" "$command" <<'PY'
import json, sys
path, version, status, scenario, title, x, y, alternate, description, command = sys.argv[1:]
json.dump({
    "provider": "shell", "cli_version": version, "status": status, "scenario": scenario,
    "title": title, "command": command, "width": 120, "height": 40,
    "alternate_screen": alternate == "1",
    "cursor": [int(x), int(y)], "description": description,
}, open(path, "w"), indent=2, ensure_ascii=False)
open(path, "a").write("\n")
PY
}

sleep 0.5
capture idle fresh-start "A new bash (--norc) at its prompt; nothing run yet."
tmux -L "$socket" send-keys -t %0 'sleep 30' Enter
capture processing sleep "sleep 30 runs: the command row and no prompt below it."
tmux -L "$socket" send-keys -t %0 C-c
echo "recorded into $out" >&2
