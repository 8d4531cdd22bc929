//! A tmux server on another machine, reached with OpenSSH ([`SshHost`]).
//!
//! Control mode is a byte stream over stdio, so a control client runs on the remote host as
//! `ssh DEST tmux -C attach-session ...` and the daemon reads it as it reads a local one. ssh is
//! the only transport: the user's `~/.ssh/config`, agent, keys, `ProxyJump` all apply. The ssh
//! command is `ssh`, or `PANECTL_SSH_COMMAND` / `--ssh-command` (a shell command line, like
//! `GIT_SSH_COMMAND`), run as `sh -c 'COMMAND "$@"'` with panectl's options and the
//! destination as arguments.
//!
//! - **One connection.** The daemon keeps one ssh master (`ControlMaster`) per server, with
//!   keepalives ([`Host::link_command`]; its own session reads the daemon's pipe, so it ends
//!   with the daemon); every other ssh process of the daemon (control
//!   clients, one-shot tmux commands, process listings) is a session multiplexed over it. While
//!   the daemon's master is down the server counts as not running, so nothing opens a second
//!   connection; the daemon restarts the master with a backoff. Commands that run without a
//!   daemon (`doctor`) connect on their own.
//! - **Words.** The remote command is a line the remote login shell reads: every word is quoted
//!   for it ([`quote`]), user text included, so `#{...}`, `;`, quotes and newlines arrive as
//!   they are.
//! - **Attaching safely.** tmux 3.2 to 3.7 can crash when a control client attaches at the
//!   wrong moment (docs/tmux-crashes.md). On this machine panectl's relay prevents it; on the
//!   remote host a Python twin of that relay does (`gate.py`, run with `python3 -c`). A host
//!   with an affected tmux and no `python3` is refused, with the reason in `health`; a tmux
//!   without the crash is attached directly.
//! - **The remote socket** is `-S PATH` or `-L NAME` as given, resolved by the remote tmux (its
//!   `TMUX_TMPDIR` and uid), and `-L default` when neither is given: `$TMUX` says nothing about
//!   another machine.
//! - **What the host is asked**: liveness (`tmux list-sessions`), process trees (one `ps` for
//!   the whole host, kept for a second), directories (`test -d`). The pipe transport is off:
//!   tmux there cannot write into a FIFO here.

pub mod quote;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::info::{PROBE, RemoteError, RemoteInfo};
use super::{Host, HostError};
use crate::ids::PaneId;
use crate::pipe::Fifo;
use crate::status::process::ProcessEntry;

/// The Python relay that attaches a control client safely on the remote host.
const GATE: &str = include_str!("gate.py");

/// The environment variable that replaces the `ssh` command (like `GIT_SSH_COMMAND`).
pub const SSH_COMMAND_VARIABLE: &str = "PANECTL_SSH_COMMAND";

/// How long a one-shot remote command may take.
const REMOTE_TIMEOUT: Duration = Duration::from_secs(15);

/// How long a process listing of the host is reused.
const PROCESSES_FRESH: Duration = Duration::from_secs(1);

/// How a server on another host is reached: chosen on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshOptions {
    /// Anything `ssh` accepts as a destination (`host`, `user@host`, a `~/.ssh/config` alias).
    pub destination: String,
    /// The ssh command line (`ssh` unless replaced).
    pub command: String,
    /// Seconds between the master's keepalives (`ServerAliveInterval`).
    pub alive_interval: u32,
    /// Keepalives without an answer before the master gives up (`ServerAliveCountMax`).
    pub alive_count: u32,
}

impl SshOptions {
    /// Options for `destination`, with the ssh command from `command` (a flag), else
    /// `PANECTL_SSH_COMMAND`, else `ssh`.
    pub fn new(destination: &str, command: Option<&str>) -> SshOptions {
        let command = command
            .map(str::to_string)
            .or_else(|| std::env::var(SSH_COMMAND_VARIABLE).ok())
            .filter(|c| !c.trim().is_empty())
            .unwrap_or_else(|| "ssh".to_string());
        SshOptions {
            destination: destination.to_string(),
            command,
            alive_interval: 5,
            alive_count: 3,
        }
    }
}

/// Why a destination cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SshError {
    /// An empty destination, or one ssh would read as an option.
    #[error("invalid ssh destination {0:?}")]
    BadDestination(String),
}

/// See the module documentation.
#[derive(Debug)]
pub struct SshHost {
    name: String,
    options: SshOptions,
    /// The master's socket (`ControlPath`).
    control_path: PathBuf,
    /// The daemon keeps a master: nothing may connect on its own while it is down.
    owns_link: AtomicBool,
    /// The master is up.
    link_up: AtomicBool,
    /// Why the host cannot be used, as last seen.
    problem: Mutex<Option<String>>,
    /// What the host has, once probed on the current connection.
    remote: Mutex<Option<RemoteInfo>>,
    /// The last process listing and when it was taken.
    processes: Mutex<Option<(Instant, Vec<RemoteProcess>)>>,
}

