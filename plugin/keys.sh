#!/usr/bin/env bash
# What the plugin's keys run (through `run-shell -b`, which expands the client and pane of the
# key press) and its one-time "ready" message.
#
#   keys.sh board|send|last|jump PANECTL SOCKET CLIENT PANE
#   keys.sh ready CLIENT
#
# board, send and last open a popup on CLIENT running board.sh, send.sh or last.sh with these
# values as quoted words: display-popup does not expand formats in its command, so they are
# passed as they are, never through a format. jump switches CLIENT to the next waiting agent.
# A failure is shown on CLIENT's status line; this script always exits 0 (run-shell would
# otherwise add a message of its own).
set -u
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=plugin/helpers.sh
source "$PLUGIN_DIR/plugin/helpers.sh"

# Opens a popup on the client: popup WIDTH HEIGHT TITLE SCRIPT.
popup() {
    local width="$1" height="$2" title="$3" script="$4" command
    command="exec $(sh_quote "$PLUGIN_DIR/plugin/$script") $(sh_quote "$bin") $(sh_quote "$socket") $(sh_quote "$client") $(sh_quote "$pane")"
    local -a titled=()
    if tmux_at_least 3.3; then
        # The title is a format: the pane id (%N) is the only value in it.
        titled=(-T "$title")
    fi
    if ! error="$(tmux display-popup -c "$client" -t "$pane" -E -w "$width" -h "$height" \
        ${titled[@]+"${titled[@]}"} "$command" 2>&1)"; then
        tell "$client" "panectl: cannot open a popup: $error"
    fi
}

action="${1:-}"
if [ "$action" = ready ]; then
    # Run by the client-attached hook: the message once per server, then the hook goes.
    client="${2:-}"
    # Control clients (the daemon's, among them) attach too: they are not told.
    # (list-clients, not display-message -c: tmux 3.2 takes no value after display-message -c.)
    mode="$(tmux list-clients -F '#{client_control_mode} #{client_name}' 2>/dev/null |
        while read -r control name; do
            [ "$name" = "$client" ] && printf '%s\n' "$control"
        done)"
    if [ "$mode" != 0 ]; then
        exit 0
    fi
    if [ -z "$(tmux show-option -gqv @panectl-ready-shown)" ]; then
        message="$(tmux show-option -gqv @panectl-ready-message)"
        if [ -n "$message" ] && [ -n "$client" ]; then
            tmux set-option -gq @panectl-ready-shown on
            tell "$client" "$message"
        fi
    fi
    remove_ready_hook
    exit 0
fi

if [ "$#" -ne 5 ]; then
    printf 'usage: keys.sh board|send|last|jump PANECTL SOCKET CLIENT PANE\n' >&2
    exit 0
fi
bin="$2" socket="$3" client="$4" pane="$5"
case "$pane" in
    %*) ;;
    *)
        tell "$client" "panectl: no pane to act on (got \"$pane\")"
        exit 0
        ;;
esac

case "$action" in
    board) popup 90% 80% ' panectl agents ' board.sh ;;
    send) popup 70% 12 " panectl: message to $pane " send.sh ;;
    last) popup 80% 70% " panectl: last answer of $pane " last.sh ;;
    jump)
        # jump prints the pane it chose (dropped) and tells the client itself when there is
        # nowhere to go; an error is shown here.
        if ! error="$("$bin" -S "$socket" jump --client "$client" --from "$pane" 2>&1 >/dev/null)"; then
            tell "$client" "$error"
        fi
        ;;
    *) tell "$client" "panectl: unknown key action \"$action\"" ;;
esac
exit 0
