#!/usr/bin/env bash
# panectl's tmux plugin (TPM runs every *.tmux file of a plugin, on each load and reload, so
# everything here is idempotent). Starts the daemon once per tmux server, binds the keys the
# user has not bound otherwise, and makes #{panectl_summary} and the window status glyphs read
# the options the daemon keeps current. Options: see the README's plugin section.
set -u
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=plugin/helpers.sh
source "$PLUGIN_DIR/plugin/helpers.sh"

# The glyph of each status, for window names (pure tmux formats: no shell-out on refresh).
GLYPHS='#{P:#{?#{==:#{@panectl_status},waiting_user_answer},!,#{?#{==:#{@panectl_status},processing},⚙,#{?#{==:#{@panectl_status},completed},✔,#{?#{==:#{@panectl_status},error},✖,}}}}}'
GLYPHS_MARK='#{P:#{?#{==:#{@panectl_status},waiting_user_answer}'

# Binds KEY (prefix table) to COMMAND... unless the user bound it to something else.
bind_if_free() {
    local key="$1"
    shift
    local existing
    existing="$(tmux list-keys -T prefix -- "$key" 2>/dev/null)"
    if [ -n "$existing" ] && [[ "$existing" != *panectl* ]]; then
        return 0 # the user's own binding (or tmux's default) stays
    fi
    tmux bind-key -T prefix -- "$key" "$@"
}

bind_keys() {
    local bin="$1" socket="$2" key
    local run
    run="$(shell_word "$bin") -S $(shell_word "$socket")"

    key="$(get_tmux_option @panectl-board-key A)"
    if ! is_off "$key"; then
        bind_if_free "$key" display-popup -E -w 90% -h 60% -T ' panectl agents ' \
            "$run board --client '#{client_name}'"
    fi
    key="$(get_tmux_option @panectl-jump-key J)"
    if ! is_off "$key"; then
        # run-shell shows a command's output in the pane: jump's (the pane it chose) is dropped.
        bind_if_free "$key" run-shell -b \
            "$run jump --client '#{client_name}' --from '#{pane_id}' >/dev/null"
    fi
    key="$(get_tmux_option @panectl-send-key S)"
    if ! is_off "$key"; then
        # A popup, not command-prompt: its %%% escaping adds a backslash before every ';', and
        # plain %% would let the text run tmux commands. The text reaches panectl on stdin.
        bind_if_free "$key" display-popup -E -w 70% -h 12 -T ' panectl: message to #{pane_id} ' \
            "$(shell_word "$PLUGIN_DIR/plugin/send.sh") $(shell_word "$bin") $(shell_word "$socket") '#{pane_id}'"
    fi
    key="$(get_tmux_option @panectl-last-key V)"
    if ! is_off "$key"; then
        bind_if_free "$key" display-popup -E -w 80% -h 70% -T ' panectl: last answer ' \
            "$(shell_word "$PLUGIN_DIR/plugin/last.sh") $(shell_word "$bin") $(shell_word "$socket") '#{pane_id}'"
    fi
}

is_off() {
    case "$1" in
        off | none | "") return 0 ;;
        *) return 1 ;;
    esac
}

# Replaces #{panectl_summary} in status-left/right with the option the daemon maintains.
interpolate_status() {
    local option value
    for option in status-left status-right; do
        value="$(tmux show-option -gqv "$option")"
        if [[ "$value" == *'#{panectl_summary}'* ]]; then
            tmux set-option -gq "$option" "${value//'#{panectl_summary}'/'#{@panectl_summary}'}"
        fi
    done
}

# With @panectl-window-status on, window names carry their agents' status glyphs.
window_status() {
    local option value
    is_on "$(get_tmux_option @panectl-window-status off)" || return 0
    for option in window-status-format window-status-current-format; do
        value="$(tmux show-option -gqv "$option")"
        if [[ "$value" != *"$GLYPHS_MARK"* ]]; then
            tmux set-option -gq "$option" "$value$GLYPHS"
        fi
    done
}

# Starts the daemon unless one (the plugin's, or one started by hand) already serves this
# server; the daemon's lock makes a race between two reloads end with one daemon.
start_daemon() {
    local bin="$1" socket="$2"
    if "$bin" -S "$socket" health --json >/dev/null 2>&1; then
        return 0
    fi
    local dir
    dir="$(state_dir)"
    mkdir -p "$dir"
    if ! "$bin" -S "$socket" daemon --detach --exit-with-server >"$dir/plugin-start.log" 2>&1; then
        if ! grep -q -e 'already running' -e 'already serves' "$dir/plugin-start.log"; then
            report_error "panectl: the daemon did not start: $(tail -n 1 "$dir/plugin-start.log")"
        fi
    fi
}

main() {
    local socket bin
    socket="$(tmux display-message -p '#{socket_path}')"
    # Defaults the daemon reads from tmux: messages on status changes.
    if [ -z "$(tmux show-option -gqv @panectl-notify)" ]; then
        tmux set-option -gq @panectl-notify on
    fi
    bin="$("$PLUGIN_DIR/plugin/binary.sh")"
    case $? in
        0) ;;
        1)
            # No binary yet: build one in the background (it runs this file again when done).
            tmux run-shell -b "$(shell_word "$PLUGIN_DIR/plugin/build.sh")"
            return 0
            ;;
        *) return 0 ;; # @panectl-bin is wrong; binary.sh said so
    esac
    tmux set-option -gqu @panectl-error
    interpolate_status
    window_status
    bind_keys "$bin" "$socket"
    start_daemon "$bin" "$socket"
}

main
