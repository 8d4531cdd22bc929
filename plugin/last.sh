#!/usr/bin/env bash
# Shows a pane's last agent answer (in a popup): paged when a pager is at hand.
# Usage: last.sh PANECTL SOCKET PANE
set -u
bin="$1" socket="$2" pane="$3"
if answer="$("$bin" -S "$socket" last "$pane" 2>&1)"; then
    if command -v less >/dev/null 2>&1; then
        printf '%s\n' "$answer" | less -R -X -F -P "panectl: last answer of $pane (q to close)"
        exit 0
    fi
    printf '%s\n' "$answer"
else
    printf 'panectl: %s\n' "$answer"
fi
printf '\n[press Enter to close]'
read -r _
