//! The flags of `panectl daemon`, and the words they are given as: the command line's, merged
//! with the `[daemon]` table of the config file ([`crate::cli::config`]) by parsing them again.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, FromArgMatches};

use crate::cli::duration;

/// `--transport`: a pane transport, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum TransportMode {
    Control,
    Pipe,
    #[value(name = "cross-check", alias = "cross_check")]
    CrossCheck,
    Auto,
}

/// Options of `panectl daemon`. Every one but `--detach` and `--config` can also be set in
/// the `[daemon]` table of the config file (key: the flag without `--`, `-` or `_`).
#[derive(Debug, Clone, Args)]
pub struct DaemonArgs {
    /// Start in the background and return once the API is up. Fails at once when no tmux
    /// server runs (see `--wait-for-server`).
    #[arg(long)]
    pub(super) detach: bool,
    /// The config file (default `$XDG_CONFIG_HOME/panectl/config.toml`, else
    /// `~/.config/panectl/config.toml`); its `[daemon]` table sets defaults for these flags.
    #[arg(long, value_name = "PATH")]
    pub(super) config: Option<PathBuf>,
    /// With `--detach`: start even when no tmux server runs yet, and wait for one.
    #[arg(long)]
    pub(super) wait_for_server: bool,
    /// Stop when the tmux server stops (what the tmux plugin uses); by default the daemon waits
    /// for the server to come back.
    #[arg(long)]
    pub(super) exit_with_server: bool,
    /// How long a pane's output may wait for the daemon before tmux pauses the pane (which the
    /// daemon then resyncs), in whole seconds (tmux's unit); 0 turns flow control off (tmux
    /// then holds programs back while the daemon is behind, even while it is stopped).
    #[arg(long, default_value = "5s", value_name = "DURATION",
          value_parser = duration::parse_whole_seconds_or_zero)]
    pub(super) pause_after: u32,
    /// The output rate at or above which a pane on the control transport floods: kept up for
    /// 0.3 s, the pane's output moves to the pipe transport (tmux encodes every byte as
    /// `%output` for the daemon, about three times the CPU of the output alone; a pipe costs it
    /// next to nothing), and back once it stays under a tenth of the rate for 2 s. 0: never.
    #[arg(long, default_value_t = 2_000_000, value_name = "BYTES_PER_SECOND")]
    pub(super) flood_rate: u64,
    /// Bytes of recent output kept per pane.
    #[arg(long, default_value_t = 128 * 1024, value_name = "BYTES")]
    pub(super) ring_bytes: usize,
    /// How often the divergence watchdog compares screens that changed with tmux's.
    #[arg(long, default_value = "2s", value_name = "DURATION", value_parser = duration::parse)]
    pub(super) watchdog: Duration,
    /// Where panes' output comes from: `control` (`%output` of one control client per session),
    /// `pipe` (`pipe-pane -O` into a private FIFO per pane, with a liveness watchdog; a pane
    /// whose pipe fails falls back to control), `cross-check` (both, compared byte by byte) or
    /// `auto` (control; a session whose control client keeps failing moves to pipes, and back
    /// once it holds). `panectl transport` changes one pane.
    #[arg(long, value_enum, default_value_t = TransportMode::Control)]
    pub(super) transport: TransportMode,
    /// With `--transport auto`: unexpected ends of a session's control client within
    /// `--auto-window` that move its panes to pipes.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub(super) auto_failures: u32,
    /// See `--auto-failures`.
    #[arg(long, default_value = "60s", value_name = "DURATION", value_parser = duration::parse)]
    pub(super) auto_window: Duration,
    /// With `--transport auto`: how long the control client of a session on pipes must hold
    /// before its panes go back to it.
    #[arg(long, default_value = "60s", value_name = "DURATION", value_parser = duration::parse)]
    pub(super) auto_recover: Duration,
    /// How long a command may wait for tmux's reply.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = duration::parse)]
    pub(super) command_timeout: Duration,
    /// Directory of provider rule files that add to or replace the built-in ones (default
    /// `$XDG_CONFIG_HOME/panectl/providers`). Re-read when it changes, and on SIGHUP.
    #[arg(long, value_name = "DIR")]
    pub(super) rules_dir: Option<PathBuf>,
    /// Evaluate a pane's status once its output has been quiet this long.
    #[arg(long, default_value = "15ms", value_name = "DURATION",
          value_parser = duration::parse_or_zero)]
    pub(super) status_quiet: Duration,
    /// Evaluate a busy pane's status at least this often.
    #[arg(long, default_value = "60ms", value_name = "DURATION", value_parser = duration::parse)]
    pub(super) status_max_wait: Duration,
    /// The inbox database (default `$XDG_STATE_HOME/panectl/<server>/inbox.sqlite`, else
    /// under `$HOME/.local/state`, else under the user's home from the user database; never a
    /// shared directory). Refused unless it and its directory are the user's own.
    #[arg(long, value_name = "PATH")]
    pub(super) inbox: Option<PathBuf>,
    /// Wait this long between pasting a message and pressing Enter.
    #[arg(long, default_value = "200ms", value_name = "DURATION", value_parser = duration::parse)]
    pub(super) submit_delay: Duration,
    /// Write the log here instead of stderr (a detached daemon logs to the runtime directory).
    #[arg(long, value_name = "PATH")]
    pub(super) log_file: Option<PathBuf>,
    /// Also serve the API on this TCP address (e.g. 127.0.0.1:7878), for tools that cannot use
    /// a Unix socket. Every request needs `Authorization: Bearer TOKEN`.
    #[arg(long, value_name = "ADDR:PORT")]
    pub(super) listen: Option<std::net::SocketAddr>,
    /// Allow `--listen` on an address that is not loopback.
    #[arg(long, requires = "listen")]
    pub(super) allow_remote: bool,
    /// The bearer token file for `--listen` (default: `<runtime dir>/<server>.token`, created
    /// with a random token, mode 0600).
    #[arg(long, value_name = "PATH", requires = "listen")]
    pub(super) token_file: Option<PathBuf>,
    /// Let MCP clients (`panectl mcp`) send text to panes that run no recognised agent, such
    /// as a plain shell, which runs it as commands. Refused by default.
    #[arg(long)]
    pub(super) mcp_allow_shell: bool,
    /// Let MCP clients launch agents with arguments and environment of their choosing
    /// (`args`, `env` of `launch_agent` and of a handoff's or assignment's launch). Refused by
    /// default: an argument such as `--dangerously-skip-permissions` or a variable such as
    /// `LD_PRELOAD` would route around every other guard.
    #[arg(long)]
    pub(super) mcp_allow_args: bool,
    /// Where `launch --worktree NAME` makes worktrees (`DIR/NAME`; a relative DIR is taken
    /// from the repository's top directory). Default: `<repo>/../<repo name>.worktrees`, beside
    /// the repository.
    #[arg(long, value_name = "DIR")]
    pub(super) worktree_dir: Option<PathBuf>,
    /// The prefix of the branches `launch --worktree NAME` makes (`PREFIX` + `NAME`).
    #[arg(long, value_name = "PREFIX", default_value = "panectl/")]
    pub(super) worktree_branch_prefix: String,
    /// A command of yours, run with `sh -c` on this machine when an agent starts waiting for
    /// you or finishes a turn (`PANECTL_SERVER`, `PANECTL_PANE`, `PANECTL_PROVIDER`,
    /// `PANECTL_STATUS`, `PANECTL_PREVIOUS`, `PANECTL_EVENT` and, for a dialog,
    /// `PANECTL_QUESTION`, `PANECTL_OPTIONS` (JSON) and `PANECTL_DECISION` in its
    /// environment). A local server's `@panectl-notify-command` option wins over it; a server
    /// on another host is never asked for a command (its options are data), so this is the one
    /// that runs for it. Also `command` in the config file's `[notify]` table.
    #[arg(long, value_name = "COMMAND")]
    pub(super) notify_command: Option<String>,
    /// A webhook (`http://HOST[:PORT]/PATH`; no https) that gets each notification as a JSON
    /// POST, tried three times with a backoff, from a queue that never holds the daemon up. A
    /// local server's `@panectl-notify-webhook` option wins over it; a server on another host
    /// is never asked for one. Also `webhook` in the config file's `[notify]` table.
    #[arg(long, value_name = "URL", value_parser = parse_webhook)]
    pub(super) notify_webhook: Option<String>,
    /// How long one webhook POST may take before it is tried again.
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = duration::parse)]
    pub(super) notify_webhook_timeout: Duration,
    /// Desktop notifications (`notify-send`, when a session bus is found): `false` turns them
    /// off (so does a server's `@panectl-notify-desktop off`). Also `desktop` in `[notify]`.
    #[arg(long, default_value = "true", value_name = "BOOL", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub(super) notify_desktop: bool,
    /// Connections the API's Unix socket keeps open at once; more are closed as they arrive.
    #[arg(long, default_value_t = 512, value_name = "N")]
    pub(super) api_max_connections: usize,
    /// Connections the `--listen` TCP listener keeps open at once; more are closed as they
    /// arrive (each listener has its own limit: a flood on TCP leaves the socket served).
    #[arg(long, default_value_t = 128, value_name = "N")]
    pub(super) listen_max_connections: usize,
    /// How long a request's head (request line and headers) may take to arrive on either
    /// listener before its connection is closed.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = duration::parse)]
    pub(super) api_header_timeout: Duration,
}

