//! Unit tests of the session core, driven by the recorded transcripts in `fixtures/`: the
//! stream tmux wrote, with the replies to the core's own commands put in where a test wants
//! them, and an explicit `now`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;
use crate::control::command::commands;
use crate::mirror::SyncState;
use crate::pipe::Transport;

mod detection;
mod frames;

/// Pane IO whose pipes always start, which remembers what it was asked, and whose every pane
/// runs the processes of `tree`.
#[derive(Clone, Default)]
struct ScriptedPaneIo {
    calls: Arc<Mutex<Vec<String>>>,
    tree: Arc<Mutex<Vec<ProcessEntry>>>,
}

impl ScriptedPaneIo {
    fn calls(&self) -> Vec<String> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }

    fn note(&self, call: String) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(call);
        }
    }
}

impl PaneIo for ScriptedPaneIo {
    fn process_tree(&mut self, _pid: u32, _limit: usize) -> Vec<ProcessEntry> {
        self.tree.lock().map(|t| t.clone()).unwrap_or_default()
    }

    fn start_pipe(&mut self, pane: PaneId, generation: u64) -> Result<Command, TransportError> {
        self.note(format!("start {pane} {generation}"));
        Ok(commands::pipe_pane_to(pane, b"/fifo").map_err(crate::pipe::PipeError::from)?)
    }

    fn restart_pipe(&mut self, pane: PaneId) -> Result<Command, TransportError> {
        self.note(format!("restart {pane}"));
        Ok(commands::pipe_pane_to(pane, b"/fifo").map_err(crate::pipe::PipeError::from)?)
    }

    fn stop_pipe(&mut self, pane: PaneId, generation: u64) {
        self.note(format!("stop {pane} {generation}"));
    }
}

