#!/usr/bin/env bash
# Brings back, once per tmux server, the agents panectl launched before tmux (or the machine)
# went down: `panectl restore`, run in the background by the plugin with @panectl-restore on.
# The daemon may still be reading the server, or the server may have no session yet to work
# through: while panectl answers "unreachable" (exit code 3) it is asked again every second,
# for up to a minute. What it said goes to restore.log in the plugin's state directory; a
# failure is also shown on the attached clients (and kept in @panectl-error).
# Usage: restore.sh PANECTL SOCKET
set -u
umask 077
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=plugin/helpers.sh
source "$PLUGIN_DIR/plugin/helpers.sh"
bin="$1" socket="$2"
dir="$(private_state_dir)"
log="$dir/restore.log"
deadline=$((SECONDS + 60))
while :; do
    printf '%s panectl restore (%s)\n' "$(date '+%F %T')" "$socket" >>"$log"
    "$bin" -S "$socket" restore >>"$log" 2>&1
    code=$?
    if [ "$code" -ne 3 ] || [ "$SECONDS" -ge "$deadline" ]; then
        break
    fi
    sleep 1
done
if [ "$code" -ne 0 ]; then
    report_error "panectl: restoring the agents failed (exit code $code); see $log"
fi
exit 0
