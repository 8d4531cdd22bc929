//! `panectl replay` as a user runs it.

use assert_cmd::Command;

use crate::transcripts::fixture_dir;

fn panectl() -> Command {
    Command::cargo_bin("panectl").expect("the panectl binary")
}

#[test]
fn replay_prints_each_pane_screen() {
    let output = panectl()
        .args(["replay", "--size", "100x30"])
        .arg(fixture_dir("shell-utf8").join("control.bin"))
        .output()
        .expect("run panectl");
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).expect("utf-8");
    assert!(text.starts_with("--- %0 100x30 ---\n"), "{text}");
    assert!(
        text.contains("héllo wörld — 日本語テキスト 😀 naïve café"),
        "{text}"
    );
    assert!(text.contains("split: 日 end"), "{text}");
}

#[test]
fn replay_json_reports_panes_and_counts() {
    let output = panectl()
        .args(["replay", "--json"])
        .arg(fixture_dir("vim-alternate-screen").join("control.bin"))
        .output()
        .expect("run panectl");
    assert!(output.status.success());
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    let pane = &report["panes"][0];
    assert_eq!(pane["pane"], "%0");
    assert_eq!(pane["alternate_screen"], true);
    assert!(pane["screen"].as_str().unwrap().contains("line 2"));
    assert!(report["notifications"]["output"].as_u64().unwrap() > 10);
    assert_eq!(report["parse_errors"], 0);
}

#[test]
fn replay_of_one_pane_prints_its_screen_alone() {
    let dir = fixture_dir("windows-and-panes");
    let capture = std::fs::read_to_string(dir.join("captures/3.txt")).expect("capture");
    let output = panectl()
        .args(["replay", "--pane", "%3"])
        .arg(dir.join("control.bin"))
        .output()
        .expect("run panectl");
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).expect("utf-8");
    assert_eq!(text, panectl::screen::normalize_capture(&capture) + "\n");

    panectl()
        .args(["replay", "--pane", "%99"])
        .arg(dir.join("control.bin"))
        .assert()
        .failure()
        .stderr(predicates::str::contains("pane %99 is not in"));
}

#[test]
fn input_that_is_not_control_mode_exits_2_with_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases: [(&str, &[u8]); 4] = [
        ("text", b"just some text\nmore\n"),
        ("empty", b""),
        ("binary", b"\x7fELF\x02\x01\x01\x00\x00\x00"),
        ("percent", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"),
    ];
    for (name, content) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, content).expect("write input");
        let output = panectl()
            .arg("replay")
            .arg(&path)
            .output()
            .expect("run panectl");
        assert_eq!(output.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8(output.stderr).expect("utf-8");
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr}");
        assert!(
            stderr.contains("is not a tmux control-mode transcript"),
            "{name}: {stderr}"
        );
    }
}

