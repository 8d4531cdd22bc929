//! The key-binding commands against real tmux, a real attached client and fake agents
//! (`scripts/programs/fake_agent.py`: a message starting with `ASK` opens a dialog, so the
//! agent waits for the user; any other one ends in a completed turn): `jump`, `board` and
//! `send --buffer/--notify`.

use std::io::Write;
use std::process::{Output, Stdio};
use std::time::Duration;

use crate::inbox::Setup;
use crate::plugin_keys::Terminal;
use crate::support::{PtyClient, TmuxServer, daemon_test_lock};

/// The name of the one attached (non-control) client, once it is there.
fn client_name(server: &TmuxServer) -> String {
    let mut name = String::new();
    server.wait_for("an attached client", Duration::from_secs(10), || {
        // Not the daemon's control clients.
        name = server
            .tmux(&[
                "list-clients",
                "-F",
                "#{client_control_mode} #{client_name}",
            ])
            .lines()
            .find_map(|line| line.strip_prefix("0 "))
            .unwrap_or_default()
            .to_string();
        !name.is_empty()
    });
    name
}

/// The pane a client shows.
fn client_pane(server: &TmuxServer, client: &str) -> String {
    let listed = server.tmux(&["list-clients", "-F", "#{client_name}\t#{pane_id}"]);
    listed
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .find(|(name, _)| *name == client)
        .map(|(_, pane)| pane.to_string())
        .unwrap_or_else(|| panic!("no client {client:?} in {listed:?}"))
}

/// Waits until the daemon shows `pane` in `status`.
pub(crate) fn wait_pane_status(server: &TmuxServer, pane: &str, status: &str) {
    server.wait_for(
        &format!("{pane} to be {status}"),
        Duration::from_secs(15),
        || {
            server
                .panes()
                .iter()
                .any(|p| p["pane"] == pane && p["status"] == status)
        },
    );
}

/// Runs `panectl ARGS` with `input` on stdin.
fn panectl_with_input(server: &TmuxServer, args: &[&str], input: &[u8]) -> Output {
    let mut child = server
        .panectl()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run panectl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    child.wait_with_output().expect("wait for panectl")
}

fn launch(server: &TmuxServer, name: &str) -> String {
    server
        .panectl_ok(&["launch", "fake_agent", "--name", name])
        .trim()
        .to_string()
}

