#!/usr/bin/env bash
# At a release, once the crate is published: writes the version and the sha256 of the crate's
# source tarball (what `cargo package` makes, byte for byte what crates.io serves) into the
# Homebrew formula, packaging/homebrew/panectl.rb.
#
#   scripts/release-formula.sh [CRATE]     (default: target/package/panectl-VERSION.crate,
#                                           made with `cargo package` first)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
crate="${1:-target/package/panectl-$version.crate}"
if [ ! -f "$crate" ]; then
    printf 'release-formula: no %s (run cargo package first)\n' "$crate" >&2
    exit 2
fi
sum="$(sha256sum "$crate" | cut -d' ' -f1)"
formula=packaging/homebrew/panectl.rb
sed -i \
    -e "s|^  url \".*\"|  url \"https://static.crates.io/crates/panectl/panectl-$version.crate\"|" \
    -e "s|^  sha256 \".*\"|  sha256 \"$sum\"|" \
    "$formula"
printf '%s: panectl %s, sha256 %s\n' "$formula" "$version" "$sum"
