//! The plugin's keys as a person presses them: TPM installs the plugin into a tmux server (the
//! inner one) and a real `tmux attach` to it runs in the pane of a second server (the outer
//! one), whose pane is the person's terminal. The test types into that pane with `send-keys`
//! (the prefix, the key, text) and reads what the person sees with `capture-pane`, and what
//! happened from the inner server. Also: the "ready" message, the build path with a fake
//! `cargo`, the daemon's flags from tmux.conf and its restart after an update.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::plugin::{DetachedDaemons, Home, daemons, wait_until};
use crate::support::{TmuxServer, daemon_test_lock};

const PANECTL: &str = env!("CARGO_BIN_EXE_panectl");

/// What the test waits on: long, for a loaded two-core machine; it returns as soon as it holds.
const PATIENCE: Duration = Duration::from_secs(30);

/// A person's terminal: the pane `%0` of an outer server (no status line), running a real
/// tmux client attached to the inner server.
pub(crate) struct Terminal {
    outer: TmuxServer,
    /// The inner server's name of that client.
    pub(crate) client: String,
}

impl Terminal {
    pub(crate) fn attach(inner: &TmuxServer) -> Terminal {
        let outer = TmuxServer::start(120, 40);
        outer.tmux(&["set-option", "-g", "status", "off"]);
        let command = format!(
            "exec env -u TMUX TMUX_TMPDIR='{}' tmux -u -L '{}' attach",
            inner.dir().display(),
            inner.socket_name()
        );
        outer.tmux(&["respawn-pane", "-k", "-t", "%0", &command]);
        let mut client = String::new();
        wait_until("the client to attach", PATIENCE, || {
            let clients = inner.tmux(&[
                "list-clients",
                "-F",
                "#{client_control_mode} #{client_name}",
            ]);
            match clients.lines().find_map(|l| l.strip_prefix("0 ")) {
                Some(name) => {
                    client = name.trim().to_string();
                    true
                }
                None => false,
            }
        });
        Terminal { outer, client }
    }

    /// What the person sees.
    pub(crate) fn screen(&self) -> String {
        self.outer.tmux(&["capture-pane", "-p", "-t", "%0"])
    }

    /// What the person sees, with colours and attributes as escape sequences.
    pub(crate) fn screen_with_attributes(&self) -> String {
        self.outer.tmux(&["capture-pane", "-e", "-p", "-t", "%0"])
    }

