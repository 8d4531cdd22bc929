//! The subcommands of the `panectl` binary (this module belongs to the binary, not the library).
//!
//! Each subcommand is a module with its arguments (a `clap::Args` struct) and a [`Run`] impl;
//! [`Command`] names each with one variant (its doc is the command's help), and [`run`]
//! dispatches with one line each. See "How to add a subcommand" in docs/ARCHITECTURE.md.

mod agents;
mod answer;
mod assign;
mod board;
mod client;
mod close;
mod complete;
mod completions;
pub use completions::COMPLETE_VAR;
mod config;
mod daemon;
mod detect;
mod doctor;
pub mod duration;
mod events;
pub mod exit;
mod explain;
mod explanation;
mod handoff;
mod health;
mod hook;
mod hook_install;
mod inbox;
mod input;
mod jump;
mod last;
mod ls;
mod many;
#[cfg(feature = "mcp")]
mod mcp;
mod orchestrate;
mod output;
mod profiles;
mod providers;
mod replay;
mod restore;
mod screen;
mod set_provider;
mod socket;
mod status;
mod table;
mod tmux_client;
mod transport;
mod values;
mod wait;
mod window_glyphs;
mod worktrees;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
pub use client::printable_error;
use panectl::tmux::ServerAddress;

/// Tracks CLI coding agents running in tmux panes through tmux control mode.
#[derive(Debug, Parser)]
#[command(
    name = "panectl",
    version,
    about,
    after_help = "Examples:\n  \
                  panectl daemon --detach                 follow the default tmux server\n  \
                  panectl ls                              every pane, its agent and status\n  \
                  panectl send %3 'Run the tests.'        queue a message for an agent\n  \
                  panectl wait %3 --until completed --timeout 10m\n  \
                  panectl handoff %3 'Sum up the diff.'   give a task, print the answer\n  \
                  panectl --ssh devbox ls                 a server on another machine\n  \
                  panectl events --type status,message    follow what changes\n\n\
                  Durations: 500ms, 30s, 5m, 2h, 1d, or a number of seconds.\n\n\
                  Exit codes (every command): 0 done; 1 not reached (timed out, not found, \
                  `health` not ok, a `doctor` check failed, no daemon for `daemon status`); \
                  2 usage or refused (a bad command line or value, a request the daemon \
                  refused); 3 unreachable (no daemon for the server, or it cannot reach tmux)."
)]
pub struct Cli {
    #[command(flatten)]
    server: ServerArgs,
    #[command(subcommand)]
    command: Command,
}

/// Which tmux server, chosen as tmux chooses it. Shown apart in `--help` ("Which server"):
/// every command takes them.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Which server (every command)")]
pub struct ServerArgs {
    /// tmux socket name (like `tmux -L`).
    #[arg(
        short = 'L',
        global = true,
        value_name = "NAME",
        conflicts_with = "socket_path"
    )]
    socket_name: Option<String>,
    /// tmux socket path (like `tmux -S`; with `--ssh`, the absolute path on that host).
    #[arg(short = 'S', global = true, value_name = "PATH")]
    socket_path: Option<PathBuf>,
    /// The tmux server runs on this host, reached with ssh (anything `ssh` accepts: `host`,
    /// `user@host`, a `~/.ssh/config` alias). See "Remote servers" in the README.
    #[arg(long, global = true, value_name = "DEST")]
    ssh: Option<String>,
    /// The ssh command line (default: `$PANECTL_SSH_COMMAND`, else `ssh`), run by `sh` with
    /// panectl's options and the destination added, like `GIT_SSH_COMMAND`.
    #[arg(long, global = true, value_name = "COMMAND", requires = "ssh")]
    ssh_command: Option<String>,
    /// How often the daemon sends ssh keepalives (whole seconds); three unanswered ones end
    /// the connection, which is then made again.
    #[arg(long, global = true, value_name = "DURATION", default_value = "5s",
          value_parser = keepalive)]
    ssh_keepalive: u32,
}

/// The subcommand word of a whole command line (program name first), past the global options
/// and their values (`-L NAME`, `--ssh DEST`, ...), if there is one.
pub fn subcommand(args: &[std::ffi::OsString]) -> Option<String> {
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(word) = words.next() {
        match word.as_ref() {
            "-L" | "-S" | "--ssh" | "--ssh-command" | "--ssh-keepalive" => {
                words.next();
            }
            _ if word.starts_with('-') => {}
            _ => return Some(word.into_owned()),
        }
    }
    None
}

