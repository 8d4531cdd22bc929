//! Decisions read from recorded screens of real CLIs, and from the shapes the recordings do
//! not have (a pointer on option 2, a wrapped option, a scrolled menu).

use super::*;
use crate::status::rules::DEFAULT_MENU_POINTERS;

fn menu() -> Menu {
    Menu {
        numbered: None,
        min_options: 2,
        pointers: DEFAULT_MENU_POINTERS.to_string(),
    }
}

fn decide(screen: &str) -> Option<Decision> {
    let rows: Vec<&str> = screen.lines().collect();
    extract(&rows, &menu())
}

fn labels(decision: &Decision) -> Vec<&str> {
    decision.options.iter().map(|c| c.label.as_str()).collect()
}

fn recorded(path: &str) -> Decision {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/screens")
            .join(path),
    )
    .expect("a recorded screen");
    decide(&text).unwrap_or_else(|| panic!("no decision in {path}"))
}

#[test]
fn the_letter_pattern_compiles() {
    assert!(LETTER_OPTIONS.is_some());
}

#[test]
fn claude_codes_bash_permission() {
    let d = recorded("claude_code/2.1.332/waiting_user_answer--tool-permission.txt");
    assert_eq!(d.options.len(), 4);
    assert_eq!(d.options[0].label, "Yes");
    assert!(
        d.options[1]
            .label
            .starts_with("Yes, and always allow access to ")
    );
    assert_eq!(d.options[3].label, "No");
    assert!(d.options[0].pointed && !d.options[3].pointed);
    assert_eq!(d.options[0].keys, ["Enter"]);
    assert_eq!(d.options[3].keys, ["Down", "Down", "Down", "Enter"]);
    for part in [
        "Bash command",
        "Run the command the test asked for",
        "sleep 3 && touch tool-output.txt",
        "Do you want to proceed?",
    ] {
        assert!(d.question.contains(part), "{part} in {:?}", d.question);
    }
    assert!(!d.question.contains('╌'), "{:?}", d.question);
    assert_eq!(d.choose(&Answer::Yes).unwrap().number, 1);
    assert_eq!(d.choose(&Answer::No).unwrap().number, 4);
    assert_eq!(d.choose(&Answer::Label("no".into())).unwrap().number, 4);
    assert_eq!(d.fingerprint.len(), 16);
}

#[test]
fn codexs_command_approval() {
    let d = recorded("codex/0.171.0/waiting_user_answer--tool-permission.txt");
    assert_eq!(
        labels(&d),
        [
            "Yes, proceed (y)",
            "Yes, and don't ask again for commands that start with `sleep 3` (p)",
            "No, and tell Codex what to do differently (esc)",
        ]
    );
    assert!(
        d.question
            .contains("Would you like to run the following command?")
    );
    assert!(d.question.contains("$ sleep 3 && touch tool-output.txt"));
    assert_eq!(d.choose(&Answer::No).unwrap().number, 3);
    // The narrow recording is the same dialog.
    let narrow = recorded("codex/0.171.0/waiting_user_answer--tool-permission-80x24.txt");
    assert_eq!(labels(&narrow), labels(&d));
}

#[test]
fn gemini_clis_tool_confirmation_in_its_box() {
    let d = recorded("gemini_cli/0.61.0/waiting_user_answer--tool-permission.txt");
    assert_eq!(
        labels(&d),
        [
            "Allow once",
            "Allow for this session",
            "No, suggest changes (esc)"
        ]
    );
    // The command framed in a box of its own is part of the question.
    assert_eq!(
        d.question,
        "? Shell  sleep 3 && touch tool-output.txt\nsleep 3 && touch tool-output.txt\n\
         Allow execution of [Shell]?"
    );
    // So the same dialog about another command is another decision.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/screens/gemini_cli/0.61.0/waiting_user_answer--tool-permission.txt"),
    )
    .unwrap();
    let other = decide(&text.replace("touch tool-output.txt", "rm -rf tool-output.txt")).unwrap();
    assert_eq!(labels(&other), labels(&d));
    assert_ne!(other.fingerprint, d.fingerprint);
    assert_eq!(d.choose(&Answer::Yes).unwrap().label, "Allow once");
    assert_eq!(d.choose(&Answer::No).unwrap().number, 3);
    let trust = recorded("gemini_cli/0.61.0/waiting_user_answer--startup-folder-trust.txt");
    assert_eq!(trust.choose(&Answer::No).unwrap().label, "Don't trust");
    assert!(
        trust
            .question
            .contains("Do you trust the files in this folder?")
    );
}