/// `--notify-webhook`: a plain `http://` URL.
fn parse_webhook(text: &str) -> Result<String, String> {
    panectl::daemon::notify::webhook::WebhookUrl::parse(text)
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}

/// The `daemon` flags as a standalone command, to parse them again with the config file's.
pub(super) fn daemon_flags() -> clap::Command {
    DaemonArgs::augment_args(clap::Command::new("daemon")).no_binary_name(true)
}

/// Parses `args` (`--flag=value` words) as the daemon's flags.
pub(super) fn parse_flags(args: &[OsString]) -> Result<DaemonArgs, clap::Error> {
    let matches = daemon_flags().try_get_matches_from(args)?;
    DaemonArgs::from_arg_matches(&matches)
}

/// A daemon's command line (after the program name) without `--detach`: what a detached or
/// restarted daemon runs with. `--detach` takes no value, so a word equal to it is that flag
/// (a value that looks like it is written `--flag=--detach`).
pub(super) fn without_detach(words: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    words
        .into_iter()
        .filter(|w| w != "--detach" && !w.to_string_lossy().starts_with("--detach="))
        .collect()
}

/// The flags given on the command line (not defaults), each as `--long` or `--long=VALUE`
/// words, with the id of the argument they set.
pub(super) fn given_args(matches: &ArgMatches) -> anyhow::Result<Vec<(String, Vec<OsString>)>> {
    let mut given = Vec::new();
    for arg in daemon_flags().get_arguments() {
        let id = arg.get_id().as_str();
        let Some(long) = arg.get_long() else { continue };
        if matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let mut words = Vec::new();
        if arg.get_action().takes_values() {
            let raw = matches
                .get_raw(id)
                .with_context(|| format!("cannot read --{long}"))?;
            for value in raw {
                let mut word = OsString::from(format!("--{long}="));
                word.push(value);
                words.push(word);
            }
        } else if matches.get_flag(id) {
            words.push(OsString::from(format!("--{long}")));
        }
        if !words.is_empty() {
            given.push((id.to_string(), words));
        }
    }
    Ok(given)
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, FromArgMatches};

    use super::*;
    use crate::cli::Cli;

    fn daemon_matches(args: &[&str]) -> Result<ArgMatches, clap::Error> {
        let matches = Cli::command().try_get_matches_from(args)?;
        Ok(matches
            .subcommand_matches("daemon")
            .expect("the daemon subcommand")
            .clone())
    }

    #[test]
    fn the_plugin_command_line_and_the_subcommands_parse() {
        let matches = daemon_matches(&["panectl", "daemon", "--detach", "--exit-with-server"])
            .expect("the plugin's command line");
        let given: Vec<String> = given_args(&matches)
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(given, ["detach", "exit_with_server"]);
        for args in [
            &["panectl", "daemon", "stop"][..],
            &["panectl", "-L", "x", "daemon", "restart", "--timeout", "3"],
            &["panectl", "daemon", "status", "--json"],
        ] {
            let matches = Cli::command().try_get_matches_from(args).expect("parses");
            Cli::from_arg_matches(&matches).expect("converts");
        }
        assert!(daemon_matches(&["panectl", "daemon", "--detach", "stop"]).is_err());
    }

    #[test]
    fn a_detached_daemon_gets_the_command_line_as_typed_without_detach() {
        let typed = [
            "-L",
            "x",
            "daemon",
            "--detach",
            "--submit-delay-ms",
            "250",
            "--log-file=--detach",
            "--a-flag-added-later",
        ];
        let forwarded = without_detach(typed.iter().map(OsString::from));
        assert_eq!(
            forwarded,
            [
                "-L",
                "x",
                "daemon",
                "--submit-delay-ms",
                "250",
                "--log-file=--detach",
                "--a-flag-added-later"
            ]
        );
    }

    #[test]
    fn only_flags_given_are_passed_on_with_their_values_as_given() {
        let matches = daemon_matches(&[
            "panectl",
            "daemon",
            "--status-quiet",
            "33ms",
            "--rules-dir=-odd dir",
            "--detach",
        ])
        .unwrap();
        let words: Vec<String> = given_args(&matches)
            .unwrap()
            .into_iter()
            .filter(|(id, _)| id != "detach")
            .flat_map(|(_, words)| words)
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        assert_eq!(words, ["--rules-dir=-odd dir", "--status-quiet=33ms"]);
        // They parse back to the same settings.
        let words: Vec<OsString> = words.into_iter().map(OsString::from).collect();
        let args = parse_flags(&words).unwrap();
        assert_eq!(args.status_quiet, Duration::from_millis(33));
        assert_eq!(args.rules_dir, Some(PathBuf::from("-odd dir")));
    }
}

