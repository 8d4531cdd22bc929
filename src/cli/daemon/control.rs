//! `panectl daemon stop|restart|status`: finding the daemon that runs (by its API, else by
//! its pid in the server's option or its lock files), stopping it, and starting it again.

use std::ffi::OsString;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use panectl::api::client::ClientError;
use panectl::api::routes::Route;
use panectl::api::wire::Health;
use panectl::daemon::discovery;
use panectl::paths::RuntimePaths;

use super::args::without_detach;
use crate::cli::ServerArgs;
use crate::cli::client::{block_on, client};

/// The health of the daemon serving the server, found as any client finds it; `None` when
/// none answers.
fn running(server: &ServerArgs) -> anyhow::Result<Option<Health>> {
    let client = client(server)?;
    let answer = block_on(async { Ok(client.get_json::<Health>(&Route::Health {}.path()).await) })?;
    match answer {
        Ok(health) => Ok(Some(health)),
        Err(ClientError::NoDaemon { .. }) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// Whether the process looks like a panectl daemon of this user: its command line is
/// `panectl ... daemon ...` and it belongs to this user (when its facts can be read).
fn looks_like_daemon(pid: u32) -> bool {
    let Some(process) = panectl::os::process::info(pid) else {
        return true;
    };
    let mut words = process.arguments.iter().map(|w| w.as_encoded_bytes());
    let program = words.next().unwrap_or_default();
    let name = program.rsplit(|&b| b == b'/').next().unwrap_or_default();
    let daemon = process.arguments.is_empty()
        || (name.starts_with(b"panectl") && words.any(|word| word == b"daemon"));
    process.uid == nix::unistd::getuid().as_raw() && daemon
}

/// The daemon's pid: from its health, else (its API does not answer: its socket was deleted,
/// say) from the server's `@panectl_pid` or the owner written in its lock files, when that
/// process lives and looks like a panectl daemon of this user.
fn daemon_pid(server: &ServerArgs, health: Option<&Health>) -> anyhow::Result<Option<u32>> {
    if let Some(pid) = health.map(|h| h.pid).filter(|pid| *pid != 0) {
        return Ok(Some(pid));
    }
    let address = server.address()?;
    let locks = [
        Some(RuntimePaths::for_server(&address).lock()),
        discovery::server_lock_path(&address),
    ];
    let owners = locks.into_iter().flatten().filter_map(|lock| {
        discovery::read_lock_owner(&lock)
            .map(|(pid, _)| pid)
            .filter(|pid| discovery::holds_lock(*pid, &lock))
    });
    Ok(discovery::published(&address)
        .pid
        .into_iter()
        .chain(owners)
        .filter(|pid| *pid != std::process::id())
        .find(|pid| discovery::process_alive(*pid) && looks_like_daemon(*pid)))
}

/// Sends SIGTERM and waits up to `timeout` for the process to end.
fn terminate(pid: u32, timeout: Duration) -> anyhow::Result<bool> {
    let raw = i32::try_from(pid).context("pid out of range")?;
    match nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(raw),
        nix::sys::signal::Signal::SIGTERM,
    ) {
        Ok(()) => {}
        Err(nix::errno::Errno::ESRCH) => return Ok(true),
        Err(error) => bail!("cannot signal the daemon (pid {pid}): {error}"),
    }
    let deadline = Instant::now() + timeout;
    while discovery::process_alive(pid) {
        if Instant::now() > deadline {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(true)
}

/// Stops the daemon; `Ok(None)` when none was running, `Ok(Some(pid))` once it has ended.
fn stop_daemon(
    server: &ServerArgs,
    health: Option<&Health>,
    timeout: Duration,
) -> anyhow::Result<Option<u32>> {
    let Some(pid) = daemon_pid(server, health)? else {
        if let Some(health) = health {
            bail!(
                "the daemon (panectl {}) does not report its pid; stop it by hand",
                health.version
            );
        }
        return Ok(None);
    };
    if !terminate(pid, timeout)? {
        bail!(
            "the daemon (pid {pid}) did not stop within {} s",
            timeout.as_secs()
        );
    }
    Ok(Some(pid))
}

/// `panectl daemon stop`.
pub(super) fn stop(server: &ServerArgs, timeout: Duration) -> anyhow::Result<ExitCode> {
    let address = server.address()?;
    let health = running(server)?;
    match stop_daemon(server, health.as_ref(), timeout)? {
        Some(pid) => {
            println!("stopped the panectl daemon (pid {pid}) of the tmux server {address}")
        }
        None => println!("no daemon was running for the tmux server {address}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `panectl daemon restart`: the old daemon's command line and environment, started again
/// detached once it has stopped.
pub(super) fn restart(server: &ServerArgs, timeout: Duration) -> anyhow::Result<ExitCode> {
    let address = server.address()?;
    let exe = std::env::current_exe().context("cannot find the panectl executable")?;
    let health = running(server)?;
    let pid = daemon_pid(server, health.as_ref())?;
    // The old daemon's arguments (after the program name) and environment.
    let old_args: Option<Vec<OsString>> = health
        .as_ref()
        .map(|h| {
            h.command_line
                .iter()
                .map(OsString::from)
                .collect::<Vec<_>>()
        })
        .filter(|words| !words.is_empty())
        .or_else(|| pid.and_then(|pid| panectl::os::process::info(pid).map(|p| p.arguments)))
        .map(|words| words.into_iter().skip(1).collect());
    let environment = pid.and_then(panectl::os::process::environment);
    let mut command = std::process::Command::new(exe);
    match &old_args {
        Some(words) => {
            command.args(without_detach(words.iter().cloned()));
        }
        None if pid.is_some() => bail!(
            "cannot read the command line of the daemon (pid {}); stop it with `panectl daemon \
             stop` and start it again by hand",
            pid.unwrap_or_default()
        ),
        None => {
            command.arg("-S").arg(address.socket()).arg("daemon");
        }
    }
    command.arg("--detach");
    if let Some(environment) = environment {
        command.env_clear();
        for entry in environment {
            let entry = entry.to_string_lossy().into_owned();
            if let Some((key, value)) = entry.split_once('=')
                && key != "TMUX"
            {
                command.env(key, value);
            }
        }
    }
    match stop_daemon(server, health.as_ref(), timeout)? {
        Some(pid) => println!("stopped the panectl daemon (pid {pid})"),
        None => println!("no daemon was running for the tmux server {address}; starting one"),
    }
    let status = command
        .stdin(Stdio::null())
        .status()
        .context("cannot start the daemon again")?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `panectl daemon status [--json]`.
pub(super) fn status(server: &ServerArgs, json: bool) -> anyhow::Result<ExitCode> {
    let address = server.address()?;
    let health = running(server)?;
    if json {
        let value = match &health {
            Some(health) => serde_json::json!({
                "running": true,
                "tmux_socket": address.to_string(),
                "pid": health.pid,
                "version": health.version,
                "uptime_seconds": health.uptime_seconds,
                "api_socket": health.api_socket,
                "log_file": health.log_file,
                "status": health.status,
                "command_line": health.command_line,
            }),
            None => serde_json::json!({
                "running": false,
                "tmux_socket": address.to_string(),
            }),
        };
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        match &health {
            Some(health) => {
                println!(
                    "running       pid {}, panectl {}",
                    health.pid, health.version
                );
                println!("uptime        {} s", health.uptime_seconds);
                println!("status        {}", health.status);
                println!("tmux          {}", health.tmux_socket);
                println!("api           {}", health.api_socket);
                println!(
                    "log           {}",
                    health.log_file.as_deref().unwrap_or("(its stderr)")
                );
            }
            None => println!("not running   no daemon serves the tmux server {address}"),
        }
    }
    Ok(if health.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
