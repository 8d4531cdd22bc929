//! The `generic` provider: set on a pane whose CLI has no rule file, never recognised by itself,
//! it reads the conventions agent CLIs share (screens made up here, not recordings; its figure
//! on every provider's recordings is in BENCHMARKS.md).

use super::providers::ProviderSet;
use super::view::ScreenView;
use super::{Status, classify};

fn status_of(text: &str) -> (Status, String) {
    let set = ProviderSet::builtin().unwrap();
    let view = ScreenView::from_text(text, "", "mycli");
    let (status, detection) = classify(set.get("generic").unwrap(), &view);
    (
        status,
        detection.rule.map(|r| r.to_string()).unwrap_or_default(),
    )
}

#[test]
fn generic_reads_the_conventions_cli_agents_share() {
    let working = status_of("> fix the tests\n\n✻ Thinking… (12s · esc to interrupt)\n");
    assert_eq!(working, (Status::Processing, "generic.working".into()));
    let timer = status_of("> run it\n\nGenerating response (3.2s)\n");
    assert_eq!(timer.0, Status::Processing, "{timer:?}");
    let failed = status_of("> go\n\nError: 429 Too Many Requests: rate limited\n\n> ");
    assert_eq!(failed, (Status::Error, "generic.error".into()));
    let ready = status_of(
        "Welcome to mycli\n\n╭────────────────╮\n│ > Type your message │\n╰────────────────╯",
    );
    assert_eq!(ready.0, Status::Idle, "{ready:?}");
    // The dialog layer it inherits: a numbered menu is a question for the user.
    let dialog = status_of("Run `rm -rf build`?\n\n❯ 1. Yes\n  2. No\n\nEnter to confirm");
    assert_eq!(dialog.0, Status::WaitingUserAnswer, "{dialog:?}");
    // An answer that mentions an error far above the bottom is no error.
    let answer =
        status_of("error handling is in src/lib.rs\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n> ");
    assert_ne!(answer.0, Status::Error, "{answer:?}");
}

#[test]
fn generic_is_never_recognised_by_itself() {
    let set = ProviderSet::builtin().unwrap();
    let generic = set.get("generic").unwrap();
    assert!(generic.detect.commands.is_empty());
    assert!(generic.detect.arguments.is_empty());
    assert!(generic.detect.banner.is_empty());
    assert!(generic.unrecorded.is_some());
}
