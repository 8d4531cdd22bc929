//! The statuses of every daemon's agents, shared through small files in the runtime directory
//! so that a status line can show the total over all servers (`@panectl-summary-all on`).
//!
//! Each daemon writes `<stem>.counts` when the statuses it counts change, and removes it when
//! it stops: `{"pid": N, "server": "devbox", "statuses": ["processing", "completed"]}`. A
//! daemon whose summary counts every server reads the others' files (no process is started,
//! no socket is opened) and skips those whose daemon is gone (a crash leaves its file).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::status::Status;

/// One daemon's file.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Counts {
    /// The daemon's pid.
    pub pid: u32,
    /// Its server's label.
    pub server: String,
    /// The statuses its summary counts (one per agent).
    #[serde(deserialize_with = "lenient_statuses")]
    pub statuses: Vec<Status>,
}

/// Status words of another version's daemon that this one does not know are left out.
fn lenient_statuses<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<Status>, D::Error> {
    let words: Vec<String> = Vec::deserialize(deserializer)?;
    Ok(words.iter().filter_map(|w| Status::parse(w)).collect())
}

/// Where this daemon's statuses go, and where the others' are read.
#[derive(Debug, Clone)]
pub struct Peers {
    /// This daemon's file.
    pub own: PathBuf,
    /// This daemon's server's label.
    pub server: String,
}

impl Peers {
    /// Writes this daemon's statuses (through a temporary file and a rename, so a reader never
    /// sees half of it).
    pub fn write(&self, statuses: &[Status]) -> std::io::Result<()> {
        let counts = Counts {
            pid: std::process::id(),
            server: self.server.clone(),
            statuses: statuses.to_vec(),
        };
        let text = serde_json::to_vec(&counts).map_err(std::io::Error::other)?;
        let temporary = self.own.with_extension("counts.new");
        crate::trust::write_private(&temporary, &text)?;
        std::fs::rename(&temporary, &self.own)
    }

    /// Removes this daemon's file.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.own);
    }

    /// The statuses of every other running daemon.
    pub fn others(&self) -> Vec<Status> {
        let Some(dir) = self.own.parent() else {
            return Vec::new();
        };
        read_others(dir, &self.own)
    }
}

fn read_others(dir: &Path, own: &Path) -> Vec<Status> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut statuses = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path == own || path.extension().is_none_or(|e| e != "counts") {
            continue;
        }
        let Ok(text) = std::fs::read(&path) else {
            continue;
        };
        let Ok(counts) = serde_json::from_slice::<Counts>(&text) else {
            continue;
        };
        if counts.pid != std::process::id() && super::discovery::process_alive(counts.pid) {
            statuses.extend(counts.statuses);
        }
    }
    statuses
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_running_daemons_are_counted_and_dead_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let own = Peers {
            own: dir.path().join("local-1.counts"),
            server: "local".into(),
        };
        own.write(&[Status::Processing]).unwrap();
        // A running daemon (this test's parent process stands in for it).
        let parent = std::os::unix::process::parent_id();
        let other = Counts {
            pid: parent,
            server: "devbox".into(),
            statuses: vec![Status::Completed, Status::WaitingUserAnswer],
        };
        std::fs::write(
            dir.path().join("ssh-devbox.counts"),
            serde_json::to_vec(&other).unwrap(),
        )
        .unwrap();
        // A crashed one's file, a newer daemon's unknown word, and garbage.
        std::fs::write(
            dir.path().join("gone.counts"),
            br#"{"pid": 999999999, "server": "gone", "statuses": ["error"]}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("newer.counts"),
            format!(r#"{{"pid": {parent}, "server": "n", "statuses": ["rate_limited", "idle"]}}"#),
        )
        .unwrap();
        std::fs::write(dir.path().join("bad.counts"), b"{").unwrap();
        let mut others = own.others();
        others.sort();
        let mut expected = vec![Status::Completed, Status::WaitingUserAnswer, Status::Idle];
        expected.sort();
        assert_eq!(others, expected);
        own.remove();
        assert!(!dir.path().join("local-1.counts").exists());
    }
}