fn transcript(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/fixtures/transcripts/{name}/control.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The transcript's lines up to (not including) the first that starts with `marker`, and the
/// rest.
fn split_at(stream: &[u8], marker: &str) -> (Vec<u8>, Vec<u8>) {
    let mut at = 0;
    for line in stream.split_inclusive(|&b| b == b'\n') {
        if line.starts_with(marker.as_bytes()) {
            break;
        }
        at += line.len();
    }
    (stream[..at].to_vec(), stream[at..].to_vec())
}

/// One reply block body: success and lines.
type Body = (bool, Vec<String>);

fn ok(lines: &[&str]) -> Body {
    (true, lines.iter().map(|l| l.to_string()).collect())
}

/// A whole screen of `height` rows as `capture-pane` prints it: `lines`, then empty rows.
fn screen(lines: &[&str], height: usize) -> Body {
    let mut rows: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    rows.resize(height, String::new());
    (true, rows)
}

/// Drives a core and keeps what it did.
struct Harness {
    core: SessionCore,
    host: ScriptedPaneIo,
    now: Instant,
    /// Lines sent and not answered yet, oldest first: purpose and number of commands.
    outstanding: VecDeque<(Purpose, usize)>,
    sent: Vec<(Purpose, String)>,
    events: Vec<EventKind>,
    upcalls: Vec<Upcall>,
    replies: Vec<(ReplyId, Answer)>,
    synced: bool,
    number: u64,
    /// Divergence records the core asked to save.
    divergences: Vec<crate::mirror::DivergenceRecord>,
}

impl Harness {
    fn new(config: ConnectionConfig) -> Harness {
        let host = ScriptedPaneIo::default();
        let now = Instant::now();
        let providers = ProviderSet::builtin().unwrap_or_default();
        let mut core = SessionCore::new(
            SessionId(0),
            config,
            ResyncReason::Attach,
            Arc::new(providers),
            Box::new(host.clone()),
            now,
        );
        core.start(now);
        let mut harness = Harness {
            core,
            host,
            now,
            outstanding: VecDeque::new(),
            sent: Vec::new(),
            events: Vec::new(),
            upcalls: Vec::new(),
            replies: Vec::new(),
            synced: false,
            number: 1000,
            divergences: Vec::new(),
        };
        harness.collect();
        harness
    }

    fn collect(&mut self) {
        let mut actions = Vec::new();
        self.core.take_actions(&mut actions);
        for action in actions {
            match action {
                Action::Send { bytes, purpose, .. } => {
                    let text = String::from_utf8_lossy(&bytes).trim_end().to_string();
                    let commands = text.matches(" ; ").count() + 1;
                    self.outstanding.push_back((purpose, commands));
                    self.sent.push((purpose, text));
                }
                Action::Publish(event) => self.events.push(event),
                Action::Upcall(upcall) => self.upcalls.push(upcall),
                Action::Reply(id, answer) => self.replies.push((id, answer)),
                Action::Forget(_) => {}
                Action::Synced => self.synced = true,
                Action::SaveDivergence(record) => self.divergences.push(*record),
            }
        }
    }

    /// A harness attached to a session of one pane `%0` of `size`, seeded with a prompt.
    fn one_pane(size: (u16, u16)) -> Harness {
        let mut h = Harness::new(ConnectionConfig::default());
        let (start, _) = split_at(&transcript("shell-utf8"), "%output");
        h.feed(&start);
        h.attach(&[&row("%0", "@0", size, "")]);
        h.seed(PaneId(0), size, &["$"], (2, 0));
        h
    }

    /// Lets the watchdog run at `at` and answers what comes before its check of `%0`.
    fn watchdog_check_at(&mut self, at: Instant) {
        self.core.tick(at);
        self.collect();
        self.skip_until(|p| matches!(p, Purpose::Check(PaneId(0), _, _)));
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.core.feed(bytes, self.now);
        self.collect();
    }

    fn output(&mut self, pane: &str, text: &str) {
        self.feed(format!("%output {pane} {text}\n").as_bytes());
    }

    /// Answers the lines before the first `wanted` one with empty successes.
    fn skip_until(&mut self, wanted: impl Fn(&Purpose) -> bool) {
        while let Some((purpose, commands)) = self.outstanding.front().copied()
            && !wanted(&purpose)
        {
            self.answer(vec![ok(&[]); commands]);
        }
    }

    /// The reply blocks of the oldest unanswered line, as tmux would write them.
    fn answer(&mut self, bodies: Vec<Body>) -> Purpose {
        let (purpose, commands) = self.outstanding.pop_front().expect("a line to answer");
        assert_eq!(bodies.len(), commands, "{purpose:?}");
        let mut stream = String::new();
        for (success, lines) in bodies {
            self.number += 1;
            let guard = format!("1 {} 1", self.number);
            stream += &format!("%begin {guard}\n");
            for line in lines {
                stream += &line;
                stream.push('\n');
            }
            stream += &format!("%{} {guard}\n", if success { "end" } else { "error" });
        }
        self.feed(stream.as_bytes());
        purpose
    }

    /// Answers the start lines: flow control, version, windows, and `panes` for the session.
    fn attach(&mut self, panes: &[&str]) {
        self.attach_to("3.4", panes);
    }

    /// [`Harness::attach`] to a server that says it is tmux `version`.
    fn attach_to(&mut self, version: &str, panes: &[&str]) {
        assert_eq!(self.answer(vec![ok(&[])]), Purpose::Setup);
        assert_eq!(self.answer(vec![ok(&[version])]), Purpose::Version);
        assert_eq!(self.answer(vec![ok(&["@0\t0\t1\tbash"])]), Purpose::Windows);
        let rows: Vec<&str> = panes.to_vec();
        assert_eq!(
            self.answer(vec![ok(&rows)]),
            Purpose::Panes(ResyncReason::Attach)
        );
    }

    /// Answers the oldest line, which must be a seed of `pane`, with a snapshot.
    /// Lines before it (setting options, say) succeed with empty replies.
    fn seed(&mut self, pane: PaneId, size: (u16, u16), rows: &[&str], cursor: (u16, u16)) {
        self.skip_until(|p| matches!(p, Purpose::Seed(..)));
        let (purpose, _) = self.outstanding.front().copied().expect("a seed line");
        assert!(
            matches!(purpose, Purpose::Seed(p, _) if p == pane),
            "{purpose:?}"
        );
        let state = format!("{} {} {} {} 0 0 0", size.0, size.1, cursor.0, cursor.1);
        self.answer(vec![ok(&[]), ok(rows), ok(&[]), ok(&[&state]), ok(&[])]);
    }

    fn sent_for(&self, wanted: impl Fn(&Purpose) -> bool) -> Vec<String> {
        self.sent
            .iter()
            .filter(|(purpose, _)| wanted(purpose))
            .map(|(_, text)| text.clone())
            .collect()
    }

    fn text(&self, pane: PaneId) -> String {
        self.core
            .mirror(pane)
            .map(|m| m.screen().text())
            .unwrap_or_default()
    }
}

/// A `list-panes` row.
fn row(pane: &str, window: &str, size: (u16, u16), provider: &str) -> String {
    format!(
        "{pane}\t{window}\t0\t{}\t{}\t1\t0\t0\t0\tbash\t{provider}\t\t",
        size.0, size.1
    )
}

#[test]
fn nothing_is_sent_before_tmux_confirms_the_attach() {
    let mut h = Harness::new(ConnectionConfig::default());
    assert!(h.sent.is_empty());
    let (start, _) = split_at(&transcript("shell-utf8"), "%output");
    h.feed(&start);
    let purposes: Vec<Purpose> = h.sent.iter().map(|(p, _)| *p).collect();
    assert_eq!(
        purposes,
        [
            Purpose::Setup,
            Purpose::Version,
            Purpose::Windows,
            Purpose::Panes(ResyncReason::Attach)
        ]
    );
    assert!(!h.synced);
}

#[test]
fn seeding_applies_the_snapshot_at_its_point_in_the_stream() {
    let mut h = Harness::new(ConnectionConfig::default());
    let stream = transcript("shell-utf8");
    // Attach, and the first output before the panes are known (kept as early output).
    let (start, rest) = split_at(&stream, "%output");
    h.feed(&start);
    let (first, _) = rest.split_at(rest.iter().position(|&b| b == b'\n').unwrap_or(0) + 1);
    h.feed(first);
    assert!(h.core.mirror(PaneId(0)).is_none());
    h.attach(&[&row("%0", "@0", (100, 30), "")]);
    assert!(h.synced);
    assert!(h.events.iter().any(|e| matches!(
        e,
        EventKind::PaneAdded {
            pane: PaneId(0),
            width: 100,
            height: 30,
            ..
        }
    )));
    // The early output reached the new mirror and the stream.
    assert!(h.events.iter().any(|e| matches!(
        e,
        EventKind::Output {
            pane: PaneId(0),
            seq: 0,
            ..
        }
    )));
    assert_eq!(
        h.sent_for(|p| matches!(p, Purpose::Seed(PaneId(0), ResyncReason::Attach)))
            .len(),
        1
    );
    // Output before the seed's replies is superseded by the snapshot; output after applies.
    h.output("%0", "lost");
    h.seed(PaneId(0), (100, 30), &["snapshot $ "], (11, 0));
    h.output("%0", "after");
    assert_eq!(h.text(PaneId(0)), "snapshot $ after");
    assert_eq!(
        h.core.mirror(PaneId(0)).map(|m| m.state()),
        Some(SyncState::Live)
    );
    assert!(h.events.iter().any(|e| matches!(
        e,
        EventKind::Resync {
            pane: PaneId(0),
            reason: ResyncReason::Attach
        }
    )));
}

#[test]
fn command_tags_match_replies_and_a_late_command_times_out() {
    let mut h = Harness::new(ConnectionConfig::default());
    let (start, _) = split_at(&transcript("session-killed"), "%output");
    h.feed(&start);
    h.attach(&[]);
    let t0 = h.now;
    h.core.command(ReplyId(1), Line::new(query::version()), t0);
    h.core.command(
        ReplyId(2),
        Line::new(query::version()).then(query::version()),
        t0,
    );
    h.collect();
    h.answer(vec![ok(&["first"])]);
    h.answer(vec![ok(&["second"]), (false, vec!["refused".into()])]);
    let bodies: Vec<(ReplyId, Vec<Option<bool>>)> = h
        .replies
        .iter()
        .map(|(id, answer)| match answer {
            Answer::Command(Ok(replies)) => (
                *id,
                replies
                    .iter()
                    .map(|r| r.as_ref().map(|r| r.success))
                    .collect(),
            ),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        bodies,
        [
            (ReplyId(1), vec![Some(true)]),
            (ReplyId(2), vec![Some(true), Some(false)])
        ]
    );
    // A command tmux never answers fails at its deadline, not before.
    h.replies.clear();
    h.core.command(ReplyId(3), Line::new(query::version()), t0);
    h.core.tick(t0 + Duration::from_secs(9));
    h.collect();
    assert!(h.replies.is_empty());
    h.core.tick(t0 + Duration::from_secs(10));
    h.collect();
    assert!(matches!(
        h.replies.as_slice(),
        [(
            ReplyId(3),
            Answer::Command(Err(ConnectionError::Timeout { .. }))
        )]
    ));
    assert_eq!(h.core.stats().timeouts, 1);
}

#[test]
fn windows_and_layouts_change_pane_sizes_and_membership() {
    let mut h = Harness::new(ConnectionConfig::default());
    let stream = transcript("windows-and-panes");
    let (start, rest) = split_at(&stream, "%output");
    h.feed(&start);
    h.attach(&[&row("%0", "@0", (120, 40), "")]);
    h.seed(PaneId(0), (120, 40), &["$"], (2, 0));
    let (split, rest) = split_at(&rest, "%window-pane-changed @0 %2");
    h.feed(&split);
    // The split halved %0 (its reflow is checked) and showed a pane nobody listed yet.
    assert!(h.events.iter().any(|e| matches!(
        e,
        EventKind::PaneResized {
            pane: PaneId(0),
            width: 60,
            height: 40
        }
    )));
    assert!(
        !h.sent_for(|p| matches!(p, Purpose::ResizeCheck(PaneId(0), _)))
            .is_empty()
    );
    assert!(
        h.sent_for(|p| *p == Purpose::Panes(ResyncReason::Attach))
            .iter()
            .any(|l| l.contains("list-panes") && !l.contains("-s"))
    );
    h.feed(&rest);
    // Later layouts gave %0 its final size; %2 left the window's layout.
    let size = h
        .core
        .mirror(PaneId(0))
        .map(|m| (m.row.width, m.row.height));
    assert_eq!(size, Some((50, 40)));
    assert!(h.core.screen(PaneId(2), false).is_none());
}

#[test]
fn exit_ends_the_session_and_sessions_changed_goes_up() {
    let mut h = Harness::new(ConnectionConfig::default());
    h.feed(&transcript("session-killed"));
    assert_eq!(h.core.finish(h.now), Some(TmuxExit { reason: None }));
    h.collect();
    assert_eq!(
        h.upcalls
            .iter()
            .filter(|u| matches!(u, Upcall::SessionsChanged))
            .count(),
        3
    );
}

#[test]
fn a_pause_triggers_a_resync() {
    let mut h = Harness::new(ConnectionConfig::default());
    let stream = transcript("pause-continue");
    let (start, rest) = split_at(&stream, "%extended-output");
    h.feed(&start);
    h.attach(&[&row("%0", "@0", (80, 24), "")]);
    h.seed(PaneId(0), (80, 24), &["$"], (2, 0));
    h.feed(&rest);
    let mirror = h.core.mirror(PaneId(0)).expect("the pane");
    assert_eq!(mirror.counters.pauses, 1);
    assert_eq!(mirror.state(), SyncState::Stale);
    assert_eq!(
        h.sent_for(|p| *p == Purpose::Seed(PaneId(0), ResyncReason::Pause))
            .len(),
        1
    );
    h.seed(PaneId(0), (80, 24), &["resynced"], (8, 0));
    assert_eq!(h.text(PaneId(0)), "resynced");
    assert!(h.events.iter().any(|e| matches!(
        e,
        EventKind::Resync {
            pane: PaneId(0),
            reason: ResyncReason::Pause
        }
    )));
}

#[test]
fn a_failed_pipe_falls_back_to_the_control_transport() {
    let config = ConnectionConfig {
        transport: Transport::Pipe,
        ..ConnectionConfig::default()
    };
    let mut h = Harness::new(config);
    let (start, rest) = split_at(&transcript("shell-utf8"), "%output");
    h.feed(&start);
    h.attach(&[&row("%0", "@0", (100, 30), "")]);
    assert_eq!(h.host.calls(), ["start %0 1"]);
    assert_eq!(
        h.sent_for(|p| *p == Purpose::PipeStart(PaneId(0), 1)).len(),
        1
    );
    // `%output` of a pipe pane is ignored: the pipe delivers.
    h.feed(&rest);
    assert_eq!(h.core.mirror(PaneId(0)).map(|m| m.output_end()), Some(0));
    h.core.pipe_output(PaneId(0), 1, b"piped", h.now);
    h.core
        .pipe_failed(PaneId(0), 1, "the FIFO is gone".into(), h.now);
    h.collect();
    assert_eq!(h.host.calls(), ["start %0 1", "stop %0 1"]);
    let transports: Vec<(Transport, String)> = h
        .events
        .iter()
        .filter_map(|e| match e {
            EventKind::Transport {
                transport, reason, ..
            } => Some((*transport, reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        transports,
        [
            (Transport::Pipe, "the daemon's --transport".to_string()),
            (
                Transport::Control,
                "the pipe failed: the FIFO is gone".to_string()
            )
        ]
    );
    assert!(
        h.sent_for(|p| *p == Purpose::Setup)
            .iter()
            .any(|l| l.contains("%0:on"))
    );
    assert_eq!(h.core.stats().pipe_panes, 0);
    assert_eq!(h.core.stats().pipe_bytes, 5);
}

/// A core whose `%0` runs Claude Code, seeded, at a time after attaching.
fn agent_pane() -> (Harness, Instant) {
    let mut h = Harness::new(ConnectionConfig::default());
    let (start, _) = split_at(&transcript("shell-utf8"), "%output");
    h.feed(&start);
    h.attach(&[&row("%0", "@0", (100, 30), "claude_code")]);
    h.seed(PaneId(0), (100, 30), &["$"], (2, 0));
    let t0 = h.now + Duration::from_secs(1);
    h.core.wake(t0);
    h.now = t0;
    (h, t0)
}

#[test]
fn status_evaluation_is_due_when_output_goes_quiet_and_at_most_max_wait_after() {
    let (mut h, t0) = agent_pane();
    h.output("%0", "working");
    let timing = crate::status::pane::Timing::default();
    assert_eq!(h.core.next_wakeup(t0), Some(t0 + timing.quiet));
    // Output that keeps coming moves the evaluation on, up to `max_wait` after the first.
    let mut at = t0;
    while at < t0 + timing.max_wait * 2 {
        at += timing.quiet / 2;
        h.now = at;
        h.output("%0", ".");
    }
    assert_eq!(h.core.next_wakeup(at), Some(t0 + timing.max_wait));
    h.core.wake(t0 + timing.max_wait);
    assert!(
        h.core
            .next_wakeup(t0 + timing.max_wait)
            .is_none_or(|due| due > t0 + timing.max_wait)
    );
}

#[test]
fn an_observer_takes_panes_from_the_stream_and_sends_nothing() {
    let mut core = SessionCore::observer((80, 24), Instant::now());
    let mut decoder = crate::control::Decoder::new();
    for event in decoder.feed_vec(&transcript("windows-and-panes")) {
        core.event(event, Instant::now());
    }
    let mut actions = Vec::new();
    core.take_actions(&mut actions);
    assert!(!actions.iter().any(|a| matches!(a, Action::Send { .. })));
    let screens = core.into_screens();
    // %5 printed in a window no layout described (closing that window cannot tell it
    // left): it stays, at the default size, as replay has always shown it.
    let sizes: Vec<(PaneId, (u16, u16))> = screens.iter().map(|(id, s)| (*id, s.size())).collect();
    assert_eq!(
        sizes,
        [
            (PaneId(0), (50, 40)),
            (PaneId(1), (69, 40)),
            (PaneId(3), (120, 19)),
            (PaneId(4), (120, 20)),
            (PaneId(5), (80, 24))
        ]
    );
}

#[test]
fn a_check_that_sees_another_size_resyncs_without_a_divergence() {
    let mut h = Harness::one_pane((100, 30));
    let t0 = h.now;
    h.output("%0", "x");
    h.watchdog_check_at(t0 + Duration::from_secs(2));
    // tmux already resized the pane; its `%layout-change` has not come yet.
    h.answer(vec![ok(&["$ x"]), ok(&["3 0 0 0 90 30"])]);
    assert_eq!(
        h.sent_for(|p| *p == Purpose::Seed(PaneId(0), ResyncReason::Resize))
            .len(),
        1
    );
    h.seed(PaneId(0), (90, 30), &["$ x"], (3, 0));
    assert_eq!(h.core.stats().totals.divergences, 0);
}

#[test]
fn a_check_whose_reply_comes_after_a_layout_change_is_a_resize_check() {
    let mut h = Harness::one_pane((10, 3));
    let t0 = h.now;
    h.output("%0", "0123456789abcdef");
    h.watchdog_check_at(t0 + Duration::from_secs(2));
    // tmux resized the pane to 12 and back to 10 before the check, parsing output at 12
    // between; both notifications, sent later, carry the last layout.
    let cell = "10x3,0,0,0";
    let layout = format!(
        "{:04x},{cell}",
        crate::control::layout::checksum(cell.as_bytes())
    );
    h.feed(format!("%layout-change @0 {layout} {layout} *\n").as_bytes());
    // The check's reply shows what the mirror could not know: no divergence, a resync as
    // a resize.
    assert!(matches!(
        h.answer(vec![ok(&["$ 01234567", "89abcdef!", ""]), ok(&["9 1 0 0"])]),
        Purpose::Check(PaneId(0), 0, _)
    ));
    assert_eq!(
        h.sent_for(|p| *p == Purpose::Seed(PaneId(0), ResyncReason::Resize))
            .len(),
        1
    );
    assert_eq!(
        h.sent_for(|p| *p == Purpose::Seed(PaneId(0), ResyncReason::Divergence))
            .len(),
        0
    );
    h.seed(PaneId(0), (10, 3), &["$ 01234567", "89abcdef!", ""], (9, 1));
    assert_eq!(h.core.stats().totals.divergences, 0);
}

#[test]
fn a_resized_pane_is_reseeded_only_when_its_reflow_is_not_tmuxs_screen() {
    let mut h = Harness::new(ConnectionConfig::default());
    let (start, _) = split_at(&transcript("shell-utf8"), "%output");
    h.feed(&start);
    h.attach(&[&row("%0", "@0", (10, 3), "")]);
    h.seed(PaneId(0), (10, 3), &["$"], (2, 0));
    h.output("%0", "0123456789abcdef");
    let resized = |h: &mut Harness, width: u16| {
        let cell = format!("{width}x3,0,0,0");
        let layout = format!(
            "{:04x},{cell}",
            crate::control::layout::checksum(cell.as_bytes())
        );
        h.feed(format!("%layout-change @0 {layout} {layout} *\n").as_bytes());
        h.skip_until(|p| matches!(p, Purpose::ResizeCheck(PaneId(0), _)));
    };
    let reseeds = |h: &Harness| {
        h.sent_for(|p| *p == Purpose::Seed(PaneId(0), ResyncReason::Resize))
            .len()
    };
    // A layout that leaves the size as it is may hide a resize and back: checked as well.
    resized(&mut h, 10);
    h.answer(vec![ok(&["$ 01234567", "89abcdef", ""]), ok(&["8 1 0 0"])]);
    assert_eq!(reseeds(&h), 0);
    // tmux shows what the reflow gave: nothing more to do.
    resized(&mut h, 20);
    assert_eq!(h.text(PaneId(0)), "$ 0123456789abcdef");
    h.answer(vec![ok(&["$ 0123456789abcdef", "", ""]), ok(&["18 0 0 0"])]);
    assert_eq!(reseeds(&h), 0);
    // tmux shows something else (output it parsed at the new size came first): reseeded,
    // and no divergence is counted.
    resized(&mut h, 12);
    h.answer(vec![ok(&["$ 0123456789", "abcdef!", ""]), ok(&["7 1 0 0"])]);
    assert_eq!(reseeds(&h), 1);
    h.seed(PaneId(0), (12, 3), &["$ 0123456789", "abcdef!", ""], (7, 1));
    assert_eq!(h.text(PaneId(0)), "$ 0123456789\nabcdef!");
    assert_eq!(h.core.stats().totals.divergences, 0);
}

#[test]
fn the_watchdog_checks_a_pane_that_printed_and_resyncs_it_when_tmux_shows_otherwise() {
    let mut h = Harness::one_pane((100, 30));
    let t0 = h.now;
    h.output("%0", "x");
    assert_eq!(h.text(PaneId(0)), "$ x");
    let checks = |h: &Harness| {
        h.sent_for(|p| matches!(p, Purpose::Check(PaneId(0), _, _)))
            .len()
    };
    h.core.tick(t0 + Duration::from_millis(1999));
    h.collect();
    assert_eq!(checks(&h), 0);
    h.core.tick(t0 + Duration::from_secs(2));
    h.collect();
    assert_eq!(checks(&h), 1);
    // (A question about the pane's program went first: the shell printed.)
    h.skip_until(|p| matches!(p, Purpose::Check(PaneId(0), _, _)));
    assert!(matches!(
        h.answer(vec![ok(&["$ y"]), ok(&["3 0 0 0"])]),
        Purpose::Check(PaneId(0), 0, _)
    ));
    assert_eq!(
        h.sent_for(|p| *p == Purpose::Seed(PaneId(0), ResyncReason::Divergence))
            .len(),
        1
    );
    h.seed(PaneId(0), (100, 30), &["$ y"], (3, 0));
    assert_eq!(h.text(PaneId(0)), "$ y");
    assert_eq!(h.core.stats().totals.divergences, 1);
    // What led to it is kept: the seed, the output since, both screens.
    let [record] = &h.divergences[..] else {
        panic!("one record: {:?}", h.divergences);
    };
    assert_eq!(record.pane, "%0");
    assert_eq!(record.tmux_screen.rows, [b"$ y".to_vec()]);
    assert_eq!(record.mirror_screen.rows[0], b"$ x");
    assert_eq!(
        record.steps,
        [crate::mirror::journal::Step::Output(b"x".to_vec())]
    );
    assert_eq!(
        crate::mirror::journal::ScreenRecord::of(&record.replay()),
        record.mirror_screen
    );
    assert!(h.events.iter().any(|e| matches!(
        e,
        EventKind::Resync {
            pane: PaneId(0),
            reason: ResyncReason::Divergence
        }
    )));
}

#[test]
fn a_check_answered_from_an_earlier_point_of_the_output_is_no_divergence() {
    let mut h = Harness::one_pane((100, 30));
    let t0 = h.now;
    h.output("%0", "x");
    h.watchdog_check_at(t0 + Duration::from_secs(2));
    // tmux captured "$ x", then read "y" and wrote it before the reply (another pane's
    // output was ahead of the reply in its queue).
    h.output("%0", "y");
    h.answer(vec![screen(&["$ x"], 30), ok(&["3 0 0 0"])]);
    assert!(h.sent_for(|p| matches!(p, Purpose::Seed(..))).len() == 1);
    assert_eq!(h.text(PaneId(0)), "$ xy");
    let totals = h.core.stats().totals;
    assert_eq!((totals.divergences, totals.early_answers), (0, 1));
    // A screen at no point since the check is a divergence.
    h.watchdog_check_at(t0 + Duration::from_secs(4));
    h.output("%0", "z");
    h.answer(vec![screen(&["$ xq"], 30), ok(&["4 0 0 0"])]);
    assert_eq!(
        h.sent_for(|p| *p == Purpose::Seed(PaneId(0), ResyncReason::Divergence))
            .len(),
        1
    );
}

#[test]
fn the_watchdog_waits_for_a_late_reply_and_places_it_in_the_output_since() {
    let mut h = Harness::one_pane((100, 30));
    let t0 = h.now;
    let checks = |h: &Harness| {
        h.sent_for(|p| matches!(p, Purpose::Check(PaneId(0), _, _)))
            .len()
    };
    h.output("%0", "x");
    h.watchdog_check_at(t0 + Duration::from_secs(2));
    assert_eq!(checks(&h), 1);
    // tmux captured "$ x", then kept writing the pane's output ahead of the reply (behind
    // other panes' output) through several watchdog rounds, each before the check times out:
    // no check is sent meanwhile.
    for round in 2..6 {
        h.output("%0", "y");
        h.core.tick(t0 + Duration::from_secs(2 * round));
        h.collect();
    }
    h.skip_until(|p| matches!(p, Purpose::Check(PaneId(0), _, _)));
    h.answer(vec![screen(&["$ x"], 30), ok(&["3 0 0 0"])]);
    // No resync: only the first seed was sent.
    assert_eq!(h.sent_for(|p| matches!(p, Purpose::Seed(..))).len(), 1);
    let totals = h.core.stats().totals;
    assert_eq!((totals.divergences, totals.early_answers), (0, 1));
    assert_eq!(checks(&h), 1, "no check while one was unanswered");
    // Answered: the next round checks again.
    h.core.tick(t0 + Duration::from_secs(12));
    h.collect();
    assert_eq!(checks(&h), 2);
    // One never answered is over when it times out.
    h.output("%0", "z");
    h.core.tick(t0 + Duration::from_secs(20));
    h.collect();
    assert_eq!(checks(&h), 2);
    h.core.tick(t0 + Duration::from_secs(22));
    h.collect();
    assert_eq!(checks(&h), 3);
}

#[test]
fn a_seed_answered_after_output_read_since_applies_that_output_again() {
    let full = |lines: &[&'static str]| {
        let mut rows = lines.to_vec();
        rows.resize(30, "");
        rows
    };
    let mut h = Harness::one_pane((100, 30));
    let t0 = h.now;
    h.output("%0", "a");
    // A resync (tmux paused the pane, say) while the pane prints: tmux captures after "b",
    // and writes "c" before the reply.
    h.feed(b"%pause %0\n");
    h.skip_until(|p| matches!(p, Purpose::Seed(PaneId(0), _)));
    h.output("%0", "b");
    h.output("%0", "c");
    h.seed(PaneId(0), (100, 30), &full(&["$ ab"]), (4, 0));
    assert_eq!(h.text(PaneId(0)), "$ abc");
    // A snapshot at no point of that output (the mirror was wrong): the output after it is
    // unknown, and the next difference is resynced without a divergence counted.
    h.feed(b"%pause %0\n");
    h.skip_until(|p| matches!(p, Purpose::Seed(PaneId(0), _)));
    h.output("%0", "d");
    h.seed(PaneId(0), (100, 30), &full(&["$ other"]), (7, 0));
    assert_eq!(h.text(PaneId(0)), "$ other");
    h.output("%0", "!");
    h.watchdog_check_at(t0 + Duration::from_secs(2));
    h.answer(vec![screen(&["$ otherd!"], 30), ok(&["9 0 0 0"])]);
    assert_eq!(
        h.sent_for(|p| *p == Purpose::Seed(PaneId(0), ResyncReason::Retry))
            .len(),
        1
    );
    assert_eq!(h.core.stats().totals.divergences, 0);
}

#[test]
fn mirrors_follow_the_rules_of_the_servers_tmux() {
    use crate::screen::Dialect;
    for (version, dialect) in [
        ("3.3a", Dialect::V3_3),
        ("3.4", Dialect::V3_4),
        ("3.5a", Dialect::V3_5),
        ("3.6", Dialect::V3_6),
        ("3.6a", Dialect::V3_6a),
        ("next-3.8", Dialect::V3_6a),
        ("master", Dialect::NEWEST),
    ] {
        let mut h = Harness::new(ConnectionConfig::default());
        let (start, _) = split_at(&transcript("shell-utf8"), "%output");
        h.feed(&start);
        h.attach_to(version, &[&row("%0", "@0", (80, 24), "")]);
        let mirror = h.core.mirror(PaneId(0)).expect("the pane's mirror");
        assert_eq!(mirror.screen().dialect(), dialect, "{version}");
    }
}
