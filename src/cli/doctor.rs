//! `panectl doctor`: what stands between this machine and a working panectl, one check a
//! line, each with what to do about it.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use panectl::api::routes::Route;
use panectl::api::wire::Health;
use panectl::daemon::discovery;
use panectl::tmux::ServerAddress;
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

/// `tmux -V` of this machine's tmux: the one a local server runs.
fn local_tmux_check(checks: &mut Vec<Check>) -> Option<TmuxVersion> {
    match tmux_binary() {
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
    }
}

/// A server on another host: whether the host answers over ssh, its tmux, and how control
/// clients attach there.
fn host_checks(
    checks: &mut Vec<Check>,
    address: &ServerAddress,
    remote: Result<panectl::host::info::RemoteInfo, panectl::host::info::RemoteError>,
) -> Option<TmuxVersion> {
    let host = address.host().name();
    let info = match remote {
        Ok(info) => info,
        Err(why) => {
            checks.push(check(
                "host",
                Level::Fail,
                format!(
                    "{host} cannot be reached: {why} (panectl runs ssh without prompts: `ssh \
                     DEST true` must work with a key or an agent; PANECTL_SSH_COMMAND or \
                     --ssh-command can add options)"
                ),
            ));
            return None;
        }
    };
    match info.attach_way() {
        Ok(way) => checks.push(check("host", Level::Ok, format!("{host} answers; {way}"))),
        Err(why) => checks.push(check("host", Level::Fail, format!("{host}: {why}"))),
    }
    let text = info.tmux.as_deref()?;
    let version = TmuxVersion::parse(text);
    match version {
        Some(v) if v < versions::MINIMUM => checks.push(check(
            "tmux",
            Level::Fail,
            format!(
                "tmux {text} on {host}: panectl needs tmux {} or newer",
                versions::MINIMUM
            ),
        )),
        _ => checks.push(check("tmux", Level::Ok, format!("tmux {text} on {host}"))),
    }
    version
}

fn checks(server: &ServerArgs) -> anyhow::Result<Vec<Check>> {
    let mut checks = Vec::new();
    let address = server.address()?;
    let remote = address.host().check();
    let binary = match remote {
        Some(remote) => host_checks(&mut checks, &address, remote),
        None => local_tmux_check(&mut checks),
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
        let differences = versions::model_differences(&version);
        if differences.is_empty() {
            checks.push(check(
                "model",
                Level::Ok,
                format!("the screen model follows tmux {version} cell for cell"),
            ));
        } else {
            checks.push(check(
                "model",
                Level::Note,
                format!(
                    "with tmux {version}: {}; the daemon resyncs a pane where it sees a \
                     difference (BENCHMARKS.md, \"tmux versions\")",
                    differences.join("; ")
                ),
            ));
        }
        let crashes = versions::known_crashes(&version);
        if crashes.is_empty() {
            checks.push(check(
                "crashes",
                Level::Ok,
                format!("no control-mode crash known in tmux {version}"),
            ));
        } else {
            // One line: it is no problem of this machine (the JSON names each crash).
            let names: Vec<&str> = crashes.iter().map(|c| c.name).collect();
            let message = format!(
                "tmux {version} has {} known control-mode crashes, which panectl avoids \
                 (other control-mode clients may not): {}; see docs/tmux-crashes.md",
                crashes.len(),
                names.join(", ")
            );
            checks.push(check("crashes", Level::Note, message));
        }
    }
    let found = discovery::find_api(&address);
    let daemon = client(server)?;
    let health =
        match block_on(async { Ok(daemon.get_json::<Health>(&Route::Health {}.path()).await) }) {
            Ok(Ok(health)) => Some(health),
            Ok(Err(error)) => {
                checks.push(check("daemon", Level::Warn, format!("{error}")));
                None
            }
            Err(error) => {
                checks.push(check("daemon", Level::Warn, format!("{error:#}")));
                None
            }
        };
    if let Some(health) = &health {
        daemon_checks(&mut checks, health, found.published);
    }
    // The server's environment and plugin options are the remote host's: nothing to
    // compare with this machine.
    if address.is_local() {
        runtime_check(&mut checks, &address, found.published);
    }
    files_check(&mut checks, &address);
    if address.is_local() {
        plugin_checks(&mut checks, &address);
    }
    Ok(checks)
}

