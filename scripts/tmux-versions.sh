#!/usr/bin/env bash
# Runs tests against other tmux versions: builds each from its release source (Debian's and
# Ubuntu's package pools) into a cache, then runs the tests with that tmux first on PATH.
# Needs a C compiler, make, libevent-dev, libncurses-dev, bison, pkg-config and curl (and
# autoconf and automake for a source without a configure script, as Debian's 3.6a is).
#
# Usage: scripts/tmux-versions.sh [--tests FILTER] [VERSION...]
#   FILTER:  the integration tests to run (default `plugin`: keys pressed through an attached
#            client, TPM, the daemon the plugin starts; `fidelity::` runs the differential
#            tests of the screen model against that tmux)
#   VERSION: default 3.2a 3.4 3.5a
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cache="${PANECTL_TMUX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/panectl/tmux}"
tests=plugin
if [ "${1:-}" = "--tests" ]; then
    tests="${2:?--tests needs a filter}"
    shift 2
fi
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(3.2a 3.4 3.5a)
mkdir -p "$cache"
for version in "${versions[@]}"; do
    prefix="$cache/$version"
    if [ ! -x "$prefix/bin/tmux" ]; then
        tarball="$cache/tmux_$version.orig.tar.gz"
        for pool in http://deb.debian.org/debian/pool/main/t/tmux \
            http://archive.ubuntu.com/ubuntu/pool/main/t/tmux; do
            [ -s "$tarball" ] || curl -sfL -o "$tarball" "$pool/tmux_$version.orig.tar.gz" || true
        done
        [ -s "$tarball" ] || { echo "cannot download tmux $version" >&2; exit 1; }
        build="$(mktemp -d)"
        tar xzf "$tarball" -C "$build"
        (
            cd "$build"/tmux-*
            [ -x configure ] || sh autogen.sh >/dev/null
            ./configure -q --prefix="$prefix" >/dev/null
            make -j"$(nproc)" >/dev/null
            make install >/dev/null
        )
        rm -rf "$build"
    fi
    echo "== $("$prefix/bin/tmux" -V)"
    PATH="$prefix/bin:$PATH" cargo test --test integration "$tests" 2>&1 |
        grep -E '^test |^test result|differ|advances|tmux prints'
done
