//! The core's [`PaneIo`] in the daemon: pane process trees and the pipe transport's FIFOs, asked
//! of the server's host capability ([`crate::host::Host`]: `/proc` and FIFOs on this machine),
//! with the FIFOs' reader tasks.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::Request;
use crate::control::command::Command;
use crate::host::SharedHost;
use crate::ids::PaneId;
use crate::pipe::Fifo;
use crate::session::{PaneIo, TransportError};
use crate::status::process::ProcessEntry;

/// A pane's FIFO and its reader.
struct ShellPipe {
    generation: u64,
    /// The FIFO (removed when the last owner drops it: this and its reader task).
    fifo: Arc<Fifo>,
    /// Stops the reader task.
    reader: CancellationToken,
}

impl Drop for ShellPipe {
    fn drop(&mut self) {
        self.reader.cancel();
    }
}

/// See the module documentation.
pub(super) struct ShellPaneIo {
    /// The machine the server runs on.
    machine: SharedHost,
    /// Where the FIFOs are made (a private directory).
    pipe_dir: PathBuf,
    /// The connection's own request channel, for the pipe readers.
    requests: mpsc::WeakSender<Request>,
    /// Cancelled when the connection ends (the readers hold child tokens).
    cancel: CancellationToken,
    /// The daemon's task tracker: the FIFO readers run on it, so shutdown waits for them.
    tasks: TaskTracker,
    pipes: HashMap<PaneId, ShellPipe>,
}

impl ShellPaneIo {
    pub(super) fn new(
        machine: SharedHost,
        pipe_dir: PathBuf,
        requests: mpsc::WeakSender<Request>,
        cancel: CancellationToken,
        tasks: TaskTracker,
    ) -> ShellPaneIo {
        ShellPaneIo {
            machine,
            pipe_dir,
            requests,
            cancel,
            tasks,
            pipes: HashMap::new(),
        }
    }
}

impl PaneIo for ShellPaneIo {
    fn process_tree(&mut self, pid: u32, limit: usize) -> Vec<ProcessEntry> {
        self.machine.process_tree(pid, limit)
    }

    fn start_pipe(&mut self, pane: PaneId, generation: u64) -> Result<Command, TransportError> {
        let fifo = self.machine.make_fifo(&self.pipe_dir, pane)?;
        let start = fifo.start_command(pane)?;
        let fifo = Arc::new(fifo);
        let reader = self.cancel.child_token();
        self.tasks.spawn(read_fifo(
            Arc::clone(&fifo),
            pane,
            generation,
            self.requests.clone(),
            reader.clone(),
        ));
        self.pipes.insert(
            pane,
            ShellPipe {
                generation,
                fifo,
                reader,
            },
        );
        Ok(start)
    }

    fn restart_pipe(&mut self, pane: PaneId) -> Result<Command, TransportError> {
        let Some(pipe) = self.pipes.get(&pane) else {
            return Err(TransportError::NotRunning(pane));
        };
        let path = pipe.fifo.path();
        if !std::fs::symlink_metadata(path)
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()))
        {
            return Err(TransportError::FifoGone(path.to_path_buf()));
        }
        pipe.fifo.start_command(pane).map_err(TransportError::Rearm)
    }

    fn stop_pipe(&mut self, pane: PaneId, generation: u64) {
        if self
            .pipes
            .get(&pane)
            .is_some_and(|pipe| pipe.generation == generation)
        {
            self.pipes.remove(&pane);
        }
    }
}

/// Reads a pane's FIFO and hands each chunk to the connection; says so if the FIFO fails.
async fn read_fifo(
    fifo: Arc<Fifo>,
    pane: PaneId,
    generation: u64,
    connection: mpsc::WeakSender<Request>,
    cancel: CancellationToken,
) {
    let (chunks, mut received) = mpsc::channel::<Vec<u8>>(16);
    let read = fifo.read(chunks, |_| {}, cancel.clone());
    let forward = async {
        while let Some(data) = received.recv().await {
            let Some(connection) = connection.upgrade() else {
                return;
            };
            let request = Request::PipeOutput {
                pane,
                generation,
                data,
            };
            if connection.send(request).await.is_err() {
                return;
            }
        }
    };
    let (result, ()) = tokio::join!(read, forward);
    if let Err(error) = result
        && !cancel.is_cancelled()
        && let Some(connection) = connection.upgrade()
    {
        let _ = connection
            .send(Request::PipeFailed {
                pane,
                generation,
                error: error.to_string(),
            })
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::fake::FakeHost;

    #[tokio::test]
    async fn process_trees_and_fifos_are_asked_of_the_servers_host() {
        let entry = ProcessEntry {
            pid: 7,
            name: "node".into(),
            command_line: "node claude".into(),
        };
        let fake = Arc::new(FakeHost {
            trees: HashMap::from([(7, vec![entry.clone()])]),
            ..FakeHost::default()
        });
        let (requests, _received) = mpsc::channel(1);
        let dir = tempfile::tempdir().unwrap();
        let mut shell = ShellPaneIo::new(
            fake.clone(),
            dir.path().join("pipes"),
            requests.downgrade(),
            CancellationToken::new(),
            TaskTracker::new(),
        );
        assert_eq!(shell.process_tree(7, 64), vec![entry]);
        let refused = shell.start_pipe(PaneId(4), 1).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the pipe transport is not available on host fake"
        );
        assert!(shell.restart_pipe(PaneId(4)).is_err());
        assert_eq!(fake.asked(), ["tree 7", "fifo %4"]);
    }
}
