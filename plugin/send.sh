#!/usr/bin/env bash
# Reads a message in a popup and queues it for a pane through the inbox: the text goes to
# panectl on stdin, never through a tmux template or a shell command line. The popup closes
# once the message is queued or failed; what happened is shown on the client's status line.
# Usage: send.sh PANECTL SOCKET CLIENT PANE
set -u
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=plugin/helpers.sh
source "$PLUGIN_DIR/plugin/helpers.sh"
bin="$1" socket="$2" client="$3" pane="$4"
printf 'Message to %s (delivered when its agent is ready).\n' "$pane"
printf 'Type it, then Ctrl-D on an empty line to send; Ctrl-C cancels.\n\n'
message="$(cat)"
if [ -z "$message" ]; then
    tell "$client" "panectl: nothing sent to $pane"
    exit 0
fi
# panectl's own errors already start with "panectl: ".
if id="$(printf '%s' "$message" | "$bin" -S "$socket" send "$pane" --from tmux - 2>&1)"; then
    tell "$client" "panectl: message $id queued for $pane"
else
    tell "$client" "$id"
fi
exit 0
