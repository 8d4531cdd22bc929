#!/usr/bin/env bash
# Checks the packages other than Debian's as far as a Linux machine without Homebrew or Nix
# can (README.md, "Install"):
#
# - the Homebrew formula (packaging/homebrew/panectl.rb) and the Nix flake (flake.nix) name
#   Cargo.toml's version, parse (ruby -c, nix-instantiate --parse, when installed), and every
#   file they install from the source is in the crate tarball the formula builds from
#   (`cargo package --list`);
# - the release archive `cargo binstall` downloads (scripts/release-archive.sh) holds the
#   binary where [package.metadata.binstall]'s bin-dir says, and its plugin, unpacked anywhere
#   and run in a tmux server of its own with no panectl on PATH, starts the daemon from the
#   binary beside it ("packaged with the plugin").
#
#   scripts/check-packaging.sh [BINARY]     (default: target/debug/panectl)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
binary="${1:-target/debug/panectl}"
fail() {
    printf 'check-packaging: %s\n' "$*" >&2
    exit 1
}
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
formula=packaging/homebrew/panectl.rb

grep -q "^  url \"https://static.crates.io/crates/panectl/panectl-$version.crate\"$" "$formula" ||
    fail "$formula does not build version $version"
grep -q "^          version = \"$version\";$" flake.nix || fail "flake.nix does not build version $version"
if command -v ruby >/dev/null 2>&1; then
    ruby -c "$formula" >/dev/null || fail "$formula does not parse"
else
    printf 'check-packaging: no ruby: the formula is not parsed\n' >&2
fi
if command -v nix-instantiate >/dev/null 2>&1; then
    nix-instantiate --parse flake.nix >/dev/null || fail "flake.nix does not parse"
else
    printf 'check-packaging: no nix-instantiate: the flake is not parsed\n' >&2
fi
listed="$(cargo package --list --allow-dirty --offline 2>/dev/null || cargo package --list --allow-dirty)"
for needed in panectl.tmux Cargo.lock README.md LICENSE-MIT LICENSE-APACHE $(ls plugin/*.sh); do
    grep -qx "$needed" <<<"$listed" || fail "$needed is not in the crate the formula builds from"
done

work="$(mktemp -d)"
socket="panectl-check-packaging-$$"
pid=""
cleanup() {
    tmux -L "$socket" kill-server 2>/dev/null || true
    if [ -n "$pid" ]; then
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
    rm -rf "$work"
}
trap cleanup EXIT
target="$(rustc -vV | sed -n 's/^host: //p')"
archive="$(scripts/release-archive.sh "$binary" "$work/out" "$target")"
# bin-dir as cargo binstall resolves it for this crate and target.
bin_dir="$(sed -n 's/^bin-dir = "\(.*\)"$/\1/p' Cargo.toml)"
bin_dir="${bin_dir//\{ name \}/panectl}"
bin_dir="${bin_dir//\{ target \}/$target}"
bin_dir="${bin_dir//\{ version \}/$version}"
bin_dir="${bin_dir//\{ bin \}/panectl}"
bin_dir="${bin_dir//\{ binary-ext \}/}"
case "$(sed -n 's/^pkg-url = "\(.*\)"$/\1/p' Cargo.toml)" in
    *"/{ name }-{ target }-v{ version }{ archive-suffix }") ;;
    *) fail "pkg-url does not name the archive scripts/release-archive.sh makes" ;;
esac
[ "$archive" = "$work/out/panectl-$target-v$version.tar.gz" ] || fail "unexpected archive $archive"
mkdir "$work/unpacked"
tar -C "$work/unpacked" -xzf "$archive"
unpacked="$work/unpacked/$bin_dir"
[ -x "$unpacked" ] || fail "the archive has no binary at $bin_dir"
"$unpacked" --version | grep -q "$version" || fail "the archived binary is not version $version"
prefix="$work/unpacked/panectl-$target-v$version"
for file in share/man/man1/panectl.1 share/bash-completion/completions/panectl \
    share/zsh/site-functions/_panectl share/fish/vendor_completions.d/panectl.fish; do
    [ -s "$prefix/$file" ] || fail "the archive has no $file"
done

printf 'run-shell %s/share/tmux-plugins/panectl/panectl.tmux\n' "$prefix" >"$work/tmux.conf"
env -i HOME="$work" PATH=/usr/bin:/bin TERM=xterm XDG_RUNTIME_DIR="$work/run" \
    XDG_STATE_HOME="$work/state" ${TMUX_TMPDIR:+TMUX_TMPDIR="$TMUX_TMPDIR"} \
    tmux -L "$socket" -f "$work/tmux.conf" new-session -d
used=""
for _ in $(seq 100); do
    used="$(tmux -L "$socket" show-options -gqv @panectl-binary)"
    pid="$(tmux -L "$socket" show-options -sqv @panectl_pid)"
    [ -n "$pid" ] && break
    sleep 0.2
done
if [ "$used" != "$prefix/bin/panectl (packaged with the plugin)" ] || [ -z "$pid" ]; then
    cat "$work/state/panectl/plugin-start.log" >&2 2>/dev/null || true
    fail "the unpacked plugin did not start the binary beside it (binary: \"$used\", pid: \"$pid\")"
fi
printf 'check-packaging: formula and flake name %s; the release archive %s runs its plugin\n' \
    "$version" "$(basename "$archive")"
