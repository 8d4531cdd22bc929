#!/usr/bin/env bash
# Builds panectl from the plugin directory once (cargo build --release --locked), logging to the
# state directory, then runs the plugin again. While cargo runs, its progress ("panectl:
# building 45/210 (serde)") is kept in @panectl-build, shown in #{panectl_summary} and on the
# attached clients every few seconds; at the end it says it is done, or why it failed (the last
# lines of the log, also in @panectl-error). A second build while one runs is not started.
set -u
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=plugin/helpers.sh
source "$PLUGIN_DIR/plugin/helpers.sh"

if ! command -v cargo >/dev/null 2>&1; then
    report_error "panectl: no panectl binary, and no Rust toolchain (cargo) to build one. Install panectl (cargo install --path $PLUGIN_DIR) or set @panectl-bin"
    exit 0
fi
dir="$(private_state_dir)"
log="$dir/plugin-build.log"
lock="$dir/plugin-build.lock"
if ! mkdir "$lock" 2>/dev/null; then
    exit 0 # a build is running
fi
trap 'rmdir "$lock"' EXIT

# Where the build is, from cargo's log: its progress bar ("Building [==> ] 45/210: serde, ...")
# when there is one, else the last "Compiling NAME vX" line.
progress() {
    local text count name
    text="$(tr '\r' '\n' <"$log" 2>/dev/null | grep -E '^ *(Building \[|Compiling )' | tail -n 1)"
    case "$text" in
        *'Building ['*)
            count="$(sed -n 's/.*\] *\([0-9][0-9]*\/[0-9][0-9]*\).*/\1/p' <<<"$text")"
            name="$(sed -n 's/.*\] *[0-9][0-9]*\/[0-9][0-9]*: *\([^ ,]*\).*/\1/p' <<<"$text")"
            printf 'building %s%s\n' "$count" "${name:+ ($name)}"
            ;;
        *Compiling*)
            name="$(sed -n 's/^ *Compiling \([^ ]*\).*/\1/p' <<<"$text")"
            printf 'building (%s)\n' "$name"
            ;;
        *) printf 'building\n' ;;
    esac
}

# Shows the build's state: in @panectl-build and in the status line's #{panectl_summary}.
set_state() {
    tmux set-option -gq @panectl_summary "panectl: $1"
    tmux set-option -gq @panectl-build "panectl: $1"
}

set_state building
tmux display-message -d 5000 -- "$(tmux_literal "panectl: building (cargo build --release; log $log)...")"
# The progress bar, also when cargo writes to a file.
private_file "$log"
(cd "$PLUGIN_DIR" && CARGO_TERM_PROGRESS_WHEN=always CARGO_TERM_PROGRESS_WIDTH=100 \
    cargo build --release --locked) >"$log" 2>&1 &
cargo_pid=$!
shown=0
while kill -0 "$cargo_pid" 2>/dev/null; do
    state="$(progress)"
    set_state "$state"
    if [ "$shown" -ge 10 ]; then
        tmux display-message -d 3000 -- "$(tmux_literal "panectl: $state")"
        shown=0
    fi
    shown=$((shown + 1))
    sleep 1
done
wait "$cargo_pid"
status=$?
tmux set-option -gqu @panectl_summary
if [ "$status" -eq 0 ]; then
    tmux set-option -gq @panectl-build "panectl: built"
    tmux set-option -gqu @panectl-error
    tmux display-message -d 5000 "panectl: built; starting"
    "$PLUGIN_DIR/panectl.tmux"
else
    tmux set-option -gq @panectl-build "panectl: the build failed"
    # The last lines of the log, without cargo's progress bar.
    last="$(tr '\r' '\n' <"$log" | grep -v -E '^ *Building \[|^ *$' | tail -n 3 | tr '\n' ' ')"
    report_error "panectl: the build failed (see $log): $last"
    exit 0
fi
