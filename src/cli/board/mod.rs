//! `panectl board`: the agents at a glance, for the `display-popup` of prefix A or a terminal
//! of its own. On a terminal it is a live board ([`live`]): redrawn from the daemon's event
//! stream, statuses in colour, a preview of the selected agent's screen, keys to jump, send,
//! answer a dialog and cancel a message. Elsewhere (a pipe, a script, `--lines`) it is the line
//! board ([`lines`]), which reads one command per line.

mod editor;
mod lines;
mod live;
mod model;
pub(super) mod preview;
mod view;

use std::collections::HashMap;
use std::io::IsTerminal;
use std::process::ExitCode;

use panectl::api::client::ApiClient;
use panectl::api::routes::Route;
use panectl::api::wire::{AnswerBody, AnswerOutcome, KeysBody, Message, PaneSummary};
use panectl::tmux::ServerAddress;

use super::ServerArgs;
use super::agents;
use super::client::block_on;
use super::{inbox, tmux_client};
use preview::Screen;

/// Who messages sent from the board come from.
const SENDER: &str = "board";

/// What `panectl board` is given.
#[derive(Debug, clap::Args)]
pub struct BoardArgs {
    /// The tmux client to switch (default: the one tmux picks, else the one used last).
    #[arg(long, value_name = "NAME")]
    client: Option<String>,
    /// The agents of every server with a daemon on this machine (local and remote), with a
    /// SERVER column; jumps go to panes of this board's own server.
    #[arg(long)]
    all: bool,
    /// The line board (one command per line) even on a terminal.
    #[arg(long)]
    lines: bool,
}

/// An agent as the board shows it.
#[derive(Debug, Clone)]
pub(super) struct Row {
    /// The pane.
    pub pane: PaneSummary,
    /// Its name (`@panectl_name`), or empty.
    pub name: String,
    /// Its server's label, on a board over many servers (`board --all`).
    pub server: Option<String>,
    /// Its pending messages' ids, oldest first.
    pub pending: Vec<i64>,
}

impl Row {
    /// How the backend is told which pane: `%N`, or `SERVER/%N` on a board over many servers.
    pub fn target(&self) -> String {
        target(self.server.as_deref(), &self.pane.pane.to_string())
    }
}

/// A pane's target on the board: `%N`, or `SERVER/%N` on a board over many servers.
fn target(server: Option<&str>, pane: &str) -> String {
    match server {
        Some(server) => format!("{server}/{pane}"),
        None => pane.to_string(),
    }
}

/// What the line board acts through: the daemon and tmux, or a stand-in in unit tests.
pub(super) trait Backend {
    /// The agents, in any order.
    fn agents(&self) -> anyhow::Result<Vec<Row>>;
    /// Switches the client to a pane.
    fn jump(&self, target: &str) -> anyhow::Result<()>;
    /// Queues a message for a pane; its id.
    fn send(&self, target: &str, body: &[u8]) -> anyhow::Result<String>;
}

/// What the live board acts through besides: screens, keys, cancels and event streams.
pub(super) trait LiveBackend: Backend {
    /// The pane's mirrored screen, with its attributes.
    fn screen(&self, target: &str) -> anyhow::Result<Screen>;
    /// Presses keys (tmux key names) in the pane.
    fn keys(&self, target: &str, keys: &[String]) -> anyhow::Result<()>;
    /// Cancels a pending message.
    fn cancel(&self, target: &str, id: i64) -> anyhow::Result<()>;
    /// The fingerprint of the dialog the pane waits on, if it shows one.
    fn decision(&self, target: &str) -> anyhow::Result<Option<String>>;
    /// Answers the pane's dialog by option through the daemon.
    fn answer(&self, target: &str, body: &AnswerBody) -> anyhow::Result<AnswerOutcome>;
    /// The daemons whose events redraw the board: each with its server's label on a board
    /// over many servers.
    fn streams(&self) -> Vec<(Option<String>, ApiClient)>;
}

/// The daemon and the tmux server.
struct Live<'a> {
    server: &'a ServerArgs,
    address: ServerAddress,
    api: ApiClient,
    client: Option<String>,
}

