//! The inbox against real tmux and a real SQLite file: messages reach a fake agent
//! (`scripts/programs/fake_agent.py`, which reads its terminal in raw mode with bracketed paste
//! like the real CLIs and logs what it receives) only when it is ready, in order, byte-exact,
//! once; a dialog is never answered by a submit key; messages survive daemon crashes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::Value;

use crate::support::{Daemon, TmuxServer, daemon_test_lock};

/// Status rules for the fake agent.
pub const RULES: &str = include_str!("../../scripts/programs/fake_agent.toml");

/// A tmux server whose pane `%0` runs the fake agent, and a daemon that knows its rules.
pub struct Setup {
    pub server: TmuxServer,
    rules: tempfile::TempDir,
    log: PathBuf,
}

impl Setup {
    pub fn start(work_seconds: f64) -> Setup {
        let server = TmuxServer::start(100, 30);
        // A second pane keeps the session alive whatever happens to the first.
        server.tmux(&["split-window", "-d", "-t", "%0", "sh"]);
        let rules = tempfile::tempdir().expect("rules dir");
        let log = server.dir().join("received.jsonl");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/programs/fake_agent.py");
        // `panectl launch fake_agent` runs this: it shows its directory, a variable and its
        // arguments, then becomes the fake agent.
        let launch = format!(
            "\n[launch]\ncommand = [\"sh\", \"-c\", 'echo \"cwd=$PWD var=$LAUNCH_VAR args=$*\"; exec python3 {} {} 0.2', \"sh\"]\nstartup_prompts = [{{ rule = \"fake_agent.trust\", keys = [\"Enter\"] }}]\n",
            script.display(),
            log.display()
        );
        let rules_text = RULES.replacen("\n[detect]", &format!("{launch}\n[detect]"), 1);
        std::fs::write(rules.path().join("fake_agent.toml"), rules_text).expect("rules");
        let command = format!(
            "exec python3 {} {} {work_seconds}",
            script.display(),
            log.display()
        );
        server.tmux(&["respawn-pane", "-k", "-t", "%0", &command]);
        Setup { server, rules, log }
    }

    /// Starts the fake agent again in `%0` (a new process), after `delay_seconds` of a shell.
    fn restart_agent(&self, delay_seconds: f64) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/programs/fake_agent.py");
        let command = format!(
            "sleep {delay_seconds}; exec python3 {} {} 0.2",
            script.display(),
            self.log.display()
        );
        self.server
            .tmux(&["respawn-pane", "-k", "-t", "%0", &command]);
    }

    pub fn daemon(&self) -> Daemon {
        self.daemon_for(2)
    }

    /// A daemon, once it mirrors `panes` panes.
    pub fn daemon_for(&self, panes: usize) -> Daemon {
        self.daemon_with(panes, &[])
    }

    /// A daemon with more options, once it mirrors `panes` panes.
    pub fn daemon_with(&self, panes: usize, extra: &[&str]) -> Daemon {
        let dir = self.rules.path().to_string_lossy().into_owned();
        let mut args = vec!["--rules-dir", &dir, "--submit-delay", "150ms"];
        args.extend_from_slice(extra);
        let daemon = self.server.start_daemon(&args);
        self.server.wait_for_panes(panes);
        daemon
    }

    /// The directory of the daemon's provider rules.
    pub fn rules_dir(&self) -> &Path {
        self.rules.path()
    }

    fn status(&self) -> String {
        let panes = self.server.panes();
        panes
            .iter()
            .find(|p| p["pane"] == "%0")
            .and_then(|p| p["status"].as_str())
            .unwrap_or_default()
            .to_string()
    }

    pub fn wait_status(&self, wanted: &[&str], timeout: Duration) {
        self.server
            .wait_for(&format!("status in {wanted:?}"), timeout, || {
                wanted.contains(&self.status().as_str())
            });
    }

    /// What the fake agent logged, one JSON value per line.
    pub fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("log line"))
            .collect()
    }

    /// The messages the fake agent received, as bytes.
    pub fn bodies(&self) -> Vec<Vec<u8>> {
        self.received()
            .iter()
            .filter_map(|e| e["hex"].as_str().map(from_hex))
            .collect()
    }

    pub fn send(&self, text: &str) -> i64 {
        let id = self.server.panectl_ok(&["send", "%0", text]);
        id.trim().parse().expect("message id")
    }

    pub fn messages(&self) -> Vec<Value> {
        self.server
            .panectl_ok(&["inbox", "--json"])
            .lines()
            .map(|l| serde_json::from_str(l).expect("inbox line"))
            .collect()
    }

    pub fn message(&self, id: i64) -> Value {
        self.messages()
            .into_iter()
            .find(|m| m["id"] == id)
            .expect("the message")
    }

    pub fn wait_state(&self, id: i64, state: &str, timeout: Duration) -> Value {
        let mut last = Value::Null;
        self.server
            .wait_for(&format!("message {id} to be {state}"), timeout, || {
                last = self.message(id);
                last["state"] == state
            });
        last
    }
}

