//! Starting the daemon in the background (`--detach`): a new session, its log in the runtime
//! directory, and a return once its API answers; and the log itself, to a file or stderr.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use panectl::api::routes::Route;
use panectl::api::wire::Health;
use panectl::daemon::{self, DaemonOptions, discovery};

use super::args::DaemonArgs;
use crate::cli::client::block_on;

/// Sets up the log: to `log_file` (created 0600, refused when another user owns it), else to
/// stderr.
pub(super) fn init_logging(log_file: Option<&PathBuf>) -> anyhow::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PANECTL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    match log_file {
        Some(path) => {
            use std::os::unix::fs::OpenOptionsExt;
            // Created 0600 (messages and pane names go into it); one of another user refused.
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(path)
                .with_context(|| format!("cannot open the log file {}", path.display()))?;
            let metadata = file
                .metadata()
                .with_context(|| format!("cannot read the log file {}", path.display()))?;
            if metadata.is_file() {
                use std::os::unix::fs::MetadataExt;
                if metadata.uid() != panectl::trust::uid() {
                    bail!(
                        "the log file {} belongs to uid {}, not to you; remove it or choose \
                         another --log-file",
                        path.display(),
                        metadata.uid()
                    );
                }
            }
            builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .init();
        }
        None => builder.with_writer(std::io::stderr).init(),
    }
    Ok(())
}

/// Starts `panectl daemon` in a new session with its log in the runtime directory, and returns
/// once its API answers. The child gets this command line as it was typed, `--detach` taken
/// out (`forward`), so no flag can be left behind, and reads the same config file.
pub(super) fn detach(
    args: &DaemonArgs,
    forward: &[OsString],
    options: &DaemonOptions,
) -> anyhow::Result<ExitCode> {
    if !args.wait_for_server && !options.address.is_alive() {
        bail!(
            "no tmux server at {}; start tmux first, or pass --wait-for-server",
            options.address
        );
    }
    // Fail here, with a clear message, if a daemon already runs.
    drop(daemon::lock(options)?);
    let log = args.log_file.clone().unwrap_or_else(|| options.paths.log());
    let exe = std::env::current_exe().context("cannot find the panectl executable")?;
    let mut command = std::process::Command::new(exe);
    command.args(forward);
    if args.log_file.is_none() {
        let mut word = OsString::from("--log-file=");
        word.push(&log);
        command.arg(word);
    }
    // What the daemon says before its log is set up, or as it fails (the error the binary
    // prints on its way out), goes to the log too: "see the log" then finds the reason.
    let stderr = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&log)
            .map_or_else(|_| Stdio::null(), Stdio::from)
    };
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    let mut child = command.spawn().context("cannot start the daemon")?;
    let socket = options.paths.socket();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if std::os::unix::net::UnixStream::connect(&socket).is_ok() {
            wait_for_publication(options, child.id());
            wait_until_started(options, &socket);
            println!(
                "panectl daemon started (pid {}) for the tmux server {}; API {}; log {}",
                child.id(),
                options.address,
                socket.display(),
                log.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        if let Some(status) = child.try_wait()? {
            bail!(
                "the daemon exited at start ({status}): {}(the whole log: {})",
                last_words(&log),
                log.display()
            );
        }
        if Instant::now() > deadline {
            bail!(
                "the daemon did not open its API within 10 s; see {}",
                log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The last line the log holds (the reason a daemon exited), followed by a space; empty when
/// there is none.
fn last_words(log: &std::path::Path) -> String {
    let text = std::fs::read(log).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| format!("{} ", l.trim().escape_debug()))
        .unwrap_or_default()
}

/// Waits (a few seconds at most) until the server's `@panectl_pid` names the daemon started, so
/// that clients in other environments find it once `--detach` returns.
fn wait_for_publication(options: &DaemonOptions, pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while options.address.is_alive() && Instant::now() < deadline {
        let published = discovery::server_option(&options.address, discovery::PID_OPTION);
        if published.is_some_and(|p| p.trim() == pid.to_string()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (10 s at most) until the daemon's health no longer says `starting`: the panes of
/// every session are known once `--detach` returns.
fn wait_until_started(options: &DaemonOptions, socket: &std::path::Path) {
    let client = panectl::api::client::ApiClient::new(
        socket.to_path_buf(),
        options.address.to_string(),
        String::new(),
    );
    let waited = block_on(async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while tokio::time::Instant::now() < deadline {
            match client.get_json::<Health>(&Route::Health {}.path()).await {
                Ok(health) if health.status == "starting" => {}
                _ => return Ok(()),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    });
    if let Err(error) = waited {
        tracing::debug!(%error, "cannot wait for the daemon's start");
    }
}
