//! `panectl profiles` (list, show, check, import of a CAO profile): read on the client, no
//! daemon needed.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

/// `panectl ARGS` with `config` as `XDG_CONFIG_HOME`.
fn panectl(config: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_panectl"))
        .args(args)
        .env("XDG_CONFIG_HOME", config)
        .env_remove("TMUX")
        .output()
        .expect("run panectl")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A CAO agent profile in its documented shape: YAML front matter (`name`, `description`,
/// `provider`, `mcpServers`) and the system prompt as the body.
pub const CAO_PROFILE: &str = "---\nname: developer\ndescription: Developer Agent in a \
     multi-agent system\nprovider: claude_code\nmcpServers:\n  cao-mcp-server:\n    type: stdio\n    \
     command: uvx\n    args:\n      - \"--from\"\n      - \"git+https://github.com/awslabs/cli-agent-orchestrator.git@main\"\n      \
     - \"cao-mcp-server\"\n---\n\n# DEVELOPER AGENT\n\nYou are the developer. Write code that \
     passes its tests.\n";

#[test]
fn profiles_are_listed_shown_and_checked_with_file_line_column() {
    let config = tempfile::tempdir().unwrap();
    let listed = panectl(config.path(), &["profiles"]);
    assert!(listed.status.success(), "{listed:?}");
    let out = text(&listed.stdout);
    assert!(
        out.lines().any(|l| l.starts_with("reviewer ")
            && l.contains("builtin")
            && l.contains("claude_code"))
    );

    let dir = config.path().join("panectl/profiles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mine.toml"),
        "description = \"my shell\"\nprovider = \"codex\"\n[env]\nSECRET_ONE = \"hunter2\"\n",
    )
    .unwrap();
    let listed = text(&panectl(config.path(), &["profiles"]).stdout);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("mine ") && l.contains("user") && l.contains("my shell")),
        "{listed}"
    );
    // A literal value is never shown.
    let shown = panectl(config.path(), &["profiles", "show", "mine"]);
    assert!(shown.status.success());
    let shown = text(&shown.stdout);
    assert!(shown.contains("SECRET_ONE=<set>"), "{shown}");
    assert!(!shown.contains("hunter2"), "{shown}");
    let checked = panectl(config.path(), &["profiles", "check"]);
    assert!(checked.status.success(), "{checked:?}");

    // Errors name the file, the line and the column; the exit code is 2.
    std::fs::write(
        dir.join("bad.toml"),
        "provider = \"codex\"\nmodle = \"x\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("who.toml"), "\nprovider = \"nosuch\"\n").unwrap();
    let checked = panectl(config.path(), &["profiles", "check"]);
    assert_eq!(checked.status.code(), Some(2), "{checked:?}");
    let errors = text(&checked.stderr);
    let bad = dir.join("bad.toml");
    let who = dir.join("who.toml");
    assert!(
        errors.contains(&format!("{}:2:1: unknown field `modle`", bad.display())),
        "{errors}"
    );
    assert!(
        errors.contains(&format!(
            "{}:2:12: unknown provider \"nosuch\"",
            who.display()
        )),
        "{errors}"
    );
    // One profile alone.
    let one = panectl(config.path(), &["profiles", "check", "mine"]);
    assert!(one.status.success(), "{one:?}");
    let missing = panectl(config.path(), &["profiles", "show", "nosuch"]);
    assert!(!missing.status.success());
    assert!(text(&missing.stderr).contains("no profile \"nosuch\""));
}

#[test]
fn a_cao_profile_is_imported_privately_and_says_what_it_dropped() {
    let config = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("developer.md");
    std::fs::write(&file, CAO_PROFILE).unwrap();
    let imported = panectl(
        config.path(),
        &["profiles", "import", file.to_str().unwrap()],
    );
    assert!(imported.status.success(), "{imported:?}");
    let path = config.path().join("panectl/profiles/developer.toml");
    assert_eq!(text(&imported.stdout).trim(), path.display().to_string());
    assert!(
        text(&imported.stderr).contains("not carried over: mcpServers"),
        "{imported:?}"
    );
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    let shown = text(&panectl(config.path(), &["profiles", "show", "developer", "--json"]).stdout);
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(shown["provider"], "claude_code");
    assert_eq!(shown["source"], "user");
    assert_eq!(
        shown["description"],
        "Developer Agent in a multi-agent system"
    );
    assert!(
        shown["system_prompt"]
            .as_str()
            .unwrap()
            .contains("You are the developer.")
    );
    // Not replaced without --force; another name is another file.
    let again = panectl(
        config.path(),
        &["profiles", "import", file.to_str().unwrap()],
    );
    assert_eq!(again.status.code(), Some(2), "{again:?}");
    assert!(text(&again.stderr).contains("--force"));
    let forced = panectl(
        config.path(),
        &["profiles", "import", file.to_str().unwrap(), "--force"],
    );
    assert!(forced.status.success(), "{forced:?}");
    let named = panectl(
        config.path(),
        &[
            "profiles",
            "import",
            file.to_str().unwrap(),
            "--name",
            "dev2",
        ],
    );
    assert!(named.status.success(), "{named:?}");
    assert!(config.path().join("panectl/profiles/dev2.toml").exists());
}
