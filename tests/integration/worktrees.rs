//! `panectl worktrees` and `worktrees remove` against real git and the fake agent: a worktree a
//! launch made is listed with its agent and what git says of it (dirty, ahead of its base, a
//! directory deleted by hand), and removing one is refused while its agent runs or while git
//! would lose work, unless forced; the branch always stays.

use std::time::Duration;

use serde_json::Value;

use crate::inbox::Setup;
use crate::launch_profiles::{git, repo};
use crate::support::daemon_test_lock;

/// `panectl worktrees --json`, the one named `name`.
fn listed(setup: &Setup, name: &str) -> Value {
    let all: Value =
        serde_json::from_str(&setup.server.panectl_ok(&["worktrees", "--json"])).unwrap();
    all.as_array()
        .into_iter()
        .flatten()
        .find(|w| w["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no worktree {name} in {all:#}"))
}

#[test]
fn worktrees_are_listed_with_their_agent_and_git_state_and_removed_only_when_safe() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let work = tempfile::tempdir().unwrap();
    let repo = repo(work.path());
    let launch = |name: &str| {
        server
            .panectl_ok(&[
                "launch",
                "fake_agent",
                "--name",
                name,
                "--worktree",
                "--cwd",
                repo.to_str().unwrap(),
            ])
            .trim()
            .to_string()
    };
    let pane = launch("wt-a");
    let path = repo.parent().unwrap().join("proj.worktrees/wt-a");

    // Listed with its branch, base, agent and a clean state.
    let first = listed(&setup, "wt-a");
    assert_eq!(first["branch"], "panectl/wt-a", "{first:#}");
    assert_eq!(first["pane"], pane.as_str(), "{first:#}");
    assert_eq!(first["path"], path.to_str().unwrap(), "{first:#}");
    assert_eq!(first["missing"], false, "{first:#}");
    assert_eq!(first["dirty"], false, "{first:#}");
    assert_eq!(first["ahead"], 0, "{first:#}");
    assert_eq!(first["behind"], 0, "{first:#}");
    assert!(first["agent_status"].is_string(), "{first:#}");

    // A commit on its branch and a file not committed: ahead 1, dirty.
    std::fs::write(path.join("fix.txt"), "fixed\n").unwrap();
    git(&path, &["add", "fix.txt"]);
    git(&path, &["commit", "-q", "-m", "a fix"]);
    std::fs::write(path.join("notes.txt"), "not committed\n").unwrap();
    let changed = listed(&setup, "wt-a");
    assert_eq!(changed["ahead"], 1, "{changed:#}");
    assert_eq!(changed["dirty"], true, "{changed:#}");
    let table = server.panectl_ok(&["worktrees"]);
    let row = table
        .lines()
        .find(|l| l.starts_with("wt-a "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        row.contains("panectl/wt-a") && row.contains(&pane) && row.contains("dirty"),
        "{table}"
    );

    // Its agent runs: refused, whatever --force says.
    let refused = server
        .panectl()
        .args(["worktrees", "remove", "wt-a", "--force"])
        .output()
        .unwrap();
    assert!(!refused.status.success(), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("close it first"),
        "{refused:?}"
    );
    assert!(path.exists());

    // The agent gone: refused without --force while git would lose work.
    server.tmux(&["kill-pane", "-t", &pane]);
    server.wait_for("the agent's pane to go", Duration::from_secs(10), || {
        listed(&setup, "wt-a")["agent_status"].is_null()
    });
    assert!(
        server
            .panectl_ok(&["worktrees"])
            .contains(&format!("{pane} closed")),
        "the table says the agent closed"
    );
    let dirty = server
        .panectl()
        .args(["worktrees", "remove", "wt-a"])
        .output()
        .unwrap();
    assert!(!dirty.status.success(), "{dirty:?}");
    assert!(
        String::from_utf8_lossy(&dirty.stderr).contains("uncommitted changes"),
        "{dirty:?}"
    );
    std::fs::remove_file(path.join("notes.txt")).unwrap();
    let unsaved = server
        .panectl()
        .args(["worktrees", "remove", "wt-a"])
        .output()
        .unwrap();
    assert!(!unsaved.status.success(), "{unsaved:?}");
    assert!(
        String::from_utf8_lossy(&unsaved.stderr).contains("on no remote"),
        "{unsaved:?}"
    );
    assert!(path.exists());

    // --force: the directory goes, the branch stays with its commit.
    let removed = server.panectl_ok(&["worktrees", "remove", "wt-a", "--force"]);
    assert!(removed.contains("branch panectl/wt-a kept"), "{removed}");
    assert!(!path.exists());
    assert_eq!(
        git(&repo, &["log", "-1", "--format=%s", "panectl/wt-a"]),
        "a fix"
    );
    let all: Value = serde_json::from_str(&server.panectl_ok(&["worktrees", "--json"])).unwrap();
    assert!(
        all.as_array().unwrap().iter().all(|w| w["name"] != "wt-a"),
        "{all:#}"
    );

    // A worktree whose directory was deleted by hand: listed as missing, removed by pruning.
    let pane = launch("wt-b");
    server.tmux(&["kill-pane", "-t", &pane]);
    let gone = repo.parent().unwrap().join("proj.worktrees/wt-b");
    std::fs::remove_dir_all(&gone).unwrap();
    assert_eq!(listed(&setup, "wt-b")["missing"], true);
    server.panectl_ok(&["worktrees", "remove", "wt-b"]);
    assert!(
        !git(&repo, &["worktree", "list"]).contains("wt-b"),
        "pruned"
    );
    // A name never recorded: a clear error.
    let unknown = server
        .panectl()
        .args(["worktrees", "remove", "nope"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no worktree named \"nope\""),
        "{unknown:?}"
    );
}

