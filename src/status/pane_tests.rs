//! Tests of the pane status (screen and signals together).

use super::*;
use crate::status::providers::ProviderSet;

fn claude() -> Arc<Provider> {
    ProviderSet::builtin()
        .unwrap()
        .get("claude_code")
        .unwrap()
        .clone()
}

#[test]
fn evaluations_wait_for_quiet_output_but_not_forever() {
    let start = Instant::now();
    let timing = Timing {
        quiet: Duration::from_millis(10),
        max_wait: Duration::from_millis(50),
        unknown_grace: Duration::from_secs(1),
    };
    let mut pane = PaneAgent::new(timing, start);
    pane.touched(start);
    assert_eq!(pane.due(start), None, "no provider, nothing to evaluate");
    pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
    pane.touched(start);
    assert_eq!(pane.due(start), Some(start + Duration::from_millis(10)));
    // Output keeps coming: the deadline moves, up to max_wait after the first.
    for ms in [5, 20, 35, 45] {
        pane.touched(start + Duration::from_millis(ms));
    }
    assert_eq!(pane.due(start), Some(start + Duration::from_millis(50)));
    let view = ScreenView::from_text(
        "──────────\n❯ \n──────────\n  esc to interrupt",
        "",
        "claude",
    );
    let change = pane
        .evaluate(&view, start + Duration::from_millis(50))
        .unwrap();
    assert_eq!(change.status, Status::Processing);
    assert_eq!(pane.due(start + Duration::from_millis(50)), None);
}

#[test]
fn a_respawned_pane_waits_for_its_new_program_to_print() {
    let start = Instant::now();
    let mut pane = PaneAgent::new(Timing::default(), start);
    pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
    let ready = ScreenView::from_text(
        "──────────\n❯ \n──────────\n  ? for shortcuts",
        "",
        "claude",
    );
    pane.evaluate(&ready, start);
    assert!(pane.status().is_ready());
    // Long after the last output: the screen is the old program's.
    let later = start + Duration::from_secs(10);
    assert_eq!(pane.respawned(later).unwrap().status, Status::Unknown);
    assert_eq!(pane.due(later), None);
    assert_eq!(pane.evaluate(&ready, later), None);
    assert_eq!(pane.status(), Status::Unknown);
    pane.output_seen();
    pane.touched(later);
    assert!(pane.due(later).is_some());
    assert!(pane.evaluate(&ready, later).unwrap().status.is_ready());
    // Output just before tmux reported the respawn: evaluated at once.
    let soon = later + Duration::from_millis(500);
    pane.touched(soon);
    pane.evaluate(&ready, soon);
    let reported = soon + Duration::from_millis(900);
    pane.respawned(reported);
    assert!(pane.due(reported).is_some());
    assert!(pane.evaluate(&ready, reported).unwrap().status.is_ready());
}

#[test]
fn a_new_provider_starts_over_and_exit_stops_evaluating() {
    let now = Instant::now();
    let mut pane = PaneAgent::new(Timing::default(), now);
    assert!(pane.set_provider(Some(claude()), Some(ProviderSource::Banner), now));
    assert!(!pane.set_provider(Some(claude()), Some(ProviderSource::Process), now));
    assert_eq!(pane.source(), Some(ProviderSource::Process));
    assert_eq!(pane.exited(now).unwrap().status, Status::Exited);
    pane.touched(now);
    assert_eq!(pane.due(now), None);
    // Nothing will evaluate it, so the exit is the settled status (the inbox waits for a
    // settled status before it judges a message).
    assert!(pane.settled());
}

#[test]
fn output_unsettles_only_a_status_that_will_be_evaluated() {
    let now = Instant::now();
    let mut pane = PaneAgent::new(Timing::default(), now);
    pane.touched(now);
    assert!(pane.settled(), "no provider: nothing to wait for");
    pane.set_provider(Some(claude()), Some(ProviderSource::Process), now);
    pane.touched(now);
    assert!(!pane.settled());
    assert!(pane.due(now).is_some());
}
fn spinner() -> ScreenView {
    ScreenView::from_text(
        "✻ Waddling…\n──────────\n❯ \n──────────\n  esc to interrupt",
        "",
        "claude",
    )
}

fn ready() -> ScreenView {
    ScreenView::from_text(
        "● done\n──────────\n❯ \n──────────\n  ? for shortcuts",
        "",
        "claude",
    )
}

fn dialog() -> ScreenView {
    ScreenView::from_text(
        " Bash command\n   ls\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n\n Esc to cancel",
        "",
        "claude",
    )
}

fn hook(event: &str, kind: Option<&str>, at: Instant) -> (Signal, Effect) {
    (
        Signal {
            reported: Reported::Status(Status::Unknown),
            source: StatusSource::Hook,
            at,
            detail: format!("hook {event}"),
            pid: Some(42),
        },
        claude().signals.hook_effect(event, kind),
    )
}