#[test]
fn a_dialog_without_a_negative_option_says_which_it_has() {
    let d = recorded("codex/0.171.0/waiting_user_answer--startup-folder-trust.txt");
    assert_eq!(d.choose(&Answer::Yes).unwrap().label, "Trust and continue");
    let error = d.choose(&Answer::No).unwrap_err();
    assert_eq!(
        error.to_string(),
        "no option no in this dialog; its options are: 1. Trust and continue; 2. Back to Agent Command Center"
    );
    assert!(d.choose(&Answer::Option(3)).is_err());
    assert!(d.choose(&Answer::Label("Back".into())).is_ok());
}

#[test]
fn aiders_letter_prompts() {
    let d = recorded("aider/0.86.2/waiting_user_answer--tool-permission.txt");
    assert_eq!(labels(&d), ["Yes", "No", "Don't ask again"]);
    // The command it asks about is the row above the prompt.
    assert_eq!(
        d.question,
        "sleep 3 && touch tool-output.txt\nRun shell command?"
    );
    assert!(d.options[0].pointed, "[Yes] is the default");
    assert_eq!(d.choose(&Answer::No).unwrap().keys, ["n", "Enter"]);
    assert_eq!(
        d.choose(&Answer::Label("don't".into())).unwrap().keys,
        ["d", "Enter"]
    );
    // Another command, another decision.
    let other =
        decide("Run this:\nrm -rf build\nRun shell command? (Y)es/(N)o/(D)on't ask again [Yes]:")
            .unwrap();
    assert_eq!(other.question, "rm -rf build\nRun shell command?");
    assert_ne!(other.fingerprint, d.fingerprint);
    // Nothing above: the prompt alone.
    let alone = decide("Add notes.txt to the chat? (Y)es/(N)o [Yes]:").unwrap();
    assert_eq!(alone.question, "Add notes.txt to the chat?");
    let git = recorded("aider/0.86.2/waiting_user_answer--startup-create-git-repo.txt");
    assert_eq!(labels(&git), ["Yes", "No"]);
    assert!(
        git.question.contains("(recommended)?"),
        "{:?}",
        git.question
    );
}

#[test]
fn the_pointer_on_option_two_moves_up_and_keeps_the_fingerprint() {
    let first =
        " Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, always\n   3. No\n\n Esc to cancel";
    let second =
        " Do you want to proceed?\n   1. Yes\n ❯ 2. Yes, always\n   3. No\n\n Esc to cancel";
    let a = decide(first).unwrap();
    let b = decide(second).unwrap();
    assert!(b.options[1].pointed);
    assert_eq!(b.options[0].keys, ["Up", "Enter"]);
    assert_eq!(b.options[2].keys, ["Down", "Enter"]);
    assert_eq!(b.options[1].keys, ["Enter"]);
    assert_eq!(a.fingerprint, b.fingerprint);
    // Another dialog in the same place is another decision.
    let other = decide(&first.replace("proceed", "edit main.rs")).unwrap();
    assert_ne!(other.fingerprint, a.fingerprint);
}

#[test]
fn a_wrapped_option_and_a_description_belong_to_their_option() {
    let screen = " Pick one\n ❯ 1. Yes, and always allow access to a folder whose\n      name is long\n   2. No\n\n";
    let d = decide(screen).unwrap();
    assert_eq!(d.options.len(), 2);
    assert_eq!(d.options[0].detail, "name is long");
    let described = " Default?\n ❯ Yes, make it my default\n     (you can change it in /permissions)\n   No, ask me each time";
    let d = decide(described).unwrap();
    assert_eq!(
        labels(&d),
        ["Yes, make it my default", "No, ask me each time"]
    );
    assert_eq!(d.options[0].detail, "(you can change it in /permissions)");
    assert_eq!(d.choose(&Answer::No).unwrap().keys, ["Down", "Enter"]);
}