/// The daemon's panes in the stable order (session, window index, pane index) with a status.
fn ordered(server: &TmuxServer, status: &str) -> Vec<String> {
    let mut panes: Vec<(String, u64, u64, String)> = server
        .panes()
        .iter()
        .filter(|p| p["status"] == status && p["provider"] == "fake_agent")
        .map(|p| {
            (
                p["session"].as_str().unwrap_or_default().to_string(),
                p["window_index"].as_u64().unwrap_or_default(),
                p["index"].as_u64().unwrap_or_default(),
                p["pane"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    panes.sort();
    panes.into_iter().map(|p| p.3).collect()
}

/// Whether the server's message log has a message containing `text`.
fn logged(server: &TmuxServer, text: &str) -> bool {
    server.tmux(&["show-messages"]).contains(text)
}

#[test]
fn board_jump_cycles_waiting_agents_before_completed_ones() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let first = launch(server, "first");
    let second = launch(server, "second");
    let _pty = PtyClient::attach(server, 100, 30);
    let client = client_name(server);
    assert_eq!(client_pane(server, &client), "%0");

    // Every agent idle: nothing to do, said in tmux, exit 0, the client stays.
    let idle = server
        .panectl()
        .args(["jump", "--client", &client])
        .output()
        .unwrap();
    assert!(idle.status.success(), "{idle:?}");
    assert!(idle.stdout.is_empty(), "{idle:?}");
    assert_eq!(client_pane(server, &client), "%0");
    server.wait_for("the nothing-to-do message", Duration::from_secs(5), || {
        logged(server, "panectl: no agent is waiting or completed")
    });

    // %0 and `second` wait for the user, `first` has completed.
    server.panectl_ok(&["send", "%0", "ASK may I?"]);
    server.panectl_ok(&["send", &second, "ASK may I too?"]);
    server.panectl_ok(&["send", &first, "just work"]);
    wait_pane_status(server, "%0", "waiting_user_answer");
    wait_pane_status(server, &second, "waiting_user_answer");
    wait_pane_status(server, &first, "completed");
    let waiting = ordered(server, "waiting_user_answer");
    assert_eq!(waiting.len(), 2, "{waiting:?}");

    // Pressed again and again, it cycles through the waiting ones only, from the current pane.
    let mut at = client_pane(server, &client);
    for _ in 0..4 {
        let went = server.panectl_ok(&["jump", "--client", &client]);
        let went = went.trim();
        let expected = if at == waiting[0] {
            &waiting[1]
        } else {
            &waiting[0]
        };
        assert_eq!(went, expected, "from {at}");
        assert_eq!(client_pane(server, &client), went);
        at = went.to_string();
    }
    // --from names the current pane instead (here: the shell before them all).
    let went = server.panectl_ok(&["jump", "--client", &client, "--from", "%1"]);
    let after_shell = if waiting[0] == "%0" {
        &waiting[1]
    } else {
        &waiting[0]
    };
    assert_eq!(went.trim(), after_shell);

    // The dialogs answered, nobody waits: to the completed ones, cycling.
    server.tmux(&["send-keys", "-t", "%0", "y"]);
    server.tmux(&["send-keys", "-t", &second, "y"]);
    for pane in ["%0", second.as_str()] {
        server.wait_for("the dialog to close", Duration::from_secs(15), || {
            server
                .panes()
                .iter()
                .any(|p| p["pane"] == pane && (p["status"] == "idle" || p["status"] == "completed"))
        });
    }
    let completed = ordered(server, "completed");
    assert!(completed.contains(&first), "{completed:?}");
    for round in 0..completed.len() + 1 {
        let from = client_pane(server, &client);
        // Without --client, the attached client is the one (never the daemon's control
        // clients).
        let went = if round % 2 == 0 {
            server.panectl_ok(&["jump", "--client", &client])
        } else {
            server.panectl_ok(&["jump"])
        };
        let went = went.trim();
        let next = completed
            .iter()
            .find(|p| sort_key(server, p) > sort_key(server, &from))
            .unwrap_or(&completed[0]);
        assert_eq!(went, next, "from {from} among {completed:?}");
        assert_eq!(client_pane(server, &client), went);
    }
}

/// (window index, pane index) of a pane of the one session.
fn sort_key(server: &TmuxServer, pane: &str) -> (u64, u64) {
    let text = server.tmux(&[
        "display-message",
        "-p",
        "-t",
        pane,
        "#{window_index} #{pane_index}",
    ]);
    let mut numbers = text.split_whitespace().map(|n| n.parse().unwrap_or(0));
    (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0))
}

#[test]
fn board_lists_agents_sends_messages_and_jumps() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let worker = launch(server, "worker");
    let idle = launch(server, "resting");
    server.panectl_ok(&["send", &worker, "a task"]);
    server.panectl_ok(&["send", "%0", "ASK permission"]);
    wait_pane_status(server, &worker, "completed");
    wait_pane_status(server, "%0", "waiting_user_answer");
    wait_pane_status(server, &idle, "idle");
    let _pty = PtyClient::attach(server, 100, 30);
    let client = client_name(server);
    server.tmux(&["switch-client", "-c", &client, "-t", "%1"]);
    // Long enough for the idle agent's duration to show.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(client_pane(server, &client), "%1");

    // The table: waiting first, then completed, then idle; the shell is not an agent.
    let shown = panectl_with_input(
        server,
        &["board", "--client", &client],
        b"s 2\nfollow-up #{pane_id} ; $HOME\nq\n",
    );
    assert!(shown.status.success(), "{shown:?}");
    let text = String::from_utf8_lossy(&shown.stdout);
    let table: Vec<&str> = text.lines().take(4).collect();
    assert!(
        table[0].contains("STATUS") && table[0].contains("WHERE"),
        "{text}"
    );
    let expected = [
        ("1", "waiting_user_answer", "%0"),
        ("2", "completed", worker.as_str()),
        ("3", "idle", idle.as_str()),
    ];
    for ((n, status, pane), line) in expected.iter().zip(&table[1..]) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            (words[0], words[1], words[2]),
            (*n, *status, "fake_agent"),
            "{text}"
        );
        let location = server.tmux(&[
            "display-message",
            "-p",
            "-t",
            pane,
            "#{session_name}:#{window_name}.#{pane_index}",
        ]);
        assert_eq!(words[3], location.trim(), "{text}");
        let duration = words[words.len() - 1];
        let (number, unit) = duration.split_at(duration.len() - 1);
        assert!(
            number.parse::<u64>().is_ok() && ["s", "m", "h", "d"].contains(&unit),
            "{duration} in {text}"
        );
    }
    assert!(
        table[2].contains("worker") && table[3].contains("resting"),
        "{text}"
    );
    assert!(!text.contains("%1") && !text.contains("shell"), "{text}");
    assert!(text.contains("message: "), "{text}");
    assert!(
        text.contains(&format!("queued for {worker}")),
        "{text}\n{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    // The message went through the inbox, from the board, and reached the agent.
    server.wait_for("the board's message", Duration::from_secs(15), || {
        setup
            .bodies()
            .iter()
            .any(|b| b == b"follow-up #{pane_id} ; $HOME")
    });
    let messages = setup.messages();
    let sent = messages
        .iter()
        .find(|m| m["body"] == "follow-up #{pane_id} ; $HOME")
        .expect("the message in the inbox");
    assert_eq!(sent["sender"], "board");
    assert_eq!(sent["pane"], worker.as_str());
    // `q` left the client where it was.
    assert_eq!(client_pane(server, &client), "%1");

    // A number jumps there and ends the board.
    let jumped = panectl_with_input(server, &["board", "--client", &client], b"1\nq\n");
    assert!(jumped.status.success(), "{jumped:?}");
    assert_eq!(client_pane(server, &client), "%0");
    // Nonsense, then the end of input: exit 0, the client stays.
    let ended = panectl_with_input(server, &["board", "--client", &client], b"x\n99\n");
    assert!(ended.status.success(), "{ended:?}");
    let text = String::from_utf8_lossy(&ended.stdout);
    assert!(
        text.contains("Unknown command") && text.contains("no agent 99"),
        "{text}"
    );
    assert_eq!(client_pane(server, &client), "%0");
}