#[test]
fn close_remove_worktree_refuses_unsaved_work_before_closing_and_keeps_the_branch() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let work = tempfile::tempdir().unwrap();
    let repo = repo(work.path());
    let pane = server
        .panectl_ok(&[
            "launch",
            "fake_agent",
            "--name",
            "wt-c",
            "--worktree",
            "--cwd",
            repo.to_str().unwrap(),
        ])
        .trim()
        .to_string();
    let path = repo.parent().unwrap().join("proj.worktrees/wt-c");
    let alive = || server.panes().iter().any(|p| p["pane"] == pane.as_str());

    // Uncommitted work: refused, and the agent still runs.
    std::fs::write(path.join("draft.txt"), "draft\n").unwrap();
    let refused = server
        .panectl()
        .args(["close", "wt-c", "--remove-worktree"])
        .output()
        .unwrap();
    assert!(!refused.status.success(), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("uncommitted changes"),
        "{refused:?}"
    );
    assert!(alive(), "a refused close closed the agent");
    // --force alone is a usage error.
    let usage = server
        .panectl()
        .args(["close", "wt-c", "--force"])
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2), "{usage:?}");
    assert!(alive());

    // Committed but on no remote: still refused; --force removes it, the branch stays.
    git(&path, &["add", "draft.txt"]);
    git(&path, &["commit", "-q", "-m", "the draft"]);
    let unsaved = server
        .panectl()
        .args(["close", "wt-c", "--remove-worktree"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&unsaved.stderr).contains("on no remote"),
        "{unsaved:?}"
    );
    assert!(alive());
    let closed: Value = serde_json::from_str(&server.panectl_ok(&[
        "close",
        "wt-c",
        "--remove-worktree",
        "--force",
        "--json",
    ]))
    .unwrap();
    assert_eq!(closed["removed_worktree"], "wt-c", "{closed:#}");
    assert!(closed.get("worktree_error").is_none(), "{closed:#}");
    assert!(!alive());
    assert!(!path.exists());
    assert_eq!(
        git(&repo, &["log", "-1", "--format=%s", "panectl/wt-c"]),
        "the draft"
    );

    // A clean worktree goes without --force; an agent launched in none is refused.
    let clean = server
        .panectl_ok(&[
            "launch",
            "fake_agent",
            "--name",
            "wt-d",
            "--worktree",
            "--cwd",
            repo.to_str().unwrap(),
        ])
        .trim()
        .to_string();
    let said = server.panectl_ok(&["close", &clean, "--remove-worktree"]);
    assert!(
        said.contains("removed worktree wt-d (its branch stays)"),
        "{said}"
    );
    assert!(!repo.parent().unwrap().join("proj.worktrees/wt-d").exists());
    let plain = server
        .panectl()
        .args(["close", "%0", "--remove-worktree"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&plain.stderr).contains("no worktree is recorded"),
        "{plain:?}"
    );
}
