#!/usr/bin/env bash
# The board in its popup: `panectl board` for the client that pressed the key. A jump closes
# the popup; when the board ends on an error (a jump that failed, say) the popup closes too and
# the error is shown on the client's status line.
# Usage: board.sh PANECTL SOCKET CLIENT PANE
set -u
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=plugin/helpers.sh
source "$PLUGIN_DIR/plugin/helpers.sh"
bin="$1" socket="$2" client="$3"
# The board draws on stdout (the popup, through fd 3); its error (stderr, one line) is kept.
exec 3>&1
if ! error="$("$bin" -S "$socket" board --client "$client" 2>&1 1>&3 3>&-)"; then
    tell "$client" "${error:-panectl: the board failed}"
fi
exit 0
