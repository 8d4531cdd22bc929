//! The live board's loop: the terminal in raw mode on the alternate screen, keys read on one
//! thread, each daemon's event stream followed on another, and the board redrawn when either
//! says something changed. Nothing is polled: the agents are read again after a status,
//! message or pane event (at most every [`ROWS_EVERY`]), the preview after output of the
//! selected pane (at most every [`PREVIEW_EVERY`]); the clock only ticks the durations.

use std::io::Stdout;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use panectl::api::client::ApiClient;
use panectl::api::routes::Route;
use panectl::api::wire::{AnswerBody, AnswerOutcome, Outcome};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    self, DisableBracketedPaste, EnableBracketedPaste, Event, KeyEventKind,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

use super::model::{Action, Board, Pick};
use super::preview::Preview;
use super::{LiveBackend, target, view};
use crate::cli::client::printable;

/// The least time between two readings of the agents.
const ROWS_EVERY: Duration = Duration::from_millis(100);
/// The least time between two readings of the selected agent's screen.
const PREVIEW_EVERY: Duration = Duration::from_millis(50);
/// How often the durations are redrawn.
const TICK: Duration = Duration::from_secs(1);
/// How long a lost event stream waits before it tries again.
const RECONNECT: Duration = Duration::from_secs(1);

/// What wakes the loop.
enum Wake {
    /// A key, a paste, a resize.
    Input(Event),
    /// The keyboard cannot be read any more.
    InputLost(String),
    /// An event of a daemon: its type, and the pane's target if it is about one.
    Changed {
        /// The event's `type`.
        kind: String,
        /// Its pane, as the board names it.
        target: Option<String>,
    },
    /// A daemon's event stream ended or could not be opened.
    StreamLost(String),
    /// A daemon's event stream is open again after it was lost.
    StreamBack,
}

/// The terminal as the board needs it, given back as it was on drop (also when the board
/// fails or panics).
struct Screen {
    terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Screen {
    fn enter() -> anyhow::Result<Screen> {
        enable_raw_mode()?;
        let mut stdout = std::io::stdout();
        if let Err(error) = execute!(stdout, EnterAlternateScreen, EnableBracketedPaste) {
            let _ = disable_raw_mode();
            return Err(error.into());
        }
        let terminal = Terminal::new(CrosstermBackend::new(stdout))?;
        Ok(Screen { terminal })
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = execute!(
            self.terminal.backend_mut(),
            DisableBracketedPaste,
            LeaveAlternateScreen
        );
        let _ = self.terminal.show_cursor();
        let _ = disable_raw_mode();
    }
}

/// Runs the live board until `q`, Esc or a jump (`None`), or a jump that failed (`Some`
/// reason, for the popup's caller to show).
pub(super) fn run(backend: &impl LiveBackend, colour: bool) -> anyhow::Result<Option<String>> {
    let (wake, woken) = mpsc::channel();
    read_keys(wake.clone());
    for (label, api) in backend.streams() {
        follow(label, api, wake.clone());
    }
    drop(wake);
    // Nothing to show at all (no daemon answers): the board does not open on an empty list
    // with the reason cut at its width; the caller says why, whole.
    let first = backend.agents()?;
    let mut screen = Screen::enter()?;
    let mut loop_ = Loop {
        backend,
        board: Board::new(Instant::now()),
        rows_due: None,
        preview_due: None,
        dirty: true,
    };
    loop_.board.set_rows(Ok(first), Instant::now());
    loop_.read_preview();
    loop_.run(&mut screen, &woken, colour)
}

/// The loop's state: the board and what is due to be read again.
struct Loop<'a, B> {
    backend: &'a B,
    board: Board,
    rows_due: Option<Instant>,
    preview_due: Option<Instant>,
    /// Whether the board must be drawn again.
    dirty: bool,
}

/// How the board ended: the user left it (`failure` is `None`), or it stopped on a failure
/// the caller reports.
#[derive(Debug, PartialEq, Eq)]
struct BoardEnd {
    /// What went wrong, if anything.
    failure: Option<String>,
}

