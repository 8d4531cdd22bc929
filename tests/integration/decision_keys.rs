//! Decisions through the keys a person presses in a real attached client: `prefix J` goes to
//! the agent waiting on a dialog and shows its question and options on the status line, and
//! the board's `n` answers the dialog by its option labelled No (not by a key typed blind),
//! saying what was chosen.

use std::time::Duration;

use crate::board::{open_board, wait_closed};
use crate::dialog_agent::{agent_server, show_dialog};
use crate::plugin_keys::Terminal;
use crate::support::daemon_test_lock;

#[test]
fn prefix_j_shows_the_dialog_and_the_boards_n_picks_the_option_labelled_no() {
    let _guard = daemon_test_lock();
    let (server, rules) = agent_server("Run cargo test in the repository?");
    let _daemon = server.start_daemon(&["--rules-dir", &rules]);
    server.wait_for("the dialog agent detected", Duration::from_secs(15), || {
        server
            .panes()
            .iter()
            .any(|p| p["pane"] == "%0" && p["provider"] == "dialog_agent")
    });
    // A shell in a second window, where the person is; prefix J bound as the plugin binds it
    // (the pane printed goes nowhere: run-shell would show it in view mode).
    server.tmux(&["new-window", "-d", "sh"]);
    let command = format!(
        "'{}' -S '{}' jump --client '#{{client_name}}' >/dev/null",
        env!("CARGO_BIN_EXE_panectl"),
        server.socket_path().display()
    );
    server.tmux(&["bind-key", "J", "run-shell", "-b", &command]);
    let terminal = Terminal::attach(&server);
    server.tmux(&["switch-client", "-c", &terminal.client, "-t", "%1"]);
    terminal.wait_for_pane(&server, "%1");
    show_dialog(&server);

    // prefix J: to the agent, its question and every option on the status line.
    terminal.press(&["C-b", "J"]);
    terminal.wait_for_pane(&server, "%0");
    let screen = terminal.wait_for_text("%0 dialog_agent: Run cargo test in the repository?");
    let status_line = screen
        .lines()
        .find(|line| line.starts_with("%0 dialog_agent: "))
        .unwrap_or_default();
    assert!(
        status_line.contains(
            "Run cargo test in the repository?  1. Yes  2. Yes, and don't ask again for this \
             command  3. No"
        ),
        "{screen}"
    );
    // Nothing was pressed in the dialog: it still waits.
    assert_eq!(server.panes()[0]["status"], "waiting_user_answer");

    // The board: n answers by the option labelled No (the third, Down Down Enter here).
    let popup = open_board(&server, &terminal, "");
    terminal.wait_for_text("1  waiting_user_answer");
    terminal.press(&["n"]);
    terminal.wait_for_text("answered 3. No in %0");
    server.wait_for("the program's choice", Duration::from_secs(10), || {
        server
            .tmux(&["capture-pane", "-p", "-t", "%0"])
            .contains("chose 3")
    });
    terminal.press(&["q"]);
    wait_closed(popup);
}

/// `decisions --all` lists the dialogs of every server with a daemon, each pane as
/// `SERVER/%N`, and `answer` takes that name from a command aimed at another server.
#[test]
fn decisions_all_lists_every_servers_dialogs_and_answer_takes_the_servers_name() {
    let _guard = daemon_test_lock();
    let (first, first_rules) = agent_server("First server's question?");
    let (mut second, second_rules) = agent_server("Second server's question?");
    second.share_runtime_dir_of(&first);
    let _first_daemon = first.start_daemon(&["--rules-dir", &first_rules]);
    let _second_daemon = second.start_daemon(&["--rules-dir", &second_rules]);
    for server in [&first, &second] {
        server.wait_for("the dialog agent detected", Duration::from_secs(15), || {
            server
                .panes()
                .first()
                .is_some_and(|p| p["provider"] == "dialog_agent")
        });
        show_dialog(server);
    }
    let listed: serde_json::Value =
        serde_json::from_str(&first.panectl_ok(&["decisions", "--all", "--json"])).unwrap();
    let listed = listed.as_array().expect("a list");
    assert_eq!(listed.len(), 2, "{listed:#?}");
    let of = |question: &str| {
        listed
            .iter()
            .find(|d| d["decision"]["question"] == question)
            .unwrap_or_else(|| panic!("no {question:?} in {listed:#?}"))
    };
    assert_eq!(
        of("First server's question?")["server"],
        first.socket_name()
    );
    let second_label = second.socket_name().to_string();
    assert_eq!(of("Second server's question?")["server"], second_label);
    // The text names each pane so that `answer` takes it as it is.
    let text = first.panectl_ok(&["decisions", "--all"]);
    assert!(
        text.contains(&format!("{second_label}/%0 (dialog_agent):")),
        "{text}"
    );
    // Answered by the server's name, from a command aimed at the first server.
    let answered = first.panectl_ok(&["answer", &format!("{second_label}/%0"), "--option", "2"]);
    assert!(answered.contains("answered 2."), "{answered}");
    second.wait_for("the program's choice", Duration::from_secs(10), || {
        second
            .tmux(&["capture-pane", "-p", "-t", "%0"])
            .contains("chose 2")
    });
    assert_eq!(first.panes()[0]["status"], "waiting_user_answer");
}
