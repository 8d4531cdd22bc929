//! `panectl completions SHELL` and `panectl man`: what a user installs into their shell and
//! `man`, checked with the real bash completion machinery and the pages written.

use std::process::Command;

fn panectl() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_panectl"));
    command.env_remove("TMUX");
    command
}

fn stdout_of(args: &[&str]) -> String {
    let output = panectl().args(args).output().expect("run panectl");
    assert!(output.status.success(), "{args:?}: {output:?}");
    String::from_utf8(output.stdout).expect("UTF-8")
}

/// What bash offers after `words` (the last one being completed), with the script loaded as
/// a user's shell loads it: the script's function asks the binary, as at a TAB.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let line = words.join(" ");
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={}\nCOMP_LINE='{line}'\nCOMP_POINT=${{#COMP_LINE}}\n\
         _clap_complete_panectl panectl '{}' '{}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        words.len() - 1,
        words.last().unwrap_or(&""),
        words.get(words.len().saturating_sub(2)).unwrap_or(&""),
    );
    let output = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .env_remove("TMUX")
        .output()
        .expect("run bash");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_commands_their_flags_and_values() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let script = dir.path().join("panectl.bash");
    std::fs::write(&script, stdout_of(&["completions", "bash"])).expect("write the script");
    let commands = bash_completes(&script, &["panectl", "l"]);
    for expected in ["ls", "launch", "last"] {
        assert!(commands.iter().any(|c| c == expected), "{commands:?}");
    }
    assert!(!commands.iter().any(|c| c == "send"), "{commands:?}");
    let flags = bash_completes(&script, &["panectl", "send", "--"]);
    for expected in ["--ttl", "--allow-shell", "--ssh"] {
        assert!(flags.iter().any(|c| c == expected), "{flags:?}");
    }
    let shells = bash_completes(&script, &["panectl", "completions", ""]);
    assert!(shells.iter().any(|c| c == "fish"), "{shells:?}");
    // Values: statuses, providers, profiles (panes need a daemon: see `completion_keys`).
    let statuses = bash_completes(&script, &["panectl", "wait", "%1", "--until", "wa"]);
    assert_eq!(statuses, ["waiting_user_answer"], "{statuses:?}");
    let providers = bash_completes(&script, &["panectl", "launch", "cl"]);
    assert_eq!(providers, ["claude_code"], "{providers:?}");
    let profiles = bash_completes(&script, &["panectl", "launch", "--profile", ""]);
    for expected in ["explorer", "implementer", "reviewer"] {
        assert!(profiles.iter().any(|c| c == expected), "{profiles:?}");
    }
}

#[test]
fn zsh_and_fish_scripts_ask_the_binary_which_answers_their_protocol() {
    for shell in ["zsh", "fish"] {
        let script = stdout_of(&["completions", shell]);
        // The script runs this binary (by path) with COMPLETE=SHELL at each TAB.
        assert!(
            script.contains(env!("CARGO_BIN_EXE_panectl")),
            "{shell}: {script}"
        );
        assert!(script.contains(shell), "{shell}: {script}");
        // As the scripts call it: the words so far, the index of the one completed.
        let output = panectl()
            .env("COMPLETE", shell)
            .env("_CLAP_COMPLETE_INDEX", "1")
            .args(["--", "panectl", "l"])
            .output()
            .expect("run panectl");
        assert!(output.status.success(), "{output:?}");
        let offered = String::from_utf8_lossy(&output.stdout);
        for command in ["ls", "launch", "last"] {
            assert!(offered.contains(command), "{shell}: {command} in {offered}");
        }
    }
    // A package's script names the program on PATH instead.
    let packaged = stdout_of(&["completions", "bash", "--command", "panectl"]);
    assert!(
        !packaged.contains(env!("CARGO_BIN_EXE_panectl")),
        "{packaged}"
    );
    let refused = panectl()
        .args(["completions", "tcsh"])
        .output()
        .expect("run panectl");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("bash"));
}

#[test]
fn man_writes_a_page_per_command() {
    let page = stdout_of(&["man"]);
    assert!(page.starts_with(".ie"), "{page}");
    assert!(page.contains(".TH panectl 1"), "{page}");
    // The synopsis names what -L and -S take (clap_mangen alone writes `[-L ]`).
    assert!(page.contains(r"[\fB\-L\fR \fINAME\fR]"), "{page}");
    assert!(!page.contains(r"\-L \fR]"), "{page}");
    let dir = tempfile::tempdir().expect("temporary directory");
    let target = dir.path().to_str().expect("UTF-8 path");
    stdout_of(&["man", "--dir", target]);
    for name in ["panectl.1", "panectl-send.1", "panectl-daemon-stop.1"] {
        let text = std::fs::read_to_string(dir.path().join(name)).expect(name);
        assert!(text.contains(".SH SYNOPSIS"), "{name}: {text}");
        assert!(text.contains(r"[\fB\-S\fR \fIPATH\fR]"), "{name}: {text}");
    }
    // Hidden commands have no page.
    assert!(!dir.path().join("panectl-window-glyphs.1").exists());
    // A directory that cannot be written: a clear error, no panic.
    let output = panectl()
        .args(["man", "--dir", "/proc/no-such-dir"])
        .output()
        .expect("run panectl");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("cannot write the manual pages"),
        "{output:?}"
    );
}

#[test]
fn help_sets_the_server_options_apart_and_shows_examples() {
    for args in [&["--help"][..], &["send", "--help"]] {
        let help = stdout_of(args);
        let heading = help
            .find("Which server (every command):")
            .unwrap_or_else(|| panic!("{args:?}: {help}"));
        // -L, -S and the ssh options are under that heading, not among the command's own.
        for flag in ["-L <NAME>", "-S <PATH>", "--ssh <DEST>", "--ssh-keepalive"] {
            let at = help.find(flag).unwrap_or_else(|| panic!("{flag}: {help}"));
            assert!(at > heading, "{args:?}: {flag} before the heading\n{help}");
        }
    }
    let top = stdout_of(&["--help"]);
    assert!(top.contains("Examples:"), "{top}");
    assert!(top.contains("Exit codes"), "{top}");
    assert!(top.contains("Durations: 500ms"), "{top}");
}
