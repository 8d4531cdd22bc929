#!/usr/bin/env bash
# Builds panectl from the plugin directory once (cargo build --release), showing progress in
# tmux and logging to the state directory; then runs the plugin again. A second build while one
# runs is not started.
set -u
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=plugin/helpers.sh
source "$PLUGIN_DIR/plugin/helpers.sh"

if ! command -v cargo >/dev/null 2>&1; then
    report_error "panectl: no panectl binary, and no Rust toolchain (cargo) to build one. Install panectl (cargo install --path $PLUGIN_DIR) or set @panectl-bin"
    exit 1
fi
dir="$(state_dir)"
mkdir -p "$dir"
log="$dir/plugin-build.log"
lock="$dir/plugin-build.lock"
if ! mkdir "$lock" 2>/dev/null; then
    exit 0 # a build is running
fi
trap 'rmdir "$lock"' EXIT
tmux display-message -d 5000 "panectl: building (cargo build --release; log $log)..."
if (cd "$PLUGIN_DIR" && cargo build --release --locked) >"$log" 2>&1; then
    tmux set-option -gqu @panectl-error
    tmux display-message -d 5000 "panectl: built; starting"
    "$PLUGIN_DIR/panectl.tmux"
else
    report_error "panectl: the build failed; see $log"
    exit 1
fi
