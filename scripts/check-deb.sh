#!/usr/bin/env bash
# Installs the Debian package into / with the real `dpkg -i` (as CI does on its machine, as
# root), runs the installed plugin in a tmux server of its own with no panectl on PATH, checks
# that the daemon it started is /usr/bin/panectl and publishes itself, then purges the package.
# The integration test `package` does the same into a private root on any machine.
#
#   scripts/check-deb.sh [BINARY]     (default: target/debug/panectl, as `cargo test` builds it)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ "$(id -u)" -ne 0 ]; then
    printf 'check-deb: installs into /, so it runs as root only (CI)\n' >&2
    exit 2
fi
if dpkg -s panectl >/dev/null 2>&1; then
    printf 'check-deb: a panectl package is installed already; not touching it\n' >&2
    exit 2
fi
binary="${1:-target/debug/panectl}"
work="$(mktemp -d)"
socket="panectl-check-deb-$$"
cleanup() {
    tmux -L "$socket" kill-server 2>/dev/null || true
    dpkg --purge panectl >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

deb="$(scripts/build-deb.sh "$binary" "$work/out")"
dpkg -i "$deb"
test -x /usr/bin/panectl
/usr/bin/panectl --version

printf 'run-shell /usr/share/tmux-plugins/panectl/panectl.tmux\n' >"$work/tmux.conf"
env -i HOME="$work" PATH=/usr/bin:/bin TERM=xterm XDG_RUNTIME_DIR="$work/run" \
    XDG_STATE_HOME="$work/state" ${TMUX_TMPDIR:+TMUX_TMPDIR="$TMUX_TMPDIR"} tmux -L "$socket" -f "$work/tmux.conf" new-session -d
used=""
pid=""
for _ in $(seq 100); do
    used="$(tmux -L "$socket" show-options -gqv @panectl-binary)"
    pid="$(tmux -L "$socket" show-options -sqv @panectl_pid)"
    [ -n "$pid" ] && break
    sleep 0.2
done
if [ "$used" != "/usr/bin/panectl (packaged with the plugin)" ] || [ -z "$pid" ]; then
    printf 'check-deb: the installed plugin did not start the packaged daemon (binary: "%s", pid: "%s")\n' \
        "$used" "$pid" >&2
    cat "$work/state/panectl/plugin-start.log" >&2 2>/dev/null || true
    exit 1
fi
exe="$(readlink "/proc/$pid/exe")"
if [ "$exe" != /usr/bin/panectl ]; then
    printf 'check-deb: the daemon runs %s, not /usr/bin/panectl\n' "$exe" >&2
    exit 1
fi
tmux -L "$socket" kill-server
for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
dpkg --purge panectl
if [ -e /usr/bin/panectl ] || [ -e /usr/share/tmux-plugins/panectl ]; then
    printf 'check-deb: files left after purge\n' >&2
    exit 1
fi
printf 'check-deb: %s installed, ran the plugin with daemon %s, purged\n' "$(basename "$deb")" "$pid"