#[test]
fn a_waiting_hook_beats_a_spinner_until_the_screen_changes() {
    let start = Instant::now();
    let ms = |n| start + Duration::from_millis(n);
    let mut pane = PaneAgent::new(Timing::default(), start);
    pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
    pane.evaluate(&spinner(), ms(10));
    assert_eq!(pane.status(), Status::Processing);
    // The permission dialog is drawn in a way no rule knows: the spinner stays. The hook
    // waits for the screen to draw the dialog, then applies after the grace.
    let (signal, effect) = hook("Notification", Some("permission_prompt"), ms(20));
    let outcome = pane.signal_received(signal, effect, ms(30));
    assert!(!outcome.applied && outcome.change.is_none());
    assert_eq!(pane.due(ms(30)), Some(ms(30) + DIALOG_GRACE));
    assert_eq!(pane.evaluate(&spinner(), ms(35)), None);
    assert_eq!(pane.status(), Status::Processing);
    let change = pane.evaluate(&spinner(), ms(30) + DIALOG_GRACE).unwrap();
    assert_eq!(
        (change.previous, change.status, change.source),
        (
            Status::Processing,
            Status::WaitingUserAnswer,
            StatusSource::Hook
        )
    );
    // The same spinner evaluated again is no new evidence.
    assert_eq!(pane.evaluate(&spinner(), ms(1040)), None);
    assert_eq!(pane.status(), Status::WaitingUserAnswer);
    assert_eq!(pane.status_source(), StatusSource::Hook);
    assert_eq!(pane.screen_status(), Status::Processing);
    // The screen changes: newer than the hook, it wins.
    let change = pane.evaluate(&ready(), ms(1050)).unwrap();
    assert_eq!(
        (change.previous, change.status, change.source),
        (
            Status::WaitingUserAnswer,
            Status::Completed,
            StatusSource::Screen
        )
    );
    assert!(pane.signal().is_none());
}

#[test]
fn a_processing_signal_older_than_a_dialog_does_not_hide_it() {
    let start = Instant::now();
    let ms = |n| start + Duration::from_millis(n);
    let mut pane = PaneAgent::new(Timing::default(), start);
    pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
    pane.evaluate(&dialog(), ms(100));
    assert_eq!(pane.status(), Status::WaitingUserAnswer);
    // PreToolUse ran before the dialog was drawn and arrives after it.
    let (signal, effect) = hook("PreToolUse", None, ms(90));
    let outcome = pane.signal_received(signal, effect, ms(150));
    assert!(!outcome.applied);
    assert_eq!(pane.status(), Status::WaitingUserAnswer);
    // Two hooks out of order: the older one is dropped.
    let (stop, effect) = hook("PreToolUse", None, ms(300));
    assert!(pane.signal_received(stop, effect, ms(310)).applied);
    let (late, effect) = hook("PostToolUse", None, ms(200));
    assert!(!pane.signal_received(late, effect, ms(320)).applied);
    assert_eq!(pane.status(), Status::Processing);
}

#[test]
fn a_ready_signal_never_hides_a_dialog_on_the_screen() {
    let start = Instant::now();
    let ms = |n| start + Duration::from_millis(n);
    let mut pane = PaneAgent::new(Timing::default(), start);
    pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
    pane.evaluate(&dialog(), ms(100));
    assert_eq!(pane.status(), Status::WaitingUserAnswer);
    // A Stop hook (forged, or out of step) while the dialog is drawn: the dialog stays, so
    // the inbox does not type a message into it.
    let (stop, effect) = hook("Stop", None, ms(300));
    pane.signal_received(stop, effect, ms(310));
    assert_eq!(pane.status(), Status::WaitingUserAnswer);
    assert_eq!(pane.status_source(), StatusSource::Screen);
    // Once the dialog is gone the screen decides again.
    let change = pane.evaluate(&ready(), ms(400)).unwrap();
    assert_eq!(change.status, Status::Completed);
}

#[test]
fn a_dialog_signal_waits_for_the_screen_to_draw_the_dialog() {
    let start = Instant::now();
    let ms = |n| start + Duration::from_millis(n);
    let mut pane = PaneAgent::new(Timing::default(), start);
    pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
    pane.evaluate(&spinner(), ms(10));
    // PermissionRequest comes half a second before the dialog is drawn.
    let (signal, effect) = hook("PermissionRequest", None, ms(20));
    assert!(!pane.signal_received(signal, effect, ms(20)).applied);
    assert_eq!(pane.status(), Status::Processing);
    assert_eq!(pane.evaluate(&spinner(), ms(500)), None);
    assert_eq!(pane.status(), Status::Processing);
    // The dialog is drawn: the screen says so itself, and the held signal goes.
    let change = pane.evaluate(&dialog(), ms(520)).unwrap();
    assert_eq!(
        (change.status, change.source),
        (Status::WaitingUserAnswer, StatusSource::Screen)
    );
    assert_eq!(pane.evaluate(&dialog(), ms(2000)), None);
    assert_eq!(pane.status_source(), StatusSource::Screen);
    // A newer signal replaces one still held.
    pane.evaluate(&spinner(), ms(3000));
    let (signal, effect) = hook("PermissionRequest", None, ms(3010));
    pane.signal_received(signal, effect, ms(3010));
    let (signal, effect) = hook("PostToolUse", None, ms(3020));
    assert!(pane.signal_received(signal, effect, ms(3020)).applied);
    assert_eq!(pane.evaluate(&spinner(), ms(5000)), None);
    assert_eq!(pane.status(), Status::Processing);
}

