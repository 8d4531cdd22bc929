//! `panectl launch --profile` and `--worktree` against real tmux, real git and the fake agent.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::inbox::Setup;
use crate::support::daemon_test_lock;

pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git");
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A repository with one commit on `main`, in a directory of its own inside `parent`.
pub(crate) fn repo(parent: &Path) -> std::path::PathBuf {
    let repo = std::fs::canonicalize(parent).unwrap().join("proj");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README"), "hello\n").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    repo
}

#[test]
fn a_profile_launch_merges_flags_takes_env_privately_and_queues_its_first_message() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let profiles = server.dir().join("config/panectl/profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    std::fs::write(
        profiles.join("tester.toml"),
        "description = \"the fake agent\"\nprovider = \"fake_agent\"\nargs = [\"p1\", \"p2\"]\n\
         name = \"from-profile\"\nfrom_env = [\"LAUNCH_VAR\"]\nfirst_message = \"start here\"\n",
    )
    .unwrap();
    let launched = server
        .panectl()
        .args([
            "launch",
            "--profile",
            "tester",
            "--name",
            "prof-1",
            "--json",
            "--",
            "c1",
        ])
        .env("LAUNCH_VAR", "s3cret-value")
        .output()
        .unwrap();
    assert!(launched.status.success(), "{launched:?}");
    let launched: serde_json::Value = serde_json::from_slice(&launched.stdout).unwrap();
    let pane = launched["pane"].as_str().unwrap().to_string();
    assert_eq!(launched["name"], "prof-1");
    assert_eq!(launched["provider"], "fake_agent");
    let screen = server.daemon_screen(&pane);
    // The profile's arguments before the caller's; the variable from the caller's environment.
    assert!(
        screen.contains("var=s3cret-value args=p1 p2 c1"),
        "{screen}"
    );
    // It is not in the pane's command line, nor in the daemon's log.
    let start = server.tmux(&[
        "display-message",
        "-p",
        "-t",
        &pane,
        "#{pane_start_command}",
    ]);
    assert!(start.contains("p1"), "{start}");
    assert!(!start.contains("s3cret"), "{start}");
    assert!(!server.daemon_logs().contains("s3cret"));
    // The first message is delivered once it is ready.
    server.wait_for("the first message", Duration::from_secs(10), || {
        setup.bodies().contains(&b"start here".to_vec())
    });
    assert_eq!(launched["queued_messages"].as_array().unwrap().len(), 1);

    // A variable the profile takes from the environment must be set; a model for a provider
    // without a model flag is refused; neither opens a window.
    let windows = || server.tmux(&["list-windows", "-a"]).lines().count();
    let before = windows();
    let unset = server
        .panectl()
        .args(["launch", "--profile", "tester", "--name", "x1"])
        .env_remove("LAUNCH_VAR")
        .output()
        .unwrap();
    assert!(!unset.status.success());
    assert!(
        String::from_utf8_lossy(&unset.stderr).contains("LAUNCH_VAR"),
        "{unset:?}"
    );
    std::fs::write(
        profiles.join("modelled.toml"),
        "provider = \"fake_agent\"\nmodel = \"big\"\n",
    )
    .unwrap();
    let refused = server
        .panectl()
        .args(["launch", "--profile", "modelled"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("model_flag"));
    assert_eq!(windows(), before);
}

#[test]
fn a_worktree_launch_starts_in_a_new_branch_and_a_non_repository_is_refused() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let work = tempfile::tempdir().unwrap();
    let repo = repo(work.path());
    let pane = server.panectl_ok(&[
        "launch",
        "fake_agent",
        "--name",
        "wt-1",
        "--worktree",
        "--cwd",
        repo.to_str().unwrap(),
    ]);
    let pane = pane.trim();
    let path = repo.parent().unwrap().join("proj.worktrees/wt-1");
    assert!(path.join("README").exists());
    assert_eq!(
        git(
            &repo,
            &[
                "branch",
                "--list",
                "--format=%(refname:short)",
                "panectl/wt-1"
            ]
        ),
        "panectl/wt-1"
    );
    assert_eq!(
        git(&path, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "panectl/wt-1"
    );
    let screen = server.daemon_screen(pane);
    assert!(
        screen.contains(&format!("cwd={}", path.display())),
        "{screen}"
    );
    let cwd = server.tmux(&["display-message", "-p", "-t", pane, "#{pane_current_path}"]);
    assert_eq!(cwd.trim(), path.display().to_string());

    // The same name again: refused, nothing opened.
    let windows = || server.tmux(&["list-windows", "-a"]).lines().count();
    let before = windows();
    let again = server
        .panectl()
        .args([
            "launch",
            "fake_agent",
            "--worktree=wt-1",
            "--cwd",
            repo.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "{again:?}");
    // A directory that is no repository: a clear error, no window.
    let plain = tempfile::tempdir().unwrap();
    let refused = server
        .panectl()
        .args(["launch", "fake_agent", "--worktree=w2", "--cwd"])
        .arg(plain.path())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("is not in a git repository"),
        "{refused:?}"
    );
    assert_eq!(windows(), before);
}

/// `handoff --launch-profile NAME`: the worker starts as the profile says (its arguments and
/// its name), takes the task and answers; `--launch-profile` with a pane is refused.
#[test]
fn handoff_launches_its_worker_from_a_profile() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;
    let profiles = server.dir().join("config/panectl/profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    std::fs::write(
        profiles.join("reviewer.toml"),
        "provider = \"fake_agent\"\nargs = [\"rv\"]\nname = \"reviewer-1\"\n",
    )
    .unwrap();
    let answer = server.panectl_ok(&[
        "handoff",
        "--launch-profile",
        "reviewer",
        "--json",
        "review this",
    ]);
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        answer["answer"].as_str().unwrap().trim(),
        "siht weiver",
        "{answer:#}"
    );
    let pane = answer["pane"].as_str().unwrap();
    let worker = server
        .panes()
        .into_iter()
        .find(|p| p["pane"] == pane)
        .expect("the worker's pane");
    assert_eq!(worker["name"], "reviewer-1", "{worker:#}");
    assert_eq!(worker["provider"], "fake_agent", "{worker:#}");
    assert!(server.daemon_screen(pane).contains("args=rv"));
    // A pane and a profile: which worker is meant? Refused before anything starts.
    let both = server
        .panectl()
        .args(["handoff", "--launch-profile", "reviewer", "%0", "hi"])
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2), "{both:?}");
    assert!(
        String::from_utf8_lossy(&both.stderr).contains("give only the message"),
        "{both:?}"
    );
}
