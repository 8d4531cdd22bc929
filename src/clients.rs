//! The pids of the daemon's own `tmux -C` clients, kept in a file so that a daemon restarted
//! after a crash can end clients its predecessor left behind.
//!
//! Normally none survive: a client whose stdin closes (its daemon died) detaches. The file is
//! the guarantee for the abnormal cases (a client wedged in a write, say). A pid is only killed
//! if `/proc` still shows it as a tmux control client of the same server.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::address::ServerAddress;

/// The record of the daemon's control clients: the pids it started and has not reaped yet,
/// written to its file at each change. Shared by every task that starts a client (the
/// connections and the flow-control guard) as a [`ClientRecord`].
#[derive(Debug, Default)]
pub struct ClientRegistry {
    /// Where the pids are written; `None` keeps them in memory only (tests, tools).
    file: Option<PathBuf>,
    pids: Mutex<BTreeSet<u32>>,
}

/// A shared [`ClientRegistry`].
pub type ClientRecord = Arc<ClientRegistry>;

impl ClientRegistry {
    /// Starts a record in `file` (emptied now: the clients a previous daemon left have been
    /// dealt with by [`end_leftovers`]).
    pub fn in_file(file: PathBuf) -> ClientRecord {
        let registry = ClientRegistry {
            file: Some(file),
            pids: Mutex::new(BTreeSet::new()),
        };
        registry.save(&BTreeSet::new());
        Arc::new(registry)
    }

    /// A record kept in memory only.
    pub fn in_memory() -> ClientRecord {
        Arc::new(ClientRegistry::default())
    }

    /// Records a client the daemon started.
    pub fn remember(&self, pid: u32) {
        self.change(|pids| pids.insert(pid));
    }

    /// Forgets a client that has been reaped.
    pub fn forget(&self, pid: u32) {
        self.change(|pids| pids.remove(&pid));
    }

    /// The clients recorded now.
    pub fn pids(&self) -> Vec<u32> {
        self.pids
            .lock()
            .map(|pids| pids.iter().copied().collect())
            .unwrap_or_default()
    }

    fn change(&self, change: impl FnOnce(&mut BTreeSet<u32>) -> bool) {
        if let Ok(mut pids) = self.pids.lock()
            && change(&mut pids)
        {
            self.save(&pids);
        }
    }

    fn save(&self, pids: &BTreeSet<u32>) {
        let Some(file) = &self.file else {
            return;
        };
        let text: String = pids.iter().map(|pid| format!("{pid}\n")).collect();
        if let Err(error) = crate::trust::write_private(file, text.as_bytes()) {
            tracing::warn!(file = %file.display(), %error, "cannot record control client pids");
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_follows_the_clients_started_and_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("clients");
        std::fs::write(&file, "77\n").unwrap();
        let record = ClientRegistry::in_file(file.clone());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "");
        record.remember(12);
        record.remember(5);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "5\n12\n");
        record.forget(12);
        record.forget(99);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "5\n");
        assert_eq!(record.pids(), vec![5]);
        let memory = ClientRegistry::in_memory();
        memory.remember(3);
        assert_eq!(memory.pids(), vec![3]);
    }
}
