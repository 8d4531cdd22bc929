#!/usr/bin/env bash
# Prints the panectl binary to use: @panectl-bin, else the packaged one next to a packaged plugin
# (PREFIX/share/tmux-plugins/panectl and PREFIX/bin/panectl, as the Debian package installs
# them: the same version as the plugin), else `panectl` on PATH, else one built from the plugin
# directory. Says which in @panectl-binary ("PATH (how it was found)"), for `panectl doctor`.
# Exits 1 if there is none yet, 2 if @panectl-bin names no program.
set -u
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=plugin/helpers.sh
source "$PLUGIN_DIR/plugin/helpers.sh"

# Prints BINARY and says where it came from (HOW).
use() {
    tmux set-option -gq @panectl-binary "$1 ($2)"
    printf '%s\n' "$1"
    exit 0
}

configured="$(get_tmux_option @panectl-bin "")"
if [ -n "$configured" ]; then
    if [ -x "$configured" ]; then
        use "$configured" "@panectl-bin"
    fi
    report_error "panectl: @panectl-bin is $configured, which is not an executable file"
    exit 2
fi
case "$PLUGIN_DIR" in
    */share/tmux-plugins/panectl)
        packaged="${PLUGIN_DIR%/share/tmux-plugins/panectl}/bin/panectl"
        if [ -x "$packaged" ]; then
            use "$packaged" "packaged with the plugin"
        fi
        ;;
esac
if command -v panectl >/dev/null 2>&1; then
    use "$(command -v panectl)" "on PATH"
fi
built="$PLUGIN_DIR/target/release/panectl"
if [ -x "$built" ]; then
    use "$built" "built from the plugin's directory"
fi
tmux set-option -gqu @panectl-binary
exit 1
