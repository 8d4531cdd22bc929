//! Dialogs only where dialogs live, and turns whose first mark scrolled away: screens laid out as
//! the CLIs draw them (transcript above, input box below), classified by the built-in rules.

use super::providers::ProviderSet;
use super::view::ScreenView;
use super::{Status, classify};

const RULE: &str = "────────────────────────────────────────────────────────────";

/// Claude Code's screen: `transcript` above its input box (empty) and the ready footer.
fn claude_ready(transcript: &str) -> ScreenView {
    let text = format!("{transcript}\n\n{RULE}\n❯ \n{RULE}\n  ? for shortcuts");
    ScreenView::from_text(&text, "✳ Claude Code", "claude")
}

fn status_of(provider: &str, view: &ScreenView) -> (Status, String) {
    let set = ProviderSet::builtin().unwrap();
    let (status, detection) = classify(set.get(provider).unwrap(), view);
    (
        status,
        detection.rule.map(|r| r.to_string()).unwrap_or_default(),
    )
}

#[test]
fn echoed_prompts_over_an_interrupt_notice_are_no_dialog() {
    // The echoed prompt and the notice under it line up like two options, and the notice
    // ends with a question mark: the dialog layer once read this as a menu.
    let screen = claude_ready(
        "❯ reply:Second short answer.\n\n● Second short answer.\n\n✻ Sautéed for 0s · done 5:01 AM\n\n\
         ❯ slow:60000 reply:This answer never arrives.\n  ⎿  Interrupted · What should Claude do instead?\n\n\
         ❯ reply:Queued answer.\n  ⎿  Interrupted · What should Claude do instead?",
    );
    assert_eq!(status_of("claude_code", &screen).0, Status::Completed);
}

#[test]
fn a_menu_quoted_in_an_answer_is_no_dialog() {
    let numbered = claude_ready(
        "❯ reply:show me\n\n● The dialog looks like this:\n\n  Do you want to proceed?\n  ❯ 1. Yes\n    2. No\n\n  Which one do you pick?",
    );
    assert_eq!(
        status_of("claude_code", &numbered),
        (Status::Completed, "claude_code.answered".to_string())
    );
    let plain = claude_ready(
        "● Choose with the arrows:\n  ❯ Keep it\n    Drop it\n  Enter to select · Esc to cancel",
    );
    assert_ne!(
        status_of("claude_code", &plain).0,
        Status::WaitingUserAnswer
    );
}

#[test]
fn a_working_turn_under_echoed_prompts_is_processing() {
    let text = format!(
        "❯ reply:First short answer.\n\n● First short answer.\n\n❯ slow:60000 reply:Never.\n  ⎿  Interrupted · What should Claude do instead?\n\n\
         ❯ slow:60000 reply:Again.\n\n✢ Spelunking… (4s)\n\n{RULE}\n❯ \n{RULE}\n  esc to interrupt"
    );
    let view = ScreenView::from_text(&text, "✳ Claude Code", "claude");
    assert_eq!(status_of("claude_code", &view).0, Status::Processing);
}

#[test]
fn a_real_dialog_that_replaces_the_input_box_is_still_found() {
    let text = "❯ tool:touch x\n\n● Bash(touch x)\n\n────────\n Bash command\n\n   touch x\n\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n\n Esc to cancel";
    let view = ScreenView::from_text(text, "✳ Claude Code", "claude");
    assert_eq!(status_of("claude_code", &view).0, Status::WaitingUserAnswer);
}

#[test]
fn a_finished_turn_whose_answer_scrolled_away_is_completed() {
    let mut transcript = String::new();
    for n in 30..=60 {
        transcript.push_str(&format!("  Line {n} of a long answer.\n\n"));
    }
    transcript.push_str("  End of the long answer.\n\n✻ Cogitated for 7s");
    assert_eq!(
        status_of("claude_code", &claude_ready(&transcript)),
        (Status::Completed, "claude_code.turn_done".to_string())
    );
    // Without the mark (Claude Code 2.0.77 leaves none after a short turn): the start-up
    // banner is gone too, and only a conversation pushes it off the screen.
    let unmarked = transcript.replace("✻ Cogitated for 7s", "");
    assert_eq!(
        status_of("claude_code", &claude_ready(&unmarked)),
        (Status::Completed, "claude_code.banner_gone".to_string())
    );
    // The banner still there, or nothing above the box: ready, and nothing says a turn ended.
    let banner = claude_ready("╭─── Claude Code v2.0.77 ───╮\n│ Welcome back! │\n╰──────────────╯");
    assert_eq!(status_of("claude_code", &banner).0, Status::Idle);
    assert_eq!(status_of("claude_code", &claude_ready("")).0, Status::Idle);
}
