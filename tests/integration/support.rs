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

/// A tmux server of the test's own.
pub struct TmuxServer {
    socket: String,
    dir: tempfile::TempDir,
    pid: i32,
}

impl TmuxServer {
    /// Starts a server with one detached session of the given size running `sh`.
    pub fn start(width: u16, height: u16) -> TmuxServer {
        let dir = tempfile::Builder::new()
            .prefix("panectl-test-")
            .tempdir()
            .expect("temporary directory");
        let socket = format!(
            "panectl-test-{}-{}",
            std::process::id(),
            NEXT_SERVER.fetch_add(1, Ordering::Relaxed)
        );
        let mut server = TmuxServer {
            socket,
            dir,
            pid: 0,
        };
        server.tmux(&[
            "new-session",
            "-d",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "sh",
        ]);
        server.pid = server
            .tmux(&["display-message", "-p", "#{pid}"])
            .trim()
            .parse()
            .expect("server pid");
        server
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