/// Checks of a running daemon: its version against this binary's, its health, its API socket,
/// its log and its provider rules.
fn daemon_checks(checks: &mut Vec<Check>, health: &Health, published: bool) {
    let ours = env!("CARGO_PKG_VERSION");
    let found = if published {
        " (found through the server's @panectl_api)"
    } else {
        ""
    };
    if health.version != ours {
        checks.push(check(
            "daemon",
            Level::Warn,
            format!(
                "the daemon (pid {}) runs {}, this panectl is {ours}: panectl daemon restart",
                health.pid, health.version
            ),
        ));
    } else if health.status != "ok" {
        let mut message = format!(
            "panectl {} (pid {}) is {}{found}:",
            health.version, health.pid, health.status
        );
        for reason in &health.reasons {
            message.push_str(&format!("\n- {reason}"));
        }
        checks.push(check("daemon", Level::Warn, message));
    } else {
        checks.push(check(
            "daemon",
            Level::Ok,
            format!(
                "panectl {} is running (pid {}, up {} s, {} of {} sessions attached){found}",
                health.version, health.pid, health.uptime_seconds, health.attached, health.sessions
            ),
        ));
    }
    let api = std::path::Path::new(&health.api_socket);
    if discovery::is_own_socket(api) {
        checks.push(check(
            "api",
            Level::Ok,
            format!("{} (a socket of yours)", api.display()),
        ));
    } else {
        checks.push(check(
            "api",
            Level::Warn,
            format!(
                "{} is missing or not a socket of yours: panectl daemon restart",
                api.display()
            ),
        ));
    }
    match &health.log_file {
        None => checks.push(check(
            "log",
            Level::Note,
            "the daemon logs to its stderr (started in the foreground without --log-file)",
        )),
        Some(log) => {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            let errors: Vec<&str> = text
                .lines()
                .filter(|line| line.contains(" ERROR ") || line.contains(" WARN "))
                .collect();
            if errors.is_empty() {
                checks.push(check("log", Level::Ok, format!("{log} (no warnings)")));
            } else {
                let mut message = format!(
                    "{log} has {} warnings or errors; the last ones:",
                    errors.len()
                );
                for line in &errors[errors.len().saturating_sub(3)..] {
                    message.push_str(&format!("\n{}", line.trim()));
                }
                checks.push(check("log", Level::Note, message));
            }
        }
    }
    if health.rules_errors.is_empty() {
        checks.push(check("rules", Level::Ok, "the provider rule files load"));
    } else {
        let mut message = String::from(
            "errors in the provider rule files (the last good rules stay in force; fix the \
             file and the daemon reloads it within 2 s):",
        );
        for error in &health.rules_errors {
            message.push_str(&format!("\n- {error}"));
        }
        checks.push(check("rules", Level::Warn, message));
    }
}

/// This shell's `XDG_RUNTIME_DIR` against the tmux server's global environment's.
fn runtime_check(checks: &mut Vec<Check>, address: &ServerAddress, published: bool) {
    if !address.is_alive() {
        return;
    }
    let ours = std::env::var("XDG_RUNTIME_DIR").unwrap_or_default();
    let theirs = discovery::tmux_output(address, &["show-environment", "-g", "XDG_RUNTIME_DIR"])
        .and_then(|line| {
            line.trim_end()
                .strip_prefix("XDG_RUNTIME_DIR=")
                .map(str::to_string)
        })
        .unwrap_or_default();
    let shown = |dir: &str| {
        if dir.is_empty() {
            "unset".to_string()
        } else {
            dir.to_string()
        }
    };
    if ours == theirs {
        checks.push(check(
            "runtime",
            Level::Ok,
            format!(
                "XDG_RUNTIME_DIR {} here and in the tmux server",
                shown(&ours)
            ),
        ));
    } else {
        let mut message = format!(
            "XDG_RUNTIME_DIR is {} here but {} in the tmux server: a daemon started from one \
             keeps its API socket where the other does not look; clients find it through the \
             server's @panectl_api, and a second daemon is refused",
            shown(&ours),
            shown(&theirs)
        );
        if published {
            message.push_str(" (as now)");
        }
        checks.push(check("runtime", Level::Note, message));
    }
}

