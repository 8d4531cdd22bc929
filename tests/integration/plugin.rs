//! The tmux plugin as users install it: the real TPM (Debian's `tmux-plugin-manager`) clones
//! the plugin from a git repository holding this working tree's `panectl.tmux` and `plugin/`
//! into an isolated tmux server whose config lists it, and loads it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{TmuxServer, daemon_test_lock};

const TPM: &str = "/usr/share/tmux-plugin-manager";

/// A home with a tmux.conf listing the plugin (a git repository of the plugin files).
pub struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    /// A home whose tmux.conf lists the plugin, sets `status-right` and adds `extra_config`.
    pub fn new(extra_config: &str) -> Home {
        assert!(
            Path::new(TPM).join("tpm").exists(),
            "TPM is not installed: apt-get install tmux-plugin-manager (.ci/run does)"
        );
        let dir = tempfile::Builder::new()
            .prefix("panectl-plugin-")
            .tempdir()
            .expect("home");
        let repo = dir.path().join("src/panectl");
        std::fs::create_dir_all(repo.join("plugin")).expect("mkdir");
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let copy = |from: &Path, to: &Path| {
            std::fs::copy(from, to).expect("copy a plugin file");
        };
        copy(&root.join("panectl.tmux"), &repo.join("panectl.tmux"));
        for entry in std::fs::read_dir(root.join("plugin"))
            .expect("plugin dir")
            .flatten()
        {
            copy(&entry.path(), &repo.join("plugin").join(entry.file_name()));
        }
        let git = |args: &[&str]| {
            let output = Command::new("git")
                .args(["-c", "user.name=test", "-c", "user.email=test@invalid"])
                .args(args)
                .current_dir(&repo)
                .output()
                .expect("git");
            assert!(output.status.success(), "git {args:?}: {output:?}");
        };
        git(&["init", "-q"]);
        git(&["add", "."]);
        git(&["commit", "-q", "-m", "plugin"]);
        let rules = dir.path().join("config/panectl/providers");
        std::fs::create_dir_all(&rules).expect("rules dir");
        std::fs::write(rules.join("fake_agent.toml"), crate::inbox::RULES).expect("rules");
        let config = format!(
            "set -g default-shell /bin/sh\n\
             set -g @plugin '{}'\n\
             set -g status-right 'agents: #{{panectl_summary}}'\n\
             {extra_config}\n\
             run '{TPM}/tpm'\n",
            repo.display()
        );
        std::fs::write(dir.path().join(".tmux.conf"), config).expect("tmux.conf");
        Home { dir }
    }

    /// The home directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Its tmux.conf.
    pub fn config(&self) -> PathBuf {
        self.path().join(".tmux.conf")
    }

    /// The server's environment: everything of panectl's under this home.
    pub fn env(&self, path: &str) -> Vec<(&'static str, String)> {
        let home = self.path().display().to_string();
        vec![
            ("HOME", home.clone()),
            ("XDG_RUNTIME_DIR", format!("{home}/run")),
            ("XDG_STATE_HOME", format!("{home}/state")),
            ("XDG_CONFIG_HOME", format!("{home}/config")),
            ("PATH", path.to_string()),
        ]
    }

    /// Installs the plugins with TPM's own script, then reloads the config (as prefix+I does).
    pub fn install(&self, server: &TmuxServer) {
        server.tmux(&["run-shell", &format!("{TPM}/bin/install_plugins")]);
        assert!(
            self.path()
                .join(".tmux/plugins/panectl/panectl.tmux")
                .exists(),
            "TPM did not install the plugin"
        );
        self.reload(server);
    }

    /// Reads the config again (as `tmux source-file` or prefix+I does).
    pub fn reload(&self, server: &TmuxServer) {
        server.tmux(&["source-file", &self.config().display().to_string()]);
    }
}

/// Pids of the panectl daemons serving `socket`.
pub fn daemons(socket: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if args.iter().any(|a| a == "daemon") && args.iter().any(|a| a == socket) {
            pids.push(pid);
        }
    }
    pids
}

/// Ends, on drop, the detached daemons serving a socket: a test that fails before the
/// daemon has ended with its server leaves none behind.
pub struct DetachedDaemons<'a>(pub &'a str);

