//! A real OpenSSH server for the remote-server tests: `sshd -D` on 127.0.0.1 and a free port,
//! with its own host key, an authorized key of its own, and an ssh client config that names it
//! with an alias (so the tests also prove that `~/.ssh/config` aliases work). Everything lives
//! in a temporary directory; dropping the [`Sshd`] ends the server and every session process
//! it forked, by pid.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The alias the client config gives the server.
pub const ALIAS: &str = "panectl-remote";

/// An alias for a port nothing listens on.
pub const REFUSED_ALIAS: &str = "panectl-refused";

/// An alias for the server with a key it does not accept.
pub const WRONG_KEY_ALIAS: &str = "panectl-wrong-key";

/// An alias for a host without tmux (sh, ps and python3 only).
pub const NO_TMUX_ALIAS: &str = "panectl-no-tmux";

/// An alias for a host with tmux and without python3 (sh, ps and tmux only).
pub const NO_PYTHON_ALIAS: &str = "panectl-no-python";

/// See the module documentation.
pub struct Sshd {
    dir: tempfile::TempDir,
    child: Child,
    port: u16,
}

fn sshd_binary() -> PathBuf {
    for candidate in ["/usr/sbin/sshd", "/usr/local/sbin/sshd", "/sbin/sshd"] {
        if Path::new(candidate).exists() {
            return PathBuf::from(candidate);
        }
    }
    panic!(
        "sshd is not installed: the remote-server tests need OpenSSH's server (.ci/run installs openssh-server)"
    );
}

fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .stdout(Stdio::null())
        .status()
        .expect("run ssh-keygen");
    assert!(status.success(), "ssh-keygen failed");
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