/// `--ssh-keepalive`: whole seconds (ssh's `ServerAliveInterval`), one to 3600.
fn keepalive(text: &str) -> Result<u32, String> {
    match duration::parse_whole_seconds(text)? {
        seconds @ 1..=3600 => Ok(seconds),
        _ => Err(format!("{text:?}: at most an hour")),
    }
}

impl ServerArgs {
    fn address(&self) -> anyhow::Result<ServerAddress> {
        let Some(destination) = &self.ssh else {
            return Ok(ServerAddress::resolve(
                self.socket_name.as_deref(),
                self.socket_path.as_deref(),
            )?);
        };
        let mut options =
            panectl::host::ssh::SshOptions::new(destination, self.ssh_command.as_deref());
        options.alive_interval = self.ssh_keepalive;
        Ok(ServerAddress::remote(
            self.socket_name.as_deref(),
            self.socket_path.as_deref(),
            options,
        )?)
    }

    /// Whether the server runs on another host (`--ssh`).
    pub fn is_remote(&self) -> bool {
        self.ssh.is_some()
    }

    /// `$TMUX_PANE` when the pane is one of this server's (`$TMUX` names its socket): the
    /// default pane for answers, the default session of a launch and the MCP caller. A pane of
    /// another server (a local pane while the server is on another host, or another socket)
    /// would name the wrong pane there.
    pub fn own_pane(&self) -> Option<String> {
        let pane = std::env::var("TMUX_PANE").ok().filter(|p| !p.is_empty())?;
        if self.is_remote() {
            return None;
        }
        // Without `$TMUX` (a wrapper that removed it) the pane is taken as given.
        let Some(tmux) = std::env::var("TMUX").ok().filter(|t| !t.is_empty()) else {
            return Some(pane);
        };
        let socket = std::path::PathBuf::from(tmux.split(',').next()?);
        let address = self.address().ok()?;
        let same = |a: &std::path::Path, b: &std::path::Path| {
            a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
        };
        same(&socket, address.socket()).then_some(pane)
    }

    /// Whether `other` names the same server.
    fn same_server(&self, other: &ServerArgs) -> bool {
        match (self.address(), other.address()) {
            (Ok(a), Ok(b)) => a.to_string() == b.to_string(),
            _ => false,
        }
    }

    /// What to do when no daemon answers for this server: the command that starts one, or,
    /// when no tmux server runs at the socket either (a mistyped `-L`, say), that, with the
    /// servers that do run: a daemon started for a server that is not there would be refused.
    fn start_advice(&self, address: &ServerAddress) -> String {
        if address.is_local() && !address.is_alive() {
            let running = ServerAddress::local_servers();
            let choices = if running.is_empty() {
                "none of this user's tmux servers is running".to_string()
            } else {
                format!("running: -L {}", running.join(", -L "))
            };
            return format!("no tmux server is running there either; is -L/-S right? ({choices})");
        }
        format!("start one with: {}", self.start_command())
    }

    /// The command line that starts a daemon for the same server.
    fn start_command(&self) -> String {
        let mut command = String::from("panectl");
        if let Some(destination) = &self.ssh {
            command.push_str(&format!(" --ssh {destination}"));
        }
        if let Some(name) = &self.socket_name {
            command.push_str(&format!(" -L {name}"));
        }
        if let Some(path) = &self.socket_path {
            command.push_str(&format!(" -S {}", path.display()));
        }
        command.push_str(" daemon --detach");
        command
    }
}

/// A subcommand's arguments, and how the command runs with them.
trait Run {
    /// Runs the command on `server` (the one `-L`/`-S`/`--ssh` name, or a `SERVER/` prefix of
    /// the pane).
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode>;

    /// The pane the command names, if any: where a `SERVER/` prefix is read (and taken off).
    fn pane_mut(&mut self) -> Option<&mut String> {
        None
    }
}

