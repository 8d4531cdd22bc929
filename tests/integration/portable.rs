//! The portable ways, forced on Linux: with `PANECTL_PROCESSES=ps` the daemon and the CLI read
//! processes through `ps` as they do where there is no `/proc` (macOS, the BSDs). The daemon
//! still recognises an agent by its processes, and `daemon stop` still finds and checks a
//! daemon whose API socket is gone.

use std::time::Duration;

use crate::inbox::Setup;
use crate::support::daemon_test_lock;

fn forced_ps() -> Vec<(String, String)> {
    vec![("PANECTL_PROCESSES".to_string(), "ps".to_string())]
}

#[test]
fn without_proc_agents_are_recognised_and_a_daemon_without_its_socket_is_stopped() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let server = &setup.server;
    let rules = setup.rules_dir().to_string_lossy().into_owned();
    let mut daemon = server.start_daemon_with_env(&["--rules-dir", &rules], &forced_ps());
    server.wait_for_panes(2);
    assert!(
        daemon.log_text().contains("processes=Ps"),
        "{}",
        daemon.log_text()
    );
    // The fake agent is known by its arguments, read from `ps`.
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let agent = server
        .panes()
        .into_iter()
        .find(|p| p["pane"] == "%0")
        .expect("%0");
    assert_eq!(agent["provider"], "fake_agent", "{agent}");
    assert_eq!(agent["provider_source"], "process", "{agent}");
    // The shell pane is a shell, from the process tree too.
    let shell = server
        .panes()
        .into_iter()
        .find(|p| p["pane"] == "%1")
        .expect("%1");
    assert_eq!(shell["provider"], "shell", "{shell}");

    // Its API socket gone, `daemon stop` finds the daemon from `@panectl_pid` and checks with
    // `ps` that the pid is a panectl daemon of this user before it signals it.
    let sockets: Vec<_> = std::fs::read_dir(server.dir().join("run/panectl"))
        .expect("the runtime directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sock"))
        .collect();
    assert!(!sockets.is_empty());
    for socket in &sockets {
        std::fs::remove_file(socket).expect("the socket removed");
    }
    let output = server
        .panectl()
        .env("PANECTL_PROCESSES", "ps")
        .args(["daemon", "stop"])
        .output()
        .expect("daemon stop");
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "stopped the panectl daemon (pid {})",
            daemon.pid()
        )),
        "{said}"
    );
    assert!(daemon.wait_exit(Duration::from_secs(10)));
}
