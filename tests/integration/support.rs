//! Test harness: private tmux servers and control clients.
//!
//! Every server runs with `-L <unique name> -f /dev/null`, `TMUX` unset and `TMUX_TMPDIR`
//! pointing into a temporary directory owned by the test, so its socket never meets the user's
//! server and disappears with the directory. Dropping a [`TmuxServer`] kills that server (by
//! command, then by pid if it lingers); dropping a [`ControlClient`] ends and reaps its child.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use panectl::control::command::Line;
use panectl::control::{Decoder, Event, Reply};

static NEXT_SERVER: AtomicU32 = AtomicU32::new(0);

/// A private directory for a new server's socket, and a socket name no other test uses.
fn private_socket() -> (tempfile::TempDir, String) {
    let dir = tempfile::Builder::new()
        .prefix("panectl-test-")
        .tempdir()
        .expect("temporary directory");
    let socket = format!(
        "panectl-test-{}-{}",
        std::process::id(),
        NEXT_SERVER.fetch_add(1, Ordering::Relaxed)
    );
    (dir, socket)
}

/// A tmux server of the test's own.
pub struct TmuxServer {
    socket: String,
    dir: tempfile::TempDir,
    pid: i32,
    /// A server started in the foreground (`tmux -D`) is the test's child: how it ended can
    /// be read (an exit or a signal such as SIGSEGV).
    foreground: Option<Child>,
    /// `panectl` reaches this server over ssh: the destination and the ssh command.
    remote: Option<(String, String)>,
    /// The runtime directory of `panectl` commands, when not the server's own.
    runtime: Option<std::path::PathBuf>,
}

impl TmuxServer {
    /// Starts a server with one detached session of the given size running `sh`.
    pub fn start(width: u16, height: u16) -> TmuxServer {
        let mut server = TmuxServer::unstarted();
        server.first_session(width, height);
        server.pid = server.server_pid();
        server
    }

    /// Starts a server in the foreground (`tmux -D`, a child of the test, so that a crash can
    /// be told from an exit) with one detached session of the given size running `sh`.
    #[allow(dead_code)] // not every test binary that shares this harness uses it
    pub fn start_foreground(width: u16, height: u16) -> TmuxServer {
        let mut server = TmuxServer::unstarted();
        let child = server
            .command()
            .arg("-D")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start tmux -D");
        server.pid = child.id() as i32;
        server.foreground = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !server
            .dir
            .path()
            .join(format!("tmux-{}", nix::unistd::getuid()))
            .join(&server.socket)
            .exists()
        {
            assert!(Instant::now() < deadline, "tmux -D did not make its socket");
            std::thread::sleep(Duration::from_millis(10));
        }
        server.first_session(width, height);
        server
    }

    /// A server not started yet, on a socket of its own.
    fn unstarted() -> TmuxServer {
        let (dir, socket) = private_socket();
        TmuxServer {
            socket,
            dir,
            pid: 0,
            foreground: None,
            remote: None,
            runtime: None,
        }
    }

    /// The server's pid, as it reports it.
    fn server_pid(&self) -> i32 {
        self.tmux(&["display-message", "-p", "#{pid}"])
            .trim()
            .parse()
            .expect("server pid")
    }

    /// Creates the first session, of the given size, running `sh`.
    fn first_session(&self, width: u16, height: u16) {
        self.tmux(&[
            "new-session",
            "-d",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "sh",
        ]);
        // New panes and windows run a plain `sh` too: the login shell may read rc files that
        // take seconds under load (pyenv hooks, for one) and would make the tests slow or flaky.
        self.tmux(&["set-option", "-g", "default-shell", "/bin/sh"]);
    }