impl<B: LiveBackend> Loop<'_, B> {
    fn run(
        &mut self,
        screen: &mut Screen,
        woken: &Receiver<Wake>,
        colour: bool,
    ) -> anyhow::Result<Option<String>> {
        let mut next_tick = Instant::now() + TICK;
        loop {
            // Drawn only when something changed: a board in a pane of the server it watches
            // would otherwise redraw on the output events of its own drawing, forever.
            if std::mem::take(&mut self.dirty) {
                screen
                    .terminal
                    .draw(|frame| view::draw(frame, &self.board, Instant::now(), colour))?;
            }
            let deadline = [Some(next_tick), self.rows_due, self.preview_due]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(next_tick);
            let mut wakes = Vec::new();
            match woken.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(first) => {
                    wakes.push(first);
                    wakes.extend(woken.try_iter());
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(None),
            }
            for wake in wakes {
                if let Some(end) = self.wake(wake)? {
                    return Ok(end.failure);
                }
            }
            let now = Instant::now();
            if now >= next_tick {
                next_tick = now + TICK;
                // The durations count on.
                self.dirty = true;
            }
            if self.rows_due.is_some_and(|due| now >= due) {
                self.read_rows();
            }
            if self.preview_due.is_some_and(|due| now >= due) {
                self.read_preview();
            }
        }
    }

    /// Handles one wake; `Some` when the board ends (with the failure, if any).
    fn wake(&mut self, wake: Wake) -> anyhow::Result<Option<BoardEnd>> {
        match wake {
            Wake::Input(Event::Key(key)) if key.kind == KeyEventKind::Press => {
                self.dirty = true;
                let before = self.board.selected().map(str::to_string);
                let action = self.board.key(key);
                if let Some(action) = action
                    && let Some(end) = self.act(action)
                {
                    return Ok(Some(end));
                }
                if self.board.selected() != before.as_deref() {
                    self.preview_due = Some(Instant::now());
                }
            }
            Wake::Input(Event::Paste(text)) => {
                self.dirty = true;
                self.board.paste(&text);
            }
            Wake::Input(Event::Resize(..)) => self.dirty = true,
            Wake::Input(_) => {}
            Wake::InputLost(error) => anyhow::bail!("cannot read the keyboard: {error}"),
            Wake::Changed { kind, target } => {
                let selected = target.is_some() && target.as_deref() == self.board.selected();
                if kind != "output" {
                    self.rows_soon();
                }
                if selected {
                    self.preview_soon();
                }
            }
            Wake::StreamLost(error) => {
                self.dirty = true;
                self.board.notice = Some(format!(
                    "The daemon's events stopped ({error}); trying again."
                ));
                self.rows_soon();
            }
            Wake::StreamBack => {
                self.dirty = true;
                self.board.notice = Some("The daemon's events are back.".into());
                self.rows_soon();
                self.preview_soon();
            }
        }
        Ok(None)
    }

    /// Carries out an action; `Some` when the board ends.
    fn act(&mut self, action: Action) -> Option<BoardEnd> {
        let notice = match action {
            Action::Quit => return Some(BoardEnd { failure: None }),
            Action::Jump(target) => {
                let failure = match self.backend.jump(&target) {
                    Ok(()) => None,
                    Err(error) => Some(format!("cannot switch to {target}: {error:#}")),
                };
                return Some(BoardEnd { failure });
            }
            Action::Refresh => {
                self.rows_due = Some(Instant::now());
                self.preview_due = Some(Instant::now());
                return None;
            }
            Action::Send(target, body) => match self.backend.send(&target, &body) {
                Ok(id) => format!("Message {id} queued for {target}."),
                Err(error) => format!("Not sent to {target}: {error:#}"),
            },
            Action::Keys(target, keys) => match self.backend.keys(&target, &keys) {
                Ok(()) => format!("Pressed {} in {target}.", keys.join(" ")),
                Err(error) => format!("No key pressed in {target}: {error:#}"),
            },
            Action::Answer {
                target,
                pick,
                decision,
            } => {
                // A dialog the daemon reads no options from (a bare `(y/n)` prompt) gets the
                // key itself, as a person would press it.
                let decision = match decision {
                    Some(fingerprint) => Some(fingerprint),
                    None => match self.backend.decision(&target) {
                        Ok(Some(fingerprint)) => Some(fingerprint),
                        Ok(None) => {
                            let key = match pick {
                                Pick::Yes => "y".to_string(),
                                Pick::No => "n".to_string(),
                                Pick::Number(number) => number.to_string(),
                            };
                            return self.act(Action::Keys(target, vec![key]));
                        }
                        Err(error) => {
                            tracing::debug!(%target, %error, "no decision read");
                            None
                        }
                    },
                };
                let body = AnswerBody {
                    option: match pick {
                        Pick::Number(number) => Some(number),
                        Pick::Yes | Pick::No => None,
                    },
                    yes: pick == Pick::Yes,
                    no: pick == Pick::No,
                    decision,
                    ..AnswerBody::default()
                };
                match self.backend.answer(&target, &body) {
                    Ok(outcome) => answered(&target, &outcome),
                    Err(error) => format!("Not answered in {target}: {error:#}"),
                }
            }
            Action::Cancel(target, id) => match self.backend.cancel(&target, id) {
                Ok(()) => format!("Message {id} to {target} cancelled."),
                Err(error) => format!("Message {id} not cancelled: {error:#}"),
            },
        };
        self.board.notice = Some(notice);
        self.rows_soon();
        None
    }

    fn rows_soon(&mut self) {
        self.rows_due
            .get_or_insert_with(|| Instant::now() + ROWS_EVERY);
    }

    fn preview_soon(&mut self) {
        self.preview_due
            .get_or_insert_with(|| Instant::now() + PREVIEW_EVERY);
    }

    fn read_rows(&mut self) {
        self.dirty = true;
        self.rows_due = None;
        let before = self.board.selected().map(str::to_string);
        self.board.set_rows(self.backend.agents(), Instant::now());
        if self.board.selected() != before.as_deref() {
            self.read_preview();
        }
    }

    fn read_preview(&mut self) {
        self.dirty = true;
        self.preview_due = None;
        self.board.decision = self
            .board
            .selected_row()
            .filter(|row| super::model::waiting(row))
            .map(|row| row.target())
            .and_then(|target| match self.backend.decision(&target) {
                Ok(found) => found.map(|fingerprint| (target, fingerprint)),
                Err(error) => {
                    tracing::debug!(%target, %error, "no decision read");
                    None
                }
            });
        self.board.preview =
            self.board
                .selected()
                .map(str::to_string)
                .and_then(|target| match self.backend.screen(&target) {
                    Ok(screen) => Some(Preview::new(target, &screen)),
                    Err(error) => {
                        tracing::debug!(%target, %error, "no preview");
                        None
                    }
                });
    }
}