fn from_hex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn messages_wait_for_a_ready_agent_and_arrive_in_order_once() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(1.5);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let ids: Vec<i64> = ["first message", "second message", "third message"]
        .iter()
        .map(|text| setup.send(text))
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    // While the agent works on the first, the others wait.
    setup.wait_state(ids[0], "delivered", Duration::from_secs(10));
    assert_eq!(setup.message(ids[1])["state"], "pending");
    for id in &ids {
        let done = setup.wait_state(*id, "delivered", Duration::from_secs(20));
        assert_eq!(done["attempts"], 1, "{done}");
        assert_eq!(done["sender"], "cli");
        assert!(done["delivered_at"].as_i64() >= done["created_at"].as_i64());
    }
    setup.wait_status(&["completed"], Duration::from_secs(10));
    assert_eq!(
        setup.bodies(),
        [&b"first message"[..], b"second message", b"third message"]
    );
    assert!(
        !setup
            .received()
            .iter()
            .any(|e| e.get("input_during_work").is_some()),
        "a message was typed while the agent worked: {:?}",
        setup.received()
    );
    let listed = setup
        .server
        .panectl_ok(&["inbox", "--pane", "%0", "--state", "delivered"]);
    assert_eq!(listed.lines().count(), 4, "a header and three: {listed}");
    assert!(listed.starts_with("ID  PANE"), "{listed}");
    assert!(listed.contains("\"second message\""), "{listed}");
}

#[test]
fn a_message_sent_right_after_a_restart_waits_for_the_new_program() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    // The daemon still shows the old program, idle, for a moment after this.
    setup.restart_agent(1.0);
    let id = setup.send("for the new program");
    let done = setup.wait_state(id, "delivered", Duration::from_secs(15));
    assert_eq!(done["attempts"], 1, "{done}");
    assert_eq!(setup.bodies(), [&b"for the new program"[..]]);
}

#[test]
fn a_provider_can_narrow_the_statuses_a_message_goes_in() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let path = setup.rules.path().join("fake_agent.toml");
    let text = std::fs::read_to_string(&path).expect("rules");
    let narrowed = text.replacen(
        "\n[detect]",
        "\n[delivery]\nready = [\"idle\"]\nsubmit_delay_ms = 300\n\n[detect]",
        1,
    );
    std::fs::write(&path, narrowed).expect("rules");
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let first = setup.send("while idle");
    let second = setup.send("not after a turn");
    setup.wait_state(first, "delivered", Duration::from_secs(10));
    setup.wait_status(&["completed"], Duration::from_secs(10));
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(setup.message(second)["state"], "pending");
    assert_eq!(setup.bodies(), [&b"while idle"[..]]);
}

#[test]
fn a_dialog_is_never_answered_by_a_submit_key() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let ask = setup.send("ASK to run a tool");
    let after = setup.send("after the dialog");
    setup.wait_state(ask, "delivered", Duration::from_secs(10));
    setup.wait_status(&["waiting_user_answer"], Duration::from_secs(5));
    // Longer than a confirmation timeout and a retry: nothing may reach the dialog.
    std::thread::sleep(Duration::from_secs(6));
    let received = setup.received();
    assert!(
        !received.iter().any(|e| e.get("dialog_key").is_some()),
        "a key reached the dialog: {received:?}"
    );
    assert_eq!(setup.status(), "waiting_user_answer");
    assert_eq!(setup.message(after)["state"], "pending");
    // The user answers; the next message follows.
    setup.server.tmux(&["send-keys", "-t", "%0", "y"]);
    setup.wait_state(after, "delivered", Duration::from_secs(10));
    assert_eq!(
        setup.bodies(),
        [&b"ASK to run a tool"[..], b"after the dialog"]
    );
}

