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

# Quotes a word for sh (single quotes).
sh_quote() {
    printf '%s\n' "'${1//\'/\'\\\'\'}'"
}

# Quotes a word for sh, then doubles every '#' so that tmux, which expands formats in
# run-shell commands, leaves it alone. (display-popup does not expand its command: use
# sh_quote there.)
shell_word() {
    local quoted
    quoted="$(sh_quote "$1")"
    printf '%s\n' "${quoted//\#/##}"
}

# Text that display-message shows as it is: its argument is a format (expanded, then drawn
# again by the status line) and goes through strftime. So '#' becomes the look-alike '♯', '%'
# is doubled, control characters become spaces, and it is cut at 300 characters.
tmux_literal() {
    local text="${1:0:300}"
    text="${text//\#/♯}"
    text="${text//%/%%}"
    text="${text//[[:cntrl:]]/ }"
    printf '%s\n' "$text"
}

# What a key says when no daemon answers: short enough for an 80-column status line, which
# cuts the CLI's own sentence (it names the socket) before its advice.
NO_DAEMON_MESSAGE='panectl: no daemon runs for this tmux server; start one: panectl daemon --detach'

# Shows TEXT (plain text, never a format) on client CLIENT's status line for a few seconds.
tell() {
    local text="$2"
    if [[ "$text" == *"no panectl daemon is running"*"start one with"* ]]; then
        text="$NO_DAEMON_MESSAGE"
    fi
    text="$(tmux_literal "$text")"
    # tmux 3.2 parses display-message's -c as a flag without a value (fixed in 3.3), so there
    # the message goes to the client tmux picks: the one used last, which pressed the key.
    tmux display-message -c "$1" -d 8000 -- "$text" 2>/dev/null ||
        tmux display-message -d 8000 -- "$text" 2>/dev/null || true
}

# The state directory of the plugin (build log, errors).
state_dir() {
    printf '%s\n' "${XDG_STATE_HOME:-$HOME/.local/state}/panectl"
}

# Makes the state directory closed to others (0700) and prints it: logs there may hold what
# panectl printed about the user's panes.
private_state_dir() {
    local dir
    dir="$(state_dir)"
    mkdir -p "$dir" && chmod 700 "$dir"
    printf '%s\n' "$dir"
}

# Makes FILE empty and readable by its owner alone (0600), for a log written into it after
# (a redirection that truncates a file keeps its mode).
private_file() {
    : >"$1" && chmod 600 "$1"
}

# Shows a message on the attached clients and keeps it in @panectl-error for scripts and tests.
report_error() {
    tmux set-option -gq @panectl-error "$1"
    tmux display-message -d 10000 -- "$(tmux_literal "$1")" 2>/dev/null || true
}

# Whether version A (x.y.z, a suffix after '-' or '+' ignored) is older than version B.
# Anything that is not such a version is never older.
version_older() {
    local a="${1%%[-+]*}" b="${2%%[-+]*}" i x y
    local -a va vb
    IFS=. read -ra va <<<"$a"
    IFS=. read -ra vb <<<"$b"
    for i in 0 1 2; do
        x="${va[i]:-0}" y="${vb[i]:-0}"
        case "$x$y" in
            '' | *[!0-9]*) return 1 ;;
        esac
        if ((10#$x < 10#$y)); then
            return 0
        elif ((10#$x > 10#$y)); then
            return 1
        fi
    done
    return 1
}

# The string value of FIELD in a JSON object (panectl's own output; first match).
json_string() {
    sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p" <<<"$2" | head -n 1
}

# The number value of FIELD in a JSON object (panectl's own output; first match).
json_number() {
    sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*\\([0-9][0-9]*\\).*/\\1/p" <<<"$2" | head -n 1
}

# Whether the running tmux is at least MAJOR.MINOR (e.g. 3.3); "next-3.5" and "3.3a" count.
tmux_at_least() {
    local version major minor want_major="${1%%.*}" want_minor="${1#*.}"
    version="$(tmux -V 2>/dev/null)"
    version="${version##* }"
    version="${version#next-}"
    major="${version%%.*}"
    minor="${version#*.}"
    minor="${minor%%[!0-9]*}"
    case "$major$minor" in
        '' | *[!0-9]*) return 0 ;; # unknown: assume a recent tmux
    esac
    ((major > want_major || (major == want_major && minor >= want_minor)))
}

# The client-attached hook that shows the "ready" message (keys.sh ready), if set.
ready_hooks() {
    local line
    tmux show-hooks -g client-attached 2>/dev/null | while IFS= read -r line; do
        case "$line" in
            client-attached\[*\]*keys.sh*' ready '*)
                line="${line#client-attached[}"
                printf '%s\n' "${line%%]*}"
                ;;
        esac
    done
}

# Removes that hook.
remove_ready_hook() {
    local index
    for index in $(ready_hooks); do
        tmux set-hook -gu "client-attached[$index]"
    done
}

# TEXT escaped for a double-quoted string of tmux's command syntax ('\', '"' and '$').
tmux_dquoted() {
    local text="${1//\\/\\\\}"
    text="${text//\"/\\\"}"
    printf '%s\n' "${text//\$/\\\$}"
}
