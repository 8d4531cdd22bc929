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