/// The notice for an answer's outcome: what was picked, or why nothing was.
fn answered(target: &str, outcome: &AnswerOutcome) -> String {
    let picked = format!(
        "{}. {}",
        outcome.option.unwrap_or_default(),
        printable(outcome.label.as_deref().unwrap_or_default())
    );
    match outcome.outcome {
        Outcome::Answered => format!("answered {picked} in {target}; now {}.", outcome.status),
        Outcome::Unconfirmed => format!(
            "pressed {} for {picked} in {target}, and the dialog is still there.",
            outcome.keys.join(" ")
        ),
        Outcome::Gone => {
            format!("{target} shows no dialog now (answered already?); nothing pressed.")
        }
        Outcome::Changed => {
            let options: Vec<String> = outcome
                .decision
                .iter()
                .flat_map(|d| &d.options)
                .map(|o| format!("{}. {}", o.number, printable(&o.label)))
                .collect();
            format!(
                "{target} shows another dialog now; nothing pressed. It offers: {}",
                options.join("  ")
            )
        }
    }
}

/// Reads the keyboard on a thread of its own.
fn read_keys(wake: Sender<Wake>) {
    std::thread::spawn(move || {
        loop {
            let sent = match event::read() {
                Ok(event) => wake.send(Wake::Input(event)),
                Err(error) => {
                    let _ = wake.send(Wake::InputLost(error.to_string()));
                    return;
                }
            };
            if sent.is_err() {
                return;
            }
        }
    });
}

/// Follows a daemon's event stream on a thread of its own, opening it again when it ends.
fn follow(label: Option<String>, api: ApiClient, wake: Sender<Wake>) {
    std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            let _ = wake.send(Wake::StreamLost("no runtime".into()));
            return;
        };
        let mut lost = false;
        loop {
            let mut pending = Vec::new();
            let mut open = true;
            let ended = runtime.block_on(api.stream(&Route::Events {}.path(), |chunk| {
                if lost {
                    lost = false;
                    open = wake.send(Wake::StreamBack).is_ok();
                }
                pending.extend_from_slice(chunk);
                while open && let Some(end) = pending.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=end).collect();
                    if let Some(changed) = changed(&line, label.as_deref()) {
                        open = wake.send(changed).is_ok();
                    }
                }
                open
            }));
            if !open {
                return;
            }
            let reason = match ended {
                Ok(()) => "the daemon ended the stream".to_string(),
                Err(error) => error.to_string(),
            };
            if !lost && wake.send(Wake::StreamLost(reason)).is_err() {
                return;
            }
            lost = true;
            std::thread::sleep(RECONNECT);
        }
    });
}