#[test]
fn a_scrolled_menu_keeps_its_numbers() {
    let screen = " Choose a model\n   4. four\n ❯ 5. five\n   6. six\n";
    let d = decide(screen).unwrap();
    let numbers: Vec<usize> = d.options.iter().map(|c| c.number).collect();
    assert_eq!(numbers, [4, 5, 6]);
    assert_eq!(d.choose(&Answer::Option(4)).unwrap().keys, ["Up", "Enter"]);
    assert!(d.choose(&Answer::Option(1)).is_err());
}

#[test]
fn a_prompt_or_an_answer_is_no_decision() {
    assert!(decide("────────\n❯ what is 1. or 2.?\n────────\n  ? for shortcuts").is_none());
    assert!(decide("• Here:\n  1. one\n  2. two").is_none());
    assert!(decide("$ echo (a)/(b)\n(a)/(b)\n$ ").is_none());
}

#[test]
fn an_ambiguous_label_prefix_picks_nothing() {
    let d = decide(" Go?\n ❯ 1. Yes\n   2. Yes, always\n   3. No").unwrap();
    assert_eq!(d.choose(&Answer::Label("yes".into())).unwrap().number, 1);
    assert!(d.choose(&Answer::Label("yes,".into())).is_ok());
    let two = decide(" Go?\n ❯ 1. Allow once\n   2. Allow always\n   3. No").unwrap();
    assert!(two.choose(&Answer::Label("allow".into())).is_err());
}

/// Recorded dialogs (by a part of their scenario's name) whose decision is not read, and why.
const NOT_READ: &[(&str, &str)] = &[(
    "--onboarding-api-key-",
    "a text field for an API key: something to type, no options",
)];

/// The decision on a recorded screen as the daemon reads it: the provider's menus on the
/// drawn capture, with its colours where the recording kept them.
fn recorded_as_the_daemon_reads(text_file: &std::path::Path, provider: &str) -> Option<Decision> {
    let set = crate::status::providers::ProviderSet::builtin().unwrap();
    let provider = set.get(provider)?;
    let ansi = text_file.with_extension("ansi");
    let bytes = std::fs::read(if ansi.exists() { &ansi } else { text_file }).unwrap();
    let (view, shades) = crate::status::view_and_shading_of_capture(&bytes, "", "");
    let rows: Vec<&str> = view.rows.iter().map(String::as_str).collect();
    for_provider(provider, &rows, &shades)
}

#[test]
fn every_recorded_dialog_but_the_listed_ones_yields_a_decision_with_one_pointer() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut read = 0;
    for set in ["screens", "incoming", "holdout"] {
        for provider in std::fs::read_dir(root.join(set)).unwrap().flatten() {
            let provider_id = provider.file_name().to_string_lossy().into_owned();
            for version in std::fs::read_dir(provider.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                for file in std::fs::read_dir(version.path())
                    .into_iter()
                    .flatten()
                    .flatten()
                {
                    let name = file.file_name().to_string_lossy().into_owned();
                    if !(name.starts_with("waiting_user_answer--") && name.ends_with(".txt")) {
                        continue;
                    }
                    let relative = file
                        .path()
                        .strip_prefix(&root)
                        .unwrap()
                        .display()
                        .to_string();
                    let decision = recorded_as_the_daemon_reads(&file.path(), &provider_id);
                    if NOT_READ.iter().any(|(part, _)| name.contains(part)) {
                        assert!(
                            decision.is_none(),
                            "{relative} is read now: take it off NOT_READ"
                        );
                        continue;
                    }
                    let decision = decision.unwrap_or_else(|| panic!("no decision in {relative}"));
                    assert!(decision.options.len() >= 2, "{relative}");
                    let pointed = decision.options.iter().filter(|c| c.pointed).count();
                    // A letter prompt without a default points at none.
                    assert!(pointed <= 1, "{relative}: {decision:#?}");
                    assert!(!decision.question.is_empty(), "{relative}");
                    read += 1;
                }
            }
        }
    }
    assert!(read >= 60, "only {read} recorded dialogs");
}