    /// How a server started with [`TmuxServer::start_foreground`] ended, if it has within
    /// `timeout`.
    #[allow(dead_code)] // not every test binary that shares this harness uses it
    pub fn exit_status(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let child = self
            .foreground
            .as_mut()
            .expect("a server started in the foreground");
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Starts a server that reads `config` at start (as a user's would), with `env` added to
    /// its environment (which the jobs it runs inherit), and one detached session.
    #[allow(dead_code)] // for the plugin tests
    pub fn start_configured(config: &std::path::Path, env: &[(&str, String)]) -> TmuxServer {
        let (dir, socket) = private_socket();
        let output = Command::new("tmux")
            .args(["-L", &socket, "-f"])
            .arg(config)
            .args(["new-session", "-d", "-x", "120", "-y", "40", "sh"])
            .env_remove("TMUX")
            .env("TMUX_TMPDIR", dir.path())
            .env("LC_ALL", "C.UTF-8")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .output()
            .expect("start tmux");
        assert!(
            output.status.success(),
            "tmux did not start: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let mut server = TmuxServer {
            socket,
            dir,
            pid: 0,
            foreground: None,
            remote: None,
            runtime: None,
        };
        server.pid = server.server_pid();
        server
    }

    /// Waits for this server's process to end (after `kill-server`, say: tmux goes on
    /// accepting connections until its last client has gone, and a new server cannot start
    /// on the socket before then).
    #[allow(dead_code)] // not every test binary that shares this harness uses it
    pub fn wait_for_exit(&self, timeout: Duration) {
        let pid = nix::unistd::Pid::from_raw(self.pid);
        self.wait_for("the tmux server to exit", timeout, || {
            nix::sys::signal::kill(pid, None).is_err()
        });
    }

    /// Starts a new server on this socket with one detached session, after the old one
    /// ended; the new server is the one ended on drop.
    #[allow(dead_code)] // not every test binary that shares this harness uses it
    pub fn start_again(&mut self, session: &str, width: u16, height: u16) {
        self.tmux(&[
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
        self.pid = self.server_pid();
    }

    /// A `tmux` command aimed at this server, with a clean environment.
    pub fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .env_remove("TMUX")
            .env("TMUX_TMPDIR", self.dir.path())
            .env("LC_ALL", "C.UTF-8");
        command
    }

    /// Runs a tmux command and returns its stdout; panics with stderr if it fails.
    pub fn tmux(&self, args: &[&str]) -> String {
        let output = self.command().args(args).output().expect("run tmux");
        assert!(
            output.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Attaches a control client to a session.
    pub fn control_client(&self, session: &str) -> ControlClient {
        let mut child = self
            .command()
            .args(["-C", "attach-session", "-t", session])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a control client");
        let stdin = child.stdin.take().expect("control client stdin");
        let mut stdout = child.stdout.take().expect("control client stdout");
        let (sender, receiver) = channel();
        let reader = std::thread::spawn(move || {
            let mut buffer = vec![0u8; 64 * 1024];
            loop {
                match stdout.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if sender.send(buffer[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        ControlClient {
            child,
            stdin: Some(stdin),
            chunks: receiver,
            reader: Some(reader),
            decoder: Decoder::new(),
            events: Vec::new(),
            next_tag: 0,
        }
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
        if let Some(mut child) = self.foreground.take() {
            let deadline = Instant::now() + Duration::from_secs(2);
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        if self.pid > 0 {
            let pid = nix::unistd::Pid::from_raw(self.pid);
            let deadline = Instant::now() + Duration::from_secs(2);
            while nix::sys::signal::kill(pid, None).is_ok() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// A `tmux -C` client driven synchronously: write a line, wait for its replies.
pub struct ControlClient {
    child: Child,
    stdin: Option<ChildStdin>,
    chunks: Receiver<Vec<u8>>,
    reader: Option<JoinHandle<()>>,
    decoder: Decoder,
    /// Every event decoded so far that was not a reply to [`ControlClient::run`].
    pub events: Vec<Event>,
    next_tag: u64,
}

impl ControlClient {
    /// Writes a line and returns the replies to its commands, in order (`None` for a command
    /// tmux skipped because an earlier one failed).
    pub fn run(&mut self, line: &Line) -> Vec<Option<Reply>> {
        let first = self.next_tag;
        let expected = line.expected(first);
        self.next_tag += expected.len() as u64;
        self.decoder.expect_line(expected.iter().copied());
        let stdin = self.stdin.as_mut().expect("client is open");
        stdin
            .write_all(&line.to_bytes())
            .expect("write to the control client");
        stdin.flush().expect("flush the control client");

        let mut replies: Vec<Option<Option<Reply>>> = vec![None; expected.len()];
        let deadline = Instant::now() + Duration::from_secs(10);
        while replies.iter().any(Option::is_none) {
            let timeout = deadline.saturating_duration_since(Instant::now());
            let chunk = match self.chunks.recv_timeout(timeout) {
                Ok(chunk) => chunk,
                Err(RecvTimeoutError::Timeout) => panic!("no reply to {line:?} within 10 s"),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("control client exited during {line:?}")
                }
            };
            for event in self.decoder.feed_vec(&chunk) {
                match event {
                    Event::Reply(reply) if reply.tag.is_some_and(|t| t >= first) => {
                        let index = (reply.tag.unwrap_or_default() - first) as usize;
                        replies[index] = Some(Some(reply));
                    }
                    Event::Abandoned { tag } if tag >= first => {
                        replies[(tag - first) as usize] = Some(None);
                    }
                    other => self.events.push(other),
                }
            }
        }
        replies.into_iter().flatten().collect()
    }
}

impl Drop for ControlClient {
    fn drop(&mut self) {
        // EOF on stdin makes the client exit.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

impl TmuxServer {
    /// The socket name given to `-L`.
    pub fn socket_name(&self) -> &str {
        &self.socket
    }

    /// The private directory holding the server's socket and the daemon's runtime files.
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// The server's pid.
    #[allow(dead_code)] // used by the benchmarks, which share this harness
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// From now on `panectl` commands reach this server as a server on another host: over
    /// ssh to `destination` (with `ssh_command` as `PANECTL_SSH_COMMAND`), by its socket path.
    #[allow(dead_code)] // for the remote-server tests
    pub fn reach_over_ssh(&mut self, destination: &str, ssh_command: &str) {
        self.remote = Some((destination.to_string(), ssh_command.to_string()));
    }

    /// From now on `panectl` commands for this server (and its daemon) keep their runtime
    /// files in `other`'s directory, so that both servers' daemons are found together.
    #[allow(dead_code)] // for the remote-server tests
    pub fn share_runtime_dir_of(&mut self, other: &TmuxServer) {
        self.runtime = Some(other.dir.path().join("run"));
    }

    /// The server's socket path.
    #[allow(dead_code)] // for the remote-server tests
    pub fn socket_path(&self) -> std::path::PathBuf {
        self.dir
            .path()
            .join(format!("tmux-{}", nix::unistd::getuid()))
            .join(&self.socket)
    }

    /// The divergence records this server's daemon saved, oldest first.
    #[allow(dead_code)] // for the daemon tests
    pub fn divergence_records(&self) -> Vec<std::path::PathBuf> {
        let run = self
            .runtime
            .clone()
            .unwrap_or_else(|| self.dir.path().join("run"))
            .join("panectl");
        let mut records: Vec<_> = std::fs::read_dir(&run)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| {
                entry
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".divergences")
            })
            .flat_map(|entry| {
                std::fs::read_dir(entry.path())
                    .into_iter()
                    .flatten()
                    .flatten()
            })
            .map(|entry| entry.path())
            .collect();
        records.sort();
        records
    }

    /// A `panectl` command aimed at this server, with the same private environment.
    pub fn panectl(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_panectl"));
        match &self.remote {
            Some((destination, ssh)) => {
                command
                    .args(["--ssh", destination, "-S"])
                    .arg(self.socket_path())
                    .env("PANECTL_SSH_COMMAND", ssh);
            }
            None => {
                command.args(["-L", &self.socket]);
            }
        }
        command
            .env_remove("TMUX")
            .env("TMUX_TMPDIR", self.dir.path())
            .env(
                "XDG_RUNTIME_DIR",
                self.runtime
                    .clone()
                    .unwrap_or_else(|| self.dir.path().join("run")),
            )
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("LC_ALL", "C.UTF-8");
        command
    }

    /// Runs `panectl ARGS` and returns stdout; panics with stderr on failure.
    pub fn panectl_ok(&self, args: &[&str]) -> String {
        let output = self.panectl().args(args).output().expect("run panectl");
        assert!(
            output.status.success(),
            "panectl {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Runs `panectl ls --json`.
    pub fn panes(&self) -> Vec<serde_json::Value> {
        let output = self.panectl_ok(&["ls", "--json"]);
        serde_json::from_str::<Vec<serde_json::Value>>(&output).expect("ls --json")
    }

    /// POSTs JSON to the daemon's API socket and returns the JSON answer; panics on an error
    /// status.
    #[allow(dead_code)] // for the inbox tests
    pub fn api_post(&self, path: &str, body: &serde_json::Value) -> serde_json::Value {
        let (status, answer) = self.api_post_status(path, body);
        assert!((200..300).contains(&status), "{path}: {status}\n{answer}");
        answer
    }

    /// POSTs JSON to the daemon's API socket; the HTTP status and the JSON answer (`null` for
    /// an empty one).
    #[allow(dead_code)] // for the inbox tests
    pub fn api_post_status(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> (u16, serde_json::Value) {
        use std::io::{Read, Write};
        let dir = self.dir.path().join("run/panectl");
        let socket = std::fs::read_dir(&dir)
            .expect("runtime directory")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "sock"))
            .expect("the API socket");
        let mut stream = std::os::unix::net::UnixStream::connect(socket).expect("connect");
        let body = body.to_string();
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: panectl\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("send");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).expect("read");
        let answer = String::from_utf8_lossy(&answer);
        let (head, rest) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .expect("an HTTP status");
        let rest = rest.trim();
        let json = if rest.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_str(rest).expect("a JSON answer")
        };
        (status, json)
    }

    /// Runs `panectl health --json` (which exits with 1 when the daemon is degraded).
    pub fn health(&self) -> serde_json::Value {
        let output = self
            .panectl()
            .args(["health", "--json"])
            .output()
            .expect("run panectl");
        serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
            panic!(
                "panectl health --json: {}",
                String::from_utf8_lossy(&output.stderr)
            )
        })
    }

    /// The daemon's mirrored screen of a pane.
    pub fn daemon_screen(&self, pane: &str) -> String {
        let output = self
            .panectl()
            .args(["screen", pane])
            .output()
            .expect("run panectl");
        String::from_utf8_lossy(&output.stdout)
            .trim_end_matches('\n')
            .to_string()
    }

    /// tmux's own screen of a pane, normalized like the daemon's.
    pub fn tmux_screen(&self, pane: &str) -> String {
        panectl::screen::normalize_capture(&self.tmux(&["capture-pane", "-p", "-t", pane]))
    }

    /// The logs of every daemon started for this server, for failure messages.
    pub fn daemon_logs(&self) -> String {
        let mut logs: Vec<_> = std::fs::read_dir(self.dir.path())
            .map(|dir| dir.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        logs.retain(|p: &std::path::PathBuf| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("daemon-") && n.ends_with(".log"))
        });
        logs.sort();
        let mut text = String::new();
        for log in logs {
            text.push_str(&format!("--- {}\n", log.display()));
            text.push_str(&std::fs::read_to_string(&log).unwrap_or_default());
        }
        text
    }

    /// What `panectl ls --json` says, whatever it says, for failure messages.
    pub fn panes_for_failure(&self) -> String {
        match self.panectl().args(["ls", "--json"]).output() {
            Ok(output) => format!(
                "panectl ls: {}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
            Err(error) => format!("panectl ls: {error}"),
        }
    }

    /// The last `lines` lines of the daemon logs, for failure messages.
    pub fn daemon_log_tail(&self, lines: usize) -> String {
        let logs = self.daemon_logs();
        let all: Vec<&str> = logs.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Starts a daemon for this server (in the foreground, as a child of the test).
    pub fn start_daemon(&self, extra: &[&str]) -> Daemon {
        self.start_daemon_with_env(extra, &[])
    }

    /// Starts a daemon with `env` added to its environment.
    pub fn start_daemon_with_env(&self, extra: &[&str], env: &[(String, String)]) -> Daemon {
        let daemon = self.spawn_daemon_with_env(extra, env);
        let deadline = Instant::now() + Duration::from_secs(10);
        // Up once health answers (exit code 1, degraded, counts: it answered) and no longer
        // says `starting` (the panes of every session are known).
        while self
            .panectl()
            .args(["health", "--json"])
            .output()
            .is_ok_and(|o| {
                serde_json::from_slice::<serde_json::Value>(&o.stdout)
                    .map_or(true, |health| health["status"] == "starting")
            })
        {
            assert!(
                Instant::now() < deadline,
                "the daemon did not start: {}",
                daemon.log_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        daemon
    }

    /// Starts a daemon (in the foreground, as a child of the test) and returns at once,
    /// without waiting for its API.
    pub fn spawn_daemon_with_env(&self, extra: &[&str], env: &[(String, String)]) -> Daemon {
        let log = self.dir.path().join(format!(
            "daemon-{}.log",
            NEXT_SERVER.fetch_add(1, Ordering::Relaxed)
        ));
        let child = self
            .panectl()
            .arg("daemon")
            .args(extra)
            .arg("--log-file")
            .arg(&log)
            .env("PANECTL_LOG", "debug")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the daemon");
        Daemon { child, log }
    }

    /// Waits until `condition` holds, polling; panics with `what` after `timeout`.
    pub fn wait_for(&self, what: &str, timeout: Duration, mut condition: impl FnMut() -> bool) {
        let deadline = Instant::now() + timeout;
        while !condition() {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}\n{}\n{}",
                self.daemon_log_tail(80),
                self.panes_for_failure()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Waits until the daemon mirrors exactly `count` panes, all seeded.
    pub fn wait_for_panes(&self, count: usize) -> Vec<serde_json::Value> {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let last = self.panes();
            if last.len() == count && last.iter().all(|p| p["sync"] == "live") {
                return last;
            }
            assert!(
                Instant::now() < deadline,
                "expected {count} live panes, have {last:#?}\n{}",
                self.daemon_logs()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Runs `scripts/programs/redraw-bursts.py BURSTS FRAMES DELAY` in `pane` (a full-screen
    /// program redrawing in bursts on the alternate screen) and waits for its settled frame.
    #[allow(dead_code)] // not every test module uses it
    pub fn run_redraw_bursts(&self, pane: &str, bursts: u32) {
        let program = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/programs/redraw-bursts.py"
        );
        self.tmux(&[
            "send-keys",
            "-t",
            pane,
            &format!("python3 {program} {bursts} 80 0.05"),
            "Enter",
        ]);
        self.wait_for("the program to settle", Duration::from_secs(30), || {
            self.tmux_screen(pane).contains("settled frame")
        });
    }

    /// Waits until the daemon's screen of `pane` equals tmux's.
    pub fn wait_for_same_screen(&self, pane: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let ours = self.daemon_screen(pane);
            let theirs = self.tmux_screen(pane);
            if ours == theirs {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "screen of {pane} differs:\n--- daemon\n{ours}\n--- tmux\n{theirs}"
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

/// Sends SIGKILL to each of `pids` (processes a test found and must kill, such as tmux's pipe
/// writer or the daemon's control client).
#[allow(dead_code)] // not every test module uses it
pub fn kill_all(pids: impl IntoIterator<Item = i32>) {
    for pid in pids {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        )
        .expect("kill a process the test started");
    }
}

/// A running `panectl daemon`, ended (SIGTERM, then SIGKILL) and reaped on drop.
pub struct Daemon {
    child: Child,
    log: std::path::PathBuf,
}

impl Daemon {
    /// The daemon's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Kills it with SIGKILL (a crash) and reaps it.
    pub fn crash(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Asks it to stop and waits; returns whether it exited within `timeout`.
    pub fn stop(&mut self, timeout: Duration) -> bool {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        self.wait_exit(timeout)
    }

    /// Waits for it to exit on its own; returns whether it did within `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        if !self.stop(Duration::from_secs(5)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Serializes the tests that run a daemon: they measure time and share two CPU cores.
pub fn daemon_test_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An ordinary (non-control) tmux client on a pseudo-terminal of a given size, like a user's
/// terminal. Its output is drained and thrown away.
pub struct PtyClient {
    child: Child,
    drain: Option<JoinHandle<()>>,
}

impl PtyClient {
    /// The client's pid (tests stop it to hold a dying server open).
    #[allow(dead_code)] // not every test binary that shares this harness uses it
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Attaches to session `$0` from a `width` x `height` terminal.
    pub fn attach(server: &TmuxServer, width: u16, height: u16) -> PtyClient {
        PtyClient::attach_to(server, "$0", width, height)
    }

    /// Attaches to `session` from a `width` x `height` terminal.
    pub fn attach_to(server: &TmuxServer, session: &str, width: u16, height: u16) -> PtyClient {
        let size = nix::pty::Winsize {
            ws_row: height,
            ws_col: width,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = nix::pty::openpty(Some(&size), None).expect("openpty");
        let slave = std::fs::File::from(pty.slave);
        let child = server
            .command()
            .args(["attach-session", "-t", session])
            .env("TERM", "xterm")
            .stdin(Stdio::from(slave.try_clone().expect("dup")))
            .stdout(Stdio::from(slave.try_clone().expect("dup")))
            .stderr(Stdio::from(slave))
            .spawn()
            .expect("start a tmux client");
        let mut master = std::fs::File::from(pty.master);
        let drain = std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while matches!(master.read(&mut buffer), Ok(n) if n > 0) {}
        });
        PtyClient {
            child,
            drain: Some(drain),
        }
    }
}

impl Drop for PtyClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(drain) = self.drain.take() {
            // The master reads EOF/EIO once every slave copy is closed.
            let _ = drain.join();
        }
    }
}

/// Reads `panectl events --json` in the background.
pub struct EventReader {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<serde_json::Value>,
    seen: std::cell::RefCell<Vec<serde_json::Value>>,
}

impl EventReader {
    pub fn start(server: &TmuxServer) -> EventReader {
        use std::io::BufRead;
        let mut child = server
            .panectl()
            .args(["events", "--json", "--output"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel::<serde_json::Value>();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if let Ok(value) = serde_json::from_str(&line)
                    && sender.send(value).is_err()
                {
                    break;
                }
            }
        });
        // The stream's first event says the subscription is in place.
        match lines.recv_timeout(Duration::from_secs(10)) {
            Ok(first) if first["type"] == "subscribed" => {}
            other => panic!("panectl events did not start with `subscribed`: {other:?}"),
        }
        EventReader {
            child,
            lines,
            seen: std::cell::RefCell::new(Vec::new()),
        }
    }

    /// Waits for an event matching `wanted` (seen before or arriving now); returns it.
    pub fn expect(
        &self,
        what: &str,
        wanted: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        self.expect_within(what, Duration::from_secs(10), wanted)
    }

    /// [`EventReader::expect`] with another deadline (a program's cold start on a loaded
    /// machine, say).
    pub fn expect_within(
        &self,
        what: &str,
        within: Duration,
        wanted: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        if let Some(event) = self.seen.borrow().iter().find(|e| wanted(e)) {
            return event.clone();
        }
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(event) => {
                    self.seen.borrow_mut().push(event.clone());
                    if wanted(&event) {
                        return event;
                    }
                }
                Err(_) => panic!(
                    "no {what} event within {within:?}; saw {:#?}",
                    self.seen.borrow()
                ),
            }
        }
    }
}

impl EventReader {
    /// Every event seen so far (also the ones that arrive now).
    #[allow(dead_code)] // for the agent tests
    pub fn seen_events(&self) -> Vec<serde_json::Value> {
        while let Ok(event) = self.lines.try_recv() {
            self.seen.borrow_mut().push(event);
        }
        self.seen.borrow().clone()
    }
}

impl Drop for EventReader {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