#[test]
fn signals_end_with_the_program_that_sent_them() {
    let start = Instant::now();
    let ms = |n| start + Duration::from_millis(n);
    let mut pane = PaneAgent::new(Timing::default(), start);
    pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
    pane.evaluate(&ready(), ms(10));
    let (signal, effect) = hook("UserPromptSubmit", None, ms(20));
    pane.signal_received(signal, effect, ms(20));
    assert_eq!(pane.status(), Status::Processing);
    // Respawned: the signal goes with the old program.
    let change = pane.respawned(ms(5000)).unwrap();
    assert_eq!(
        (change.status, change.source),
        (Status::Unknown, StatusSource::Screen)
    );
    assert!(pane.signal().is_none());
    // A hook the old program sent before it was replaced is older than the respawn.
    let (stale, effect) = hook("Stop", None, ms(4000));
    assert!(!pane.signal_received(stale, effect, ms(5100)).applied);
    // SessionEnd clears what the session said; an exited agent takes no signal.
    pane.output_seen();
    pane.evaluate(&ready(), ms(6000));
    let (signal, effect) = hook("PermissionRequest", None, ms(6100));
    pane.signal_received(signal, effect, ms(6100));
    pane.evaluate(&ready(), ms(6100) + DIALOG_GRACE);
    assert_eq!(pane.status(), Status::WaitingUserAnswer);
    let (end, effect) = hook("SessionEnd", None, ms(7200));
    let change = pane.signal_received(end, effect, ms(7200)).change.unwrap();
    // The screen decides again: ready, after a dialog (which counts as a turn).
    assert_eq!(
        (change.status, change.source),
        (Status::Completed, StatusSource::Screen)
    );
    pane.exited(ms(8000));
    let (late, effect) = hook("Stop", None, ms(8100));
    assert!(!pane.signal_received(late, effect, ms(8100)).applied);
    assert_eq!(pane.status(), Status::Exited);
}

#[test]
fn osc_reports_count_only_in_the_panes_of_the_cli_that_sends_them() {
    let start = Instant::now();
    let ms = |n| start + Duration::from_millis(n);
    let mut pane = PaneAgent::new(Timing::default(), start);
    pane.set_provider(Some(claude()), Some(ProviderSource::Process), start);
    pane.evaluate(&ready(), ms(10));
    // A `tail -f` of a file holding Codex's reports, in a Claude Code pane.
    let forged = b"\x1b]7501;state=working:app=codex\x1b\\\x1b]7501;state=blocked:app=codex\x1b\\";
    assert_eq!(pane.scan_output(forged, ms(20)), None);
    assert_eq!(pane.evaluate(&ready(), ms(20) + DIALOG_GRACE), None);
    assert_eq!(pane.status_source(), StatusSource::Screen);
    assert!(pane.signal().is_none());
}

#[test]
fn codex_osc_reports_split_across_chunks_drive_the_status() {
    let start = Instant::now();
    let ms = |n| start + Duration::from_millis(n);
    let codex = ProviderSet::builtin()
        .unwrap()
        .get("codex")
        .unwrap()
        .clone();
    let mut pane = PaneAgent::new(Timing::default(), start);
    pane.set_provider(Some(codex), Some(ProviderSource::Process), start);
    assert_eq!(pane.scan_output(b"\x1b]7501;state=wor", ms(10)), None);
    let change = pane.scan_output(b"king:app=codex\x1b", ms(11));
    assert_eq!(change, None, "not ended yet");
    let change = pane.scan_output(b"\\\x1b[1mhi", ms(12)).unwrap();
    assert_eq!(
        (change.status, change.source),
        (Status::Processing, StatusSource::Osc)
    );
    // done, then idle at once: the turn is over, so idle reads as completed.
    let change = pane
        .scan_output(
            b"\x1b]7501;state=done:app=codex\x1b\\\x1b]7501;state=idle:app=codex\x1b\\",
            ms(20),
        )
        .unwrap();
    assert_eq!(
        (change.previous, change.status),
        (Status::Processing, Status::Completed)
    );
    assert_eq!(pane.status_source(), StatusSource::Osc);
    // Garbage changes nothing.
    assert_eq!(
        pane.scan_output(b"\x1b]7501;\xff\x07\x1b]7501;state=\x07", ms(30)),
        None
    );
    assert_eq!(pane.status(), Status::Completed);
}