#[test]
fn numbered_options_apart_by_blank_rows_are_one_menu() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let file = root.join("incoming/codex/0.171.0/waiting_user_answer--onboarding-sign-in-menu.txt");
    let decision = recorded_as_the_daemon_reads(&file, "codex").unwrap();
    assert_eq!(
        labels(&decision),
        [
            "Sign in with ChatGPT",
            "Sign in with Device Code",
            "Sign in another way"
        ]
    );
    assert!(decision.options[0].pointed);
    assert_eq!(decision.options[2].keys, ["Down", "Down", "Enter"]);
    assert_eq!(
        decision.options[2].detail,
        "Use an API key or another provider"
    );
    assert_eq!(
        decision.question,
        "Welcome to Codex, OpenAI's command-line coding agent\n\nChoose how you want to use Codex."
    );
    // A numbered list in an answer, or options with something else between them, stay apart.
    let set = crate::status::providers::ProviderSet::builtin().unwrap();
    let codex = set.get("codex").unwrap();
    for screen in [
        "Steps:\n  1. build\n\n  2. test\n\n> ",
        "> 1. Yes\n\nThat was the question.\n\n  2. No",
    ] {
        let rows: Vec<&str> = screen.lines().collect();
        assert_eq!(for_provider(codex, &rows, &[]), None, "{screen:?}");
    }
}

#[test]
fn buttons_side_by_side_are_options_and_the_one_in_colour_is_selected() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    for (file, provider) in [
        (
            "screens/opencode/1.18.33/waiting_user_answer--tool-permission.txt",
            "opencode",
        ),
        (
            "incoming/kilo/7.7.7/waiting_user_answer--write-permission.txt",
            "kilo",
        ),
    ] {
        let decision = recorded_as_the_daemon_reads(&root.join(file), provider).unwrap();
        assert_eq!(
            labels(&decision),
            ["Allow once", "Allow always", "Reject"],
            "{file}"
        );
        assert!(decision.options[0].pointed);
        assert_eq!(decision.options[2].keys, ["Right", "Right", "Enter"]);
        assert!(
            decision.question.starts_with("△ Permission required"),
            "{file}"
        );
        assert_eq!(decision.choose(&Answer::No).unwrap().label, "Reject");
    }
    // Drawn: the second button selected (on its own colour, the others on the row's), a
    // frame on a colour of its own, and hints further right that are no buttons.
    let mut screen = crate::screen::PaneScreen::new(80, 6);
    screen.feed(
        "\x1b[48;5;236m\u{2503}\x1b[48;5;235m  Run it?\r\n\
         \x1b[48;5;236m\u{2503}\x1b[48;5;235m   Allow once  \x1b[48;5;208m Allow always \x1b[48;5;235m  Reject            \
         ctrl+f fullscreen  \u{21c6} select\x1b[m"
            .as_bytes(),
    );
    let rows = screen.rows();
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let shades = crate::status::shading::screen_rows(&screen);
    let set = crate::status::providers::ProviderSet::builtin().unwrap();
    let drawn = for_provider(set.get("opencode").unwrap(), &rows, &shades).unwrap();
    assert_eq!(labels(&drawn), ["Allow once", "Allow always", "Reject"]);
    assert!(drawn.options[1].pointed);
    assert_eq!(drawn.options[0].keys, ["Left", "Enter"]);
    assert_eq!(drawn.options[2].keys, ["Right", "Enter"]);
    assert_eq!(drawn.question, "Run it?");
    // Without colours no button stands out: no decision.
    assert_eq!(for_provider(set.get("opencode").unwrap(), &rows, &[]), None);
}

#[test]
fn a_framed_question_whose_selection_is_its_background_points_at_it() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let file = root.join("holdout/opencode/1.18.33/waiting_user_answer--ask-user-question.txt");
    let decision = recorded_as_the_daemon_reads(&file, "opencode").unwrap();
    assert_eq!(
        labels(&decision),
        ["Crimson", "Teal", "Type your own answer"]
    );
    assert!(decision.options[0].pointed);
    assert_eq!(decision.options[0].detail, "Choose Crimson");
    assert_eq!(decision.options[1].keys, ["Down", "Enter"]);
    assert_eq!(decision.question, "Which colour should the banner use?");
}

