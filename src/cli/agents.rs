//! The agent panes as `jump` and `board` see them: the daemon's pane summaries (`GET
//! /v1/panes`) in a stable order, with their status durations shown short.

use std::cmp::Ordering;
use std::collections::HashMap;

use panectl::api::wire::PaneSummary;
use panectl::tmux::ServerAddress;

use super::ServerArgs;
use super::client::{block_on, client};

/// Whether an agent runs in a pane (a provider other than the plain shell).
pub(super) fn is_agent(pane: &PaneSummary) -> bool {
    pane.provider.as_deref().is_some_and(|p| p != "shell")
}

/// `session:window.pane`, by names.
pub(super) fn location(pane: &PaneSummary) -> String {
    format!("{}:{}.{}", pane.session, pane.window, pane.index)
}

/// The stable order: session (name, then id), window index, pane index.
pub(super) fn order(a: &PaneSummary, b: &PaneSummary) -> Ordering {
    a.session
        .cmp(&b.session)
        .then_with(|| a.session_id.cmp(&b.session_id))
        .then_with(|| a.window_index.cmp(&b.window_index))
        .then_with(|| a.index.cmp(&b.index))
        .then_with(|| a.pane.cmp(&b.pane))
}

/// Every pane the daemon mirrors, in the stable order.
pub(super) fn panes(server: &ServerArgs) -> anyhow::Result<Vec<PaneSummary>> {
    let client = client(server)?;
    let mut panes = block_on(async { Ok(client.panes().await?) })?;
    panes.sort_by(order);
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

    use panectl::api::wire::PaneSummary;
    use panectl::ids::{PaneId, SessionId, WindowId};
    use panectl::mirror::{PaneCounters, SyncState};
    use panectl::pipe::Transport;
    use panectl::status::Status;
    use panectl::status::signal::StatusSource;

    /// A pane for tests: `%id` in session `s`, window `w`, pane index `index`.
    pub fn pane(id: u32, session: &str, window: u32, index: u32, status: &str) -> PaneSummary {
        PaneSummary {
            name: None,
            pane: PaneId(id),
            session_id: SessionId(0),
            session: session.into(),
            window_id: WindowId(window),
            window_index: window,
            window: format!("w{window}").as_str().into(),
            index,
            title: "".into(),
            command: "node".into(),
            pid: 1,
            width: 80,
            height: 24,
            dead: false,
            in_mode: false,
            active: false,
            alternate_screen: false,
            sync: SyncState::Live,
            transport: Transport::Control,
            output_seq: 0,
            counters: PaneCounters::default(),
            provider: Some("codex".into()),
            provider_source: None,
            status: Status::parse(status).expect("a status word"),
            status_rule: None,
            status_detail: None,
            status_source: StatusSource::Screen,
            status_settled: true,
            status_seconds: 0.0,
            seen: false,
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
        assert!(is_agent(&p));
        p.provider = Some("shell".into());
        assert!(!is_agent(&p));
        p.provider = None;
        assert!(!is_agent(&p));
    }

    #[test]
    fn order_is_session_window_pane() {
        let mut panes = [
            pane(5, "b", 0, 0, "idle"),
            pane(4, "a", 2, 1, "idle"),
            pane(3, "a", 2, 0, "idle"),
            pane(2, "a", 10, 0, "idle"),
        ];
        panes.sort_by(order);
        let ids: Vec<String> = panes.iter().map(|p| p.pane.to_string()).collect();
        assert_eq!(ids, ["%3", "%4", "%2", "%5"]);
        assert_eq!(location(&panes[0]), "a:w2.0");
    }

    #[test]
    fn a_status_word_from_a_newer_daemon_reads_as_unknown() {
        let mut json = serde_json::to_value(pane(7, "s", 0, 1, "waiting_user_answer")).unwrap();
        let parsed: PaneSummary = serde_json::from_value(json.clone()).expect("a pane");
        assert_eq!(parsed.status, Status::WaitingUserAnswer);
        json["status"] = "some_newer_word".into();
        json["some_newer_field"] = true.into();
        let parsed: PaneSummary = serde_json::from_value(json).expect("a pane");
        assert_eq!(parsed.status, Status::Unknown);
    }
}
