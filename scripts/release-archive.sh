#!/usr/bin/env bash
# Builds the release archive `cargo binstall` downloads (Cargo.toml's
# [package.metadata.binstall]): panectl-TARGET-vVERSION.tar.gz holding one directory of that
# name laid out as a prefix, so the plugin finds the binary next to it:
#
#   bin/panectl
#   share/tmux-plugins/panectl/          panectl.tmux and plugin/*.sh
#   share/man/man1/panectl*.1            the manual, a page per command
#   share/bash-completion/completions/panectl, share/zsh/site-functions/_panectl,
#   share/fish/vendor_completions.d/panectl.fish
#   README.md, LICENSE-MIT, LICENSE-APACHE
#
#   scripts/release-archive.sh [BINARY] [OUTDIR] [TARGET]
#
# BINARY defaults to target/release/panectl, OUTDIR to target/release-archive, TARGET to the
# host's triple (rustc -vV). Prints the archive's path.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
binary="${1:-$repo/target/release/panectl}"
outdir="${2:-$repo/target/release-archive}"
target="${3:-$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')}"
if [ ! -x "$binary" ]; then
    printf 'release-archive: no binary at %s (cargo build --release --locked first)\n' "$binary" >&2
    exit 2
fi
if [ -z "$target" ]; then
    printf 'release-archive: give the target triple (no rustc to ask)\n' >&2
    exit 2
fi
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"
cd "$repo"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
name="panectl-$target-v$version"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"

install -D -m 0755 "$binary" "$root/bin/panectl"
install -D -m 0755 panectl.tmux "$root/share/tmux-plugins/panectl/panectl.tmux"
for script in plugin/*.sh; do
    install -D -m 0755 "$script" "$root/share/tmux-plugins/panectl/$script"
done
mkdir -p "$root/share/man/man1"
"$binary" man --dir "$root/share/man/man1"
completions() {
    install -d "$(dirname "$2")"
    "$binary" completions "$1" --command panectl >"$2"
}
completions bash "$root/share/bash-completion/completions/panectl"
completions zsh "$root/share/zsh/site-functions/_panectl"
completions fish "$root/share/fish/vendor_completions.d/panectl.fish"
install -m 0644 README.md LICENSE-MIT LICENSE-APACHE "$root/"

archive="$outdir/$name.tar.gz"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$archive" "$name"
printf '%s\n' "$archive"
