//! Completion as a person meets it: an interactive bash in a tmux pane with the script of
//! `panectl completions bash` sourced, TAB pressed after `panectl wait `: the panes and the
//! agent names of the daemon that follows that tmux server are offered (the shell's `$TMUX`
//! says which server; nothing in its environment names the daemon).

use std::time::Duration;

use crate::inbox::Setup;
use crate::support::daemon_test_lock;

#[test]
fn tab_offers_the_panes_and_agent_names_the_daemon_knows() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    let server = &setup.server;
    server.wait_for_panes(2);
    let worker = server
        .panectl_ok(&["launch", "fake_agent", "--name", "tab-worker"])
        .trim()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("panectl.bash");
    std::fs::write(&script, server.panectl_ok(&["completions", "bash"])).unwrap();

    // A login-like bash whose environment has none of the daemon's runtime settings.
    server.tmux(&[
        "respawn-pane",
        "-k",
        "-t",
        "%1",
        "env -u XDG_RUNTIME_DIR -u XDG_STATE_HOME PS1='$ ' bash --norc --noprofile",
    ]);
    std::thread::sleep(Duration::from_millis(500));
    let source = format!("source '{}'", script.display());
    server.tmux(&["send-keys", "-t", "%1", "-l", &source]);
    server.tmux(&["send-keys", "-t", "%1", "Enter"]);
    server.tmux(&["send-keys", "-t", "%1", "-l", "panectl wait "]);
    server.tmux(&["send-keys", "-t", "%1", "Tab"]);
    std::thread::sleep(Duration::from_millis(300));
    server.tmux(&["send-keys", "-t", "%1", "Tab"]);
    let screen = || server.tmux(&["capture-pane", "-p", "-t", "%1"]);
    server.wait_for("the panes offered", Duration::from_secs(15), || {
        let shown = screen();
        shown.contains("tab-worker") && shown.contains(&worker) && shown.contains("%0")
    });
    // A name completes from its first letters.
    server.tmux(&["send-keys", "-t", "%1", "C-u"]);
    server.tmux(&["send-keys", "-t", "%1", "-l", "panectl wait tab-w"]);
    server.tmux(&["send-keys", "-t", "%1", "Tab"]);
    server.wait_for("the name completed", Duration::from_secs(15), || {
        screen().contains("panectl wait tab-worker")
    });
}