impl<'a> Live<'a> {
    fn new(server: &'a ServerArgs, client: Option<String>) -> anyhow::Result<Live<'a>> {
        Ok(Live {
            server,
            address: server.address()?,
            api: super::client::client(server)?,
            client,
        })
    }

    /// The pending messages' ids by pane. Best effort: the agents are listed without them if
    /// the inbox cannot be read.
    fn pending(&self) -> HashMap<String, Vec<i64>> {
        let listed: anyhow::Result<Vec<Message>> = block_on(async {
            Ok(self
                .api
                .get_json(&Route::Messages {}.with_query(&[("state", "pending")]))
                .await?)
        });
        let mut pending: HashMap<String, Vec<i64>> = HashMap::new();
        match listed {
            Ok(messages) => {
                for message in messages {
                    pending.entry(message.pane).or_default().push(message.id);
                }
            }
            Err(error) => tracing::debug!(%error, "the pending messages are not listed"),
        }
        for ids in pending.values_mut() {
            ids.sort_unstable();
        }
        pending
    }
}

impl Backend for Live<'_> {
    fn agents(&self) -> anyhow::Result<Vec<Row>> {
        let mut panes = block_on(async { Ok(self.api.panes().await?) })?;
        panes.sort_by(agents::order);
        let mut pending = self.pending();
        // The daemon learns a name at its next look at the panes; tmux knows it at once.
        let mut names = if panes
            .iter()
            .any(|p| agents::is_agent(p) && p.name.is_none())
        {
            agents::names(&self.address)
        } else {
            HashMap::new()
        };
        Ok(panes
            .into_iter()
            .filter(agents::is_agent)
            .map(|pane| {
                let id = pane.pane.to_string();
                Row {
                    name: pane
                        .name
                        .clone()
                        .or_else(|| names.remove(&id))
                        .unwrap_or_default(),
                    pending: pending.remove(&id).unwrap_or_default(),
                    pane,
                    server: None,
                }
            })
            .collect())
    }

    fn jump(&self, target: &str) -> anyhow::Result<()> {
        tmux_client::switch_client(&self.address, self.client.as_deref(), target)
    }

    fn send(&self, target: &str, body: &[u8]) -> anyhow::Result<String> {
        let stored = inbox::queue(self.server, target, body, SENDER, None, false)?;
        Ok(stored.id.to_string())
    }
}

impl LiveBackend for Live<'_> {
    fn screen(&self, target: &str) -> anyhow::Result<Screen> {
        let path = Route::PaneScreen { pane: target }.with_query(&[("format", "ansi")]);
        let answer = block_on(async { Ok(self.api.get(&path).await?) })?;
        Ok(Screen::from_answer(
            answer.body.to_vec(),
            answer.header("x-panectl-size"),
            answer.header("x-panectl-cursor"),
        ))
    }

    fn keys(&self, target: &str, keys: &[String]) -> anyhow::Result<()> {
        let path = Route::PaneKeys { pane: target }.path();
        let body = KeysBody {
            keys: keys.to_vec(),
        };
        block_on(async { Ok(self.api.post_empty(&path, &body).await?) })
    }

    fn cancel(&self, _target: &str, id: i64) -> anyhow::Result<()> {
        let path = Route::CancelMessage {
            id: &id.to_string(),
        }
        .path();
        let _: Message =
            block_on(async { Ok(self.api.post_json(&path, &serde_json::json!({})).await?) })?;
        Ok(())
    }

    fn decision(&self, target: &str) -> anyhow::Result<Option<String>> {
        let found = block_on(super::answer::waiting_decision(&self.api, target))?;
        Ok(found.map(|w| w.decision.fingerprint))
    }

    fn answer(&self, target: &str, body: &AnswerBody) -> anyhow::Result<AnswerOutcome> {
        let path = Route::PaneDecision { pane: target }.path();
        block_on(async { Ok(self.api.post_json(&path, body).await?) })
    }

    fn streams(&self) -> Vec<(Option<String>, ApiClient)> {
        vec![(None, self.api.clone())]
    }
}

/// Every daemon's server, each row with its server: a jump goes to panes of the server the
/// board runs on (a tmux client cannot be switched to another server), messages go anywhere.
struct Many<'a> {
    /// The server the board was started for (`-L/-S/--ssh`, else the one it runs in).
    home: String,
    /// Each daemon's label and backend.
    servers: Vec<(String, Live<'a>)>,
}

