//! `panectl` against a test's server: its commands and API, and [`Daemon`], a running daemon
//! ended on drop.

use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::tmux_server::{NEXT_SERVER, TmuxServer};

impl TmuxServer {
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
            .env("LC_ALL", "C.UTF-8")
            // No desktop notification of a test reaches the session bus of the machine's user
            // (the desktop test gives its daemon a bus of its own).
            .env_remove("DBUS_SESSION_BUS_ADDRESS");
        command
    }

    /// Runs `panectl ARGS` and returns stdout; panics with stderr on failure.
    pub fn panectl_ok(&self, args: &[&str]) -> String {
        let output = self.panectl().args(args).output().expect("run panectl");
        assert!(
            output.status.success(),
            "panectl {args:?} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr),
            String::from_utf8_lossy(&output.stdout)
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
            // Desktop notifications off unless the test asks for them (`--notify-desktop ...`).
            .args(
                (!extra.iter().any(|a| a.starts_with("--notify-desktop")))
                    .then_some("--notify-desktop=false"),
            )
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