#[test]
fn board_send_takes_a_paste_buffer_exactly_and_notifies() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let _pty = PtyClient::attach(server, 100, 30);
    let client = client_name(server);
    let exists = |name: &str| {
        server
            .command()
            .args(["show-buffer", "-b", name])
            .output()
            .unwrap()
            .status
            .success()
    };

    // What `command-prompt` + `set-buffer -b NAME -- "%%%"` leaves, sent byte-exact.
    let body = "typed #{pane_id} ; $HOME '\" %Y ~ \\ end";
    server.tmux(&["set-buffer", "-b", "panectl-send", "--", body]);
    let id = server.panectl_ok(&["send", "%0", "--buffer", "panectl-send"]);
    let id: i64 = id.trim().parse().expect("a message id");
    setup.wait_state(id, "delivered", Duration::from_secs(15));
    assert_eq!(setup.bodies(), [body.as_bytes()]);
    assert!(!exists("panectl-send"), "the buffer was not deleted");

    // A missing buffer is an error that says so.
    let missing = server
        .panectl()
        .args(["send", "%0", "--buffer", "panectl-send"])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("\"panectl-send\" is missing"), "{stderr}");
    // A buffer and a message at once make no sense.
    let both = server
        .panectl()
        .args(["send", "%0", "text", "--buffer", "b"])
        .output()
        .unwrap();
    assert!(!both.status.success());

    // --notify: the outcome on the client's status line, nothing on stdout, exit 0.
    server.tmux(&["set-buffer", "-b", "note", "--", "second #{session_name}"]);
    let noted = server
        .panectl()
        .args([
            "send", "%0", "--buffer", "note", "--notify", "--client", &client,
        ])
        .output()
        .unwrap();
    assert!(noted.status.success(), "{noted:?}");
    assert!(
        noted.stdout.is_empty() && noted.stderr.is_empty(),
        "{noted:?}"
    );
    server.wait_for("the queued notice", Duration::from_secs(5), || {
        logged(server, "panectl: message ") && logged(server, " queued for %0")
    });
    server.wait_for("the second message", Duration::from_secs(15), || {
        setup.bodies().len() == 2
    });
    assert_eq!(setup.bodies()[1], b"second #{session_name}");
    // An error is shown too, and nothing in it is expanded by tmux.
    let failed = server
        .panectl()
        .args(["send", "%0", "--buffer", "x#{pane_id}%H", "--notify"])
        .output()
        .unwrap();
    assert!(failed.status.success(), "{failed:?}");
    server.wait_for("the error notice", Duration::from_secs(5), || {
        logged(
            server,
            "panectl: tmux paste buffer \"x♯{pane_id}%H\" is missing",
        )
    });
}