impl Drop for DetachedDaemons<'_> {
    fn drop(&mut self) {
        let pids = daemons(self.0);
        for pid in &pids {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while !daemons(self.0).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        for pid in daemons(self.0) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// The log of the daemon the plugin started (detached: in the runtime directory).
fn daemon_log(home: &Home) -> String {
    std::fs::read_dir(home.path().join("run/panectl"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect()
}

/// Waits until `condition` holds, polling; panics with `what` after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn tpm_installs_the_plugin_which_runs_one_daemon_tied_to_the_server() {
    let _guard = daemon_test_lock();
    let notified = tempfile::NamedTempFile::new().expect("file");
    let home = Home::new(&format!(
        "set -g @panectl-bin '{}'\n\
         set -g @panectl-window-status on\n\
         set -g @panectl-notify-command 'echo \"$PANECTL_PANE $PANECTL_PROVIDER $PANECTL_STATUS\" >> {}'\n\
         bind-key -T prefix V display-message mine",
        env!("CARGO_BIN_EXE_panectl"),
        notified.path().display()
    ));
    let path = std::env::var("PATH").unwrap_or_default();
    let server = TmuxServer::start_configured(&home.config(), &home.env(&path));
    let socket = server.tmux(&["display-message", "-p", "#{socket_path}"]);
    let socket = socket.trim().to_string();
    let _daemons = DetachedDaemons(&socket);
    assert!(daemons(&socket).is_empty(), "no plugin yet, no daemon");

    home.install(&server);
    wait_until("one daemon", Duration::from_secs(15), || {
        daemons(&socket).len() == 1
    });
    let daemon = daemons(&socket)[0];
    assert_eq!(
        server
            .tmux(&["show-option", "-gqv", "@panectl-error"])
            .trim(),
        ""
    );

    // The keys: bound where free, the user's own binding kept.
    let keys = server.tmux(&["list-keys", "-T", "prefix"]);
    for key in ["A", "J", "S"] {
        let line = keys
            .lines()
            .find(|l| l.split_whitespace().nth(3) == Some(key))
            .unwrap_or_else(|| panic!("prefix {key} is not bound:\n{keys}"));
        assert!(line.contains("panectl"), "{line}");
    }
    let v = keys
        .lines()
        .find(|l| l.split_whitespace().nth(3) == Some("V"))
        .expect("V");
    assert!(
        v.contains("display-message mine"),
        "the user's V was replaced: {v}"
    );
    // The status line reads the daemon's option; window names carry glyphs.
    assert_eq!(
        server.tmux(&["show-option", "-gv", "status-right"]).trim(),
        "agents: #{@panectl_summary}"
    );
    assert!(
        server
            .tmux(&["show-option", "-gv", "window-status-format"])
            .contains("#{?#{==:#{@panectl_status},waiting_user_answer}")
    );

    // A reload (TPM runs the plugin again) keeps the one daemon and does not stack formats.
    home.reload(&server);
    home.reload(&server);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(daemons(&socket), [daemon]);
    assert_eq!(
        server
            .tmux(&["show-option", "-gv", "window-status-format"])
            .matches("#{P:")
            .count(),
        1
    );

    // Statuses reach pane options and the summary; a finished turn notifies.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/programs/fake_agent.py");
    let log = home.path().join("agent.jsonl");
    let command = format!("exec python3 {} {} 0.3", script.display(), log.display());
    server.tmux(&["respawn-pane", "-k", "-t", "%0", &command]);
    let option = |format: &str| server.tmux(&["display-message", "-p", "-t", "%0", format]);
    wait_until("the agent to be idle", Duration::from_secs(15), || {
        option("#{@panectl_provider} #{@panectl_status}").trim() == "fake_agent idle"
    });
    assert_eq!(option("#{@panectl_summary}").trim(), "idle:1");
    // An attached client is told when the turn ends.
    let _client = crate::support::PtyClient::attach(&server, 120, 40);
    wait_until("the client to attach", Duration::from_secs(10), || {
        server
            .tmux(&["list-clients", "-F", "#{client_control_mode}"])
            .lines()
            .any(|line| line == "0")
    });
    // The client has %0 in view: its finished turn would be seen at once and leave the
    // summary (the seen tests cover that); here the summary shows it.
    server.tmux(&["set-option", "-g", "@panectl-seen", "off"]);
    let panectl = Path::new(env!("CARGO_BIN_EXE_panectl"));
    let input = Command::new(panectl)
        .args(["-S", &socket, "input", "%0", "hello"])
        .envs(home.env(&path))
        .output()
        .expect("panectl input");
    assert!(input.status.success(), "{input:?}");
    wait_until("the summary to change", Duration::from_secs(15), || {
        option("#{@panectl_summary}").trim() == "completed:1"
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(notified.path())
        .is_ok_and(|t| t.contains("%0 fake_agent completed"))
    {
        assert!(
            Instant::now() < deadline,
            "the notification command did not run:\n{}",
            daemon_log(&home)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let clients = server.tmux(&[
        "list-clients",
        "-F",
        "#{client_control_mode} #{client_name}",
    ]);
    let client = clients
        .lines()
        .find_map(|l| l.strip_prefix("0 "))
        .expect("the attached client")
        .to_string();
    let told = format!(
        "told the attached clients pane=%0 status=completed clients=[\"{}\"]",
        client.trim()
    );
    // tmux 3.2 cannot aim a message at one client (its display-message -c takes no value):
    // the daemon says so instead.
    let version = server.tmux(&["display-message", "-p", "#{version}"]);
    let told = if version.trim().starts_with("3.2") {
        "this tmux cannot show a message on a chosen client".to_string()
    } else {
        told
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !daemon_log(&home).contains(&told) {
        assert!(
            Instant::now() < deadline,
            "the client was not told ({told}):\n{}",
            daemon_log(&home)
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // The daemon ends with the server.
    server.tmux(&["kill-server"]);
    wait_until("the daemon to exit", Duration::from_secs(15), || {
        daemons(&socket).is_empty()
    });
}

#[test]
fn without_a_binary_or_a_toolchain_the_plugin_says_so() {
    let _guard = daemon_test_lock();
    let home = Home::new("");
    // Neither panectl nor cargo on this PATH, and no @panectl-bin.
    let server =
        TmuxServer::start_configured(&home.config(), &home.env("/usr/local/bin:/usr/bin:/bin"));
    home.install(&server);
    let mut error = String::new();
    wait_until("the plugin's error", Duration::from_secs(15), || {
        error = server.tmux(&["show-option", "-gqv", "@panectl-error"]);
        !error.trim().is_empty()
    });
    assert!(
        error.contains("no Rust toolchain (cargo)") && error.contains("@panectl-bin"),
        "{error}"
    );
}

#[test]
fn a_daemon_started_by_hand_is_reused() {
    let _guard = daemon_test_lock();
    let home = Home::new(&format!(
        "set -g @panectl-bin '{}'",
        env!("CARGO_BIN_EXE_panectl")
    ));
    let path = std::env::var("PATH").unwrap_or_default();
    let server = TmuxServer::start_configured(&home.config(), &home.env(&path));
    let socket = server.tmux(&["display-message", "-p", "#{socket_path}"]);
    let socket = socket.trim().to_string();
    let _daemons = DetachedDaemons(&socket);
    let started = Command::new(env!("CARGO_BIN_EXE_panectl"))
        .args(["-S", &socket, "daemon", "--detach", "--exit-with-server"])
        .envs(home.env(&path))
        .output()
        .expect("panectl daemon --detach");
    assert!(started.status.success(), "{started:?}");
    let by_hand = daemons(&socket);
    assert_eq!(by_hand.len(), 1);
    home.install(&server);
    home.reload(&server);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        daemons(&socket),
        by_hand,
        "the plugin started a second daemon"
    );
    assert_eq!(
        server
            .tmux(&["show-option", "-gqv", "@panectl-error"])
            .trim(),
        ""
    );
    server.tmux(&["kill-server"]);
    wait_until("the daemon to exit", Duration::from_secs(15), || {
        daemons(&socket).is_empty()
    });
}

/// The by-hand install (`run-shell .../panectl.tmux` in tmux.conf) runs while tmux starts, before
/// the first session exists: the daemon it starts must follow the session that comes next (it
/// once waited forever for a control client that could tell it of one).
#[test]
fn the_plugin_loaded_as_tmux_starts_follows_the_first_session() {
    let _guard = daemon_test_lock();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let home = Home::new(&format!(
        "set -g @panectl-bin '{}'\nrun-shell '{}'",
        env!("CARGO_BIN_EXE_panectl"),
        root.join("panectl.tmux").display()
    ));
    let path = std::env::var("PATH").unwrap_or_default();
    let server = TmuxServer::start_configured(&home.config(), &home.env(&path));
    let socket = server.tmux(&["display-message", "-p", "#{socket_path}"]);
    let socket = socket.trim().to_string();
    let _daemons = DetachedDaemons(&socket);
    wait_until("one daemon", Duration::from_secs(15), || {
        daemons(&socket).len() == 1
    });
    let script = root.join("scripts/programs/fake_agent.py");
    let log = home.path().join("agent.jsonl");
    let command = format!("exec python3 {} {} 0.3", script.display(), log.display());
    server.tmux(&["respawn-pane", "-k", "-t", "%0", &command]);
    let status = || {
        server
            .tmux(&["display-message", "-p", "-t", "%0", "#{@panectl_status}"])
            .trim()
            .to_string()
    };
    let mut last = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        last = status();
        if last == "idle" {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        last,
        "idle",
        "the daemon started from tmux.conf did not follow the first session:\n{}",
        daemon_log(&home)
    );
    server.tmux(&["kill-server"]);
    wait_until("the daemon to exit", Duration::from_secs(15), || {
        daemons(&socket).is_empty()
    });
}

#[test]
fn with_restore_on_the_agents_come_back_once_when_tmux_starts_again() {
    let _guard = daemon_test_lock();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let home = Home::new(&format!(
        "set -g @panectl-bin '{}'\nset -g @panectl-restore on\nrun-shell '{}'",
        env!("CARGO_BIN_EXE_panectl"),
        root.join("panectl.tmux").display()
    ));
    // The fake agent, launchable.
    let script = root.join("scripts/programs/fake_agent.py");
    let launch = format!(
        "\n[launch]\ncommand = [\"python3\", \"{}\", \"{}\", \"0.2\"]\n",
        script.display(),
        home.path().join("agent.jsonl").display()
    );
    std::fs::write(
        home.path().join("config/panectl/providers/fake_agent.toml"),
        crate::inbox::RULES.replacen("\n[detect]", &format!("{launch}\n[detect]"), 1),
    )
    .expect("rules");
    let path = std::env::var("PATH").unwrap_or_default();
    let mut server = TmuxServer::start_configured(&home.config(), &home.env(&path));
    let socket = server.tmux(&["display-message", "-p", "#{socket_path}"]);
    let socket = socket.trim().to_string();
    let _daemons = DetachedDaemons(&socket);
    let log_path = home.path().join("state/panectl/restore.log");
    let restore_log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    // The first start: nothing recorded, nothing to do, and said so.
    wait_until("the first restore", Duration::from_secs(40), || {
        restore_log().contains("no agent was launched to restore")
    });
    let panectl = |args: &[&str]| {
        let output = server
            .panectl()
            .envs(home.env(&path))
            .args(args)
            .output()
            .expect("run panectl");
        assert!(output.status.success(), "panectl {args:?}: {output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    panectl(&[
        "launch",
        "fake_agent",
        "--name",
        "back",
        "--new-session",
        "--session",
        "agents",
    ]);
    let named = |server: &TmuxServer| -> Vec<String> {
        server
            .tmux(&["list-panes", "-a", "-F", "#{@panectl_name} #{session_name}"])
            .lines()
            .filter(|l| l.starts_with("back "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(named(&server), ["back agents"]);

    // tmux dies and starts again from the same config: the plugin brings the agent back.
    server.tmux(&["kill-server"]);
    wait_until("the daemon to exit", Duration::from_secs(15), || {
        daemons(&socket).is_empty()
    });
    server.wait_for_exit(Duration::from_secs(10));
    server.start_again_configured(&home.config(), &home.env(&path));
    wait_until(
        "the agent back in its session",
        Duration::from_secs(60),
        || named(&server) == ["back agents"],
    );
    wait_until("the restore logged", Duration::from_secs(10), || {
        restore_log().contains("back (fake_agent, session agents): started fresh in %")
    });
    assert_eq!(daemons(&socket).len(), 1);
    assert!(
        server
            .tmux(&["show-option", "-gqv", "@panectl-error"])
            .trim()
            .is_empty(),
        "{}",
        restore_log()
    );
    // Loading the plugin again (a config reload) restores nothing again.
    let runs = restore_log().matches(" panectl restore (").count();
    home.reload(&server);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(restore_log().matches(" panectl restore (").count(), runs);
    assert_eq!(named(&server), ["back agents"]);
    // The logs and their directory are the user's alone.
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&log_path), 0o600, "restore.log");
    let state = home.path().join("state/panectl");
    assert_eq!(
        mode(&state.join("plugin-start.log")),
        0o600,
        "plugin-start.log"
    );
    assert_eq!(mode(&state), 0o700, "the state directory");
    server.tmux(&["kill-server"]);
    wait_until("the daemon to exit", Duration::from_secs(15), || {
        daemons(&socket).is_empty()
    });
}