/// The config file read against the daemon's real flags (in this module: `config` knows no flag).
#[cfg(test)]
mod config_tests {
    use std::ffi::OsString;
    use std::path::Path;

    use super::*;

    fn args_of(text: &str) -> anyhow::Result<Vec<(String, Vec<OsString>)>> {
        crate::cli::config::file_args(&daemon_flags(), Path::new("config.toml"), text)
    }

    #[test]
    fn keys_become_flags() {
        let args = args_of(
            "[daemon]\nstatus_quiet_ms = 30\ntransport = \"auto\"\nexit-with-server = true\n\
             allow_remote = false\n",
        )
        .unwrap();
        let words: Vec<String> = args
            .iter()
            .flat_map(|(_, w)| w.iter().map(|w| w.to_string_lossy().into_owned()))
            .collect();
        assert_eq!(
            words,
            [
                "--exit-with-server",
                "--status-quiet=30ms",
                "--transport=auto"
            ]
        );
    }

    #[test]
    fn the_notify_table_sets_the_notify_flags() {
        let args = args_of(
            "[notify]\nwebhook = \"http://127.0.0.1:9/hook\"\ndesktop = false\ncommand = \"true\"\n",
        )
        .unwrap();
        let words: Vec<String> = args
            .iter()
            .flat_map(|(_, w)| w.iter().map(|w| w.to_string_lossy().into_owned()))
            .collect();
        assert_eq!(
            words,
            [
                "--notify-command=true",
                "--notify-desktop=false",
                "--notify-webhook=http://127.0.0.1:9/hook"
            ]
        );
        let words: Vec<OsString> = words.into_iter().map(OsString::from).collect();
        let parsed = parse_flags(&words).unwrap();
        assert!(!parsed.notify_desktop);
        let error = args_of("[notify]\nwebhook = \"https://ntfy.sh/x\"\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("only http://"), "{error}");
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key_and_the_file() {
        let error = args_of("[daemon]\nstatus_quite = 3\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`status_quite`") && error.contains("config.toml"),
            "{error}"
        );
        let error = args_of("[daemon]\nwatchdog = \"2 fortnights\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("config.toml") && error.contains("unknown unit"),
            "{error}"
        );
        let error = args_of("[deamon]\n").unwrap_err().to_string();
        assert!(error.contains("`deamon`"), "{error}");
        let error = args_of("[daemon]\ndetach = true\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("`detach`"), "{error}");
        let error = args_of("[daemon]\ntransport = \"carrier-pigeon\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("config.toml") && error.contains("carrier-pigeon"),
            "{error}"
        );
        let error = args_of("[daemon]\nexit_with_server = 1\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("true or false"), "{error}");
    }

    #[test]
    fn the_command_line_wins() {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(
            file.path(),
            "[daemon]\nstatus_quiet_ms = 30\nsubmit_delay = \"0.4s\"\n",
        )
        .unwrap();
        let given = vec![(
            "status_quiet".to_string(),
            vec![OsString::from("--status-quiet=7ms")],
        )];
        let words =
            crate::cli::config::daemon_words(&daemon_flags(), &given, Some(file.path())).unwrap();
        let args = parse_flags(&words).unwrap();
        let shown = format!("{args:?}");
        assert!(shown.contains("status_quiet: 7ms"), "{shown}");
        assert!(shown.contains("submit_delay: 400ms"), "{shown}");
    }
}