#[test]
fn a_scrollbar_in_the_last_column_is_not_part_of_the_dialog() {
    // Qwen Code 0.24.4's tool dialog once the conversation overflows: its scrollbar thumb `█`
    // in the last column, on rows of their own too.
    let pad = |text: &str, bar: bool| format!("{text:<79}{}", if bar { "█" } else { "" });
    let screen = [
        pad("  ◆︎ An earlier answer.", false),
        pad("", false),
        pad("", true),
        pad(
            "  ? Shell touch /tmp/x/allowed (Run the command the test asked for) ←",
            true,
        ),
        pad("", true),
        pad("     touch /tmp/x/allowed", true),
        pad("", true),
        pad("   Allow execution of: 'touch'?", true),
        pad("", false),
        pad("   › 1. Yes, allow once", false),
        pad(
            "     2. Always allow run 'touch *' commands in this project",
            false,
        ),
        pad("     3. No, suggest changes (esc)", false),
    ]
    .join("\n");
    let decision = decide(&screen).expect("a decision");
    assert_eq!(
        labels(&decision),
        [
            "Yes, allow once",
            "Always allow run 'touch *' commands in this project",
            "No, suggest changes (esc)"
        ]
    );
    assert!(!decision.question.contains('█'), "{}", decision.question);
    assert!(
        decision.question.ends_with("Allow execution of: 'touch'?"),
        "{}",
        decision.question
    );
    assert!(
        !decision.question.contains("earlier answer"),
        "{}",
        decision.question
    );
    // A label that ends in a block glyph of its own keeps it.
    assert_eq!(without_scrollbar("   1. Fill █"), "   1. Fill █");
    assert_eq!(without_scrollbar("  █"), "");
}

/// Grok CLI 1.0.1 draws its confirmation menu without a pointer: the selected option is the
/// one on a background colour. With the shaded rows known it is a decision; without, or with
/// no single shaded option, it is none (never a guess).
#[test]
fn a_menu_whose_selection_is_its_background_reads_with_the_shaded_rows() {
    let set = crate::status::providers::ProviderSet::builtin().unwrap();
    let grok = set.get("grok_cli").unwrap();
    let rows = [
        "  ⏺ Run bash command(touch x.txt)",
        "",
        "  Do you want to proceed with this operation?",
        "   1. Yes",
        "   2. Yes, and don't ask again this session",
        "   3. No",
        "   4. No, with feedback",
        "  ↑↓ navigate • Enter select • Esc cancel",
    ];
    let shaded = |lit: &[usize]| {
        (0..rows.len())
            .map(|i| crate::status::shading::RowShade {
                shaded: lit.contains(&i),
                ..Default::default()
            })
            .collect::<Vec<_>>()
    };
    let second = for_provider(grok, &rows, &shaded(&[4])).expect("a decision");
    assert_eq!(
        labels(&second),
        [
            "Yes",
            "Yes, and don't ask again this session",
            "No",
            "No, with feedback"
        ]
    );
    assert!(second.options[1].pointed);
    assert_eq!(second.options[0].keys, ["Up", "Enter"]);
    assert_eq!(second.options[3].keys, ["Down", "Down", "Enter"]);
    assert!(
        second
            .question
            .ends_with("Do you want to proceed with this operation?")
    );
    // The same dialog with the selection moved is the same decision.
    let first = for_provider(grok, &rows, &shaded(&[3])).unwrap();
    assert_eq!(first.fingerprint, second.fingerprint);
    assert_eq!(first.options[2].keys, ["Down", "Down", "Enter"]);
    // Nothing shaded, every option shaded, or only rows outside the menu: no decision.
    for lit in [&[][..], &[3, 4, 5, 6], &[2, 7]] {
        assert_eq!(for_provider(grok, &rows, &shaded(lit)), None, "{lit:?}");
    }
    // The recorded screen, read from its colours.
    let path = format!(
        "{}/fixtures/holdout/grok_cli/1.0.1/waiting_user_answer--tool-permission.ansi",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(path).unwrap();
    let (view, lit) = crate::status::view_and_shading_of_capture(&bytes, "", "");
    let rows: Vec<&str> = view.rows.iter().map(String::as_str).collect();
    let recorded = for_provider(grok, &rows, &lit).expect("the recorded menu");
    assert_eq!(recorded.options.len(), 4);
    assert!(recorded.options[0].pointed);
}