/// The subcommands, in the order `--help` lists them: one line each, its doc the help.
#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon: mirror every pane of the tmux server and serve the local API.
    /// `daemon stop|restart|status` manage the one that runs.
    Daemon(Box<daemon::DaemonCommand>),
    /// List the panes.
    Ls(ls::LsArgs),
    /// Print a pane's screen as the daemon mirrors it.
    Screen(screen::ScreenArgs),
    /// Print a pane's recent output bytes.
    Output(output::OutputArgs),
    /// Print a pane's status word (idle, processing, completed, waiting_user_answer, error,
    /// unknown, exited).
    Status(status::StatusArgs),
    /// Show which status rule fired and why the others did not, for a pane or a capture file.
    Explain(explain::ExplainArgs),
    /// Print the agent's last answer, without the TUI around it.
    Last(last::LastArgs),
    /// Tell the daemon which agent runs in a pane (`auto` to let it recognise it again).
    /// The choice is kept in the pane, so it survives daemon restarts.
    SetProvider(set_provider::SetProviderArgs),
    /// Show where a pane's output comes from, or move it: `pipe` copies it with `pipe-pane`
    /// into a private FIFO (watched, and given back to `control` if it fails).
    Transport(transport::TransportArgs),
    /// List the provider rules the daemon uses.
    Providers(providers::ProvidersArgs),
    /// An agent CLI's hook command (Claude Code, Gemini CLI; Codex's `notify`): reads the
    /// hook's JSON on stdin and tells the daemon, as a status signal for the pane in
    /// `$TMUX_PANE`. Never fails the agent: always exit code 0, at most one line on stderr.
    /// `hook install PROVIDER` / `hook uninstall PROVIDER` put it in the CLI's own settings.
    Hook(hook::HookArgs),
    /// Serve MCP (Model Context Protocol) on stdin/stdout, so that agents can list, read,
    /// message, launch and hand work to each other through the daemon.
    #[cfg(feature = "mcp")]
    Mcp(mcp::McpArgs),
    /// Classify screen captures offline: one line (or JSON object) per file.
    Detect(detect::DetectArgs),
    /// Queue a message for the agent in a pane; it is delivered when the agent is ready
    /// (idle or completed), in order, exactly once. Prints the message id.
    Send(inbox::SendArgs),
    /// Switch a tmux client to the next agent waiting for the user, else to the next one that
    /// has completed (for a key binding; pressing it again cycles). Prints the pane.
    Jump(jump::JumpArgs),
    /// The agents at a glance, waiting ones first: on a terminal a live board (statuses in
    /// colour, a preview of the selected agent's screen; Enter jumps, s sends, y/n answer a
    /// dialog, c cancels a message, / filters, q quits); piped, or with --lines, a line board
    /// (`N` jumps to agent N, `s N` sends it a message, `r` redraws, `q` quits).
    Board(board::BoardArgs),
    /// List queued and past messages; `inbox cancel ID` cancels a pending one.
    Inbox(inbox::InboxArgs),
    /// Start an agent CLI in a new window (or session) from its provider's `[launch]` command,
    /// wait until it is ready, and print its pane id.
    Launch(orchestrate::LaunchArgs),
    /// List the launch profiles (built in and yours); `profiles show NAME`, `profiles check
    /// [NAME]` (errors as FILE:LINE:COLUMN), `profiles import FILE.md` (a CAO agent profile).
    Profiles(profiles::ProfilesArgs),
    /// List the git worktrees launches made (branch, agent, clean/dirty, ahead/behind);
    /// `worktrees remove NAME [--force]` removes one (never its branch).
    Worktrees(worktrees::WorktreesArgs),
    /// Start again the agents panectl launched that no longer run (after tmux or the machine
    /// restarted), each in its session, resuming its conversation where the CLI can.
    Restore(restore::RestoreArgs),
    /// Give a worker agent a task through its inbox, wait until its turn is over, and print
    /// its answer. Exit code 0 with the answer, 1 on a timeout or an unknown pane (the table in
    /// `panectl --help`).
    Handoff(handoff::TaskArgs),
    /// Give a worker agent a task and return at once (printing the assignment id); when the
    /// worker's turn is over, its answer is queued for `--reply-to` (default: this pane,
    /// `$TMUX_PANE`).
    Assign(assign::AssignArgs),
    /// List assignments and what became of them.
    Assignments(assign::AssignmentsArgs),
    /// Type text into a pane (literally: key names and formats mean nothing), then Enter.
    Input(input::InputArgs),
    /// Answer the dialog a pane shows, by option (`--option N`, `--label TEXT`, `--yes`,
    /// `--no`), only while it is the dialog named with `--decision`.
    Answer(answer::AnswerArgs),
    /// List the dialogs agents wait on: each question, its options and the keys that pick them.
    Decisions(answer::DecisionsArgs),
    /// Press keys in a pane, by tmux key name (Enter, Escape, C-c, F5, Up, y...).
    Key(input::KeyArgs),
    /// Close an agent: cancel its pending messages, ask it to exit its own way (its provider's
    /// `[close]` text and keys, else C-c C-d), and close its pane, killing it after `--timeout`
    /// (default 10s). Prints how it closed: exited, or killed.
    Close(close::CloseArgs),
    /// Wait until a pane's status is one of some statuses. Exit code 0 when reached (the
    /// status is printed), 1 on a timeout or an unknown pane (the table in `panectl --help`).
    Wait(wait::WaitArgs),
    /// Print the path of the API socket of the tmux server (for curl and other clients), or
    /// with `--token`, of the TCP listener's token file. Needs no running daemon.
    Socket(socket::SocketArgs),
    /// Show the daemon's health.
    Health(health::HealthArgs),
    /// Check tmux, the server, the daemon and known tmux crashes; say what to do about each.
    Doctor(doctor::DoctorArgs),
    /// Follow the daemon's events.
    Events(events::EventsArgs),
    /// Replay a recorded control-mode transcript and print each pane's final screen; with
    /// `--divergence`, replay a divergence record the daemon saved.
    Replay(replay::ReplayArgs),
    /// Print the tmux format of the window status glyphs (for the tmux plugin, which reads it
    /// once at load; the glyphs come from the status table).
    #[command(hide = true)]
    WindowGlyphs(window_glyphs::WindowGlyphsArgs),
    /// Print a completion script for a shell: `panectl completions bash >
    /// ~/.local/share/bash-completion/completions/panectl` (zsh: a file `_panectl` in a
    /// `$fpath` directory; fish: `~/.config/fish/completions/panectl.fish`).
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff): `panectl man > ~/.local/share/man/man1/panectl.1`, then
    /// `man panectl`. With `--dir`, write it and one page per command (`panectl-ls.1`, ...)
    /// there instead.
    Man(completions::ManArgs),
}

