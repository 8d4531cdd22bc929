//! What each [`Status`] means, in one table: its word, its [`Phase`], whether it is worth a
//! notification, where it goes on the board, and how it is drawn (short word, icon, window
//! glyph, tmux colour). Every consumer (delivery, turns, launch, notifications, the status-line
//! summary, the board, `jump`, the plugin's window glyphs) asks here instead of matching status
//! words by hand, so a new status is one new row in [`Status::meaning`], which the compiler
//! makes exhaustive.

use super::Status;

/// Where an agent is in its work, as the consumers of a status need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// It can take input now (`idle`, `completed`).
    Ready,
    /// It is working on a turn and will go on by itself (`processing`).
    Busy,
    /// It is in a turn but stopped until the user acts: a question, a permission, a dialog
    /// (`waiting_user_answer`).
    Blocked,
    /// The turn is over and the agent will not go on by itself: it stopped on an error, or its
    /// process is gone (`error`, `exited`).
    Ended,
    /// Nothing says (`unknown`).
    Unknown,
}

impl Phase {
    /// Whether a turn is under way (busy or blocked): what a turn follower counts as "the worker
    /// took the message" (it never counts an error, which ends the turn instead).
    pub fn is_in_turn(self) -> bool {
        matches!(self, Phase::Busy | Phase::Blocked)
    }

    /// Whether a turn under way is over once the agent shows this phase (ready, or ended).
    pub fn ends_turn(self) -> bool {
        matches!(self, Phase::Ready | Phase::Ended)
    }
}

/// One row of the status table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meaning {
    /// The status word (the API's, the `@panectl_status` option's).
    pub word: &'static str,
    /// Where the agent is in its work.
    pub phase: Phase,
    /// Whether reaching this status is worth telling the user (notifications) and going to
    /// (`panectl jump`).
    pub notable: bool,
    /// The order on the board and of `jump`'s targets: lower comes first.
    pub rank: u8,
    /// The short word of the status-line summary (`@panectl-summary-format short`).
    pub short_word: &'static str,
    /// The icon of the status-line summary (`@panectl-summary-format icons`).
    pub icon: &'static str,
    /// The glyph added to window names (`@panectl-window-status`), if the status shows one.
    pub window_glyph: Option<&'static str>,
    /// The tmux style of the status in a coloured summary.
    pub tmux_colour: &'static str,
}

const DIM: &str = "#[fg=brightblack]";

impl Status {
    /// The row of the status table: everything a status means, in one place.
    pub const fn meaning(self) -> Meaning {
        match self {
            Status::Idle => Meaning {
                word: "idle",
                phase: Phase::Ready,
                notable: false,
                rank: 4,
                short_word: "idle",
                icon: "○",
                window_glyph: None,
                tmux_colour: DIM,
            },
            Status::Processing => Meaning {
                word: "processing",
                phase: Phase::Busy,
                notable: false,
                rank: 3,
                short_word: "run",
                icon: "⚙",
                window_glyph: Some("⚙"),
                tmux_colour: "#[fg=blue]",
            },
            Status::Completed => Meaning {
                word: "completed",
                phase: Phase::Ready,
                notable: true,
                rank: 1,
                short_word: "done",
                icon: "✔",
                window_glyph: Some("✔"),
                tmux_colour: "#[fg=green]",
            },
            Status::WaitingUserAnswer => Meaning {
                word: "waiting_user_answer",
                phase: Phase::Blocked,
                notable: true,
                rank: 0,
                short_word: "wait",
                icon: "!",
                // Not `!`: tmux's own window flag for a bell sits right there.
                window_glyph: Some("?"),
                tmux_colour: "#[fg=yellow]",
            },
            Status::Error => Meaning {
                word: "error",
                phase: Phase::Ended,
                notable: false,
                rank: 2,
                short_word: "err",
                icon: "✖",
                window_glyph: Some("✖"),
                tmux_colour: "#[fg=red]",
            },
            Status::Unknown => Meaning {
                word: "unknown",
                phase: Phase::Unknown,
                notable: false,
                rank: 5,
                short_word: "unknown",
                icon: "?",
                window_glyph: None,
                tmux_colour: DIM,
            },
            Status::Exited => Meaning {
                word: "exited",
                phase: Phase::Ended,
                notable: false,
                rank: 5,
                short_word: "exit",
                icon: "⏹",
                window_glyph: None,
                tmux_colour: DIM,
            },
        }
    }

    /// Where the agent is in its work.
    pub const fn phase(self) -> Phase {
        self.meaning().phase
    }

    /// Whether a turn under way is over once the agent shows this status: ready again (see
    /// [`Status::is_ready`]), stopped on an error, or gone.
    pub const fn ends_turn(self) -> bool {
        matches!(self.phase(), Phase::Ready | Phase::Ended)
    }

    /// Whether reaching this status is worth a notification (and a `jump`).
    pub const fn notable(self) -> bool {
        self.meaning().notable
    }

    /// The order on the board and of `jump`'s targets: lower comes first.
    pub const fn rank(self) -> u8 {
        self.meaning().rank
    }

    /// The short word of the status-line summary.
    pub const fn short_word(self) -> &'static str {
        self.meaning().short_word
    }

    /// The icon of the status-line summary.
    pub const fn icon(self) -> &'static str {
        self.meaning().icon
    }

    /// The tmux style of the status in a coloured summary.
    pub const fn tmux_colour(self) -> &'static str {
        self.meaning().tmux_colour
    }
}

