//! The vocabulary a session shares with its IO shell and the rest of the crate: settings,
//! errors, and what the core answers about panes (re-exported by `tmux::connection`).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ids::{PaneId, SessionId, WindowId};
use crate::mirror::{PaneCounters, SyncState};
use crate::pipe::{Transport, WatchdogConfig};
use crate::raw::RawBytes;

/// Settings of a control connection.
#[derive(Debug, Clone)]
pub struct ConnectionConfig {
    /// `pause-after` in seconds: tmux pauses a pane whose output waited that long for us,
    /// instead of disconnecting us; 0 disables it.
    pub pause_after: u32,
    /// How long a command may wait for its reply.
    pub command_timeout: Duration,
    /// Bytes of recent output kept per pane.
    pub ring_bytes: usize,
    /// How often the divergence watchdog looks at panes that printed since its last look.
    pub watchdog_interval: Duration,
    /// When agent status is evaluated.
    pub status: crate::status::pane::Timing,
    /// The transport new panes start on.
    pub transport: Transport,
    /// Where the pipe transport's FIFOs are made (a private directory).
    pub pipe_dir: PathBuf,
    /// Where the sockets that control clients attach through are made (a private directory;
    /// see [`crate::tmux::attach`]).
    pub attach_dir: PathBuf,
    /// The pipe transport's liveness watchdog (its checks run every `watchdog_interval`).
    pub pipe_watchdog: WatchdogConfig,
    /// `--transport auto`: when a session's control client keeps failing, its panes move to
    /// the pipe transport, and back once it holds (used by the supervisor).
    pub auto: Option<AutoFailover>,
    /// Where the records of divergences the watchdog confirms are saved (the daemon's
    /// `<stem>.divergences` directory; none: they are only logged).
    pub divergence_dir: Option<PathBuf>,
    /// Set by the supervisor on a connection started on pipes because its control client kept
    /// failing: after this long without failing, its panes go back to the control transport.
    pub failover: Option<Duration>,
    /// When a pane's output is a flood that moves it to the pipe transport until it is calm
    /// (see [`crate::session::FloodConfig`]); none: never.
    pub flood: Option<super::FloodConfig>,
}

/// The rule of `--transport auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoFailover {
    /// Unexpected ends of a session's control client within `window` that move it to pipes.
    pub failures: u32,
    /// See `failures`.
    pub window: Duration,
    /// How long the control client of a session on pipes must hold before its panes go back.
    pub recover_after: Duration,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig {
            pause_after: 5,
            command_timeout: Duration::from_secs(10),
            ring_bytes: 128 * 1024,
            watchdog_interval: Duration::from_secs(2),
            status: crate::status::pane::Timing::default(),
            transport: Transport::Control,
            pipe_dir: std::env::temp_dir().join(format!("panectl-pipes-{}", std::process::id())),
            attach_dir: std::env::temp_dir().join(format!("panectl-attach-{}", std::process::id())),
            pipe_watchdog: WatchdogConfig::default(),
            auto: None,
            failover: None,
            divergence_dir: None,
            flood: None,
        }
    }
}

/// Why a command through the connection failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// The connection is gone.
    #[error("the control connection to session {0} is closed")]
    Closed(SessionId),
    /// tmux did not answer in time.
    #[error("tmux did not answer `{command}` within {after:?}")]
    Timeout {
        /// The command line.
        command: String,
        /// The timeout.
        after: Duration,
    },
}

/// Why a line of commands did not all succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The connection failed.
    #[error("tmux connection: {0}")]
    Connection(#[from] ConnectionError),
    /// tmux answered a command with an error.
    #[error("tmux refused: {0}")]
    Refused(String),
    /// tmux skipped a command because an earlier one on the line failed.
    #[error("tmux skipped a command after an earlier one failed")]
    Skipped,
}

/// A pane as the API lists it: what the daemon sends and the CLI and MCP read back (a status
/// word this build does not know reads as `unknown`). Names and texts from tmux are bytes,
/// shown as UTF-8 with invalid sequences replaced by U+FFFD.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = Pane)]
pub struct PaneSummary {
    /// The agent's name (`@panectl_name`, set by `panectl launch --name`); absent when it has
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The pane id.
    pub pane: PaneId,
    /// The session's id.
    pub session_id: SessionId,
    /// The session's name.
    pub session: RawBytes,
    /// The window's id.
    pub window_id: WindowId,
    /// The window's index.
    pub window_index: u32,
    /// The window's name.
    pub window: RawBytes,
    /// The pane's index in its window.
    pub index: u32,
    /// The title the program set.
    pub title: RawBytes,
    /// The foreground command.
    pub command: RawBytes,
    /// The pane's first process.
    pub pid: u32,
    /// Width in cells.
    pub width: u16,
    /// Height in cells.
    pub height: u16,
    /// Whether its process exited.
    pub dead: bool,
    /// Whether it is in copy or view mode.
    pub in_mode: bool,
    /// Whether it is the active pane of its window.
    pub active: bool,
    /// Whether the alternate screen is on.
    pub alternate_screen: bool,
    /// How far the mirrored screen can be trusted.
    pub sync: SyncState,
    /// Where its output comes from.
    pub transport: Transport,
    /// Sequence number of the next output byte.
    pub output_seq: u64,
    /// Counters.
    pub counters: PaneCounters,
    /// The provider (agent CLI) recognised or assigned, e.g. `claude_code`, `codex`, `shell`.
    #[schema(required = true)]
    pub provider: Option<String>,
    /// How the provider was recognised.
    #[schema(required = true)]
    pub provider_source: Option<crate::status::pane::ProviderSource>,
    /// The agent's status (`unknown` for panes without a provider).
    #[serde(deserialize_with = "crate::status::lenient")]
    pub status: crate::status::Status,
    /// The rule behind the status; for a signal, what it was (`hook Stop`,
    /// `osc 7501 state=done`, `title "..."`).
    #[schema(required = true)]
    pub status_rule: Option<String>,
    /// What the screen's rule read about the status, while the screen decides it: a retry's
    /// attempt (`retrying in 4s · attempt 3/10`), say. `null` when there is nothing to add.
    #[schema(required = true)]
    pub status_detail: Option<String>,
    /// Where the status came from: `screen`, `hook`, `osc` or `title`.
    pub status_source: crate::status::signal::StatusSource,
    /// Whether the status reflects the latest output (no evaluation pending).
    pub status_settled: bool,
    /// Seconds the status has lasted.
    pub status_seconds: f64,
    /// A `completed` agent that an attached tmux client has had in view since it completed
    /// (`@panectl-seen`); false for every other status.
    pub seen: bool,
}

