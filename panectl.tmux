#!/usr/bin/env bash
# panectl's tmux plugin (TPM runs every *.tmux file of a plugin, on each load and reload, so
# everything here is idempotent). Starts the daemon once per tmux server, binds the keys the
# user has not bound otherwise, and makes #{panectl_summary} and the window status glyphs read
# the options the daemon keeps current. Options: see the README's plugin section.
set -u
PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=plugin/helpers.sh
source "$PLUGIN_DIR/plugin/helpers.sh"

# How the window status glyphs' format (`panectl window-glyphs`, from the status table) starts,
# with or without shells (and as earlier versions wrote it): the mark that it was added already.
GLYPHS_MARK='#{P:#{?#{==:#{@panectl_'
# The format now starts with a gate (nothing while no daemon is published) before that mark.
GLYPHS_GATE='#{?#{@panectl_pid},'

# Binds KEY (prefix table) to COMMAND... unless the user bound it to something else; returns
# 1 when the key stays the user's.
bind_if_free() {
    local key="$1"
    shift
    local existing
    existing="$(tmux list-keys -T prefix -- "$key" 2>/dev/null)"
    if [ -n "$existing" ] && [[ "$existing" != *panectl* ]]; then
        return 1 # the user's own binding (or tmux's default) stays
    fi
    tmux bind-key -T prefix -- "$key" "$@"
}

# bind_role ROLE KEY COMMAND...: binds KEY to COMMAND for ROLE (board, jump, send, last) unless
# KEY is off or the user's own; a key panectl bound for ROLE on an earlier load that is no longer
# ROLE's key (set to another, or to off) is unbound first, so a reload follows the options.
# Remembers the key in @panectl-bound-ROLE. Returns 1 when no key is bound.
bind_role() {
    local role="$1" key="$2"
    shift 2
    local previous existing
    previous="$(tmux show-option -gqv "@panectl-bound-$role")"
    if [ -n "$previous" ] && [ "$previous" != "$key" ]; then
        existing="$(tmux list-keys -T prefix -- "$previous" 2>/dev/null)"
        if [[ "$existing" == *keys.sh* && "$existing" == *" $role "* ]]; then
            tmux unbind-key -T prefix -- "$previous"
        fi
        tmux set-option -gqu "@panectl-bound-$role"
    fi
    is_off "$key" && return 1
    bind_if_free "$key" "$@" || return 1
    tmux set-option -gq "@panectl-bound-$role" "$key"
}

# Binds the keys. Each runs plugin/keys.sh through run-shell, which expands the client and the
# pane of the key press (#{q:...} quotes them for sh); keys.sh opens the popups itself, since
# display-popup expands no format in its command. Sets READY_KEYS to the keys bound, for the
# "ready" message.
bind_keys() {
    local bin="$1" socket="$2" key run
    run="$(shell_word "$PLUGIN_DIR/plugin/keys.sh")"
    local args
    args="$(shell_word "$bin") $(shell_word "$socket") #{q:client_name} #{q:pane_id}"
    READY_KEYS=""

    key="$(get_tmux_option @panectl-board-key A)"
    if bind_role board "$key" run-shell -b "$run board $args"; then
        READY_KEYS="prefix $key: agents"
    fi
    key="$(get_tmux_option @panectl-jump-key J)"
    if bind_role jump "$key" run-shell -b "$run jump $args"; then
        READY_KEYS="${READY_KEYS:+$READY_KEYS, }prefix $key: next waiting"
    fi
    # A popup, not command-prompt: its %%% escaping adds a backslash before every ';', and
    # plain %% would let the text run tmux commands. The text reaches panectl on stdin.
    key="$(get_tmux_option @panectl-send-key S)"
    bind_role send "$key" run-shell -b "$run send $args" || true
    key="$(get_tmux_option @panectl-last-key V)"
    bind_role last "$key" run-shell -b "$run last $args" || true
}

is_off() {
    case "$1" in
        off | none | "") return 0 ;;
        *) return 1 ;;
    esac
}

