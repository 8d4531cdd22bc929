#!/usr/bin/env bash
# Reads a message in a popup and queues it for a pane through the inbox: the text goes to
# panectl on stdin, never through a tmux template or a shell command line.
# Usage: send.sh PANECTL SOCKET PANE
set -u
bin="$1" socket="$2" pane="$3"
printf 'Message to %s (delivered when its agent is ready).\n' "$pane"
printf 'Type it, then Ctrl-D on an empty line to send; Ctrl-C cancels.\n\n'
message="$(cat)"
if [ -z "$message" ]; then
    exit 0
fi
if id="$(printf '%s' "$message" | "$bin" -S "$socket" send "$pane" --from tmux - 2>&1)"; then
    tmux display-message "panectl: message $id queued for $pane"
else
    printf '\npanectl: %s\n[press Enter to close]' "$id"
    read -r _
fi
