#!/usr/bin/env bash
# Shows a pane's last agent answer in a popup (paged with less when it is there; q closes;
# without less, any key).
# Without an answer the popup closes and the reason is shown on the client's status line.
# Usage: last.sh PANECTL SOCKET CLIENT PANE
set -u
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=plugin/helpers.sh
source "$PLUGIN_DIR/plugin/helpers.sh"
bin="$1" socket="$2" client="$3" pane="$4"
# panectl's own errors already start with "panectl: ".
if ! answer="$("$bin" -S "$socket" last "$pane" 2>&1)"; then
    tell "$client" "$answer"
    exit 0
fi
if command -v less >/dev/null 2>&1; then
    # No -F: a short answer would close the popup at once.
    printf '%s\n' "$answer" | less -R -X -P 'last answer (q closes)'
    exit 0
fi
printf '%s\n\n[last answer (q closes)]' "$answer"
read -rsn 1 _
exit 0
