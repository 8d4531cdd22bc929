//! The agent panes as `jump` and `board` see them: fetched from the daemon (`GET /v1/panes`),
//! in a stable order, with their status durations shown short.

use std::cmp::Ordering;
use std::collections::HashMap;

use panectl::status::Status;
use panectl::tmux::ServerAddress;
use serde::{Deserialize, Deserializer};

use super::ServerArgs;
use super::client::{block_on, client};

/// A pane, with the fields of the daemon's pane summary these commands use.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub(super) struct Pane {
    /// `%N`.
    pub pane: String,
    /// The session's name.
    #[serde(default)]
    pub session: String,
    /// The session's id, `$N`.
    #[serde(default)]
    pub session_id: String,
    /// The window's name.
    #[serde(default)]
    pub window: String,
    /// The window's index.
    #[serde(default)]
    pub window_index: u32,
    /// The pane's index in its window.
    #[serde(default)]
    pub index: u32,
    /// The agent CLI, if one is recognised.
    #[serde(default)]
    pub provider: Option<String>,
    /// The status (the server's type; a word this build does not know reads as `unknown`).
    #[serde(default = "unknown", deserialize_with = "status_word")]
    pub status: Status,
    /// How long the status has lasted.
    #[serde(default)]
    pub status_seconds: f64,
}

fn unknown() -> Status {
    Status::Unknown
}

/// A status word as a [`Status`]; one from a newer daemon reads as `unknown` rather than
/// failing the whole list.
fn status_word<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Status, D::Error> {
    let word = String::deserialize(deserializer)?;
    Ok(Status::parse(&word).unwrap_or(Status::Unknown))
}

impl Pane {
    /// Whether an agent runs in it (a provider other than the plain shell).
    pub fn is_agent(&self) -> bool {
        self.provider.as_deref().is_some_and(|p| p != "shell")
    }

    /// `session:window.pane`, by names.
    pub fn location(&self) -> String {
        format!("{}:{}.{}", self.session, self.window, self.index)
    }

    /// The stable order: session (name, then id), window index, pane index.
    pub fn order(&self, other: &Pane) -> Ordering {
        self.session
            .cmp(&other.session)
            .then_with(|| session_number(&self.session_id).cmp(&session_number(&other.session_id)))
            .then_with(|| self.window_index.cmp(&other.window_index))
            .then_with(|| self.index.cmp(&other.index))
            .then_with(|| pane_number(&self.pane).cmp(&pane_number(&other.pane)))
    }
}

fn session_number(id: &str) -> u64 {
    id.trim_start_matches('$').parse().unwrap_or(u64::MAX)
}

fn pane_number(id: &str) -> u64 {
    id.trim_start_matches('%').parse().unwrap_or(u64::MAX)
}

/// Every pane the daemon mirrors, in the stable order.
pub(super) fn panes(server: &ServerArgs) -> anyhow::Result<Vec<Pane>> {
    let client = client(server)?;
    let mut panes: Vec<Pane> = block_on(async { Ok(client.get_json("/v1/panes").await?) })?;
    panes.sort_by(Pane::order);
    Ok(panes)
}

/// The agents' names (pane option `@panectl_name`, set by `panectl launch`), by pane id.
/// Best effort: empty if tmux cannot be asked.
pub(super) fn names(address: &ServerAddress) -> HashMap<String, String> {
    let listed = super::tmux_client::run(
        address,
        &["list-panes", "-a", "-F", "#{pane_id}\t#{@panectl_name}"],
    )
    .unwrap_or_default();
    String::from_utf8_lossy(&listed)
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .filter(|(_, name)| !name.is_empty())
        .map(|(pane, name)| (pane.to_string(), name.to_string()))
        .collect()
}

/// A duration in its largest whole unit: `12s`, `4m`, `2h`, `3d`.
pub(super) fn short_duration(seconds: f64) -> String {
    let seconds = if seconds.is_finite() && seconds > 0.0 {
        seconds as u64
    } else {
        0
    };
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A pane for tests: `%id` in session `s`, window `w`, pane index `index`.
    pub fn pane(id: u32, session: &str, window: u32, index: u32, status: &str) -> Pane {
        Pane {
            pane: format!("%{id}"),
            session: session.into(),
            session_id: "$0".into(),
            window: format!("w{window}"),
            window_index: window,
            index,
            provider: Some("codex".into()),
            status: Status::parse(status).expect("a status word"),
            status_seconds: 0.0,
        }
    }

    #[test]
    fn durations_are_short() {
        assert_eq!(short_duration(0.4), "0s");
        assert_eq!(short_duration(12.9), "12s");
        assert_eq!(short_duration(59.99), "59s");
        assert_eq!(short_duration(240.0), "4m");
        assert_eq!(short_duration(7300.0), "2h");
        assert_eq!(short_duration(3.0 * 86400.0), "3d");
        assert_eq!(short_duration(f64::NAN), "0s");
        assert_eq!(short_duration(-5.0), "0s");
    }

    #[test]
    fn shells_and_unknown_panes_are_not_agents() {
        let mut p = pane(1, "a", 0, 0, "idle");
        assert!(p.is_agent());
        p.provider = Some("shell".into());
        assert!(!p.is_agent());
        p.provider = None;
        assert!(!p.is_agent());
    }

    #[test]
    fn order_is_session_window_pane() {
        let mut panes = [
            pane(5, "b", 0, 0, "idle"),
            pane(4, "a", 2, 1, "idle"),
            pane(3, "a", 2, 0, "idle"),
            pane(2, "a", 10, 0, "idle"),
        ];
        panes.sort_by(Pane::order);
        let ids: Vec<&str> = panes.iter().map(|p| p.pane.as_str()).collect();
        assert_eq!(ids, ["%3", "%4", "%2", "%5"]);
        let json = serde_json::json!({"pane": "%7", "session": "s", "window": "w", "index": 1,
            "provider": null, "status": "unknown", "extra": true});
        let parsed: Pane = serde_json::from_value(json).expect("a pane");
        assert_eq!(parsed.location(), "s:w.1");
        assert_eq!(parsed.status, Status::Unknown);
        let json = serde_json::json!({"pane": "%7", "status": "waiting_user_answer"});
        let parsed: Pane = serde_json::from_value(json).expect("a pane");
        assert_eq!(parsed.status, Status::WaitingUserAnswer);
        let json = serde_json::json!({"pane": "%7", "status": "some_newer_word"});
        let parsed: Pane = serde_json::from_value(json).expect("a pane");
        assert_eq!(parsed.status, Status::Unknown);
    }
}
