//! The subcommands of the `panectl` binary (this module belongs to the binary, not the library).

mod agents;
mod answer;
mod board;
mod client;
mod config;
mod daemon;
mod detect;
mod doctor;
pub mod duration;
pub mod exit;
mod handoff;
mod hook;
mod inbox;
mod jump;
mod many;
#[cfg(feature = "mcp")]
mod mcp;
mod orchestrate;
mod replay;
mod table;
mod tmux_client;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
pub use client::printable_error;
use panectl::ids::PaneId;
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

impl Command {
    /// The pane the command names, if any: where a `SERVER/` prefix is read.
    fn pane_mut(&mut self) -> Option<&mut String> {
        match self {
            Command::Screen { pane, .. }
            | Command::Output { pane, .. }
            | Command::Status { pane, .. }
            | Command::Explain { target: pane, .. }
            | Command::Last { pane, .. }
            | Command::SetProvider { pane, .. }
            | Command::Transport { pane, .. }
            | Command::Input { pane, .. }
            | Command::Key { pane, .. }
            | Command::Wait { pane, .. } => Some(pane),
            Command::Send(args) => Some(&mut args.pane),
            Command::Answer(args) => Some(&mut args.pane),
            Command::Handoff(task) | Command::Assign { task, .. } => task.pane_mut(),
            Command::Inbox { pane, .. } => pane.as_mut(),
            _ => None,
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon: mirror every pane of the tmux server and serve the local API.
    /// `daemon stop|restart|status` manage the one that runs.
    Daemon(daemon::DaemonCommand),
    /// List the panes.
    Ls {
        /// Print one JSON document: the array of panes.
        #[arg(long)]
        json: bool,
        /// Every server with a daemon on this machine (local and remote), with a SERVER
        /// column; `SERVER/PANE` names a pane of any of them.
        #[arg(long)]
        all: bool,
    },
    /// Print a pane's screen as the daemon mirrors it.
    Screen {
        /// The pane: %N, session:window.pane, or a unique window name.
        pane: String,
        /// Keep colours and attributes (ANSI escape sequences).
        #[arg(long)]
        ansi: bool,
    },
    /// Print a pane's recent output bytes.
    Output {
        /// The pane.
        pane: String,
        /// Start at this sequence number (default: the oldest byte kept).
        #[arg(long)]
        from: Option<u64>,
    },
    /// Print a pane's status word (idle, processing, completed, waiting_user_answer, error,
    /// unknown, exited).
    Status {
        /// The pane.
        pane: String,
        /// Print the pane as JSON (as an entry of `ls --json`) instead of the word.
        #[arg(long)]
        json: bool,
    },
    /// Show which status rule fired and why the others did not, for a pane or a capture file.
    Explain {
        /// A pane, or a file holding a screen capture (plain or `capture-pane -e` text).
        target: String,
        /// The provider whose rules to use for a file (default: recognised from its banner).
        #[arg(long)]
        provider: Option<String>,
        /// Print the explanation as one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Print the agent's last answer, without the TUI around it.
    Last {
        /// The pane.
        pane: String,
        /// Print `{"pane", "answer"}` as one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Tell the daemon which agent runs in a pane (`auto` to let it recognise it again).
    /// The choice is kept in the pane, so it survives daemon restarts.
    SetProvider {
        /// The pane.
        pane: String,
        /// A provider id (`panectl providers` lists them) or `auto`.
        provider: String,
        /// Print the pane (as an entry of `ls --json`) as one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Show where a pane's output comes from, or move it: `pipe` copies it with `pipe-pane`
    /// into a private FIFO (watched, and given back to `control` if it fails).
    Transport {
        /// The pane (with `--session`, the session: `$N` or its name).
        pane: String,
        /// The transport to move it to (omit to print the current one).
        #[arg(value_enum, required_if_eq("session", "true"))]
        transport: Option<panectl::pipe::Transport>,
        /// Move every pane of the session, and the panes it gets later.
        #[arg(long)]
        session: bool,
        /// Print the pane (with `--session`: the moved and failed panes) as one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// List the provider rules the daemon uses.
    Providers {
        /// Print one JSON document: the array of providers.
        #[arg(long)]
        json: bool,
    },
    /// An agent CLI's hook command (Claude Code, Gemini CLI): reads the hook's JSON on stdin
    /// and tells the daemon, as a status signal for the pane in `$TMUX_PANE`. Never fails the
    /// agent: always exit code 0, at most one line on stderr.
    Hook(hook::HookArgs),
    /// Serve MCP (Model Context Protocol) on stdin/stdout, so that agents can list, read,
    /// message, launch and hand work to each other through the daemon.
    #[cfg(feature = "mcp")]
    Mcp,
    /// Classify screen captures offline: one line (or JSON object) per file.
    Detect {
        /// The provider whose rules to use (default: recognised from each file's banner).
        #[arg(long)]
        provider: Option<String>,
        /// Print JSON lines `{"file","provider","status","rule"}`.
        #[arg(long)]
        json: bool,
        /// Capture files (plain or ANSI text). A sibling `.json` file with a "title" gives the
        /// pane title.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
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
    Inbox {
        #[command(subcommand)]
        action: Option<InboxAction>,
        /// Only this pane's messages.
        #[arg(long)]
        pane: Option<String>,
        /// Only messages in this state (pending, delivering, delivered, failed, uncertain,
        /// expired, cancelled).
        #[arg(long)]
        state: Option<String>,
        /// Print one JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Start an agent CLI in a new window (or session) from its provider's `[launch]` command,
    /// wait until it is ready, and print its pane id.
    Launch(orchestrate::LaunchArgs),
    /// Give a worker agent a task through its inbox, wait until its turn is over, and print
    /// its answer. Exit code 0 with the answer, 1 on a timeout or an unknown pane (the table in
    /// `panectl --help`).
    Handoff(handoff::TaskArgs),
    /// Give a worker agent a task and return at once (printing the assignment id); when the
    /// worker's turn is over, its answer is queued for `--reply-to` (default: this pane,
    /// `$TMUX_PANE`).
    Assign {
        #[command(flatten)]
        task: handoff::TaskArgs,
        /// The pane whose inbox gets the answer (default `$TMUX_PANE`).
        #[arg(long, value_name = "PANE")]
        reply_to: Option<String>,
    },
    /// List assignments and what became of them.
    Assignments {
        /// Only those in this state (working, answered, failed).
        #[arg(long)]
        state: Option<String>,
        /// Print one JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Type text into a pane (literally: key names and formats mean nothing), then Enter.
    Input {
        /// The pane.
        pane: String,
        /// The text.
        text: String,
        /// Do not press Enter after the text.
        #[arg(long)]
        no_enter: bool,
        /// Type even into a pane that runs no recognised agent: a plain shell would run the
        /// text as commands.
        #[arg(long)]
        allow_shell: bool,
    },
    /// Answer the dialog a pane shows, by option (`--option N`, `--label TEXT`, `--yes`,
    /// `--no`), only while it is the dialog named with `--decision`.
    Answer(answer::AnswerArgs),
    /// List the dialogs agents wait on: each question, its options and the keys that pick them.
    Decisions(answer::DecisionsArgs),
    /// Press keys in a pane, by tmux key name (Enter, Escape, C-c, F5, Up, y...).
    Key {
        /// The pane.
        pane: String,
        /// The keys, pressed in order.
        #[arg(required = true)]
        keys: Vec<String>,
    },
    /// Wait until a pane's status is one of some statuses. Exit code 0 when reached (the
    /// status is printed), 1 on a timeout or an unknown pane (the table in `panectl --help`).
    Wait {
        /// The pane.
        pane: String,
        /// The statuses, comma-separated (idle, completed, waiting_user_answer, ...).
        #[arg(long, value_delimiter = ',', required = true)]
        until: Vec<String>,
        /// Give up after this long.
        #[arg(long, value_name = "DURATION", value_parser = duration::parse)]
        timeout: Option<std::time::Duration>,
        /// Print the answer (`reached`, `status`, `waited_seconds`) as one JSON document,
        /// reached or not.
        #[arg(long)]
        json: bool,
    },
    /// Print the path of the API socket of the tmux server (for curl and other clients), or
    /// with `--token`, of the TCP listener's token file. Needs no running daemon.
    Socket {
        /// Print the token file's path instead.
        #[arg(long)]
        token: bool,
    },
    /// Show the daemon's health.
    Health {
        /// Print the health as one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Check tmux, the server, the daemon and known tmux crashes; say what to do about each.
    Doctor {
        /// Print the checks as one JSON document.
        #[arg(long)]
        json: bool,
    },
    /// Follow the daemon's events.
    Events {
        /// Print one JSON object per line (JSON lines, one per event, as they come).
        #[arg(long)]
        json: bool,
        /// The events of every server with a daemon on this machine, each with its server.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        filter: client::EventFilter,
    },
    /// Replay a recorded control-mode transcript and print each pane's final screen; with
    /// `--divergence`, replay a divergence record the daemon saved.
    Replay {
        /// Raw stdout of a `tmux -C` client (with `--divergence`: a record).
        transcript: PathBuf,
        /// The file is a divergence record (the daemon saves one in its runtime directory,
        /// `<server>.divergences/`, each time its watchdog finds the mirror different from
        /// tmux): replay it through the screen model and say whether that gives the mirror's
        /// screen, tmux's, or neither. Exit code 1 when the replay differs from tmux's.
        #[arg(long)]
        divergence: bool,
        /// Print a JSON report instead of text.
        #[arg(long)]
        json: bool,
        /// Only this pane (`%N`).
        #[arg(long)]
        pane: Option<PaneId>,
        /// Size of panes the transcript gives no size for, as WIDTHxHEIGHT.
        #[arg(long, value_parser = replay::parse_size, default_value = "80x24")]
        size: (u16, u16),
    },
    /// Print the tmux format of the window status glyphs (for the tmux plugin, which reads it
    /// once at load; the glyphs come from the status table).
    #[command(hide = true)]
    WindowGlyphs,
    /// Print a completion script for a shell: `panectl completions bash >
    /// ~/.local/share/bash-completion/completions/panectl` (zsh: a file `_panectl` in a
    /// `$fpath` directory; fish: `~/.config/fish/completions/panectl.fish`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `panectl man > ~/.local/share/man/man1/panectl.1`, then
    /// `man panectl`. With `--dir`, write it and one page per command (`panectl-ls.1`, ...)
    /// there instead.
    Man {
        /// Write the pages into this directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum InboxAction {
    /// Cancel a pending message.
    Cancel {
        /// The message id.
        id: i64,
        /// Print the message as one JSON document.
        #[arg(long)]
        json: bool,
    },
}

/// Runs a parsed command line; `matches` are what it was parsed from (the daemon tells the
/// flags given from defaults with them).
pub fn run(mut cli: Cli, matches: &clap::ArgMatches) -> anyhow::Result<ExitCode> {
    // `SERVER/PANE`: the pane of another daemon's server (`ls --all` shows the names).
    if let Some(pane) = cli.command.pane_mut()
        && let Some((server, rest)) = many::route(pane)?
    {
        cli.server = server;
        *pane = rest;
    }
    // An answer goes to a pane of the worker's server: `--reply-to SERVER/PANE` must name it.
    if let Command::Assign {
        reply_to: Some(reply_to),
        ..
    } = &mut cli.command
        && let Some((server, rest)) = many::route(reply_to)?
    {
        if !server.same_server(&cli.server) {
            anyhow::bail!(
                "--reply-to {reply_to}: the answer can only go to a pane of the worker's server"
            );
        }
        *reply_to = rest;
    }
    match cli.command {
        Command::Daemon(command) => {
            daemon::command(&cli.server, command, matches.subcommand_matches("daemon"))
        }
        Command::Replay {
            transcript,
            divergence: true,
            json,
            ..
        } => replay::divergence(&transcript, json),
        Command::Replay {
            transcript,
            json,
            pane,
            size,
            ..
        } => replay::run(&transcript, json, pane, size),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            // Into memory first: the generator panics on a write error (a closed pipe).
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, "panectl", &mut script);
            std::io::Write::write_all(&mut std::io::stdout(), &script)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { dir: Some(dir) } => {
            let command = <Cli as clap::CommandFactory>::command();
            clap_mangen::generate_to(command, &dir).map_err(|e| {
                anyhow::anyhow!("cannot write the manual pages into {}: {e}", dir.display())
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { dir: None } => {
            let mut page = Vec::new();
            clap_mangen::Man::new(<Cli as clap::CommandFactory>::command()).render(&mut page)?;
            std::io::Write::write_all(&mut std::io::stdout(), &page)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::WindowGlyphs => {
            println!("{}", panectl::status::meaning::window_glyphs_format());
            Ok(ExitCode::SUCCESS)
        }
        Command::Ls { json, all: true } => many::ls_all(json),
        Command::Ls { json, all: false } => client::ls(&cli.server, json),
        Command::Screen { pane, ansi } => client::screen(&cli.server, &pane, ansi),
        Command::Output { pane, from } => client::output(&cli.server, &pane, from),
        Command::Health { json } => client::health(&cli.server, json),
        Command::Doctor { json } => doctor::doctor(&cli.server, json),
        Command::Status { pane, json } => client::status(&cli.server, &pane, json),
        Command::Explain {
            target,
            provider,
            json,
        } => {
            if std::path::Path::new(&target).is_file() {
                detect::explain_file(std::path::Path::new(&target), provider.as_deref(), json)
            } else {
                client::explain(&cli.server, &target, json)
            }
        }
        Command::Last { pane, json } => client::last(&cli.server, &pane, json),
        Command::SetProvider {
            pane,
            provider,
            json,
        } => client::set_provider(&cli.server, &pane, &provider, json),
        Command::Providers { json } => client::providers(&cli.server, json),
        Command::Hook(args) => Ok(hook::hook(&cli.server, &args)),
        Command::Transport {
            pane,
            transport,
            session,
            json,
        } => match (session, transport) {
            (true, Some(transport)) => {
                client::session_transport(&cli.server, &pane, transport, json)
            }
            _ => client::transport(&cli.server, &pane, transport, json),
        },
        Command::Socket { token } => {
            let address = cli.server.address()?;
            let found = panectl::daemon::discovery::find_api(&address);
            let path = match (token, found.published) {
                (false, _) => found.socket,
                // The token lies next to the socket of a daemon found through tmux.
                (true, true) => found.socket.with_extension("token"),
                (true, false) => panectl::paths::RuntimePaths::for_server(&address).token(),
            };
            println!("{}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        #[cfg(feature = "mcp")]
        Command::Mcp => mcp::run(&cli.server),
        Command::Detect {
            provider,
            json,
            files,
        } => detect::detect(&files, provider.as_deref(), json),
        Command::Events {
            json,
            all: true,
            filter,
        } => many::events_all(json, &filter),
        Command::Events {
            json,
            all: false,
            filter,
        } => client::events(&cli.server, json, &filter),
        Command::Launch(args) => orchestrate::launch(&cli.server, args),
        Command::Handoff(task) => handoff::handoff(&cli.server, &task),
        Command::Assign { task, reply_to } => {
            handoff::assign(&cli.server, &task, reply_to.as_deref())
        }
        Command::Assignments { state, json } => handoff::list(&cli.server, state.as_deref(), json),
        Command::Input {
            pane,
            text,
            no_enter,
            allow_shell,
        } => orchestrate::input(&cli.server, &pane, &text, !no_enter, allow_shell),
        Command::Key { pane, keys } => orchestrate::key(&cli.server, &pane, &keys),
        Command::Wait {
            pane,
            until,
            timeout,
            json,
        } => orchestrate::wait(&cli.server, &pane, &until, timeout, json),
        Command::Send(args) => inbox::send(&cli.server, &args),
        Command::Answer(args) => answer::answer(&cli.server, &args),
        Command::Decisions(args) => answer::decisions(&cli.server, &args),
        Command::Jump(args) => jump::jump(&cli.server, &args),
        Command::Board(args) => board::board(&cli.server, &args),
        Command::Inbox {
            action: Some(InboxAction::Cancel { id, json }),
            ..
        } => inbox::cancel(&cli.server, id, json),
        Command::Inbox {
            action: None,
            pane,
            state,
            json,
        } => inbox::list(&cli.server, pane.as_deref(), state.as_deref(), json),
    }
}

/// Whether the error is a closed stdout (`panectl ls | head`), which is not a failure.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