# Replaces #{panectl_summary} in status-left/right with the option the daemon maintains.
interpolate_status() {
    local option value
    for option in status-left status-right; do
        value="$(tmux show-option -gqv "$option")"
        if [[ "$value" == *'#{panectl_summary}'* ]]; then
            tmux set-option -gq "$option" "${value//'#{panectl_summary}'/'#{@panectl_summary}'}"
        fi
    done
}

# With @panectl-window-status on, window names carry their agents' status glyphs (`shells`:
# plain shells' too): a pure tmux format asked of the binary BIN once here, so a status-line
# refresh runs no process. The format is appended once; a reload replaces one added before
# (by an older version, or with the other setting), and `off` takes it away.
window_status() {
    local bin="$1" option value setting glyphs=""
    setting="$(get_tmux_option @panectl-window-status off)"
    if [ "$setting" = shells ]; then
        glyphs="$("$bin" window-glyphs --shells 2>/dev/null)" || return 0
    elif is_on "$setting"; then
        glyphs="$("$bin" window-glyphs 2>/dev/null)" || return 0
    fi
    [ -z "$glyphs" ] || [[ "$glyphs" == "$GLYPHS_MARK"* || "$glyphs" == "$GLYPHS_GATE$GLYPHS_MARK"* ]] ||
        return 0
    for option in window-status-format window-status-current-format; do
        value="$(tmux show-option -gqv "$option")"
        if [[ "$value" == *"$GLYPHS_MARK"* || -n "$glyphs" ]]; then
            if [[ "$value" == *"$GLYPHS_GATE$GLYPHS_MARK"* ]]; then
                value="${value%%"$GLYPHS_GATE$GLYPHS_MARK"*}"
            fi
            value="${value%%"$GLYPHS_MARK"*}"
            tmux set-option -gq "$option" "$value$glyphs"
        fi
    done
}

# The extra `panectl daemon` flags of @panectl-daemon-args, split at whitespace (no quoting:
# the words are taken as they are, never run through a shell), into DAEMON_ARGS.
daemon_args() {
    DAEMON_ARGS=()
    read -ra DAEMON_ARGS <<<"$(get_tmux_option @panectl-daemon-args "")"
}

# The command line of process PID (from /proc where there is one, else from ps).
process_args() {
    if [ -r "/proc/$1/cmdline" ]; then
        tr '\0' ' ' <"/proc/$1/cmdline"
    else
        ps -o args= -p "$1" 2>/dev/null
    fi
}

# The health answer (JSON) of the daemon serving the server, degraded or not (`health` exits 1
# when degraded, so its output, not its exit code, says whether a daemon answered).
daemon_health() {
    local answer
    answer="$("$1" -S "$2" health --json 2>/dev/null)"
    [ -n "$answer" ] && printf '%s\n' "$answer"
}

