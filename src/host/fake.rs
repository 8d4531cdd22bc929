//! A stand-in [`Host`] for unit tests: answers from what the test set, records what was asked,
//! and has no pipes (like a remote host), so a test can prove a code path asks the capability.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{Host, HostError};
use crate::ids::PaneId;
use crate::pipe::Fifo;
use crate::status::process::ProcessEntry;

/// See the module documentation.
#[derive(Debug, Default)]
pub(crate) struct FakeHost {
    /// Whether the server answers.
    pub alive: bool,
    /// The directories that exist.
    pub dirs: BTreeSet<PathBuf>,
    /// The process trees by pid.
    pub trees: HashMap<u32, Vec<ProcessEntry>>,
    /// What was asked, in order (`alive`, `tree PID`, `dir PATH`, `fifo PANE`, `stem`).
    pub asked: Mutex<Vec<String>>,
}

impl FakeHost {
    fn ask(&self, what: String) {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(what);
        }
    }

    /// What was asked so far.
    pub(crate) fn asked(&self) -> Vec<String> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

impl Host for FakeHost {
    fn name(&self) -> &str {
        "fake"
    }

    fn server_alive(&self, _socket: &Path) -> bool {
        self.ask("alive".into());
        self.alive
    }

    fn tmux_command(&self, _socket: &Path, _args: &[&str]) -> std::process::Command {
        self.ask("tmux".into());
        std::process::Command::new("false")
    }

    fn process_tree(&self, pid: u32, limit: usize) -> Vec<ProcessEntry> {
        self.ask(format!("tree {pid}"));
        let mut tree = self.trees.get(&pid).cloned().unwrap_or_default();
        tree.truncate(limit);
        tree
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.ask(format!("dir {}", path.display()));
        self.dirs.contains(path)
    }

    fn make_fifo(&self, _dir: &Path, pane: PaneId) -> Result<Fifo, HostError> {
        self.ask(format!("fifo {pane}"));
        Err(HostError::NoPipes {
            host: self.name().to_string(),
        })
    }

    fn runtime_stem(&self, _socket: &Path) -> String {
        self.ask("stem".into());
        "fake-stem".into()
    }
}
