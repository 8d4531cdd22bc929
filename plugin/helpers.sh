#!/usr/bin/env bash
# Shared helpers of the panectl tmux plugin (sourced, not run).

# The value of a global tmux option, or a default when it is unset or empty.
get_tmux_option() {
    local value
    value="$(tmux show-option -gqv "$1")"
    if [ -z "$value" ]; then
        printf '%s\n' "$2"
    else
        printf '%s\n' "$value"
    fi
}

# Whether an option value means "on" (on, true, yes, 1).
is_on() {
    case "$1" in
        on | true | yes | 1) return 0 ;;
        *) return 1 ;;
    esac
}

# Quotes a word for sh (single quotes), then doubles every '#' so that tmux, which expands
# formats in run-shell and display-popup commands, leaves it alone.
shell_word() {
    local quoted
    quoted="'${1//\'/\'\\\'\'}'"
    printf '%s\n' "${quoted//\#/##}"
}

# The state directory of the plugin (build log, errors).
state_dir() {
    printf '%s\n' "${XDG_STATE_HOME:-$HOME/.local/state}/panectl"
}

# Shows a message on the attached clients and keeps it in @panectl-error for scripts and tests.
report_error() {
    tmux set-option -gq @panectl-error "$1"
    tmux display-message -d 10000 "$1" 2>/dev/null || true
}