/// What an ssh process is for.
#[derive(Debug, Clone, Copy)]
enum Role {
    /// The daemon's master connection.
    Master,
    /// A session multiplexed over it.
    Session,
    /// Asks a master to end.
    Exit,
}

/// A process of the remote host, from `ps`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RemoteProcess {
    pid: u32,
    parent: u32,
    command_line: String,
}

impl SshHost {
    /// The host `options.destination`, its master's socket in `runtime_dir` named after
    /// `stem` (the server's runtime stem).
    pub fn new(
        options: SshOptions,
        runtime_dir: &Path,
        socket: &Path,
    ) -> Result<SshHost, SshError> {
        let destination = &options.destination;
        if destination.is_empty()
            || destination.starts_with('-')
            || destination.chars().any(char::is_whitespace)
        {
            return Err(SshError::BadDestination(destination.clone()));
        }
        let stem = stem(destination, socket);
        Ok(SshHost {
            name: format!("ssh:{destination}"),
            control_path: runtime_dir.join(format!("{stem}.ssh")),
            options,
            owns_link: AtomicBool::new(false),
            link_up: AtomicBool::new(false),
            problem: Mutex::new(None),
            remote: Mutex::new(None),
            processes: Mutex::new(None),
        })
    }

    /// The destination as given.
    pub fn destination(&self) -> &str {
        &self.options.destination
    }

    /// The master's socket.
    pub fn control_path(&self) -> &Path {
        &self.control_path
    }

    /// `sh -c 'SSH "$@"' panectl-ssh OPTIONS -- DEST`, to which the remote command is added.
    fn ssh_base(&self, master: bool) -> Command {
        self.ssh_with(if master { Role::Master } else { Role::Session })
    }

    fn ssh_with(&self, role: Role) -> Command {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!("{} \"$@\"", self.options.command))
            .arg("panectl-ssh");
        let control_path = format!(
            "ControlPath=\"{}\"",
            self.control_path.display().to_string().replace('%', "%%")
        );
        command.args(["-o", &control_path]);
        match role {
            Role::Master => {
                command.args(["-o", "ControlMaster=yes", "-o", "ControlPersist=no", "-T"]);
            }
            Role::Session => {
                command.args(["-o", "ControlMaster=no", "-T"]);
                if self.owns_link.load(Ordering::Relaxed) {
                    // Only through the daemon's master: a session that finds it gone (it
                    // ended between the check and the connect) fails instead of making a
                    // connection of its own, which nothing would watch.
                    command.args(["-o", "ProxyCommand=false"]);
                }
            }
            Role::Exit => {
                command.args(["-o", "ControlMaster=no", "-O", "exit"]);
            }
        }
        command.args([
            "-o",
            "BatchMode=yes",
            "-o",
            &format!("ServerAliveInterval={}", self.options.alive_interval),
            "-o",
            &format!("ServerAliveCountMax={}", self.options.alive_count),
            "-o",
            "ConnectTimeout=10",
            "--",
            &self.options.destination,
        ]);
        command.env_remove("TMUX").stdin(Stdio::null());
        command
    }

    /// An ssh process that runs `words` on the host (each quoted for its login shell).
    pub fn remote_command<W: AsRef<[u8]>>(&self, words: &[W]) -> Command {
        let mut command = self.ssh_base(false);
        command.arg(std::ffi::OsStr::from_bytes(&quote::command_line(words)));
        command
    }

    /// The `-S PATH` or `-L NAME` words of the remote server.
    fn socket_words(socket: &Path) -> [Vec<u8>; 2] {
        let flag = if socket.is_absolute() { "-S" } else { "-L" };
        [
            flag.as_bytes().to_vec(),
            socket.as_os_str().as_bytes().to_vec(),
        ]
    }

    /// Whether the daemon's master is required and down: then nothing connects.
    fn link_missing(&self) -> bool {
        self.owns_link.load(Ordering::Relaxed) && !self.link_up.load(Ordering::Relaxed)
    }

    /// Runs `words` on the host and returns its output, or why it could not.
    fn run(&self, words: &[&[u8]]) -> Result<std::process::Output, RemoteError> {
        if self.link_missing() {
            return Err(RemoteError::NotConnected(
                self.problem().unwrap_or_else(|| "not connected".into()),
            ));
        }
        let mut command = self.remote_command(words);
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let output = blocking(|| run_with_timeout(command, REMOTE_TIMEOUT))?;
        // 255 is ssh's own failure: the host, not the command.
        if output.status.code() == Some(255) {
            let why = last_line(&output.stderr)
                .unwrap_or_else(|| "ssh failed without saying why".to_string());
            self.set_problem(Some(why.clone()));
            return Err(RemoteError::Ssh(why));
        }
        Ok(output)
    }

    /// What the host has (tmux, python3), probed once per connection.
    pub fn remote_info(&self) -> Result<RemoteInfo, RemoteError> {
        if let Some(info) = self.remote.lock().ok().and_then(|r| r.clone()) {
            return Ok(info);
        }
        let output = self.run(&[b"sh", b"-c", PROBE.as_bytes()])?;
        let info = RemoteInfo::parse(&String::from_utf8_lossy(&output.stdout));
        if let Ok(mut remote) = self.remote.lock() {
            *remote = Some(info.clone());
        }
        Ok(info)
    }

    fn set_problem(&self, why: Option<String>) {
        if let Ok(mut problem) = self.problem.lock() {
            *problem = why;
        }
    }

    fn listing(&self) -> Vec<RemoteProcess> {
        if let Ok(cached) = self.processes.lock()
            && let Some((taken, list)) = cached.as_ref()
            && taken.elapsed() < PROCESSES_FRESH
        {
            return list.clone();
        }
        let Ok(output) = self.run(&[
            b"ps", b"-A", b"-o", b"pid=", b"-o", b"ppid=", b"-o", b"args=",
        ]) else {
            return Vec::new();
        };
        let list = parse_ps(&output.stdout);
        if let Ok(mut cached) = self.processes.lock() {
            *cached = Some((Instant::now(), list.clone()));
        }
        list
    }
}