#[test]
fn bad_arguments_are_explained() {
    panectl()
        .args(["replay", "--size", "80by24", "x"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("is not WIDTHxHEIGHT"));
    panectl()
        .args(["replay", "--pane", "3", "x"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("invalid pane id"));
}

/// A divergence record as someone hostile would attach it to a bug report: every text field
/// holds sequences that set the clipboard (OSC 52), the title, clear the screen, and a C1 CSI.
fn hostile_record() -> serde_json::Value {
    let screen =
        |row: &str| serde_json::json!({"rows": [row, ""], "cursor": [0, 0], "alternate": false});
    serde_json::json!({
        "panectl": "0.1.0",
        "tmux": "3.3a\u{1b}]0;title\u{7}",
        "pane": "%1\u{1b}]52;c;cHduZWQ=\u{7}",
        "difference": "row 0: \u{1b}[2J\u{1b}[H\u{9b}31mcleared\nsecond line\r",
        "explained": "\u{1b}]52;c;cHduZWQ=\u{1b}\\ and \u{90}q\u{9c}\u{7f}",
        "scrollback": 10,
        "start": "seed",
        "snapshot": {"width": 20, "height": 2, "primary": ["", ""], "cursor": [0, 0]},
        "steps": [{"output": "\\x1b]0;title\\x07hello"}],
        "tmux_screen": screen("\\x1b]8;;x\\x1b\\\\other\u{1b}[2J\u{9b}"),
        "mirror_screen": screen("hello"),
    })
}

/// Whether text could reach a terminal as a control: any C0 but a newline, DEL or C1.
fn controls_in(text: &[u8]) -> Vec<char> {
    String::from_utf8_lossy(text)
        .chars()
        .filter(|c| *c != '\n' && c.is_control())
        .collect()
}

#[test]
fn a_hostile_divergence_record_prints_no_control_character() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("record.json");
    let record = hostile_record();
    std::fs::write(&path, serde_json::to_vec_pretty(&record).unwrap()).expect("write record");
    let output = panectl()
        .args(["replay", "--divergence"])
        .arg(&path)
        .output()
        .expect("run panectl");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = String::from_utf8(output.stdout.clone()).expect("utf-8");
    assert_eq!(controls_in(&output.stdout), [], "{text}");
    assert_eq!(controls_in(&output.stderr), [], "{output:?}");
    // Shown, escaped, not dropped.
    assert!(
        text.contains("pane %1\\x1b]52;c;cHduZWQ=\\x07 (tmux 3.3a\\x1b]0;title\\x07)"),
        "{text}"
    );
    assert!(
        text.contains("\\x9b31mcleared\\x0asecond line\\x0d"),
        "{text}"
    );
    assert!(
        text.contains("explained: \\x1b]52;c;cHduZWQ=\\x1b\\ and \\x90q\\x9c\\x7f"),
        "{text}"
    );
    assert!(text.contains("replay gives tmux's screen: no"), "{text}");

    // A record refused for a field it cannot read quotes that field escaped too.
    let mut bad = record;
    bad["start"] = serde_json::json!("\u{1b}]0;title\u{7}\u{9b}2J");
    std::fs::write(&path, serde_json::to_vec(&bad).unwrap()).expect("write record");
    let output = panectl()
        .args(["replay", "--divergence"])
        .arg(&path)
        .output()
        .expect("run panectl");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is not a divergence record"), "{stderr}");
    assert_eq!(controls_in(&output.stderr), [], "{stderr}");
}

#[test]
fn a_truncated_divergence_record_says_it_cannot_be_replayed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("record.json");
    let mut record = hostile_record();
    record["truncated"] = serde_json::json!(true);
    record["steps"] = serde_json::json!([]);
    std::fs::write(&path, serde_json::to_vec(&record).unwrap()).expect("write record");
    let output = panectl()
        .args(["replay", "--divergence"])
        .arg(&path)
        .output()
        .expect("run panectl");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let text = String::from_utf8(output.stdout).expect("utf-8");
    assert!(text.contains("cannot be replayed from its start"), "{text}");
    assert!(!text.contains("replay gives"), "{text}");
    let output = panectl()
        .args(["replay", "--divergence", "--json"])
        .arg(&path)
        .output()
        .expect("run panectl");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(report["truncated"], true, "{report:#}");
    assert_eq!(report["equals_tmux"], serde_json::Value::Null, "{report:#}");
    assert_eq!(
        report["reproduces_mirror"],
        serde_json::Value::Null,
        "{report:#}"
    );
}

#[test]
fn replay_with_a_provider_reads_statuses_through_the_whole_stream() {
    let rule = "─".repeat(40);
    let frame = |rows: &[&str]| {
        let mut line = String::from("%output %0 \\033[H\\033[2J");
        line.push_str(&rows.join("\\015\\012"));
        line.push('\n');
        line
    };
    let stream = format!(
        "%session-changed $0 main\n{}{}",
        frame(&[
            "❯ go",
            "",
            "✢ Spelunking… (3s)",
            "",
            &rule,
            "❯ ",
            &rule,
            "  esc to interrupt"
        ]),
        frame(&["  End.", "", &rule, "❯ ", &rule, "  ? for shortcuts"]),
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("control.bin");
    std::fs::write(&file, stream).unwrap();
    let output = panectl()
        .args(["replay", "--json", "--provider", "claude_code"])
        .arg(&file)
        .output()
        .expect("run panectl");
    assert!(output.status.success(), "{output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    let pane = &report["panes"][0];
    assert_eq!(pane["status"], "completed", "{report}");
    assert_eq!(pane["seen"], serde_json::json!(["processing", "completed"]));
    let unknown = panectl()
        .args(["replay", "--provider", "no_such_cli"])
        .arg(&file)
        .output()
        .expect("run panectl");
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no_such_cli"),
        "{unknown:?}"
    );
}