#[test]
fn the_board_and_explain_show_control_characters_escaped() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    // A name another program gave the agent (any process in the server can set it) that
    // would clear the screen and set the terminal's title if printed as it is.
    let hostile = "x\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}";
    server.tmux(&["set-option", "-p", "-t", "%0", "@panectl_name", hostile]);
    let shown = panectl_with_input(server, &["board"], b"q\n");
    assert!(shown.status.success(), "{shown:?}");
    let text = String::from_utf8(shown.stdout).expect("UTF-8 output");
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "control characters reached the terminal: {text:?}"
    );
    assert!(text.contains(r"x\x1b]0;pwned\x07\x1b[2J\x9b"), "{text}");
    // Events in text form carry names and titles too.
    let mut events = server
        .panectl()
        .arg("events")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run panectl events");
    std::thread::sleep(Duration::from_millis(500));
    server.panectl_ok(&["send", "%0", "--from", hostile, "hello"]);
    std::thread::sleep(Duration::from_secs(2));
    let _ = events.kill();
    let printed = events.wait_with_output().expect("events output");
    let printed = String::from_utf8(printed.stdout).expect("UTF-8 output");
    assert!(printed.contains("sender="), "no message event: {printed}");
    assert!(
        !printed.chars().any(|c| c.is_control() && c != '\n'),
        "control characters reached the terminal: {printed:?}"
    );
}

