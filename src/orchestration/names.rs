//! How users name panes: `%N`, `session:window.pane` (each part a name, an index or an id), an
//! agent's name (`panectl launch --name`, kept in `@panectl_name`), or a window name that is
//! unique on the server (its active pane).

use crate::ids::PaneId;
use crate::tmux::PaneSummary;

/// Why a name does not lead to exactly one pane.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// No pane matches.
    #[error("no pane named {0:?}")]
    NotFound(String),
    /// Several panes match.
    #[error("{name:?} is ambiguous: it matches {matches}")]
    Ambiguous {
        /// The name.
        name: String,
        /// The matching panes, listed.
        matches: String,
    },
}

fn matches_session(pane: &PaneSummary, part: &str) -> bool {
    part == pane.session_id.to_string() || part.as_bytes() == pane.session.as_bytes()
}

fn matches_window(pane: &PaneSummary, part: &str) -> bool {
    part == pane.window_id.to_string()
        || part == pane.window_index.to_string()
        || part.as_bytes() == pane.window.as_bytes()
}

fn matches_pane(pane: &PaneSummary, part: Option<&str>) -> bool {
    match part {
        None => pane.active,
        Some(part) => part == pane.pane.to_string() || part == pane.index.to_string(),
    }
}

/// Finds the pane a user means.
pub fn resolve(name: &str, panes: &[PaneSummary]) -> Result<PaneId, NameError> {
    if let Ok(id) = name.parse::<PaneId>() {
        return panes
            .iter()
            .find(|p| p.pane == id)
            .map(|p| p.pane)
            .ok_or_else(|| NameError::NotFound(name.to_string()));
    }
    let found: Vec<&PaneSummary> = match name.split_once(':') {
        Some((session, rest)) => {
            let (window, pane) = match rest.rsplit_once('.') {
                Some((window, pane))
                    if !pane.is_empty() && pane.chars().all(|c| c.is_ascii_digit() || c == '%') =>
                {
                    (window, Some(pane))
                }
                _ => (rest, None),
            };
            panes
                .iter()
                .filter(|p| {
                    matches_session(p, session)
                        && matches_window(p, window)
                        && matches_pane(p, pane)
                })
                .collect()
        }
        None => {
            let named: Vec<&PaneSummary> = panes
                .iter()
                .filter(|p| p.name.as_deref() == Some(name))
                .collect();
            if named.is_empty() {
                panes
                    .iter()
                    .filter(|p| p.window.as_bytes() == name.as_bytes() && p.active)
                    .collect()
            } else {
                named
            }
        }
    };
    let mut unique: Vec<&PaneSummary> = Vec::new();
    for pane in found {
        if !unique.iter().any(|p| p.pane == pane.pane) {
            unique.push(pane);
        }
    }
    match unique.as_slice() {
        [one] => Ok(one.pane),
        [] => Err(NameError::NotFound(name.to_string())),
        many => Err(NameError::Ambiguous {
            name: name.to_string(),
            matches: many
                .iter()
                .map(|p| format!("{} ({}:{}.{})", p.pane, p.session, p.window_index, p.index))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// Whether a name is a plain word tmux cannot read anything into: 1 to 64 ASCII letters,
/// digits, `_`, `-` and `.`, not starting with `-` or `.`.
pub fn is_plain_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
        && !name.starts_with(['-', '.'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{SessionId, WindowId};
    use crate::mirror::{PaneCounters, SyncState};

    fn pane(
        id: u32,
        session: (u32, &str),
        window: (u32, u32, &str),
        index: u32,
        active: bool,
    ) -> PaneSummary {
        PaneSummary {
            pane: PaneId(id),
            name: None,
            session_id: SessionId(session.0),
            session: session.1.into(),
            window_id: WindowId(window.0),
            window_index: window.1,
            window: window.2.into(),
            index,
            title: "".into(),
            command: "sh".into(),
            pid: 1,
            width: 80,
            height: 24,
            dead: false,
            in_mode: false,
            active,
            alternate_screen: false,
            sync: SyncState::Live,
            transport: crate::pipe::Transport::Control,
            output_seq: 0,
            counters: PaneCounters::default(),
            provider: None,
            provider_source: None,
            status: crate::status::Status::Unknown,
            status_rule: None,
            status_detail: None,
            status_source: Default::default(),
            status_settled: true,
            status_seconds: 0.0,
            seen: false,
        }
    }

    fn panes() -> Vec<PaneSummary> {
        vec![
            pane(0, (0, "main"), (0, 0, "editor"), 0, true),
            pane(1, (0, "main"), (0, 0, "editor"), 1, false),
            pane(2, (0, "main"), (1, 1, "agent"), 0, true),
            pane(3, (1, "work"), (2, 0, "agent"), 0, true),
            pane(4, (1, "work"), (3, 1, "logs"), 0, true),
        ]
    }

    #[test]
    fn ids_and_targets_resolve() {
        let panes = panes();
        assert_eq!(resolve("%3", &panes), Ok(PaneId(3)));
        assert_eq!(resolve("main:0.1", &panes), Ok(PaneId(1)));
        assert_eq!(resolve("main:editor.1", &panes), Ok(PaneId(1)));
        assert_eq!(resolve("main:0", &panes), Ok(PaneId(0)));
        assert_eq!(resolve("$1:@3", &panes), Ok(PaneId(4)));
        assert_eq!(resolve("work:agent.%3", &panes), Ok(PaneId(3)));
    }

    #[test]
    fn agent_names_come_before_window_names() {
        let mut panes = panes();
        panes[1].name = Some("agent".into());
        assert_eq!(resolve("agent", &panes), Ok(PaneId(1)));
        panes[3].name = Some("agent".into());
        assert!(matches!(
            resolve("agent", &panes),
            Err(NameError::Ambiguous { .. })
        ));
    }

    #[test]
    fn window_names_must_be_unique() {
        let panes = panes();
        assert_eq!(resolve("logs", &panes), Ok(PaneId(4)));
        assert!(matches!(
            resolve("agent", &panes),
            Err(NameError::Ambiguous { .. })
        ));
        assert_eq!(
            resolve("nothing", &panes),
            Err(NameError::NotFound("nothing".into()))
        );
        assert_eq!(resolve("%9", &panes), Err(NameError::NotFound("%9".into())));
    }
}
