//! The pids of the daemon's own `tmux -C` clients, kept in a file so that a daemon restarted
//! after a crash can end clients its predecessor left behind.
//!
//! Normally none survive: a client whose stdin closes (its daemon died) detaches. The file is
//! the guarantee for the abnormal cases (a client wedged in a write, say). A pid is only killed
//! if `/proc` still shows it as a tmux control client of the same server.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::address::ServerAddress;

struct Registry {
    file: PathBuf,
    pids: BTreeSet<u32>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn save(registry: &Registry) {
    let text: String = registry.pids.iter().map(|pid| format!("{pid}\n")).collect();
    if let Err(error) = crate::trust::write_private(&registry.file, text.as_bytes()) {
        tracing::warn!(file = %registry.file.display(), %error, "cannot record control client pids");
    }
}

/// Starts recording into `file`.
pub fn init(file: PathBuf) {
    let registry = Registry {
        file,
        pids: BTreeSet::new(),
    };
    save(&registry);
    if let Ok(mut guard) = REGISTRY.lock() {
        *guard = Some(registry);
    }
}

/// Records a client the daemon started.
pub fn remember(_address: &ServerAddress, pid: u32) {
    if let Ok(mut guard) = REGISTRY.lock()
        && let Some(registry) = guard.as_mut()
        && registry.pids.insert(pid)
    {
        save(registry);
    }
}

/// Forgets a client that has been reaped.
pub fn forget(_address: &ServerAddress, pid: u32) {
    forget_pid(pid);
}

/// Forgets a client that has been reaped.
pub fn forget_pid(pid: u32) {
    if let Ok(mut guard) = REGISTRY.lock()
        && let Some(registry) = guard.as_mut()
        && registry.pids.remove(&pid)
    {
        save(registry);
    }
}

/// Whether the process's command line shows a `tmux ... -C` process for `socket`, or for a
/// relay socket in `attach_dir` (how the daemon's clients attach: `tmux::attach`).
fn is_our_tmux_client(pid: u32, socket: &Path, attach_dir: &Path) -> bool {
    let Some(process) = crate::os::process::info(pid) else {
        return false;
    };
    let args: Vec<&[u8]> = process
        .arguments
        .iter()
        .map(|a| a.as_encoded_bytes())
        .collect();
    let is_tmux = args.first().is_some_and(|arg0| arg0.ends_with(b"tmux"));
    let control = args.iter().any(|a| *a == b"-C");
    let attach_dir = attach_dir.as_os_str().as_encoded_bytes();
    let same_server = args.iter().any(|arg| {
        *arg == socket.as_os_str().as_encoded_bytes()
            || (arg.starts_with(attach_dir) && arg.get(attach_dir.len()) == Some(&b'/'))
    });
    is_tmux && control && same_server
}

/// Ends control clients a previous daemon recorded in `file` and that are still running.
/// Returns how many it ended. (A client attached through a relay normally leaves by itself
/// when its daemon dies: its connection closes.)
pub fn end_leftovers(file: &Path, address: &ServerAddress, attach_dir: &Path) -> usize {
    let Ok(text) = std::fs::read_to_string(file) else {
        return 0;
    };
    let mut ended = 0;
    for pid in text.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
        if is_our_tmux_client(pid, address.socket(), attach_dir) {
            let Ok(raw) = i32::try_from(pid) else {
                continue;
            };
            if nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(raw),
                nix::sys::signal::Signal::SIGTERM,
            )
            .is_ok()
            {
                tracing::info!(pid, "ended a control client left by a previous daemon");
                ended += 1;
            }
        }
    }
    ended
}