/// Opens `panectl board` in an 80x24 popup of the person's client, the way prefix A does, from
/// a shell that shares nothing with the daemon's environment but the server's socket; the
/// `tmux display-popup` child ends when the popup closes.
pub(crate) fn open_board(
    server: &TmuxServer,
    terminal: &Terminal,
    env: &str,
) -> std::process::Child {
    let command = format!(
        "exec env -i PATH=/usr/bin:/bin TERM=tmux-256color {env} '{}' -S '{}' board --client '{}'",
        env!("CARGO_BIN_EXE_panectl"),
        server.socket_path().display(),
        terminal.client
    );
    let popup = server
        .command()
        .args([
            "display-popup",
            "-c",
            &terminal.client,
            "-w",
            "82",
            "-h",
            "26",
            "-E",
            &command,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run tmux display-popup");
    terminal.wait_for_text("panectl · ");
    popup
}

/// The screen's line that contains `text`.
fn line_with(screen: &str, text: &str) -> String {
    screen
        .lines()
        .find(|line| line.contains(text))
        .unwrap_or_else(|| panic!("no line with {text:?} in:\n{screen}"))
        .to_string()
}

/// Waits for `popup` (the `tmux display-popup` child) to end, as it does when the popup closes.
pub(crate) fn wait_closed(mut popup: std::process::Child) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if popup.try_wait().expect("the popup's tmux").is_some() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the popup did not close"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_live_board_in_a_popup_follows_the_agents_and_acts_on_keys() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let worker = launch(server, "worker");
    server.panectl_ok(&["send", &worker, "a task"]);
    server.panectl_ok(&["send", "%0", "ASK permission"]);
    wait_pane_status(server, &worker, "completed");
    wait_pane_status(server, "%0", "waiting_user_answer");
    // Held back by the dialog: pending until the agent is ready.
    let held = server.panectl_ok(&["send", "%0", "held back"]);
    let terminal = Terminal::attach(server);
    server.tmux(&["switch-client", "-c", &terminal.client, "-t", "%1"]);
    terminal.wait_for_pane(server, "%1");

    // The table in the popup: the waiting agent first, selected, its dialog in the preview;
    // the help line whole in 80 columns.
    let popup = open_board(server, &terminal, "");
    let screen = terminal.wait_for_text("1 message pending");
    assert!(
        screen.contains("panectl · 2 agents · 1 waiting"),
        "{screen}"
    );
    let first = line_with(&screen, "1  waiting_user_answer");
    assert!(
        first.contains("fake_agent") && first.contains(" 1 "),
        "{screen}"
    );
    assert!(
        line_with(&screen, "2  completed").contains("worker"),
        "{screen}"
    );
    assert!(screen.contains("%0 · fake_agent"), "{screen}");
    assert!(screen.contains("Allow? (y/n)"), "{screen}");
    assert!(
        screen.contains(
            "y/n answer a dialog ↑↓/1-9 select Enter jump s send c cancel / filter q quit"
        ),
        "{screen}"
    );
    // Statuses in colour: the waiting one yellow (SGR 33 or 38;5;3).
    let coloured = terminal.screen_with_attributes();
    let waiting_line = line_with(&coloured, "waiting_user_answer");
    assert!(
        waiting_line.contains("\x1b[33m") || waiting_line.contains("38;5;3m"),
        "{waiting_line:?}"
    );

    // c cancels the held-back message.
    terminal.press(&["c"]);
    terminal.wait_for_text(&format!("Message {} to %0 cancelled.", held.trim()));
    let cancelled = setup
        .messages()
        .into_iter()
        .find(|m| m["body"] == "held back")
        .expect("the message");
    assert_eq!(cancelled["state"], "cancelled");

    // 2 selects the worker; s writes a message over two lines, Ctrl-D sends it.
    terminal.press(&["2"]);
    terminal.wait_for_text(&format!("{worker} · worker · fake_agent"));
    terminal.press(&["s"]);
    terminal.wait_for_text(&format!("message to {worker}"));
    terminal.type_text("first line");
    terminal.press(&["Enter"]);
    terminal.type_text("second #{pane_id} ; $HOME");
    terminal.wait_for_text("second #{pane_id} ; $HOME");
    terminal.press(&["C-d"]);
    terminal.wait_for_text(&format!("queued for {worker}."));
    server.wait_for("the board's message", Duration::from_secs(15), || {
        setup
            .bodies()
            .iter()
            .any(|b| b == b"first line\nsecond #{pane_id} ; $HOME")
    });
    // The preview follows the agent's screen with no key pressed: its answer to the first
    // line shows up.
    terminal.wait_for_text("answer: enil tsrif");

    // A status that changes elsewhere shows up too: an answer typed in the pane itself.
    terminal.press(&["1"]);
    terminal.wait_for_text("y/n answer");
    terminal.press(&["y"]);
    terminal.wait_for_text("Pressed y in %0.");
    wait_pane_status(server, "%0", "completed");
    // (The board redraws once the daemon's status event comes; the pane behind the popup
    // shows the answer.)
    terminal.wait_for_no_text("waiting_user_answer");
    let screen = terminal.wait_for_text("answered y");
    assert!(
        line_with(&screen, "1  completed").contains("0:sh.0"),
        "{screen}"
    );
    // y on an agent that is not waiting presses nothing.
    terminal.press(&["y"]);
    terminal.wait_for_text("is not waiting for an answer.");

    // / filters: only the worker; Esc clears the filter (and a second Esc would quit).
    terminal.press(&["/"]);
    terminal.type_text("WORK");
    terminal.press(&["Enter"]);
    let screen = terminal.wait_for_text("filter: WORK");
    assert!(
        line_with(&screen, "1  completed").contains("worker"),
        "{screen}"
    );
    assert!(!screen.contains("2  completed"), "{screen}");
    terminal.press(&["/"]);
    terminal.press(&["Escape"]);
    terminal.wait_for_text("2  completed");

    // Enter jumps the client to the selected agent and closes the popup.
    terminal.press(&["Down"]);
    let screen = terminal.screen();
    let selected = if line_with(&screen, "1  completed").contains("worker") {
        "%0".to_string()
    } else {
        worker.clone()
    };
    terminal.press(&["Enter"]);
    wait_closed(popup);
    terminal.wait_for_pane(server, &selected);
    terminal.wait_for_no_text("panectl · ");

    // NO_COLOR: the same board without colours; q closes it and the client stays.
    let popup = open_board(server, &terminal, "NO_COLOR=1");
    terminal.wait_for_text("panectl · 2 agents");
    let plain = terminal.screen_with_attributes();
    let row = line_with(&plain, "1  completed");
    assert!(
        !row.contains("\x1b[32m") && !row.contains("38;5;2m"),
        "{row:?}"
    );
    terminal.press(&["q"]);
    wait_closed(popup);
    assert_eq!(terminal.pane(server), selected);
}