/// The statuses worth going to, in the order `jump` tries them.
pub fn notable_by_rank() -> Vec<Status> {
    let mut notable: Vec<Status> = Status::ALL.into_iter().filter(|s| s.notable()).collect();
    notable.sort_by_key(|s| s.rank());
    notable
}

/// The tmux format that draws a pane's window glyph from its `@panectl_status` option, for
/// every pane of a window (`#{P:...}`): pure tmux, so a status-line refresh runs no process.
/// The plugin asks for it once at load (`panectl window-glyphs`). Plain shells show no glyph
/// unless `shells` (every command they run would otherwise mark the window). Nothing shows
/// while no daemon is published (`@panectl_pid` unset): the statuses a stopped or killed daemon
/// left in its panes' options are no one's any more.
pub fn window_glyphs_format(shells: bool) -> String {
    let mut glyphs: Vec<(Status, &str)> = Status::ALL
        .into_iter()
        .filter_map(|s| s.meaning().window_glyph.map(|g| (s, g)))
        .collect();
    glyphs.sort_by_key(|(s, _)| s.rank());
    let inner = glyphs.iter().rev().fold(String::new(), |rest, (s, glyph)| {
        format!(
            "#{{?#{{==:#{{@panectl_status}},{}}},{glyph},{rest}}}",
            s.as_str()
        )
    });
    let panes = if shells {
        format!("#{{P:{inner}}}")
    } else {
        format!("#{{P:#{{?#{{==:#{{@panectl_provider}},shell}},,{inner}}}}}")
    };
    format!("{WINDOW_GLYPHS_GATE}{panes},}}")
}

/// How the window glyphs' format starts: only while a daemon is published.
pub const WINDOW_GLYPHS_GATE: &str = "#{?#{@panectl_pid},";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_one_row_per_status_with_distinct_words() {
        // A new variant breaks this match: add it to `Status::ALL` too.
        for status in Status::ALL {
            match status {
                Status::Idle
                | Status::Processing
                | Status::Completed
                | Status::WaitingUserAnswer
                | Status::Error
                | Status::Unknown
                | Status::Exited => {}
            }
        }
        let words: std::collections::BTreeSet<&str> =
            Status::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(words.len(), Status::ALL.len());
        let short: std::collections::BTreeSet<&str> =
            Status::ALL.iter().map(|s| s.short_word()).collect();
        assert_eq!(short.len(), Status::ALL.len());
        for status in Status::ALL {
            assert_eq!(Status::parse(status.as_str()), Some(status));
            let glyph = status.meaning().window_glyph.unwrap_or("");
            assert!(!glyph.contains([',', '}', '#']), "{status}: {glyph}");
            // tmux's own window flags: current, last, activity, bell, silence, marked, zoomed.
            assert!(
                !["*", "-", "#", "!", "~", "M", "Z"].contains(&glyph),
                "{status}: {glyph}"
            );
        }
        let agents = window_glyphs_format(false);
        assert!(
            agents.starts_with("#{?#{@panectl_pid},#{P:#{?#{==:#{@panectl_provider},shell},,"),
            "{agents}"
        );
        assert!(
            window_glyphs_format(true)
                .starts_with("#{?#{@panectl_pid},#{P:#{?#{==:#{@panectl_status},")
        );
        for format in [agents, window_glyphs_format(true)] {
            assert_eq!(
                format.matches("#{").count(),
                format.matches('}').count(),
                "{format}"
            );
        }
    }

    #[test]
    fn phases_say_readiness_and_turn_ends() {
        let ready: Vec<Status> = Status::ALL.into_iter().filter(|s| s.is_ready()).collect();
        assert_eq!(ready, [Status::Idle, Status::Completed]);
        let in_turn: Vec<Status> = Status::ALL
            .into_iter()
            .filter(|s| s.phase().is_in_turn())
            .collect();
        assert_eq!(in_turn, [Status::Processing, Status::WaitingUserAnswer]);
        let ends: Vec<Status> = Status::ALL.into_iter().filter(|s| s.ends_turn()).collect();
        assert_eq!(
            ends,
            [
                Status::Idle,
                Status::Completed,
                Status::Error,
                Status::Exited
            ]
        );
        for status in Status::ALL {
            assert_eq!(status.ends_turn(), status.phase().ends_turn());
        }
    }

    #[test]
    fn notable_statuses_come_first() {
        assert_eq!(
            notable_by_rank(),
            [Status::WaitingUserAnswer, Status::Completed]
        );
        let mut board = Status::ALL.to_vec();
        board.sort_by_key(|s| s.rank());
        assert_eq!(
            board[..5],
            [
                Status::WaitingUserAnswer,
                Status::Completed,
                Status::Error,
                Status::Processing,
                Status::Idle
            ]
        );
    }

    #[test]
    fn the_api_document_lists_every_status() {
        let document: serde_json::Value =
            serde_json::from_str(crate::api::openapi::document()).expect("the document is JSON");
        let listed = &document["components"]["schemas"]["Status"]["enum"];
        let words: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(listed, &serde_json::json!(words));
    }

    #[test]
    fn the_window_glyph_format_is_the_plugins() {
        assert_eq!(
            window_glyphs_format(true),
            "#{?#{@panectl_pid},#{P:#{?#{==:#{@panectl_status},waiting_user_answer},?,\
             #{?#{==:#{@panectl_status},completed},✔,\
             #{?#{==:#{@panectl_status},error},✖,\
             #{?#{==:#{@panectl_status},processing},⚙,}}}}},}"
        );
    }
}