/// The runtime stem of a server on `destination`: `ssh-<destination>-<socket>-<hash>`, safe
/// in a file name, the same for every command that names the same destination and socket.
pub fn stem(destination: &str, socket: &Path) -> String {
    let clean = |text: &str, keep: usize| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(keep)
            .collect()
    };
    let socket_name = socket
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut identity = destination.as_bytes().to_vec();
    identity.push(0);
    identity.extend_from_slice(socket.as_os_str().as_bytes());
    format!(
        "ssh-{}-{}-{:08x}",
        clean(destination, 24),
        clean(&socket_name, 16),
        super::fnv1a(&identity)
    )
}

/// `ps -o pid=,ppid=,args=` lines: two numbers, then the command line.
fn parse_ps(output: &[u8]) -> Vec<RemoteProcess> {
    String::from_utf8_lossy(output)
        .lines()
        .filter_map(|line| {
            let mut rest = line.trim_start();
            let mut number = || -> Option<u32> {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                let value = rest[..end].parse().ok()?;
                rest = rest[end..].trim_start();
                Some(value)
            };
            let pid = number()?;
            let parent = number()?;
            Some(RemoteProcess {
                pid,
                parent,
                command_line: rest.trim_end().to_string(),
            })
        })
        .collect()
}

/// The tree of `pid` in a listing, breadth first, at most `limit`, named as `/proc` names
/// them here (the program's file name, without a login shell's `-`).
fn tree_of(list: &[RemoteProcess], pid: u32, limit: usize) -> Vec<ProcessEntry> {
    let mut out = Vec::new();
    let mut queue = std::collections::VecDeque::from([pid]);
    while let Some(next) = queue.pop_front() {
        if out.len() >= limit {
            break;
        }
        if let Some(found) = list.iter().find(|p| p.pid == next) {
            let program = found.command_line.split_whitespace().next().unwrap_or("");
            let name = program
                .rsplit('/')
                .next()
                .unwrap_or(program)
                .trim_start_matches('-')
                .to_string();
            out.push(ProcessEntry {
                pid: found.pid,
                name,
                command_line: found.command_line.clone(),
            });
        }
        queue.extend(list.iter().filter(|p| p.parent == next).map(|p| p.pid));
    }
    out
}

/// The last non-empty line of ssh's stderr.
fn last_line(stderr: &[u8]) -> Option<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// Runs a blocking call from async code without stalling the runtime's other tasks (on a
/// multi-thread runtime; elsewhere it simply runs).
fn blocking<T>(call: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(call)
        }
        _ => call(),
    }
}

/// Runs `command` to the end, killed after `timeout`.
fn run_with_timeout(
    mut command: Command,
    timeout: Duration,
) -> Result<std::process::Output, RemoteError> {
    crate::host::count_process_started();
    let mut child = command
        .spawn()
        .map_err(|e| RemoteError::Spawn(e.to_string()))?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let read = |pipe: Option<std::process::ChildStdout>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = std::io::Read::read_to_end(&mut pipe, &mut bytes);
            }
            bytes
        })
    };
    let out_reader = read(stdout);
    let err_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = stderr {
            let _ = std::io::Read::read_to_end(&mut pipe, &mut bytes);
        }
        bytes
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RemoteError::TimedOut(timeout));
            }
            Err(error) => return Err(RemoteError::Spawn(format!("cannot wait for it: {error}"))),
        }
    };
    Ok(std::process::Output {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    })
}

