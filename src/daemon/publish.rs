//! The server options that tell any client where the daemon is: `@panectl_api`,
//! `@panectl_pid` and `@panectl_version` (see [`super::discovery`]). Set once the API is up and
//! again whenever the server comes back; removed at a clean shutdown if they still name this
//! daemon.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use super::discovery::{self, API_OPTION, PID_OPTION, VERSION_OPTION};
use crate::tmux::ServerAddress;
use crate::tmux::ServerStatus;

/// `set-option -s` of the three options, as one tmux command line (`;` separates commands).
/// `None` if the socket path holds characters that are not safe in a tmux option.
fn set_arguments(api: &str) -> Option<Vec<String>> {
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
    let Some(args) = set_arguments(&api.display().to_string()) else {
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
        let mut args = Vec::new();
        // The status-line summary too: a daemon that stopped counts nothing, and a summary
        // left behind would show statuses no one keeps current.
        for name in [
            PID_OPTION,
            API_OPTION,
            VERSION_OPTION,
            super::summary::SUMMARY_OPTION,
        ] {
            if !args.is_empty() {
                args.push(";");
            }
            args.extend(["set-option", "-s", "-u", name]);
        }
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
        let args = set_arguments("/run/user/1/panectl/default-0a1b2c3d.sock").unwrap();
        assert_eq!(args.iter().filter(|a| *a == ";").count(), 2);
        assert_eq!(args[2], API_OPTION);
        assert_eq!(args[3], "/run/user/1/panectl/default-0a1b2c3d.sock");
        assert_eq!(args.last().unwrap(), &std::process::id().to_string());
        assert!(set_arguments("/tmp/#{pane_id};x").is_none());
    }
}
