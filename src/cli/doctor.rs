//! `panectl doctor`: what stands between this machine and a working panectl, one check a
//! line, each with what to do about it.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use panectl::api::server::Health;
use panectl::tmux::versions::{self, TmuxVersion};
use serde::Serialize;

use super::ServerArgs;
use super::client::{block_on, client};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Level {
    Ok,
    /// Works, with something to know.
    Note,
    /// Needs attention.
    Warn,
    /// panectl cannot work until it is fixed.
    Fail,
}

#[derive(Debug, Serialize)]
struct Check {
    check: &'static str,
    level: Level,
    message: String,
}

fn check(check: &'static str, level: Level, message: impl Into<String>) -> Check {
    Check {
        check,
        level,
        message: message.into(),
    }
}

/// `tmux -V` of the binary panectl runs.
fn tmux_binary() -> Result<String, String> {
    let output = std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .map_err(|error| format!("cannot run tmux: {error}"))?;
    if !output.status.success() {
        return Err(format!("tmux -V failed: {}", output.status));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// The running server's `#{version}` (it may be older than the binary, if the binary was
/// upgraded while the server ran).
fn server_version(server: &ServerArgs) -> anyhow::Result<Option<String>> {
    let address = server.address()?;
    if !address.is_alive() {
        return Ok(None);
    }
    let lines = block_on(async {
        Ok(tokio::time::timeout(
            Duration::from_secs(5),
            address.run(&["display-message", "-p", "#{version}"]),
        )
        .await??)
    })?;
    Ok(lines.first().map(ToString::to_string))
}

fn checks(server: &ServerArgs) -> anyhow::Result<Vec<Check>> {
    let mut checks = Vec::new();
    let address = server.address()?;
    let binary = match tmux_binary() {
        Ok(text) => {
            let version = TmuxVersion::parse(&text);
            match version {
                Some(version) if version < versions::MINIMUM => checks.push(check(
                    "tmux",
                    Level::Fail,
                    format!("{text}: panectl needs tmux {} or newer", versions::MINIMUM),
                )),
                _ => checks.push(check("tmux", Level::Ok, text.clone())),
            }
            version
        }
        Err(error) => {
            checks.push(check(
                "tmux",
                Level::Fail,
                format!("{error} (install tmux 3.2 or newer)"),
            ));
            None
        }
    };
    let running = match server_version(server) {
        Ok(Some(text)) => {
            let version = TmuxVersion::parse(&text);
            let level = if version.is_some_and(|v| v < versions::MINIMUM) {
                Level::Fail
            } else {
                Level::Ok
            };
            checks.push(check("server", level, format!("tmux {text} at {address}")));
            version
        }
        Ok(None) => {
            checks.push(check(
                "server",
                Level::Warn,
                format!(
                    "no tmux server at {address} (start tmux; a daemon waits for it, or give -L/-S)"
                ),
            ));
            None
        }
        Err(error) => {
            checks.push(check(
                "server",
                Level::Warn,
                format!("tmux server at {address} does not answer: {error:#}"),
            ));
            None
        }
    };
    if let Some(version) = running.or(binary) {
        let crashes = versions::known_crashes(&version);
        if crashes.is_empty() {
            checks.push(check(
                "crashes",
                Level::Ok,
                format!("no control-mode crash known in tmux {version}"),
            ));
        } else {
            let mut message = format!(
                "tmux {version} has {} known control-mode crashes (docs/tmux-crashes.md); \
                 panectl avoids them, other control-mode clients on this server may not:",
                crashes.len()
            );
            for crash in crashes {
                message.push_str(&format!(
                    "\n- {}: {}; {}",
                    crash.name, crash.trigger, crash.avoided_by
                ));
            }
            checks.push(check("crashes", Level::Note, message));
        }
    }
    let daemon = client(server)?;
    match block_on(async { Ok(daemon.get_json::<Health>("/v1/health").await?) }) {
        Ok(health) => {
            let level = if health.status == "ok" {
                Level::Ok
            } else {
                Level::Warn
            };
            checks.push(check(
                "daemon",
                level,
                format!(
                    "panectl {} is running ({}, {} sessions, api {})",
                    health.version, health.status, health.sessions, health.api_socket
                ),
            ));
        }
        Err(error) => checks.push(check("daemon", Level::Warn, format!("{error:#}"))),
    }
    Ok(checks)
}

/// Runs the checks; exit 1 if one failed.
pub fn doctor(server: &ServerArgs, json: bool) -> anyhow::Result<ExitCode> {
    let checks = checks(server)?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &checks)?;
        writeln!(out)?;
    } else {
        for check in &checks {
            let level = match check.level {
                Level::Ok => "ok",
                Level::Note => "note",
                Level::Warn => "warn",
                Level::Fail => "FAIL",
            };
            let mut lines = check.message.lines();
            writeln!(
                out,
                "{level:<5} {:<8} {}",
                check.check,
                lines.next().unwrap_or_default()
            )?;
            for line in lines {
                writeln!(out, "{:<14} {line}", "")?;
            }
        }
    }
    Ok(if checks.iter().any(|c| c.level == Level::Fail) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