/// Runs a parsed command line; `matches` are what it was parsed from (the daemon tells the
/// flags given from defaults with them).
pub fn run(cli: Cli, matches: &clap::ArgMatches) -> anyhow::Result<ExitCode> {
    let Cli {
        mut server,
        command,
    } = cli;
    let mut args: Box<dyn Run> = match command {
        Command::Daemon(command) => {
            return daemon::command(&server, *command, matches.subcommand_matches("daemon"));
        }
        Command::Ls(args) => Box::new(args),
        Command::Screen(args) => Box::new(args),
        Command::Output(args) => Box::new(args),
        Command::Status(args) => Box::new(args),
        Command::Explain(args) => Box::new(args),
        Command::Last(args) => Box::new(args),
        Command::SetProvider(args) => Box::new(args),
        Command::Transport(args) => Box::new(args),
        Command::Providers(args) => Box::new(args),
        Command::Hook(args) => Box::new(args),
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => Box::new(args),
        Command::Detect(args) => Box::new(args),
        Command::Send(args) => Box::new(args),
        Command::Jump(args) => Box::new(args),
        Command::Board(args) => Box::new(args),
        Command::Inbox(args) => Box::new(args),
        Command::Launch(args) => Box::new(args),
        Command::Profiles(args) => Box::new(args),
        Command::Worktrees(args) => Box::new(args),
        Command::Restore(args) => Box::new(args),
        Command::Handoff(args) => Box::new(args),
        Command::Assign(args) => Box::new(args),
        Command::Assignments(args) => Box::new(args),
        Command::Input(args) => Box::new(args),
        Command::Answer(args) => Box::new(args),
        Command::Decisions(args) => Box::new(args),
        Command::Key(args) => Box::new(args),
        Command::Close(args) => Box::new(args),
        Command::Wait(args) => Box::new(args),
        Command::Socket(args) => Box::new(args),
        Command::Health(args) => Box::new(args),
        Command::Doctor(args) => Box::new(args),
        Command::Events(args) => Box::new(args),
        Command::Replay(args) => Box::new(args),
        Command::WindowGlyphs(args) => Box::new(args),
        Command::Completions(args) => Box::new(args),
        Command::Man(args) => Box::new(args),
    };
    // `SERVER/PANE`: the pane of another daemon's server (`ls --all` shows the names).
    if let Some(pane) = args.pane_mut()
        && let Some((routed, rest)) = many::route(pane)?
    {
        server = routed;
        *pane = rest;
    }
    args.run(&server)
}

/// Whether the error is a closed stdout (`panectl ls | head`), which is not a failure.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