#[test]
fn cancel_expiry_refusals_and_lost_receivers() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    // A busy receiver keeps messages pending: open a dialog.
    let ask = setup.send("ASK hold on");
    setup.wait_state(ask, "delivered", Duration::from_secs(10));
    setup.wait_status(&["waiting_user_answer"], Duration::from_secs(5));
    let cancelled = setup.send("to be cancelled");
    let answer = setup
        .server
        .panectl_ok(&["inbox", "cancel", &cancelled.to_string()]);
    assert!(answer.contains("cancelled"), "{answer}");
    let again = setup
        .server
        .panectl()
        .args(["inbox", "cancel", &cancelled.to_string()])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("is cancelled, not pending"));
    let short = setup
        .server
        .panectl_ok(&["send", "%0", "--ttl", "1s", "short-lived"]);
    let short: i64 = short.trim().parse().unwrap();
    setup.wait_state(short, "expired", Duration::from_secs(5));

    // Bodies that cannot be pasted safely are refused with a reason.
    let mut nul = setup
        .server
        .panectl()
        .args(["send", "%0", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    nul.stdin.take().unwrap().write_all(b"a\0b").unwrap();
    let nul = nul.wait_with_output().unwrap();
    assert!(!nul.status.success());
    assert!(String::from_utf8_lossy(&nul.stderr).contains("NUL"));

    // A message for a pane whose program changed is not delivered to the new one.
    let stale = setup.send("for the old program");
    setup
        .server
        .tmux(&["respawn-pane", "-k", "-t", "%0", "exec sleep 100000"]);
    let failed = setup.wait_state(stale, "failed", Duration::from_secs(10));
    assert!(
        failed["reason"]
            .as_str()
            .unwrap()
            .contains("another program"),
        "{failed}"
    );
    // Messages for a pane that is gone fail once the pane stays gone.
    // (`sleep` is no agent: the message goes only because the test allows it.)
    let gone: i64 = setup
        .server
        .panectl_ok(&["send", "%0", "--allow-shell", "for a pane about to close"])
        .trim()
        .parse()
        .expect("message id");
    setup.server.tmux(&["kill-pane", "-t", "%0"]);
    let failed = setup.wait_state(gone, "failed", Duration::from_secs(20));
    assert_eq!(failed["reason"], "the pane is gone");
    drop(daemon);
    assert!(
        !setup
            .received()
            .iter()
            .any(|e| e["hex"] == to_hex(b"to be cancelled"))
    );
}

#[test]
fn messages_arrive_byte_exact_and_nothing_in_them_runs() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.05);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let marker = setup.server.dir().join("injected");
    let marker = marker.display().to_string();
    let mut bodies: Vec<Vec<u8>> = vec![
        format!("#(touch {marker})").into_bytes(),
        format!("x'; run-shell 'touch {marker}'; '").into_bytes(),
        format!("\"; run-shell \"touch {marker}\" ; \\").into_bytes(),
        b"#{pane_id} #{session_name} ; $HOME ~ ~/x '\\'' \\\\ \\;".to_vec(),
        b"line one\nline two\r\nline three\n".to_vec(),
        b"\x1b[31mred\x1b[0m \x1b]2;title\x07 \x1b[200~ \x03 \x7f \t".to_vec(),
        b"invalid utf-8: \xff\xfe\xc3 and split \xe2\x82".to_vec(),
        "wide 漢字 and emoji 🎉".as_bytes().to_vec(),
        (0..100 * 1024).map(|i| b'a' + (i % 26) as u8).collect(),
    ];
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases: 1,
        ..Default::default()
    });
    let strategy = proptest::collection::vec(1u8..=255, 1..400);
    for _ in 0..12 {
        let tree = strategy.new_tree(&mut runner).expect("random bytes");
        let mut body = tree.current();
        if body.starts_with(b"ASK") {
            body.insert(0, b'x');
        }
        if body.windows(6).any(|w| w == b"\x1b[201~") {
            continue;
        }
        bodies.push(body);
    }
    let client = |body: &[u8]| -> i64 {
        let request = serde_json::json!({ "body_hex": to_hex(body), "from": "proptest" });
        let answer = setup.server.api_post("/v1/panes/%250/messages", &request);
        answer["id"].as_i64().expect("id")
    };
    let ids: Vec<i64> = bodies.iter().map(|b| client(b)).collect();
    for id in &ids {
        setup.wait_state(*id, "delivered", Duration::from_secs(30));
    }
    let received = setup.bodies();
    assert_eq!(received.len(), bodies.len());
    for (got, sent) in received.iter().zip(&bodies) {
        assert_eq!(
            got,
            sent,
            "sent {:?}, received {:?}",
            String::from_utf8_lossy(sent),
            String::from_utf8_lossy(got)
        );
    }
    assert!(
        !Path::new(&marker).exists(),
        "text from a message ran as a command"
    );
}