# Stops the daemon that serves the server (its health answer is $3): `panectl daemon stop`
# where panectl has it, else SIGTERM to its pid (from its health, else the one this plugin
# started), checked to be a panectl daemon. Returns 1 when it could not, or it did not stop.
stop_daemon() {
    local bin="$1" socket="$2" health="$3" pid args
    pid="$(json_number pid "$health")"
    pid="${pid:-$(tmux show-option -gqv @panectl-daemon-pid)}"
    if [ -n "$pid" ]; then
        args="$(process_args "$pid")"
        [[ "$args" == *panectl* && "$args" == *daemon* ]] || pid=""
    fi
    if "$bin" daemon stop --help >/dev/null 2>&1; then
        "$bin" -S "$socket" daemon stop >/dev/null 2>&1 || return 1
    else
        [ -n "$pid" ] || return 1
        kill -TERM "$pid" 2>/dev/null || return 1
    fi
    # Gone when its process has ended (and with it its lock), not only its API.
    local tries=0
    while { [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; } ||
        daemon_health "$bin" "$socket" >/dev/null; do
        tries=$((tries + 1))
        [ "$tries" -lt 100 ] || return 1
        sleep 0.1
    done
}

# Starts the daemon unless one (the plugin's, or one started by hand) already serves this
# server; the daemon's lock makes a race between two reloads end with one daemon. A daemon older
# than the binary (panectl was updated) is restarted.
start_daemon() {
    local bin="$1" socket="$2" health running mine
    if health="$(daemon_health "$bin" "$socket")"; then
        running="$(json_string version "$health")"
        mine="$("$bin" --version 2>/dev/null)"
        mine="${mine##* }"
        if ! version_older "$running" "$mine"; then
            return 0
        fi
        if ! stop_daemon "$bin" "$socket" "$health"; then
            report_error "panectl: the running daemon is version $running, older than panectl $mine, and could not be stopped; stop it (or kill-server) and reload"
            return 1
        fi
    fi
    local dir
    dir="$(private_state_dir)"
    private_file "$dir/plugin-start.log"
    daemon_args
    if ! "$bin" -S "$socket" daemon --detach --exit-with-server \
        ${DAEMON_ARGS[@]+"${DAEMON_ARGS[@]}"} >"$dir/plugin-start.log" 2>&1; then
        if ! grep -q -e 'already running' -e 'already serves' "$dir/plugin-start.log"; then
            report_error "$(tail -n 1 "$dir/plugin-start.log")"
            return 1
        fi
        return 0
    fi
    # "panectl daemon started (pid N) ...": kept to stop this daemon after an update.
    local pid
    pid="$(sed -n 's/.*(pid \([0-9][0-9]*\)).*/\1/p' "$dir/plugin-start.log" | head -n 1)"
    [ -z "$pid" ] || tmux set-option -gq @panectl-daemon-pid "$pid"
}

# Says once per server that panectl is ready, with its keys: now on the attached clients, or
# on the first client that attaches (through a client-attached hook that removes itself).
announce_ready() {
    local message="panectl ready${READY_KEYS:+ — $READY_KEYS}" clients client shown=""
    [ -z "$(tmux show-option -gqv @panectl-ready-shown)" ] || return 0
    tmux set-option -gq @panectl-ready-message "$message"
    clients="$(tmux list-clients -F '#{client_control_mode} #{client_name}' 2>/dev/null)"
    while IFS= read -r client; do
        case "$client" in
            '0 '*)
                tell "${client#0 }" "$message"
                shown=on
                ;;
        esac
    done <<<"$clients"
    if [ -n "$shown" ]; then
        tmux set-option -gq @panectl-ready-shown on
        remove_ready_hook
    elif [ -z "$(ready_hooks)" ]; then
        tmux set-hook -ga client-attached "run-shell -b \"$(tmux_dquoted "$(shell_word \
            "$PLUGIN_DIR/plugin/keys.sh")") ready #{q:client_name}\""
    fi
}

# With @panectl-restore on, brings back the agents panectl launched (`panectl restore`) once
# per tmux server: the first time the plugin loads after tmux started. In the background, as
# the daemon may still be reading the server; @panectl-restored (gone with the server) says it
# ran.
restore_agents() {
    is_on "$(get_tmux_option @panectl-restore off)" || return 0
    [ -z "$(tmux show-option -gqv @panectl-restored)" ] || return 0
    tmux set-option -gq @panectl-restored on
    # Detached, with no output for run-shell to wait on; no tmux command string to expand.
    "$PLUGIN_DIR/plugin/restore.sh" "$1" "$2" </dev/null >/dev/null 2>&1 &
    disown
}

main() {
    local socket bin
    socket="$(tmux display-message -p '#{socket_path}')"
    # Defaults the daemon reads from tmux: messages on status changes.
    if [ -z "$(tmux show-option -gqv @panectl-notify)" ]; then
        tmux set-option -gq @panectl-notify on
    fi
    interpolate_status
    bin="$("$PLUGIN_DIR/plugin/binary.sh")"
    case $? in
        0) ;;
        1)
            # No binary yet: build one in the background (it runs this file again when done).
            tmux run-shell -b "$(shell_word "$PLUGIN_DIR/plugin/build.sh")"
            return 0
            ;;
        *) return 0 ;; # @panectl-bin is wrong; binary.sh said so
    esac
    tmux set-option -gqu @panectl-error
    window_status "$bin"
    bind_keys "$bin" "$socket"
    if start_daemon "$bin" "$socket"; then
        announce_ready
        restore_agents "$bin" "$socket"
    fi
}

main