/// The runtime directory and the inbox's directory, by the rules the daemon applies (see
/// `panectl::trust`): a directory another user planted or can write is reported here before the
/// daemon refuses it.
fn files_check(checks: &mut Vec<Check>, address: &ServerAddress) {
    use panectl::trust::{Access, check_dir, is_missing};
    let paths = panectl::paths::RuntimePaths::for_server(address);
    let mut problems = Vec::new();
    if let Err(error) = check_dir("runtime directory", paths.dir(), Access::Private)
        && !is_missing(&error)
    {
        problems.push(error.to_string());
    }
    match panectl::inbox::default_path(paths.stem()) {
        Ok(inbox) => {
            if let Some(dir) = inbox.parent()
                && let Err(error) = check_dir("inbox directory", dir, Access::NotWritable)
                && !is_missing(&error)
            {
                problems.push(error.to_string());
            }
        }
        Err(error) => problems.push(error.to_string()),
    }
    if problems.is_empty() {
        checks.push(check(
            "files",
            Level::Ok,
            format!("{} is private to you", paths.dir().display()),
        ));
    } else {
        checks.push(check("files", Level::Fail, problems.join("\n")));
    }
}

/// The tmux plugin's options: `@panectl-binary` (the binary it uses and how it found it),
/// `@panectl-bin` and `@panectl-error`.
fn plugin_checks(checks: &mut Vec<Check>, address: &ServerAddress) {
    if !address.is_alive() {
        return;
    }
    let option = |name: &str| {
        discovery::tmux_output(address, &["show-options", "-gqv", name])
            .map(|v| v.trim_end_matches('\n').to_string())
            .filter(|v| !v.is_empty())
    };
    let bin = option("@panectl-bin");
    let error = option("@panectl-error");
    if let Some(used) = option("@panectl-binary") {
        checks.push(check(
            "plugin",
            Level::Ok,
            format!("the plugin runs {used}"),
        ));
    }
    if let Some(bin) = &bin {
        let executable = std::fs::metadata(bin).is_ok_and(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        });
        if executable {
            checks.push(check("plugin", Level::Ok, format!("@panectl-bin is {bin}")));
        } else {
            checks.push(check(
                "plugin",
                Level::Warn,
                format!(
                    "@panectl-bin is {bin}, which is not an executable file: set it to the \
                     panectl binary (or unset it to use the one on PATH) and reload the plugin"
                ),
            ));
        }
    }
    match error {
        Some(error) => checks.push(check(
            "plugin",
            Level::Warn,
            format!("the plugin reported: {error} (fix it, then reload: tmux source ~/.tmux.conf)"),
        )),
        None if bin.is_none() => checks.push(check(
            "plugin",
            Level::Ok,
            "no plugin error reported (@panectl-error unset)",
        )),
        None => {}
    }
}

/// What `panectl doctor` is given.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print the checks as one JSON document.
    #[arg(long)]
    json: bool,
}

impl super::Run for DoctorArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        doctor(server, self.json)
    }
}

/// Runs the checks; exit 1 if one failed.
fn doctor(server: &ServerArgs, json: bool) -> anyhow::Result<ExitCode> {
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
            // A message may quote what tmux holds (an option's value, say).
            let mut lines = check.message.lines().map(super::client::printable);
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
    // A warning is a check that did not pass either (no server, no daemon): `doctor && ...`
    // goes on only when everything is in place.
    Ok(
        if checks
            .iter()
            .any(|c| matches!(c.level, Level::Fail | Level::Warn))
        {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    )
}
