#!/usr/bin/env bash
# Prints the panectl binary to use: @panectl-bin, else `panectl` on PATH, else one built from
# the plugin directory. Exits 1 if there is none yet, 2 if @panectl-bin names no program.
set -u
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=plugin/helpers.sh
source "$PLUGIN_DIR/plugin/helpers.sh"

configured="$(get_tmux_option @panectl-bin "")"
if [ -n "$configured" ]; then
    if [ -x "$configured" ]; then
        printf '%s\n' "$configured"
        exit 0
    fi
    report_error "panectl: @panectl-bin is $configured, which is not an executable file"
    exit 2
fi
if command -v panectl >/dev/null 2>&1; then
    command -v panectl
    exit 0
fi
built="$PLUGIN_DIR/target/release/panectl"
if [ -x "$built" ]; then
    printf '%s\n' "$built"
    exit 0
fi
exit 1
