#!/usr/bin/env bash
# Builds the Debian package of panectl from a built binary, with dpkg-deb (on every Debian and
# Ubuntu machine; no cargo subcommand to install):
#
#   scripts/build-deb.sh [BINARY] [OUTDIR]
#
# BINARY defaults to target/release/panectl (`cargo build --release --locked` first), OUTDIR
# to target/debian. Prints the path of the .deb. The package holds:
#
#   /usr/bin/panectl
#   /usr/share/tmux-plugins/panectl/      the tmux plugin (panectl.tmux and plugin/*.sh), which
#                                         finds /usr/bin/panectl next to it
#   /usr/share/man/man1/panectl*.1.gz     the manual, a page per command
#   bash, zsh and fish completions        in each shell's vendor directory
#   /usr/share/doc/panectl/               README, licences, copyright
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

binary="${1:-$repo/target/release/panectl}"
outdir="${2:-$repo/target/debian}"
if [ ! -x "$binary" ]; then
    printf 'build-deb: no binary at %s (cargo build --release --locked first)\n' "$binary" >&2
    exit 2
fi
# Both as absolute paths: the rest runs in the repository.
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"
cd "$repo"
command -v dpkg-deb >/dev/null 2>&1 || {
    printf 'build-deb: dpkg-deb is not installed\n' >&2
    exit 2
}

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
arch="$(dpkg --print-architecture 2>/dev/null || echo amd64)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/panectl_${version}_$arch"

install -D -m 0755 "$binary" "$root/usr/bin/panectl"
# Without debug symbols, as Debian ships binaries (a release build has none already).
if command -v strip >/dev/null 2>&1; then
    strip "$root/usr/bin/panectl"
fi
plugin="$root/usr/share/tmux-plugins/panectl"
install -D -m 0755 panectl.tmux "$plugin/panectl.tmux"
for script in plugin/*.sh; do
    install -D -m 0755 "$script" "$plugin/$script"
done

man="$root/usr/share/man/man1"
mkdir -p "$man"
"$binary" man --dir "$man"
gzip -9n "$man"/*.1

# The scripts run `panectl` from PATH at each TAB (not the path this binary was built at).
completions() {
    install -d "$(dirname "$2")"
    "$binary" completions "$1" --command panectl >"$2"
}
completions bash "$root/usr/share/bash-completion/completions/panectl"
completions zsh "$root/usr/share/zsh/vendor-completions/_panectl"
completions fish "$root/usr/share/fish/vendor_completions.d/panectl.fish"

doc="$root/usr/share/doc/panectl"
install -D -m 0644 README.md "$doc/README.md"
install -m 0644 LICENSE-MIT LICENSE-APACHE "$doc/"
cat >"$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: panectl
Files: *
License: MIT or Apache-2.0
 See /usr/share/doc/panectl/LICENSE-MIT and /usr/share/doc/panectl/LICENSE-APACHE.
EOF

size="$(du -sk "$root" | cut -f1)"
install -d "$root/DEBIAN"
cat >"$root/DEBIAN/control" <<EOF
Package: panectl
Version: $version
Architecture: $arch
Maintainer: panectl developers <panectl@localhost>
Installed-Size: $size
Depends: tmux (>= 3.2)
Recommends: bash
Section: utils
Priority: optional
Description: tracks the CLI coding agents in your tmux panes
 panectl follows every pane of a tmux server through tmux's control mode, knows the
 status of each coding agent (Claude Code, Codex, Gemini CLI, Aider, OpenCode, Kiro),
 shows it in the status line and on a board, and delivers queued messages exactly once
 when an agent is ready. The tmux plugin is in /usr/share/tmux-plugins/panectl: add
 "run-shell /usr/share/tmux-plugins/panectl/panectl.tmux" to ~/.tmux.conf.
EOF

deb="$outdir/panectl_${version}_$arch.deb"
dpkg-deb --root-owner-group --build "$root" "$deb" >/dev/null
printf '%s\n' "$deb"