impl Many<'_> {
    fn find(&self, target: &str) -> anyhow::Result<(&str, &Live<'_>, String)> {
        let (label, pane) = target
            .split_once('/')
            .ok_or_else(|| anyhow::anyhow!("{target}: no server"))?;
        let (label, live) = self
            .servers
            .iter()
            .find(|(l, _)| l == label)
            .ok_or_else(|| anyhow::anyhow!("no daemon for server {label}"))?;
        Ok((label, live, pane.to_string()))
    }
}

impl Backend for Many<'_> {
    fn agents(&self) -> anyhow::Result<Vec<Row>> {
        let mut rows = Vec::new();
        for (label, live) in &self.servers {
            match live.agents() {
                Ok(found) => rows.extend(found.into_iter().map(|mut row| {
                    row.server = Some(label.clone());
                    row
                })),
                Err(error) => tracing::debug!(%label, %error, "a server's agents are not listed"),
            }
        }
        Ok(rows)
    }

    fn jump(&self, target: &str) -> anyhow::Result<()> {
        let (label, live, pane) = self.find(target)?;
        if label != self.home {
            match live.server.ssh.as_deref() {
                Some(destination) => anyhow::bail!(
                    "{pane} is on {label}, another host: attach there (ssh -t {destination} tmux \
                     attach -t {pane})"
                ),
                None => anyhow::bail!(
                    "{pane} is on the tmux server {label}, not the one this board runs on: \
                     tmux -L {label} attach -t {pane}"
                ),
            }
        }
        live.jump(&pane)
    }

    fn send(&self, target: &str, body: &[u8]) -> anyhow::Result<String> {
        let (_, live, pane) = self.find(target)?;
        live.send(&pane, body)
    }
}

impl LiveBackend for Many<'_> {
    fn screen(&self, target: &str) -> anyhow::Result<Screen> {
        let (_, live, pane) = self.find(target)?;
        live.screen(&pane)
    }

    fn keys(&self, target: &str, keys: &[String]) -> anyhow::Result<()> {
        let (_, live, pane) = self.find(target)?;
        live.keys(&pane, keys)
    }

    fn cancel(&self, target: &str, id: i64) -> anyhow::Result<()> {
        let (_, live, pane) = self.find(target)?;
        live.cancel(&pane, id)
    }

    fn decision(&self, target: &str) -> anyhow::Result<Option<String>> {
        let (_, live, pane) = self.find(target)?;
        live.decision(&pane)
    }

    fn answer(&self, target: &str, body: &AnswerBody) -> anyhow::Result<AnswerOutcome> {
        let (_, live, pane) = self.find(target)?;
        live.answer(&pane, body)
    }

    fn streams(&self) -> Vec<(Option<String>, ApiClient)> {
        self.servers
            .iter()
            .map(|(label, live)| (Some(label.clone()), live.api.clone()))
            .collect()
    }
}

impl super::Run for BoardArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        board(server, self)
    }
}

/// `panectl board [--client NAME] [--all] [--lines]`.
fn board(server: &ServerArgs, args: &BoardArgs) -> anyhow::Result<ExitCode> {
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let live = terminal && !args.lines && std::env::var("TERM").is_ok_and(|t| t != "dumb");
    let failed = if args.all {
        let daemons = super::many::some_daemons()?;
        let home = server.address()?.label();
        let servers = daemons
            .iter()
            .map(|daemon| {
                Ok((
                    daemon.label.clone(),
                    Live::new(&daemon.server, args.client.clone())?,
                ))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        drive(&Many { home, servers }, live)?
    } else {
        drive(&Live::new(server, args.client.clone())?, live)?
    };
    match failed {
        Some(reason) => anyhow::bail!(reason),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// Runs the live board or the line board; the reason when it ended on a failure.
fn drive(backend: &impl LiveBackend, live: bool) -> anyhow::Result<Option<String>> {
    if live {
        return live::run(backend, super::table::colour_allowed());
    }
    // On a terminal the line board clears the screen before each drawing.
    let clear = std::io::stdout().is_terminal();
    Ok(lines::run(
        backend,
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        clear,
    )?)
}

/// The rows in board order: by status rank ([`Status::rank`](panectl::status::Status::rank): waiting
/// first, then completed, error, processing, idle, the rest), then in the stable pane order.
pub(super) fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|a, b| {
        a.pane
            .status
            .rank()
            .cmp(&b.pane.status.rank())
            .then_with(|| agents::order(&a.pane, &b.pane))
    });
    rows
}
