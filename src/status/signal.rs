//! The agents' own signals: a second status channel next to the screen.
//!
//! Screens work for every CLI with nothing installed, so they stay the base. Where an agent
//! reports its state itself, the report is evidence too: Claude Code's and Gemini CLI's hooks
//! (through `panectl hook`), Codex's OSC 7501 sequences (read from `%output`, see
//! [`super::osc`]), and pane titles a CLI sets with a status in them (Gemini CLI). This module
//! maps each report to a status; [`super::pane::PaneAgent`] decides which channel wins (newest
//! evidence, see there).

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::Status;
use super::osc::AgentReport;

/// Where a status came from: the status rules on the pane's `screen`, or the agent's own
/// signal: a `hook` (`panectl hook`), an `osc` 7501 report in its output (Codex), its pane
/// `title` (Gemini CLI). When they disagree the newest evidence wins (see docs/API.md, Status
/// sources).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum StatusSource {
    /// The status rules on the pane's screen.
    #[default]
    Screen,
    /// A hook of the agent (`panectl hook`).
    Hook,
    /// An OSC sequence the agent printed (Codex's OSC 7501).
    Osc,
    /// The pane title the agent set.
    Title,
}

impl StatusSource {
    /// The source's word.
    pub fn as_str(self) -> &'static str {
        match self {
            StatusSource::Screen => "screen",
            StatusSource::Hook => "hook",
            StatusSource::Osc => "osc",
            StatusSource::Title => "title",
        }
    }
}

impl std::fmt::Display for StatusSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a signal says about the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reported {
    /// A status outright.
    Status(Status),
    /// Ready for input: `completed` if a turn ran since the agent was last idle, else `idle`
    /// (as a `ready` screen rule).
    Ready,
}

/// What a signal does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It reports a state.
    Report(Reported),
    /// The session it belonged to is over: whatever it said no longer holds.
    Clear,
    /// It says nothing about the state.
    Ignore,
}

/// One signal, as the pane's status side keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    /// What it reports.
    pub reported: Reported,
    /// Where it came from.
    pub source: StatusSource,
    /// When the agent produced it (a hook: when `panectl hook` started; output and titles:
    /// when the daemon read them).
    pub at: Instant,
    /// What it was, in words: `Notification(permission_prompt)`, `state=done`, a title.
    pub detail: String,
    /// The process that sent it, when known (hooks): the signal holds only while that process
    /// runs in the pane.
    pub pid: Option<u32>,
}

/// What a Codex OSC 7501 report says. Seen on Codex 0.171: `working` when a turn starts,
/// `blocked` (`kind=permission`) as an approval dialog opens, `done` when the turn ends,
/// followed at once by `idle`; `idle` alone at start-up.
pub fn osc_effect(report: &AgentReport) -> Effect {
    let status = |s| Effect::Report(Reported::Status(s));
    match report.state.as_str() {
        "working" => status(Status::Processing),
        "blocked" => status(Status::WaitingUserAnswer),
        "done" => status(Status::Completed),
        "idle" => Effect::Report(Reported::Ready),
        "error" => status(Status::Error),
        _ => Effect::Ignore,
    }
}

/// A hook event of the agent in a pane, as `panectl hook` sends it to the daemon
/// (`POST /v1/panes/{pane}/hook`). Unknown fields are refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HookReport {
    /// The hook's `hook_event_name`: Claude Code's `SessionStart`, `UserPromptSubmit`,
    /// `PreToolUse`, `PostToolUse`, `PermissionRequest`, `Notification`, `Stop`, `StopFailure`,
    /// `SessionEnd` (others are taken and ignored), or Gemini CLI's `BeforeAgent`,
    /// `AfterAgent`, `BeforeTool`, `AfterTool`, `Notification`.
    pub event: String,
    /// `Notification`'s `notification_type`: `permission_prompt`, `elicitation_dialog` and
    /// `ToolPermission` mean waiting for the user; `idle_prompt` means ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notification_type: Option<String>,
    /// `SessionStart`'s `source` (`startup`, `resume`, `clear`; `compact` says nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The agent's process as the hook saw it (`CLAUDE_PID`, else the hook's parent), for the
    /// record only: the daemon takes the sender from the socket, never from this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The agent's session id: the conversation `panectl restore` resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The agent's working directory, for an agent `restore` learns of through its hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// When the hook ran, in milliseconds since the Unix epoch (default: when it arrived); a
    /// hook produced before the screen's status last changed does not apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<u64>,
}

impl HookReport {
    /// The word that makes the event specific, for a provider's `EVENT:DETAIL` hook keys:
    /// the notification type, else the session's source.
    pub fn detail_word(&self) -> Option<&str> {
        self.notification_type.as_deref().or(self.source.as_deref())
    }

    /// The event in words: `Notification(permission_prompt)`, `Stop`.
    pub fn detail(&self) -> String {
        match (&self.notification_type, &self.source) {
            (Some(kind), _) => format!("hook {}({kind})", self.event),
            (None, Some(source)) => format!("hook {}({source})", self.event),
            (None, None) => format!("hook {}", self.event),
        }
    }

    /// When it was produced, on the daemon's clock (`now` if it does not say, or says a time
    /// to come).
    pub fn produced_at(&self, now: Instant, now_ms: u64) -> Instant {
        let age = self.time_ms.map_or(0, |t| now_ms.saturating_sub(t));
        now.checked_sub(std::time::Duration::from_millis(age))
            .unwrap_or(now)
    }
}

/// What the daemon did with a hook, and the pane's status now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HookAnswer {
    /// The pane.
    #[schema(value_type = crate::ids::PaneId)]
    pub pane: String,
    /// Whether the hook decided the status (or cleared an earlier signal).
    pub applied: bool,
    /// Why not, when not: a stale hook (its process does not run in the pane), older than the
    /// screen's last change or than the signal in force, the agent has exited, an event that
    /// says nothing about the status.
    #[serde(default)]
    #[schema(required = true)]
    pub reason: Option<String>,
    /// The pane's status now.
    pub status: Status,
    /// Where that status came from.
    pub status_source: StatusSource,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_reports_map_to_statuses() {
        let report = |state: &str| AgentReport {
            state: state.into(),
            app: Some("codex".into()),
            kind: None,
        };
        assert_eq!(
            osc_effect(&report("blocked")),
            Effect::Report(Reported::Status(Status::WaitingUserAnswer))
        );
        assert_eq!(osc_effect(&report("idle")), Effect::Report(Reported::Ready));
        assert_eq!(osc_effect(&report("bogus")), Effect::Ignore);
    }
}