#[test]
fn every_message_arrives_exactly_once_across_daemon_crashes() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.3);
    const MESSAGES: usize = 200;
    {
        let _daemon = setup.daemon();
        setup.wait_status(&["idle"], Duration::from_secs(10));
        // Queue everything first, with delivery held back by a dialog.
        let ask = setup.send("ASK wait");
        setup.wait_state(ask, "delivered", Duration::from_secs(10));
        setup.wait_status(&["waiting_user_answer"], Duration::from_secs(5));
        for n in 1..=MESSAGES {
            let request = serde_json::json!({ "body": format!("msg-{n:04}") });
            setup.server.api_post("/v1/panes/%250/messages", &request);
        }
    }
    setup.server.tmux(&["send-keys", "-t", "%0", "y"]);
    // Crash the daemon at pseudo-random moments until everything is delivered.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut crashes = 0;
    let final_daemon;
    let deadline = std::time::Instant::now() + Duration::from_secs(400);
    loop {
        let daemon = setup.daemon();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let life = Duration::from_millis(800 + seed % 2000);
        std::thread::sleep(life);
        let listed = setup
            .server
            .panectl()
            .args(["inbox", "--json"])
            .output()
            .unwrap();
        assert!(
            listed.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&listed.stderr),
            daemon.log_text()
        );
        let pending = String::from_utf8_lossy(&listed.stdout)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("inbox line"))
            .collect::<Vec<_>>()
            .iter()
            .filter(|m| m["state"] != "delivered")
            .count();
        if pending == 0 {
            final_daemon = daemon;
            break;
        }
        daemon.crash();
        crashes += 1;
        assert!(
            std::time::Instant::now() < deadline,
            "{pending} messages still undelivered after {crashes} crashes"
        );
    }
    assert!(crashes >= 5, "only {crashes} crashes happened");
    let expected: Vec<Vec<u8>> = std::iter::once(b"ASK wait".to_vec())
        .chain((1..=MESSAGES).map(|n| format!("msg-{n:04}").into_bytes()))
        .collect();
    let received = setup.bodies();
    let odd: Vec<String> = received
        .iter()
        .filter(|b| !expected.contains(b))
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect();
    let missing: Vec<String> = expected
        .iter()
        .filter(|b| !received.contains(b))
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect();
    let other: Vec<Value> = setup
        .received()
        .into_iter()
        .filter(|e| e.get("hex").is_none())
        .collect();
    assert_eq!(
        received.len(),
        expected.len(),
        "received {} messages for {} sent ({crashes} crashes); missing {missing:?}; \
         unexpected {odd:?}; other log entries {other:?}",
        received.len(),
        expected.len()
    );
    assert_eq!(received, expected, "({crashes} crashes)");
    let failed: Vec<Value> = setup
        .messages()
        .into_iter()
        .filter(|m| m["state"] != "delivered")
        .collect();
    assert!(failed.is_empty(), "{failed:?}");
    drop(final_daemon);
}

/// A sender is anyone's text: `panectl inbox` must not pass its escape sequences to the
/// terminal (here: set the title, clear the screen), but show them escaped.
#[test]
fn the_inbox_list_shows_a_hostile_sender_escaped() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let sender = "x\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}";
    let id = setup
        .server
        .panectl_ok(&["send", "%0", "--from", sender, "hello"]);
    let id: i64 = id.trim().parse().expect("message id");
    assert_eq!(setup.message(id)["sender"], sender, "kept as sent");
    let listed = setup.server.panectl_ok(&["inbox", "--pane", "%0"]);
    assert!(
        !listed.chars().any(|c| c.is_control() && c != '\n'),
        "control characters reached the terminal: {listed:?}"
    );
    assert!(listed.contains(r"x\x1b]0;pwned\x07\x1b[2J\x9b"), "{listed}");
}