impl Host for SshHost {
    fn name(&self) -> &str {
        &self.name
    }

    fn server_alive(&self, socket: &Path) -> bool {
        let [flag, path] = SshHost::socket_words(socket);
        match self.run(&[b"tmux", &flag, &path, b"list-sessions", b"-F", b"x"]) {
            Ok(output) => {
                if output.status.success() {
                    self.set_problem(None);
                } else {
                    // No server, or no tmux at all: the probe (kept) tells them apart, and
                    // `problem` says the latter.
                    let _ = self.remote_info();
                }
                output.status.success()
            }
            Err(_) => false,
        }
    }

    fn tmux_command(&self, socket: &Path, args: &[&str]) -> Command {
        let [flag, path] = SshHost::socket_words(socket);
        let mut words: Vec<&[u8]> = vec![b"tmux", b"-u", &flag, &path];
        words.extend(args.iter().map(|a| a.as_bytes()));
        self.remote_command(&words)
    }

    fn attach_command(&self, socket: &Path, args: &[&str]) -> Option<Result<Command, HostError>> {
        let refuse = |why: String| {
            Some(Err(HostError::CannotAttach {
                host: self.name.clone(),
                why,
            }))
        };
        if self.link_missing() {
            return refuse(self.problem().unwrap_or_else(|| "not connected".into()));
        }
        let info = match self.remote_info() {
            Ok(info) => info,
            Err(why) => return refuse(why.to_string()),
        };
        if let Err(why) = info.attach_way() {
            return refuse(why.to_string());
        }
        let [flag, path] = SshHost::socket_words(socket);
        let mut words: Vec<&[u8]> = if info.python3 {
            vec![b"python3", b"-c", GATE.as_bytes(), &flag, &path]
        } else {
            vec![b"tmux", b"-u", &flag, &path]
        };
        words.extend(args.iter().map(|a| a.as_bytes()));
        let mut command = self.remote_command(&words);
        command.stdin(Stdio::piped());
        Some(Ok(command))
    }

    fn link_command(&self) -> Option<Command> {
        self.owns_link.store(true, Ordering::Relaxed);
        let mut command = self.ssh_base(true);
        // The master's own session reads its stdin until the daemon closes it: a daemon that
        // dies (even by SIGKILL) ends its master with it, once its other sessions have ended
        // (their stdins close too), and leaves no connection behind.
        command.arg(std::ffi::OsStr::from_bytes(&quote::command_line(&[
            "sh",
            "-c",
            "while read -r line; do :; done",
        ])));
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        Some(command)
    }

    fn link_socket(&self) -> Option<&Path> {
        Some(&self.control_path)
    }

    fn link_exit_command(&self) -> Option<Command> {
        let mut command = self.ssh_with(Role::Exit);
        command.stdout(Stdio::null()).stderr(Stdio::null());
        Some(command)
    }

    fn set_link(&self, up: bool, problem: Option<String>) {
        self.link_up.store(up, Ordering::Relaxed);
        if !up && let Ok(mut remote) = self.remote.lock() {
            *remote = None;
        }
        if up || problem.is_some() {
            self.set_problem(problem);
        }
    }

    fn reachable(&self) -> bool {
        !self.link_missing()
    }

    fn link_settled(&self) -> bool {
        !self.owns_link.load(Ordering::Relaxed)
            || self.link_up.load(Ordering::Relaxed)
            || self.problem().is_some()
    }

    fn problem(&self) -> Option<String> {
        // What ssh said last, else what the host lacks (as long as it lacks it).
        self.problem
            .lock()
            .ok()
            .and_then(|p| p.clone())
            .or_else(|| {
                self.remote
                    .lock()
                    .ok()
                    .and_then(|r| r.as_ref().and_then(|info| info.attach_way().err()))
                    .map(|why| why.to_string())
            })
    }

    fn check(&self) -> Option<Result<RemoteInfo, RemoteError>> {
        Some(self.remote_info())
    }

    fn process_tree(&self, pid: u32, limit: usize) -> Vec<ProcessEntry> {
        tree_of(&self.listing(), pid, limit)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.run(&[b"test", b"-d", path.as_os_str().as_bytes()])
            .is_ok_and(|output| output.status.success())
    }

    fn make_fifo(&self, _dir: &Path, _pane: PaneId) -> Result<Fifo, HostError> {
        Err(HostError::NoPipes {
            host: self.name.clone(),
        })
    }

    fn has_pipes(&self) -> bool {
        false
    }

    fn runtime_stem(&self, socket: &Path) -> String {
        stem(&self.options.destination, socket)
    }
}

#[cfg(test)]
mod tests;