/// What an SSE line says changed, if it is an event's data.
fn changed(line: &[u8], label: Option<&str>) -> Option<Wake> {
    let data = line.strip_prefix(b"data:")?;
    let event: serde_json::Value = serde_json::from_slice(data).ok()?;
    let kind = event.get("type")?.as_str()?.to_string();
    let pane = event.get("pane").and_then(|p| p.as_str());
    Some(Wake::Changed {
        kind,
        target: pane.map(|pane| target(label, pane)),
    })
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::super::{Backend, Row};
    use super::*;
    use crate::cli::agents::tests::pane;
    use crate::cli::board::preview::Screen as PaneScreen;

    /// A backend that records what it was asked, and fails jumps.
    #[derive(Default)]
    struct Fake {
        asked: RefCell<Vec<String>>,
        /// Whether the daemon reads no options from the agent's dialog.
        no_options: std::cell::Cell<bool>,
    }

    impl Backend for Fake {
        fn agents(&self) -> anyhow::Result<Vec<Row>> {
            self.asked.borrow_mut().push("agents".into());
            Ok(vec![Row {
                pane: pane(4, "s", 1, 0, "waiting_user_answer"),
                name: String::new(),
                server: None,
                pending: vec![7],
            }])
        }
        fn jump(&self, target: &str) -> anyhow::Result<()> {
            anyhow::bail!("can't find pane: {target}")
        }
        fn send(&self, target: &str, body: &[u8]) -> anyhow::Result<String> {
            self.asked
                .borrow_mut()
                .push(format!("send {target} {}", String::from_utf8_lossy(body)));
            Ok("12".into())
        }
    }

    impl LiveBackend for Fake {
        fn screen(&self, target: &str) -> anyhow::Result<PaneScreen> {
            self.asked.borrow_mut().push(format!("screen {target}"));
            Ok(PaneScreen::from_answer(b"hi".to_vec(), Some("10x2"), None))
        }
        fn keys(&self, target: &str, keys: &[String]) -> anyhow::Result<()> {
            self.asked
                .borrow_mut()
                .push(format!("keys {target} {}", keys.join(" ")));
            Ok(())
        }
        fn cancel(&self, target: &str, id: i64) -> anyhow::Result<()> {
            anyhow::bail!("message {id} to {target} was delivered")
        }
        fn decision(&self, target: &str) -> anyhow::Result<Option<String>> {
            self.asked.borrow_mut().push(format!("decision {target}"));
            Ok((!self.no_options.get()).then(|| "abcdabcdabcdabcd".into()))
        }
        fn answer(&self, target: &str, body: &AnswerBody) -> anyhow::Result<AnswerOutcome> {
            self.asked.borrow_mut().push(format!(
                "answer {target} option={:?} yes={} no={} decision={:?}",
                body.option, body.yes, body.no, body.decision
            ));
            let outcome = |outcome, option: Option<usize>, label: Option<&str>| AnswerOutcome {
                pane: target.into(),
                outcome,
                option,
                label: label.map(str::to_string),
                keys: vec!["Down".into(), "Enter".into()],
                status: panectl::status::Status::Processing,
                decision: None,
            };
            match (body.option, body.no) {
                (Some(9), _) => anyhow::bail!("no option 9: the dialog offers 1. Yes, 2. No"),
                (Some(1), _) => Ok(outcome(Outcome::Gone, None, None)),
                (_, true) => Ok(outcome(Outcome::Answered, Some(2), Some("No"))),
                _ => Ok(outcome(Outcome::Unconfirmed, Some(1), Some("Yes"))),
            }
        }
        fn streams(&self) -> Vec<(Option<String>, ApiClient)> {
            Vec::new()
        }
    }

    fn started(fake: &Fake) -> Loop<'_, Fake> {
        let mut loop_ = Loop {
            backend: fake,
            board: Board::new(Instant::now()),
            rows_due: None,
            preview_due: None,
            dirty: false,
        };
        loop_.read_rows();
        loop_
    }

    #[test]
    fn events_schedule_readings_and_output_only_of_the_selected_pane() {
        let fake = Fake::default();
        let mut loop_ = started(&fake);
        // The first reading selected %4 and read its screen.
        assert_eq!(*fake.asked.borrow(), ["agents", "decision %4", "screen %4"]);
        assert!(loop_.board.preview.is_some());
        let output = |pane: &str| Wake::Changed {
            kind: "output".into(),
            target: Some(pane.into()),
        };
        loop_.dirty = false;
        loop_.wake(output("%9")).expect("handled");
        assert_eq!((loop_.rows_due, loop_.preview_due), (None, None));
        // Output of a pane not shown (the board's own, when it runs in a pane of the server
        // it watches) does not redraw the board.
        assert!(!loop_.dirty);
        loop_.wake(output("%4")).expect("handled");
        assert!(loop_.rows_due.is_none() && loop_.preview_due.is_some());
        loop_
            .wake(Wake::Changed {
                kind: "status".into(),
                target: Some("%9".into()),
            })
            .expect("handled");
        let due = loop_.rows_due.expect("rows due");
        // Later events do not put the reading off.
        loop_
            .wake(Wake::Changed {
                kind: "message".into(),
                target: None,
            })
            .expect("handled");
        assert_eq!(loop_.rows_due, Some(due));
        assert!(loop_.wake(Wake::InputLost("gone".into())).is_err());
    }

    #[test]
    fn actions_say_what_they_did_and_a_failed_jump_ends_the_board() {
        let fake = Fake::default();
        let mut loop_ = started(&fake);
        assert_eq!(loop_.act(Action::Quit), Some(BoardEnd { failure: None }));
        assert_eq!(
            loop_.act(Action::Jump("%4".into())),
            Some(BoardEnd {
                failure: Some("cannot switch to %4: can't find pane: %4".into())
            })
        );
        assert_eq!(loop_.act(Action::Send("%4".into(), b"hi".to_vec())), None);
        assert_eq!(
            loop_.board.notice.as_deref(),
            Some("Message 12 queued for %4.")
        );
        assert_eq!(loop_.act(Action::Keys("%4".into(), vec!["y".into()])), None);
        assert_eq!(loop_.board.notice.as_deref(), Some("Pressed y in %4."));
        // Answers go through the daemon, naming the dialog the board read, and say what
        // came of them.
        loop_.act(Action::Answer {
            target: "%4".into(),
            pick: Pick::No,
            decision: loop_
                .board
                .decision
                .clone()
                .map(|(_, fingerprint)| fingerprint),
        });
        assert_eq!(
            fake.asked.borrow().last().map(String::as_str),
            Some("answer %4 option=None yes=false no=true decision=Some(\"abcdabcdabcdabcd\")")
        );
        assert_eq!(
            loop_.board.notice.as_deref(),
            Some("answered 2. No in %4; now processing.")
        );
        for (number, notice) in [
            (
                1,
                "%4 shows no dialog now (answered already?); nothing pressed.",
            ),
            (
                9,
                "Not answered in %4: no option 9: the dialog offers 1. Yes, 2. No",
            ),
        ] {
            loop_.act(Action::Answer {
                target: "%4".into(),
                pick: Pick::Number(number),
                decision: None,
            });
            assert_eq!(loop_.board.notice.as_deref(), Some(notice));
        }
        loop_.act(Action::Answer {
            target: "%4".into(),
            pick: Pick::Yes,
            decision: None,
        });
        assert_eq!(
            loop_.board.notice.as_deref(),
            Some("pressed Down Enter for 1. Yes in %4, and the dialog is still there.")
        );
        // A dialog the daemon reads no options from gets the key itself.
        fake.no_options.set(true);
        for (pick, key) in [(Pick::Yes, "y"), (Pick::No, "n"), (Pick::Number(3), "3")] {
            loop_.act(Action::Answer {
                target: "%4".into(),
                pick,
                decision: None,
            });
            assert_eq!(
                fake.asked.borrow().last().cloned(),
                Some(format!("keys %4 {key}"))
            );
            assert_eq!(
                loop_.board.notice.clone(),
                Some(format!("Pressed {key} in %4."))
            );
        }
        fake.no_options.set(false);
        assert_eq!(loop_.act(Action::Cancel("%4".into(), 7)), None);
        assert_eq!(
            loop_.board.notice.as_deref(),
            Some("Message 7 not cancelled: message 7 to %4 was delivered")
        );
        assert!(fake.asked.borrow().contains(&"send %4 hi".to_string()));
        assert!(fake.asked.borrow().contains(&"keys %4 y".to_string()));
    }

    #[test]
    fn event_lines_name_their_pane_on_the_board() {
        let line = br#"data: {"id":"1-4","type":"status","pane":"%3","status":"idle"}
"#;
        match changed(line, Some("work")) {
            Some(Wake::Changed { kind, target }) => {
                assert_eq!(
                    (kind.as_str(), target.as_deref()),
                    ("status", Some("work/%3"))
                );
            }
            _ => panic!("not read"),
        }
        match changed(br#"data:{"type":"session_added","session":"$1"}"#, None) {
            Some(Wake::Changed { kind, target }) => {
                assert_eq!((kind.as_str(), target), ("session_added", None));
            }
            _ => panic!("not read"),
        }
        assert!(changed(b"id: 1-4\n", None).is_none());
        assert!(changed(b": keep-alive\n", None).is_none());
        assert!(changed(b"data: {not json\n", None).is_none());
    }
}