    /// Presses keys (tmux key names: `C-b`, `Enter`, a letter).
    pub(crate) fn press(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "%0"];
        args.extend_from_slice(keys);
        self.outer.tmux(&args);
    }

    /// Types text as it is.
    pub(crate) fn type_text(&self, text: &str) {
        self.outer.tmux(&["send-keys", "-t", "%0", "-l", text]);
    }

    /// Waits until the screen shows `text`; returns the screen.
    pub(crate) fn wait_for_text(&self, text: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {text:?}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the screen no longer shows `text` (a popup closed).
    pub(crate) fn wait_for_no_text(&self, text: &str) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let screen = self.screen();
            if !screen.contains(text) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the screen still shows {text:?}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The pane the client shows.
    pub(crate) fn pane(&self, inner: &TmuxServer) -> String {
        // (list-clients: tmux 3.2 takes no value after display-message -c.)
        inner
            .tmux(&["list-clients", "-F", "#{client_name} #{pane_id}"])
            .lines()
            .find_map(|line| {
                let (name, pane) = line.rsplit_once(' ')?;
                (name == self.client).then(|| pane.to_string())
            })
            .unwrap_or_default()
    }

    /// Waits until the client shows `pane`.
    pub(crate) fn wait_for_pane(&self, inner: &TmuxServer, pane: &str) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let last = self.pane(inner);
            if last == pane {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the client shows {last}, not {pane}:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The inner server's message log (`show-messages`): the messages shown on clients, as
/// `TIME: CLIENT message: TEXT`, among the commands run.
fn messages(inner: &TmuxServer) -> String {
    inner.tmux(&["show-messages"])
}

/// Waits for a shown message containing `text`; returns that line.
fn wait_for_message(inner: &TmuxServer, text: &str) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let all = messages(inner);
        if let Some(line) = all
            .lines()
            .find(|l| l.contains(" message: ") && l.contains(text))
        {
            return line.to_string();
        }
        assert!(
            Instant::now() < deadline,
            "no message with {text:?}; messages:\n{all}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The words of a process's command line.
fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

fn option(server: &TmuxServer, name: &str) -> String {
    server
        .tmux(&["show-option", "-gqv", name])
        .trim()
        .to_string()
}

fn pane_option(server: &TmuxServer, pane: &str, format: &str) -> String {
    server
        .tmux(&["display-message", "-p", "-t", pane, format])
        .trim()
        .to_string()
}

/// An inner server with the plugin installed by TPM and its daemon running.
struct Inner {
    home: Home,
    server: TmuxServer,
    socket: String,
}

impl Inner {
    fn start(extra_config: &str, path: &str) -> Inner {
        let home = Home::new(extra_config);
        let server = TmuxServer::start_configured(&home.config(), &home.env(path));
        let socket = server
            .tmux(&["display-message", "-p", "#{socket_path}"])
            .trim()
            .to_string();
        Inner {
            home,
            server,
            socket,
        }
    }

    /// Runs the fake agent in `pane` (its answers: `answer: ` and the message reversed).
    fn run_agent(&self, pane: &str) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/programs/fake_agent.py");
        let log = self.home.path().join("agent.jsonl");
        let command = format!("exec python3 {} {} 0.3", script.display(), log.display());
        self.server
            .tmux(&["respawn-pane", "-k", "-t", pane, &command]);
    }

    fn wait_for_status(&self, pane: &str, status: &str) {
        let wanted = format!("fake_agent {status}");
        wait_until(&format!("{pane} to be {status}"), PATIENCE, || {
            pane_option(
                &self.server,
                pane,
                "#{@panectl_provider} #{@panectl_status}",
            ) == wanted
        });
    }
}

#[test]
fn every_key_works_when_a_person_presses_it() {
    let _guard = daemon_test_lock();
    let path = std::env::var("PATH").unwrap_or_default();
    let inner = Inner::start(
        &format!(
            "set -g @panectl-bin '{PANECTL}'\n\
             set -g @panectl-daemon-args '--status-quiet 20ms  --submit-delay 150ms'"
        ),
        &path,
    );
    let server = &inner.server;
    let _daemons = DetachedDaemons(&inner.socket);
    // An agent in window 0 (%0), a shell in window 1 (%1) where the person starts.
    inner.run_agent("%0");
    server.tmux(&["new-window", "-t", "$0:1", "sh"]);
    inner.home.install(server);
    wait_until("one daemon", PATIENCE, || daemons(&inner.socket).len() == 1);
    assert_eq!(option(server, "@panectl-error"), "");

    // @panectl-daemon-args reached the daemon, word by word.
    let daemon = daemons(&inner.socket)[0];
    let args = cmdline(daemon);
    // (`--detach` passes each flag on as `--flag=value`, or as two words.)
    for pair in [["--status-quiet", "20ms"], ["--submit-delay", "150ms"]] {
        let joined = format!("{}={}", pair[0], pair[1]);
        assert!(
            args.windows(2).any(|w| w == pair) || args.contains(&joined),
            "{pair:?} not in the daemon's command line {args:?}"
        );
    }
    assert_eq!(option(server, "@panectl-daemon-pid"), daemon.to_string());
    inner.wait_for_status("%0", "idle");

    // Nobody was attached when the plugin loaded: the first client to attach is told, once.
    assert_eq!(option(server, "@panectl-ready-shown"), "");
    let terminal = Terminal::attach(server);
    let ready = wait_for_message(server, "panectl ready");
    assert!(
        ready.ends_with("panectl ready — prefix A: agents, prefix J: next waiting"),
        "{ready}"
    );
    assert_eq!(option(server, "@panectl-ready-shown"), "on");
    wait_until("the hook to go", PATIENCE, || {
        !server
            .tmux(&["show-hooks", "-g", "client-attached"])
            .contains("keys.sh")
    });
    // Once per server: a reload with the client attached does not say it again.
    inner.home.reload(server);
    let ready_messages = messages(server)
        .lines()
        .filter(|l| l.contains(" message: panectl ready"))
        .count();
    assert_eq!(ready_messages, 1, "{}", messages(server));
    terminal.wait_for_pane(server, "%1");

    // prefix A: the live board lists the agent; 1 selects it, Enter jumps to it and closes
    // the popup.
    terminal.press(&["C-b", "A"]);
    let board = terminal.wait_for_text("panectl · 1 agent");
    // (Popups have titles from tmux 3.3 on.)
    let version = server.tmux(&["display-message", "-p", "#{version}"]);
    let titled = !version.trim().starts_with("3.2");
    assert!(
        (board.contains("panectl agents") || !titled)
            && board.contains("fake_agent")
            && board.contains("Enter: jump"),
        "{board}"
    );
    terminal.press(&["1", "Enter"]);
    terminal.wait_for_pane(server, "%0");
    terminal.wait_for_no_text("panectl · 1 agent");

    // prefix S: a message typed in the popup, Ctrl-D sends it; the agent answers it.
    terminal.press(&["C-b", "S"]);
    terminal.wait_for_text("Message to %0");
    terminal.type_text("hello #{pane_id} keys");
    terminal.press(&["Enter", "C-d"]);
    terminal.wait_for_no_text("Message to %0");
    wait_for_message(server, "queued for %0");
    wait_until("the agent's answer", PATIENCE, || {
        server
            .tmux(&["capture-pane", "-p", "-t", "%0"])
            .contains("answer: syek }di_enap{# olleh")
    });
    inner.wait_for_status("%0", "completed");

    // prefix V: the last answer, in a popup that q closes.
    terminal.press(&["C-b", "V"]);
    let shown = terminal.wait_for_text("last answer (q closes)");
    assert!(
        shown.contains("│syek }di_enap{# olleh"),
        "the answer is not in the popup:\n{shown}"
    );
    terminal.press(&["q"]);
    terminal.wait_for_no_text("last answer (q closes)");

    // prefix J: from the shell to the agent waiting for an answer.
    server.tmux(&["send-keys", "-t", "%0", "ASK now", "Enter"]);
    inner.wait_for_status("%0", "waiting_user_answer");
    server.tmux(&["switch-client", "-c", &terminal.client, "-t", "%1"]);
    terminal.wait_for_pane(server, "%1");
    terminal.press(&["C-b", "J"]);
    terminal.wait_for_pane(server, "%0");
    server.tmux(&["switch-client", "-c", &terminal.client, "-t", "%1"]);
    terminal.wait_for_pane(server, "%1");

    // An agent that goes away leaves the open board with no key pressed; Enter then has
    // nowhere to go, and q closes the popup.
    terminal.press(&["C-b", "A"]);
    terminal.wait_for_text("panectl · 1 agent");
    server.tmux(&["kill-pane", "-t", "%0"]);
    terminal.wait_for_text("No agents.");
    terminal.press(&["Enter"]);
    terminal.wait_for_text("No agent to jump to.");
    terminal.press(&["q"]);
    terminal.wait_for_no_text("panectl · ");
    assert_eq!(terminal.pane(server), "%1");

    // Without a daemon: send and last close their popups and say why, prefixed once.
    for pid in daemons(&inner.socket) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    wait_until("the daemon to stop", PATIENCE, || {
        daemons(&inner.socket).is_empty()
    });
    let no_daemon = |count: usize| {
        let mut lines = Vec::new();
        wait_until(&format!("{count} \"no daemon\" messages"), PATIENCE, || {
            lines = messages(server)
                .lines()
                .filter(|l| l.contains(" message: ") && l.contains("no daemon runs"))
                .map(str::to_string)
                .collect();
            lines.len() >= count
        });
        for line in &lines {
            let (_, text) = line.split_once(" message: ").unwrap_or(("", line));
            // Whole on an 80-column status line, the way to start one included.
            assert_eq!(
                text.trim_end(),
                "panectl: no daemon runs for this tmux server; start one: panectl daemon --detach",
                "{line}"
            );
            assert!(text.trim_end().chars().count() <= 80, "{line}");
        }
    };
    terminal.press(&["C-b", "S"]);
    terminal.wait_for_text("Message to %1");
    terminal.type_text("lost");
    terminal.press(&["Enter", "C-d"]);
    no_daemon(1);
    terminal.wait_for_no_text("Message to %1");
    terminal.press(&["C-b", "V"]);
    no_daemon(2);
    terminal.wait_for_no_text("last answer");
    // The board does not open on an empty list; prefix J says the same.
    terminal.press(&["C-b", "A"]);
    no_daemon(3);
    terminal.wait_for_no_text("panectl · ");
    terminal.press(&["C-b", "J"]);
    no_daemon(4);
    drop(terminal);
}

/// A `cargo` on PATH that shows some progress, waits for the file `go` in the home, then
/// fails if there is a file `fail`, else makes `target/release/panectl` (running this build's
/// panectl).
fn fake_cargo(home: &Home) -> PathBuf {
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let script = format!(
        "#!/bin/sh\n\
         echo '   Compiling serde v1.0.0' >&2\n\
         printf '    Building [=====>        ] 3/10: serde, libc\\r' >&2\n\
         n=0\n\
         while [ ! -e '{home}/go' ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n + 1)); done\n\
         if [ -e '{home}/fail' ]; then\n\
           echo 'error[E0425]: cannot find value `x` in this scope' >&2\n\
           echo 'error: could not compile `panectl` due to previous error' >&2\n\
           exit 101\n\
         fi\n\
         echo '    Finished release [optimized] target(s)' >&2\n\
         mkdir -p target/release\n\
         printf '#!/bin/sh\\nexec %s \"$@\"\\n' '{PANECTL}' > target/release/panectl\n\
         chmod +x target/release/panectl\n",
        home = home.path().display()
    );
    let cargo = bin.join("cargo");
    std::fs::write(&cargo, script).expect("fake cargo");
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    bin
}

#[test]
fn the_build_shows_its_progress_and_says_when_it_is_done() {
    let _guard = daemon_test_lock();
    let home = Home::new("");
    let bin = fake_cargo(&home);
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
    let server = TmuxServer::start_configured(&home.config(), &home.env(&path));
    let socket = server
        .tmux(&["display-message", "-p", "#{socket_path}"])
        .trim()
        .to_string();
    let _daemons = DetachedDaemons(&socket);
    home.install(&server);
    wait_until("the build's progress", PATIENCE, || {
        option(&server, "@panectl-build") == "panectl: building 3/10 (serde)"
    });
    // The status line's #{panectl_summary} shows it too.
    assert_eq!(
        option(&server, "@panectl_summary"),
        "panectl: building 3/10 (serde)"
    );
    assert_eq!(
        server.tmux(&["show-option", "-gv", "status-right"]).trim(),
        "agents: #{@panectl_summary}"
    );
    std::fs::write(home.path().join("go"), "").expect("go");
    wait_until("the build to end", PATIENCE, || {
        option(&server, "@panectl-build") == "panectl: built"
    });
    wait_until("the daemon of the built panectl", PATIENCE, || {
        daemons(&socket).len() == 1
    });
    assert_eq!(option(&server, "@panectl-error"), "");
    assert!(
        !option(&server, "@panectl_summary").contains("building"),
        "{}",
        option(&server, "@panectl_summary")
    );
}

#[test]
fn a_failed_build_says_why() {
    let _guard = daemon_test_lock();
    let home = Home::new("");
    let bin = fake_cargo(&home);
    std::fs::write(home.path().join("fail"), "").expect("fail");
    std::fs::write(home.path().join("go"), "").expect("go");
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
    let server = TmuxServer::start_configured(&home.config(), &home.env(&path));
    home.install(&server);
    let mut error = String::new();
    wait_until("the build's error", PATIENCE, || {
        error = option(&server, "@panectl-error");
        !error.is_empty()
    });
    assert!(
        error.starts_with("panectl: the build failed")
            && error.contains("could not compile `panectl`")
            && !error.contains("Building ["),
        "{error}"
    );
    assert_eq!(
        option(&server, "@panectl-build"),
        "panectl: the build failed"
    );
}

#[test]
fn an_older_daemon_is_restarted_after_an_update() {
    let _guard = daemon_test_lock();
    // @panectl-bin is a wrapper of this build's panectl, which the test then "updates" to one
    // that says it is newer.
    let home = Home::new("");
    let wrapper = home.path().join("panectl");
    let write_wrapper = |version: Option<&str>| {
        let pretend = version.map_or(String::new(), |v| {
            format!("if [ \"$1\" = --version ]; then echo 'panectl {v}'; exit 0; fi\n")
        });
        std::fs::write(
            &wrapper,
            format!("#!/bin/sh\n{pretend}exec '{PANECTL}' \"$@\"\n"),
        )
        .expect("wrapper");
        std::fs::set_permissions(
            &wrapper,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("chmod");
    };
    write_wrapper(None);
    let config = std::fs::read_to_string(home.config()).expect("config");
    std::fs::write(
        home.config(),
        config.replace(
            "run '",
            &format!("set -g @panectl-bin '{}'\nrun '", wrapper.display()),
        ),
    )
    .expect("config");
    let path = std::env::var("PATH").unwrap_or_default();
    let server = TmuxServer::start_configured(&home.config(), &home.env(&path));
    let socket = server
        .tmux(&["display-message", "-p", "#{socket_path}"])
        .trim()
        .to_string();
    let _daemons = DetachedDaemons(&socket);
    home.install(&server);
    wait_until("one daemon", PATIENCE, || daemons(&socket).len() == 1);
    let old = daemons(&socket)[0];
    // A reload with the same version keeps it.
    home.reload(&server);
    assert_eq!(daemons(&socket), [old]);

    write_wrapper(Some("99.0.0"));
    home.reload(&server);
    wait_until("a new daemon", PATIENCE, || {
        let now = daemons(&socket);
        now.len() == 1 && now[0] != old
    });
    assert_eq!(option(&server, "@panectl-error"), "");
    assert_eq!(
        option(&server, "@panectl-daemon-pid"),
        daemons(&socket)[0].to_string()
    );
    let health = Command::new(&wrapper)
        .args(["-S", &socket, "health", "--json"])
        .envs(home.env(&path))
        .output()
        .expect("health");
    assert!(health.status.success(), "{health:?}");
}

#[test]
fn versions_compare_by_number() {
    let helpers = Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin/helpers.sh");
    let script = format!(
        "source '{}'\n\
         for pair in '0.1.0 0.2.0' '0.9.9 0.10.0' '1.0.0-rc.1 1.0.1' '1.2 1.2.1' \
                     '0.2.0 0.1.0' '0.1.0 0.1.0' 'x 1.0.0' '1.0.0 ' '0.10.0 0.9.0'; do\n\
           set -- $pair\n\
           if version_older \"$1\" \"${{2:-}}\"; then echo \"$1 < ${{2:-}}\"; else echo \"$1 !< ${{2:-}}\"; fi\n\
         done\n",
        helpers.display()
    );
    let output = Command::new("bash")
        .args(["-c", &script])
        .output()
        .expect("bash");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "0.1.0 < 0.2.0\n0.9.9 < 0.10.0\n1.0.0-rc.1 < 1.0.1\n1.2 < 1.2.1\n\
         0.2.0 !< 0.1.0\n0.1.0 !< 0.1.0\nx !< 1.0.0\n1.0.0 !< \n0.10.0 !< 0.9.0\n"
    );
}

/// A key set to `off`, or to another key, after the plugin bound it: a reload follows the
/// options (the key it bound before is unbound), and a key the user bound is left alone.
#[test]
fn keys_turned_off_or_moved_after_a_load_are_unbound_on_reload() {
    let _guard = daemon_test_lock();
    let home = Home::new(&format!("set -g @panectl-bin '{PANECTL}'"));
    let path = std::env::var("PATH").unwrap_or_default();
    let server = TmuxServer::start_configured(&home.config(), &home.env(&path));
    let socket = server.tmux(&["display-message", "-p", "#{socket_path}"]);
    let socket = socket.trim().to_string();
    let _daemons = DetachedDaemons(&socket);
    home.install(&server);
    let binding = |key: &str| {
        server
            .command()
            .args(["list-keys", "-T", "prefix", "--", key])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    for key in ["A", "J", "S", "V"] {
        assert!(binding(key).contains("keys.sh"), "{key}: {}", binding(key));
    }
    // Off, moved, and one the user takes for themselves.
    server.tmux(&["set-option", "-g", "@panectl-board-key", "off"]);
    server.tmux(&["set-option", "-g", "@panectl-jump-key", "K"]);
    server.tmux(&["bind-key", "-T", "prefix", "W", "display-message", "mine"]);
    server.tmux(&["set-option", "-g", "@panectl-last-key", "W"]);
    home.reload(&server);
    assert_eq!(binding("A"), "", "the board key stayed bound");
    assert_eq!(binding("J"), "", "the old jump key stayed bound");
    assert!(binding("K").contains("keys.sh"), "{}", binding("K"));
    assert!(binding("W").contains("mine"), "{}", binding("W"));
    assert_eq!(binding("V"), "", "the old last key stayed bound");
    assert!(binding("S").contains("keys.sh"), "{}", binding("S"));
    // The options in tmux.conf win again on the next reload of it: nothing changes.
    home.reload(&server);
    assert!(binding("K").contains("keys.sh"));
}

/// With `@panectl-window-status on`, only agents' panes mark their window (a plain shell's
/// every command would), `shells` marks those too, a waiting agent's glyph is not tmux's bell
/// flag `!`, and `off` takes the glyphs away again on reload.
#[test]
fn window_glyphs_are_for_agents_unless_asked_and_follow_the_option_on_reload() {
    let _guard = daemon_test_lock();
    let home = Home::new(&format!(
        "set -g @panectl-bin '{PANECTL}'\nset -g @panectl-window-status on"
    ));
    let path = std::env::var("PATH").unwrap_or_default();
    let server = TmuxServer::start_configured(&home.config(), &home.env(&path));
    let socket = server.tmux(&["display-message", "-p", "#{socket_path}"]);
    let socket = socket.trim().to_string();
    let _daemons = DetachedDaemons(&socket);
    home.install(&server);
    // The daemon writes a pane's options when its own view changes: once it has written the
    // shell's, the values the test sets stay.
    wait_until("the shell's options", PATIENCE, || {
        server
            .tmux(&["display-message", "-p", "-t", "%0", "#{@panectl_provider}"])
            .trim()
            == "shell"
    });
    let name = || {
        server
            .tmux(&[
                "display-message",
                "-p",
                "-t",
                "%0",
                "#{E:window-status-format}",
            ])
            .trim()
            .to_string()
    };
    let set = |provider: &str, status: &str| {
        server.tmux(&[
            "set-option",
            "-p",
            "-t",
            "%0",
            "@panectl_provider",
            provider,
        ]);
        server.tmux(&["set-option", "-p", "-t", "%0", "@panectl_status", status]);
    };
    // The window's glyph: the last character of its name when it is one (the name itself
    // follows the pane's command, which a reload changes for a moment).
    let glyph = || name().chars().last().filter(|c| "✔⚙?✖!".contains(*c));
    set("shell", "completed");
    assert_eq!(glyph(), None, "a shell's window is marked: {}", name());
    set("claude_code", "completed");
    assert_eq!(glyph(), Some('✔'), "{}", name());
    set("claude_code", "waiting_user_answer");
    assert_eq!(glyph(), Some('?'), "{}", name());
    // Shells asked for: marked too; the format is replaced, not stacked.
    let setting = |value: &str| {
        let config = std::fs::read_to_string(home.config()).unwrap();
        let changed: String = config
            .lines()
            .map(|l| {
                if l.starts_with("set -g @panectl-window-status ") {
                    format!("set -g @panectl-window-status {value}\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        std::fs::write(home.config(), changed).unwrap();
        home.reload(&server);
    };
    setting("shells");
    set("shell", "processing");
    assert_eq!(
        glyph(),
        Some('⚙'),
        "{} {}",
        name(),
        server.tmux(&["show-option", "-gv", "window-status-format"])
    );
    let format = server.tmux(&["show-option", "-gv", "window-status-format"]);
    assert_eq!(format.matches("#{P:").count(), 1, "{format}");
    // Off: gone.
    setting("off");
    let format = server.tmux(&["show-option", "-gv", "window-status-format"]);
    assert!(!format.contains("@panectl_"), "{format}");
    assert_eq!(glyph(), None, "{}", name());
}
