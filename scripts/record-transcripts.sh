#!/usr/bin/env bash
# tmux targets such as '$0' (session 0) are literal here, not shell expansions.
# shellcheck disable=SC2016
# Records the control-mode transcripts in fixtures/transcripts/ from a real tmux.
#
# Each fixture directory holds:
#   control.bin      the raw stdout of a `tmux -C attach` client, from attach to exit
#   captures/N.txt   `capture-pane -p` of pane %N, taken when the scenario ends
#   panes.tsv        pane id, size and alternate-screen flag of every pane at that moment
#   size             the session's initial size (what `panectl replay --size` needs when the
#                    transcript has no %layout-change for a pane)
#   tmux-version     the tmux that produced it
#
# Usage: scripts/record-transcripts.sh [OUTPUT_DIR] [FIXTURE...]
# Runs its own tmux server on a private socket directory; never touches the user's server.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$(realpath -m "${1:-$here/../fixtures/transcripts}")
shift || true
bursts=$here/programs/redraw-bursts.py

work=$(mktemp -d)
export TMUX_TMPDIR=$work
unset TMUX
export LC_ALL=C.UTF-8 LANG=C.UTF-8
socket=rec
# The shell every pane runs: no rc files, a fixed prompt (tmux does not pass PS1 through).
shell="PS1='\$ ' exec bash --norc --noprofile"

t() { tmux -L "$socket" -f /dev/null "$@"; }

cleanup() {
    exec 3>&- 2>/dev/null || true
    t kill-server 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# begin NAME WIDTH HEIGHT [READER]: a session whose first pane waits until the control client
# is attached, so the transcript holds every byte the pane ever printed. READER is the command
# the control client's stdout is piped into (default: straight to the file).
begin() {
    name=$1 width=$2 height=$3
    reader=${4:-cat}
    dir=$out/$name
    rm -rf "$dir"
    mkdir -p "$dir/captures"
    t new-session -d -x "$width" -y "$height" \
        "tmux wait-for go; $shell"
    rm -f "$work/in"
    mkfifo "$work/in"
    (t -C attach -t '$0' <"$work/in" | $reader >"$dir/control.bin") &
    client=$!
    exec 3>"$work/in"
    echo "${width}x${height}" >"$dir/size"
    tmux -V >"$dir/tmux-version"
    sleep 0.3
}

go() { t wait-for -S go; sleep 0.3; }

# run_in PANE TEXT [WAIT]: types a command line into a pane and presses Enter.
run_in() {
    t send-keys -t "$1" -l "$2"
    t send-keys -t "$1" Enter
    sleep "${3:-0.3}"
}

capture() {
    sleep 0.5
    t list-panes -s -t '$0' -F '#{pane_id}	#{pane_width}x#{pane_height}	#{alternate_on}' \
        >"$dir/panes.tsv"
    while IFS=$'\t' read -r pane _ _; do
        t capture-pane -p -t "$pane" >"$dir/captures/${pane#%}.txt"
    done <"$dir/panes.tsv"
}

end() {
    exec 3>&-
    wait "$client" || true
    t kill-server 2>/dev/null || true
    sleep 0.2
    echo "recorded $name: $(wc -c <"$dir/control.bin") bytes"
}

fixture_shell_utf8() {
    begin shell-utf8 100 30
    go
    run_in %0 "seq 1 35"
    run_in %0 "echo 'héllo wörld — 日本語テキスト 😀 naïve café'"
    run_in %0 "printf '\\033[1;32mgreen\\033[0m \\033[7mreverse\\033[0m \\033[4munder\\033[0m\\n'"
    run_in %0 "printf 'tab\\there\\n'"
    run_in %0 "printf '%s\\n' \"\$(printf 'x%.0s' {1..250})\""
    run_in %0 "printf '%s\\n' \"\$(printf '一%.0s' {1..70})\""
    run_in %0 "printf 'split: \\xe6\\x97'; printf '\\xa5 end\\n'"
    capture
    end
}

fixture_redraw_bursts() {
    begin redraw-bursts 80 24
    go
    run_in %0 "python3 $bursts 6 60 0.15" 3
    capture
    end
}

fixture_vim_alternate_screen() {
    begin vim-alternate-screen 90 26
    go
    run_in %0 "seq -f 'line %g of a file long enough to page through' 1 3000 > $work/file.txt" 0.3
    run_in %0 "vim -u NONE -N -i NONE $work/file.txt" 1
    for _ in 1 2 3; do
        # Thirty page-downs in one write: a burst of full redraws.
        t send-keys -t %0 C-f C-f C-f C-f C-f C-f C-f C-f C-f C-f C-f C-f C-f C-f C-f \
            C-f C-f C-f C-f C-f C-f C-f C-f C-f C-f C-f C-f C-f C-f C-f
        sleep 0.3
    done
    t send-keys -t %0 -l ':set number'
    t send-keys -t %0 Enter
    sleep 0.5
    capture
    end
}

fixture_windows_and_panes() {
    begin windows-and-panes 120 40
    go
    run_in %0 "echo first pane"
    t split-window -h -t %0 "$shell"
    t split-window -v -t %1 "$shell"
    sleep 0.3
    run_in %1 "echo right top"
    run_in %2 "echo right bottom"
    t new-window -t '$0' "$shell"
    sleep 0.3
    t rename-window -t @1 'second window é'
    t split-window -h -t %3 "$shell"
    sleep 0.3
    t resize-pane -t %0 -x 50
    t resize-pane -t %2 -y 10
    t resize-pane -Z -t %3
    sleep 0.3
    t resize-pane -Z -t %3
    t kill-pane -t %2
    t select-layout -t @1 even-vertical
    t new-window -t '$0' "$shell"
    sleep 0.3
    t kill-window -t @2
    sleep 0.3
    # Redraw every pane at its final size so each screen is fully determined.
    for pane in %0 %1 %3 %4; do
        run_in "$pane" "clear; echo pane $pane; tput cols; tput lines" 0.2
    done
    capture
    end
}

fixture_pause_continue() {
    # The reader stalls for four seconds, so tmux's queue for the client ages past
    # pause-after=1 and the pane is paused; the output meanwhile is lost.
    begin pause-continue 80 24 "eval { sleep 4; cat; }"
    echo "refresh-client -f pause-after=1" >&3
    go
    run_in %0 'yes "$(printf "%0100d" 0)" | head -c 5000000; echo flood done' 6
    echo "refresh-client -A '%0:continue'" >&3
    sleep 0.5
    run_in %0 "clear; echo after continue"
    capture
    end
    if ! grep -aq '^%pause %0' "$dir/control.bin"; then
        echo "pause-continue: tmux did not pause the pane; record it again" >&2
        exit 1
    fi
}

fixture_session_killed() {
    begin session-killed 80 24
    go
    t new-session -d -s other "$shell"
    run_in %0 "echo before other session is killed"
    t kill-session -t other
    t rename-session -t '$0' 'main: session.1'
    run_in %0 "echo still here"
    capture
    t kill-session -t '$0'
    sleep 0.3
    end
}

all=(shell_utf8 redraw_bursts vim_alternate_screen windows_and_panes pause_continue session_killed)
for fixture in "${@:-${all[@]}}"; do
    "fixture_${fixture//-/_}"
done
