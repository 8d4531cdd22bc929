//! The MCP tools of durable agents, called as an MCP client calls them: `launch_agent` from a
//! profile that asks for a worktree, `list_worktrees`, `restore_agents` (a dry run, then after
//! tmux died), and `close_agent` removing the worktree; real tmux, real git, the fake agent.

use std::time::Duration;

use serde_json::{Value, json};

use crate::inbox::Setup;
use crate::launch_profiles::{git, repo};
use crate::mcp::{call_ok, connect};
use crate::support::daemon_test_lock;

#[test]
fn mcp_launches_from_a_profile_in_a_worktree_lists_restores_and_closes_it() {
    let _guard = daemon_test_lock();
    let mut setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(15));
    let work = tempfile::tempdir().unwrap();
    let repo = repo(work.path());
    let profiles = setup.server.dir().join("config/panectl/profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    std::fs::write(
        profiles.join("builder.toml"),
        format!(
            "provider = \"fake_agent\"\nname = \"mcp-builder\"\ncwd = \"{}\"\nworktree = true\n",
            repo.display()
        ),
    )
    .unwrap();
    let (runtime, client) = connect(&setup.server, "%1");
    let _context = runtime.enter();

    let launched: Value = serde_json::from_str(&call_ok(
        &runtime,
        &client,
        "launch_agent",
        json!({"profile": "builder", "timeout_seconds": 30}),
    ))
    .expect("JSON");
    assert_eq!(launched["name"], "mcp-builder", "{launched:#}");
    assert_eq!(launched["worktree"]["branch"], "panectl/mcp-builder");
    let path = launched["worktree"]["path"].as_str().unwrap().to_string();
    assert!(
        setup
            .server
            .daemon_screen(launched["pane"].as_str().unwrap())
            .contains("fake>")
    );
    assert_eq!(
        git(std::path::Path::new(&path), &["branch", "--show-current"]),
        "panectl/mcp-builder"
    );

    let worktrees: Value =
        serde_json::from_str(&call_ok(&runtime, &client, "list_worktrees", json!({}))).unwrap();
    let listed = worktrees
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "mcp-builder")
        .unwrap_or_else(|| panic!("{worktrees:#}"));
    assert_eq!(listed["dirty"], false, "{listed:#}");
    assert_eq!(listed["pane"], launched["pane"], "{listed:#}");

    let planned: Value = serde_json::from_str(&call_ok(
        &runtime,
        &client,
        "restore_agents",
        json!({"dry_run": true}),
    ))
    .unwrap();
    let builder = |done: &Value| -> Value {
        done.as_array()
            .unwrap()
            .iter()
            .find(|r| r["key"] == "mcp-builder")
            .cloned()
            .unwrap_or_else(|| panic!("{done:#}"))
    };
    assert_eq!(builder(&planned)["outcome"], "running");

    // tmux dies; restore_agents brings the agent back in its worktree.
    drop(client);
    setup.server.tmux(&["kill-server"]);
    setup.server.wait_for(
        "the daemon to see the server gone",
        Duration::from_secs(5),
        || setup.server.health()["server_alive"] == false,
    );
    setup.server.wait_for_exit(Duration::from_secs(10));
    setup.server.start_again("fresh", 100, 30);
    setup.server.wait_for_panes(1);
    let (runtime, client) = connect(&setup.server, "%0");
    let _context = runtime.enter();
    let done: Value =
        serde_json::from_str(&call_ok(&runtime, &client, "restore_agents", json!({}))).unwrap();
    let back = builder(&done);
    assert_eq!(back["outcome"], "started_fresh", "{done:#}");
    let pane = back["pane"].as_str().unwrap().to_string();
    setup
        .server
        .wait_for("the agent's cwd", Duration::from_secs(10), || {
            setup
                .server
                .tmux(&["display-message", "-p", "-t", &pane, "#{pane_current_path}"])
                .trim()
                == path
        });

    // close_agent with remove_worktree: the agent and its worktree go, the branch stays.
    let closed: Value = serde_json::from_str(&call_ok(
        &runtime,
        &client,
        "close_agent",
        json!({"pane": "mcp-builder", "remove_worktree": true, "timeout_seconds": 5}),
    ))
    .unwrap();
    assert_eq!(closed["removed_worktree"], "mcp-builder", "{closed:#}");
    assert!(!std::path::Path::new(&path).exists());
    assert_eq!(
        git(&repo, &["branch", "--list", "panectl/mcp-builder"]).trim_start_matches(['*', ' ']),
        "panectl/mcp-builder"
    );
}
