//! The server options that tell any client where the daemon is: `@panectl_api`,
//! `@panectl_pid` and `@panectl_version` (see [`super::discovery`]). Set once the API is up and
//! again whenever the server comes back; removed at a clean shutdown if they still name this
//! daemon.
//!
//! A daemon killed outright (SIGKILL, the OOM killer) cannot remove them, and a status line
//! would go on showing counts no one keeps current. So, on a local server, the same command line
//! sets a `client-detached` hook ([`WATCH_HOOK`]): the daemon's control clients go when it dies
//! (their connection runs through it), tmux runs the hook, and the hook removes the options
//! (and itself) once the process named in `@panectl_pid` is gone (a zombie counts as gone). It
//! asks `ps`, or `kill -0` where there is no `ps`, so it needs nothing of panectl's.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use super::discovery::{self, API_OPTION, PID_OPTION, VERSION_OPTION};
use crate::tmux::ServerAddress;
use crate::tmux::ServerStatus;

/// The hook that withdraws the options after a daemon that could not (see the module doc); a
/// fixed index, so a new daemon replaces an earlier one's and a user's own hooks stay.
pub const WATCH_HOOK: &str = "client-detached[4242]";

/// The server options a daemon publishes, all withdrawn when it stops.
const PUBLISHED: [&str; 4] = [
    PID_OPTION,
    API_OPTION,
    VERSION_OPTION,
    super::summary::SUMMARY_OPTION,
];

/// The tmux commands that withdraw [`PUBLISHED`], `;`-separated words.
fn withdraw_words() -> Vec<&'static str> {
    let mut words = Vec::new();
    for name in PUBLISHED {
        if !words.is_empty() {
            words.push(";");
        }
        words.extend(["set-option", "-s", "-u", name]);
    }
    words
}

/// The command [`WATCH_HOOK`] runs for daemon `pid`: when a client goes, if `@panectl_pid` still
/// names `pid` and that process is gone, withdraw the options and the hook. Only digits and
/// fixed text go into it (tmux expands `#{@panectl_pid}` itself, and a pid is digits).
fn watch_command(pid: u32) -> String {
    let alive = format!(
        "if command -v ps >/dev/null; then ps -o stat= -p {pid}; \
         else kill -0 {pid} 2>/dev/null && echo S; fi | grep -q \"^ *[^Z ]\""
    );
    let gone = format!("test \"#{{{PID_OPTION}}}\" = {pid} && ! {{ {alive}; }}");
    let withdraw = format!(
        "{} ; set-hook -g -u {WATCH_HOOK}",
        withdraw_words().join(" ")
    );
    format!("if-shell -b '{gone}' '{withdraw}'")
}

/// `set-option -s` of the three options, as one tmux command line (`;` separates commands), and
/// on a local server the hook that withdraws them if this daemon dies without doing it.
/// `None` if the socket path holds characters that are not safe in a tmux option.
fn set_arguments(api: &str, local: bool) -> Option<Vec<String>> {
    let api = discovery::option_value(api)?;
    let pid = discovery::option_value(&std::process::id().to_string())?;
    let version = discovery::option_value(env!("CARGO_PKG_VERSION"))?;
    let mut args = Vec::new();
    for (name, value) in [
        (API_OPTION, api),
        (VERSION_OPTION, version),
        (PID_OPTION, pid),
    ] {
        if !args.is_empty() {
            args.push(";".to_string());
        }
        args.extend([
            "set-option".to_string(),
            "-s".to_string(),
            name.to_string(),
            value.as_str().to_string(),
        ]);
    }
    if local {
        args.extend([
            ";".to_string(),
            "set-hook".to_string(),
            "-g".to_string(),
            WATCH_HOOK.to_string(),
            watch_command(std::process::id()),
        ]);
    }
    Some(args)
}

async fn publish(address: &ServerAddress, args: &[String]) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match address.run(&args).await {
        Ok(_) => debug!("published the API socket in the server's options"),
        Err(error) => warn!(%error, "cannot publish the API socket in the server's options"),
    }
}

/// Publishes the options whenever the server is (again) alive, until `cancel` fires.
pub async fn run(
    address: ServerAddress,
    api: PathBuf,
    mut status: watch::Receiver<ServerStatus>,
    cancel: CancellationToken,
) {
    let Some(args) = set_arguments(&api.display().to_string(), address.is_local()) else {
        warn!(
            api = %api.display(),
            "the API socket's path holds characters a tmux option cannot carry safely; \
             clients in other environments will not find this daemon"
        );
        return;
    };
    // At once if the server answers, so that a client in another environment finds the
    // daemon as soon as its API is up; then whenever the server comes back.
    let mut published = address.is_alive();
    if published {
        publish(&address, &args).await;
    }
    let mut was_alive = false;
    loop {
        let alive = status.borrow_and_update().server_alive;
        if was_alive && !alive {
            // The server went: its options went with it.
            published = false;
        }
        if alive && !published {
            publish(&address, &args).await;
            published = true;
        }
        was_alive = alive;
        tokio::select! {
            () = cancel.cancelled() => return,
            changed = status.changed() => if changed.is_err() { return },
        }
    }
}

/// Removes the options, and the status-line summary, if they still name this daemon (best
/// effort, a few seconds at most).
pub async fn withdraw(address: &ServerAddress) {
    if !address.is_alive() {
        return;
    }
    let ours = std::process::id().to_string();
    let work = async {
        let pid = address
            .run(&["show-options", "-sqv", PID_OPTION])
            .await
            .ok()
            .and_then(|lines| lines.first().map(ToString::to_string));
        if pid.as_deref() != Some(ours.as_str()) {
            return;
        }
        // The status-line summary too: a daemon that stopped counts nothing, and a summary
        // left behind would show statuses no one keeps current. The hook goes with them.
        let mut args = withdraw_words();
        args.extend([";", "set-hook", "-g", "-u", WATCH_HOOK]);
        if let Err(error) = address.run(&args).await {
            debug!(%error, "cannot remove the published options");
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(3), work).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_options_are_set_in_one_line_and_unsafe_paths_are_refused() {
        let args = set_arguments("/run/user/1/panectl/default-0a1b2c3d.sock", false).unwrap();
        assert_eq!(args.iter().filter(|a| *a == ";").count(), 2);
        assert_eq!(args[2], API_OPTION);
        assert_eq!(args[3], "/run/user/1/panectl/default-0a1b2c3d.sock");
        assert_eq!(args.last().unwrap(), &std::process::id().to_string());
        assert!(set_arguments("/tmp/#{pane_id};x", false).is_none());
        // On a local server the watch hook comes last, in the same line.
        let local = set_arguments("/run/user/1/panectl/default-0a1b2c3d.sock", true).unwrap();
        assert_eq!(local[local.len() - 2], WATCH_HOOK);
        assert_eq!(local[local.len() - 3], "-g");
    }

    #[test]
    fn the_watch_hook_holds_no_single_quote_but_its_own_and_names_this_pid() {
        let command = watch_command(4321);
        assert_eq!(command.matches('\'').count(), 4, "{command}");
        assert!(command.contains("ps -o stat= -p 4321"), "{command}");
        assert!(command.contains("\"#{@panectl_pid}\" = 4321"), "{command}");
        for name in PUBLISHED {
            assert!(command.contains(name), "{name}: {command}");
        }
    }
}