impl Sshd {
    /// Starts the server and waits until it accepts connections.
    pub fn start() -> Sshd {
        let dir = tempfile::Builder::new()
            .prefix("panectl-sshd-")
            .tempdir()
            .expect("temporary directory");
        let path = dir.path();
        keygen(&path.join("host_key"));
        keygen(&path.join("id"));
        keygen(&path.join("other_id"));
        std::fs::copy(path.join("id.pub"), path.join("authorized_keys")).expect("authorized key");
        if nix::unistd::getuid().is_root() && !Path::new("/run/sshd").exists() {
            // sshd's privilege separation directory, which its init script makes at boot.
            std::fs::create_dir_all("/run/sshd").expect("make /run/sshd");
        }
        let user = std::env::var("USER")
            .ok()
            .filter(|u| !u.is_empty())
            .or_else(|| {
                nix::unistd::User::from_uid(nix::unistd::getuid())
                    .ok()
                    .flatten()
                    .map(|u| u.name)
            })
            .expect("user name");
        // Hosts with less installed: the same server on other ports, where a forced command
        // runs what was asked with a PATH of a few programs.
        let limited = |name: &str, programs: &[&str]| -> PathBuf {
            let bin = path.join(name);
            std::fs::create_dir(&bin).expect("a limited bin directory");
            for program in programs {
                let found = ["/usr/bin", "/bin", "/usr/local/bin"]
                    .iter()
                    .map(|d| Path::new(d).join(program))
                    .find(|p| p.exists())
                    .unwrap_or_else(|| panic!("{program} is not installed"));
                std::os::unix::fs::symlink(found, bin.join(program)).expect("link a program");
            }
            bin
        };
        // The sessions' home: the login shell reads its start-up files from there, not from the
        // user's home, whose files the tests do not own (a stale pyenv rehash lock left in
        // ~/.bashrc's way by some killed shell made every ssh command wait 60 s for it).
        std::fs::create_dir(path.join("home")).expect("the sessions' home directory");
        let no_tmux = limited("bin-no-tmux", &["sh", "ps", "python3"]);
        let no_python = limited("bin-no-python", &["sh", "ps", "tmux"]);
        for _attempt in 0..5 {
            let mut ports: Vec<u16> = Vec::new();
            while ports.len() < 4 {
                let port = free_port();
                if !ports.contains(&port) {
                    ports.push(port);
                }
            }
            let [port, no_tmux_port, no_python_port, closed] =
                [ports[0], ports[1], ports[2], ports[3]];
            let forced = |bin: &Path| {
                format!(
                    "ForceCommand PATH={}; export PATH; eval \"$SSH_ORIGINAL_COMMAND\"\n",
                    bin.display()
                )
            };
            std::fs::write(
                path.join("sshd_config"),
                format!(
                    "Port {port}\nPort {no_tmux_port}\nPort {no_python_port}\n\
                     ListenAddress 127.0.0.1\nHostKey {dir}/host_key\n\
                     PidFile {dir}/sshd.pid\nAuthorizedKeysFile {dir}/authorized_keys\n\
                     StrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                     UsePAM no\nPermitRootLogin prohibit-password\nLogLevel ERROR\n\
                     MaxSessions 100\nMaxStartups 100\nSetEnv HOME={dir}/home\n\
                     Match LocalPort {no_tmux_port}\n  {}\
                     Match LocalPort {no_python_port}\n  {}",
                    forced(&no_tmux),
                    forced(&no_python),
                    dir = path.display()
                ),
            )
            .expect("sshd config");
            let host_key = std::fs::read_to_string(path.join("host_key.pub")).expect("host key");
            let known: String = [port, no_tmux_port, no_python_port]
                .iter()
                .map(|p| format!("[127.0.0.1]:{p} {host_key}"))
                .collect();
            std::fs::write(path.join("known_hosts"), known).expect("known hosts");
            let alias = |name: &str, port: u16, key: &str| {
                format!(
                    "Host {name}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  \
                     IdentityFile {dir}/{key}\n  IdentitiesOnly yes\n  \
                     UserKnownHostsFile {dir}/known_hosts\n  StrictHostKeyChecking yes\n  \
                     LogLevel ERROR\n",
                    dir = path.display()
                )
            };
            let config = [
                alias(ALIAS, port, "id"),
                alias(REFUSED_ALIAS, closed, "id"),
                alias(WRONG_KEY_ALIAS, port, "other_id"),
                alias(NO_TMUX_ALIAS, no_tmux_port, "id"),
                alias(NO_PYTHON_ALIAS, no_python_port, "id"),
            ]
            .concat();
            std::fs::write(path.join("ssh_config"), config).expect("ssh config");
            let mut child = Command::new(sshd_binary())
                .args(["-D", "-e", "-f"])
                .arg(path.join("sshd_config"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(path.join("sshd.log")).expect("sshd log"))
                .spawn()
                .expect("start sshd");
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if [port, no_tmux_port, no_python_port]
                    .iter()
                    .all(|p| std::net::TcpStream::connect(("127.0.0.1", *p)).is_ok())
                {
                    return Sshd { dir, child, port };
                }
                if let Ok(Some(_)) = child.try_wait() {
                    break; // the port was taken meanwhile: try another
                }
                assert!(Instant::now() < deadline, "sshd did not listen");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        panic!(
            "sshd did not start: {}",
            std::fs::read_to_string(path.join("sshd.log")).unwrap_or_default()
        );
    }

    /// The ssh command line that reaches the server by [`ALIAS`] (`PANECTL_SSH_COMMAND`).
    pub fn ssh_command(&self) -> String {
        format!("ssh -F {}", self.dir.path().join("ssh_config").display())
    }

    /// The per-connection processes sshd forked (one per ssh connection, with its own
    /// children): the direct children of the listener.
    pub fn connection_pids(&self) -> Vec<i32> {
        children_of(self.child.id() as i32)
    }

    /// TCP connections established to the server's port (from `/proc/net/tcp`).
    pub fn established(&self) -> usize {
        let text = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
        let port = format!(":{:04X}", self.port);
        text.lines()
            .skip(1)
            .filter(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                fields.len() > 3 && fields[1].ends_with(&port) && fields[3] == "01"
            })
            .count()
    }
}

/// The direct children of `pid`.
pub fn children_of(pid: i32) -> Vec<i32> {
    let Ok(pid) = u32::try_from(pid) else {
        return Vec::new();
    };
    use panectl::os::process::{Snapshot, Source};
    Snapshot::read(Source::current())
        .children(pid)
        .into_iter()
        .filter_map(|child| i32::try_from(child).ok())
        .collect()
}

/// `pid` and every descendant, children first.
fn descendants(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for child in children_of(pid) {
        out.extend(descendants(child));
    }
    out.push(pid);
    out
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let pids = descendants(self.child.id() as i32);
        for pid in pids {
            let pid = nix::unistd::Pid::from_raw(pid);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
        let _ = self.child.wait();
    }
}
