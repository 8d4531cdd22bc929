//! [`TmuxServer`]: a private tmux server, started in the background or the foreground, and
//! killed on drop.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use panectl::control::Decoder;

use super::ControlClient;

pub(super) static NEXT_SERVER: AtomicU32 = AtomicU32::new(0);

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
    pub(super) socket: String,
    pub(super) dir: tempfile::TempDir,
    pub(super) pid: i32,
    /// A server started in the foreground (`tmux -D`) is the test's child: how it ended can
    /// be read (an exit or a signal such as SIGSEGV).
    pub(super) foreground: Option<Child>,
    /// `panectl` reaches this server over ssh: the destination and the ssh command.
    pub(super) remote: Option<(String, String)>,
    /// The runtime directory of `panectl` commands, when not the server's own.
    pub(super) runtime: Option<std::path::PathBuf>,
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
        let mut server = TmuxServer {
            socket,
            dir,
            pid: 0,
            foreground: None,
            remote: None,
            runtime: None,
        };
        server.start_again_configured(config, env);
        server
    }

    /// Starts a server on this socket as [`TmuxServer::start_configured`] does (after the old
    /// one ended: a user's tmux starting again); the new server is the one ended on drop.
    #[allow(dead_code)] // for the plugin tests
    pub fn start_again_configured(&mut self, config: &std::path::Path, env: &[(&str, String)]) {
        let output = Command::new("tmux")
            .args(["-L", &self.socket, "-f"])
            .arg(config)
            .args(["new-session", "-d", "-x", "120", "-y", "40", "sh"])
            .env_remove("TMUX")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env("TMUX_TMPDIR", self.dir.path())
            .env("LC_ALL", "C.UTF-8")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .output()
            .expect("start tmux");
        assert!(
            output.status.success(),
            "tmux did not start: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        self.pid = self.server_pid();
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
            // Nothing the server runs (a daemon the plugin starts) finds the user's session bus.
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
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
}
