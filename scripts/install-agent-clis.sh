#!/usr/bin/env bash
# Installs the agent CLIs whose screens fixtures/screens/ records, at pinned versions, into
# ${PANECTL_AGENT_CACHE:-$HOME/.cache/panectl/agents}/<name>/:
#
#   claude    npm @anthropic-ai/claude-code  node_modules/.bin/claude
#   codex     npm @openai/codex              node_modules/.bin/codex
#   gemini    npm @google/gemini-cli         node_modules/.bin/gemini
#   opencode  npm opencode-ai                node_modules/.bin/opencode
#   qwen      npm @qwen-code/qwen-code       node_modules/.bin/qwen
#   pi        npm @mariozechner/pi-coding-agent  node_modules/.bin/pi
#   kilo      npm @kilocode/cli              node_modules/.bin/kilo
#   grok      npm @vibe-kit/grok-cli         node_modules/.bin/grok
#   aider     PyPI aider-chat (a venv)       venv/bin/aider
#
# Idempotent: a CLI whose `--version` already reports the pinned version is left alone.
# Usage: scripts/install-agent-clis.sh [NAME...]   (default: all of them)
# Another version: PANECTL_AGENT_CACHE=~/.cache/panectl/agents-old PANECTL_CODEX_VERSION=0.145.0 \
#   scripts/install-agent-clis.sh codex   (PANECTL_{CLAUDE,CODEX,GEMINI,OPENCODE,QWEN,PI,KILO,GROK,AIDER}_VERSION)
# Needs node/npm and, for Aider, a Python 3.10-3.12 (PYTHON, or python3.12/3.11/3.10 on PATH,
# or pyenv's). Only the npm registry and PyPI are used; nothing else is downloaded.
set -euo pipefail

cache=${PANECTL_AGENT_CACHE:-$HOME/.cache/panectl/agents}

# The pinned versions; PANECTL_<NAME>_VERSION overrides one (for recordings of another version,
# with another PANECTL_AGENT_CACHE so the pinned installs stay).
CLAUDE_VERSION=${PANECTL_CLAUDE_VERSION:-2.1.332}
CODEX_VERSION=${PANECTL_CODEX_VERSION:-0.171.0}
GEMINI_VERSION=${PANECTL_GEMINI_VERSION:-0.61.0}
OPENCODE_VERSION=${PANECTL_OPENCODE_VERSION:-1.18.33}
QWEN_VERSION=${PANECTL_QWEN_VERSION:-0.24.4}
PI_VERSION=${PANECTL_PI_VERSION:-0.73.1}
# 7.7.7: the registry has no @kilocode/cli-linux-x64 for the newer 7.8.1.
KILO_VERSION=${PANECTL_KILO_VERSION:-7.7.7}
GROK_VERSION=${PANECTL_GROK_VERSION:-0.0.34}
AIDER_VERSION=${PANECTL_AIDER_VERSION:-0.86.2}

log() { printf '%s\n' "$*" >&2; }

# installed BINARY VERSION: whether BINARY runs and reports VERSION.
installed() {
    [[ -x $1 ]] || return 1
    local reported
    # Some (Pi) print their version on stderr.
    reported=$("$1" --version 2>&1 </dev/null) || return 1
    grep -qw -- "$2" <<<"$reported"
}

# npm_cli NAME PACKAGE VERSION: npm install PACKAGE@VERSION into $cache/NAME.
# npm_installed DIR PACKAGE VERSION BINARY: whether BINARY runs and reports VERSION, or (a CLI
# whose --version says another number: Grok CLI) the package installed in DIR is VERSION.
npm_installed() {
    installed "$4" "$3" && return
    [[ -x $4 ]] && grep -q "\"version\": \"$3\"" "$1/node_modules/$2/package.json" 2>/dev/null
}

npm_cli() {
    local name=$1 package=$2 version=$3
    local dir=$cache/$name
    local binary=$dir/node_modules/.bin/$name
    if npm_installed "$dir" "$package" "$version" "$binary"; then
        log "$name $version: already installed in $dir"
        return
    fi
    log "$name: installing $package@$version into $dir"
    mkdir -p "$dir"
    [[ -f $dir/package.json ]] || echo '{}' >"$dir/package.json"
    (cd "$dir" && npm install --no-audit --no-fund --save-exact "$package@$version" >&2)
    if ! npm_installed "$dir" "$package" "$version" "$binary"; then
        log "$name: $binary does not report version $version after installing"
        return 1
    fi
    log "$name $version: installed"
}

find_python() {
    local candidate
    for candidate in "${PYTHON:-}" python3.12 python3.11 python3.10 \
        "$HOME"/.pyenv/versions/3.12*/bin/python3 "$HOME"/.pyenv/versions/3.11*/bin/python3 \
        "$HOME"/.pyenv/versions/3.10*/bin/python3 python3; do
        [[ -n $candidate ]] || continue
        command -v "$candidate" >/dev/null 2>&1 || [[ -x $candidate ]] || continue
        # aider-chat 0.86 needs Python >= 3.10 and < 3.13.
        if "$candidate" -c 'import sys, venv; sys.exit(not ((3, 10) <= sys.version_info[:2] <= (3, 12)))' \
            2>/dev/null; then
            echo "$candidate"
            return
        fi
    done
    return 1
}

aider_cli() {
    local dir=$cache/aider
    local binary=$dir/venv/bin/aider
    if installed "$binary" "$AIDER_VERSION"; then
        log "aider $AIDER_VERSION: already installed in $dir"
        return
    fi
    local python
    if ! python=$(find_python); then
        log "aider: no Python 3.10-3.12 found (set PYTHON); skipped"
        return 1
    fi
    log "aider: installing aider-chat==$AIDER_VERSION into $dir/venv with $python"
    mkdir -p "$dir"
    rm -rf "$dir/venv"
    "$python" -m venv "$dir/venv"
    "$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "aider-chat==$AIDER_VERSION" >&2
    if ! installed "$binary" "$AIDER_VERSION"; then
        log "aider: $binary does not report version $AIDER_VERSION after installing"
        return 1
    fi
    log "aider $AIDER_VERSION: installed"
}

install_one() {
    case $1 in
    claude) npm_cli claude @anthropic-ai/claude-code "$CLAUDE_VERSION" ;;
    codex) npm_cli codex @openai/codex "$CODEX_VERSION" ;;
    gemini) npm_cli gemini @google/gemini-cli "$GEMINI_VERSION" ;;
    opencode) npm_cli opencode opencode-ai "$OPENCODE_VERSION" ;;
    qwen) npm_cli qwen @qwen-code/qwen-code "$QWEN_VERSION" ;;
    pi) npm_cli pi @mariozechner/pi-coding-agent "$PI_VERSION" ;;
    kilo) npm_cli kilo @kilocode/cli "$KILO_VERSION" ;;
    grok) npm_cli grok @vibe-kit/grok-cli "$GROK_VERSION" ;;
    aider) aider_cli ;;
    *)
        log "unknown CLI '$1' (claude, codex, gemini, opencode, qwen, pi, kilo, grok, aider)"
        return 2
        ;;
    esac
}

names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(claude codex gemini opencode qwen pi kilo grok aider)
failed=()
for name in "${names[@]}"; do
    install_one "$name" || failed+=("$name")
done
if [[ ${#failed[@]} -gt 0 ]]; then
    log "failed: ${failed[*]}"
    exit 1
fi