/// A pane's screen, as the API returns it.
#[derive(Debug, Clone)]
pub struct ScreenDump {
    /// Text or ANSI bytes.
    pub content: Vec<u8>,
    /// Width.
    pub width: u16,
    /// Height.
    pub height: u16,
    /// Cursor column and row.
    pub cursor: (u16, u16),
    /// Alternate screen on.
    pub alternate_screen: bool,
    /// Output sequence number the screen reflects.
    pub output_seq: u64,
    /// Sync state.
    pub sync: SyncState,
}

/// Counters of one connection.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConnectionStats {
    /// The session.
    pub session: Option<SessionId>,
    /// Whether the control client has attached (tmux answered its first commands).
    pub attached: bool,
    /// tmux's version as it reports it.
    pub tmux_version: String,
    /// Lines the decoder could not read.
    pub parse_errors: u64,
    /// Bare lines outside reply blocks.
    pub stray_lines: u64,
    /// Commands that timed out.
    pub timeouts: u64,
    /// Commands sent.
    pub commands: u64,
    /// Panes mirrored.
    pub panes: usize,
    /// Sum of the pane counters.
    pub totals: PaneCounters,
    /// Panes on the pipe transport.
    pub pipe_panes: usize,
    /// Bytes that came through pipes since the connection began (in cross-check mode, the
    /// bytes compared).
    pub pipe_bytes: u64,
    /// Cross-check mode: bytes found equal in both transports.
    pub cross_check_matched: u64,
    /// Cross-check mode: differences reported.
    pub cross_check_findings: u64,
}

impl ConnectionStats {
    /// Adds another connection's counts to these, for the daemon's totals in `health`. Its
    /// session, attachment and tmux version are not counts and are left alone; a field added
    /// later must be placed here before this compiles.
    pub fn add_counts(&mut self, other: &ConnectionStats) {
        let ConnectionStats {
            session: _,
            attached: _,
            tmux_version: _,
            parse_errors,
            stray_lines,
            timeouts,
            commands,
            panes,
            totals,
            pipe_panes,
            pipe_bytes,
            cross_check_matched,
            cross_check_findings,
        } = other;
        self.parse_errors += parse_errors;
        self.stray_lines += stray_lines;
        self.timeouts += timeouts;
        self.commands += commands;
        self.panes += panes;
        self.totals += *totals;
        self.pipe_panes += pipe_panes;
        self.pipe_bytes += pipe_bytes;
        self.cross_check_matched += cross_check_matched;
        self.cross_check_findings += cross_check_findings;
    }
}

/// What a connection tells its supervisor.
#[derive(Debug)]
pub enum Upcall {
    /// tmux reported `%sessions-changed`: a session was created or destroyed.
    SessionsChanged,
    /// A connection started on pipes after failures held long enough, and moved its panes
    /// back to the control transport.
    ControlRecovered(SessionId),
}

/// tmux's `%exit` on a control client's stream, with its reason when it gave one; what
/// [`super::SessionCore::finish`] answers when the stream ended that way (rather than at EOF).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmuxExit {
    /// The reason tmux gave (`detached`, `server exited`, ...), if any.
    pub reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_counts_add_up_and_the_rest_stays() {
        let one = |n: u64| ConnectionStats {
            session: Some(SessionId(n as u32)),
            attached: n == 1,
            tmux_version: format!("3.{n}"),
            parse_errors: n,
            stray_lines: 2 * n,
            timeouts: 3 * n,
            commands: 4 * n,
            panes: 5 * n as usize,
            totals: PaneCounters {
                bytes: 6 * n,
                chunks: 7 * n,
                resyncs: 8 * n,
                pauses: 9 * n,
                divergences: 10 * n,
                early_answers: 11 * n,
            },
            pipe_panes: 12 * n as usize,
            pipe_bytes: 13 * n,
            cross_check_matched: 14 * n,
            cross_check_findings: 15 * n,
        };
        let mut sum = one(1);
        sum.add_counts(&one(10));
        let expected = ConnectionStats {
            session: Some(SessionId(1)),
            attached: true,
            tmux_version: "3.1".into(),
            ..one(11)
        };
        assert_eq!(format!("{sum:?}"), format!("{expected:?}"));
    }
}
