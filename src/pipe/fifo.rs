//! One pane's FIFO: created (0600) in a private directory, opened read-write so that a write end
//! always exists (a reader never sees EOF when tmux's `cat` exits or is restarted, and the open
//! never blocks), read by tokio as bytes arrive.

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::sys::stat::Mode;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::control::command::{Command, CommandError, commands};
use crate::ids::PaneId;

/// Why a FIFO could not be made or read.
#[derive(Debug, thiserror::Error)]
pub enum PipeError {
    /// A file operation failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// On what.
        path: String,
        /// The failure.
        source: io::Error,
    },
    /// The FIFO directory is not private to this user.
    #[error(transparent)]
    Untrusted(#[from] crate::trust::TrustError),
    /// The pipe-pane command could not be built.
    #[error(transparent)]
    Command(#[from] CommandError),
}

/// A pane's FIFO. The file is removed on drop.
#[derive(Debug)]
pub struct Fifo {
    path: PathBuf,
}

impl Fifo {
    /// Creates `dir/<pane>.fifo` (mode 0600; `dir` is made 0700 if missing, and
    /// refused unless private to this user), replacing a stale
    /// one.
    pub fn create(dir: &Path, pane: PaneId) -> Result<Fifo, PipeError> {
        let io_error = |what, path: &Path| {
            let path = path.display().to_string();
            move |source| PipeError::Io { what, path, source }
        };
        // Checked before each FIFO: the directory must be this user's, 0700, not a symlink,
        // so that no other user can replace a FIFO or read what tmux writes into it.
        crate::trust::ensure_private_dir("FIFO directory", dir)?;
        let path = dir.join(format!("pane-{}.fifo", pane.0));
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(io_error("cannot remove the stale FIFO", &path)(error)),
        }
        nix::unistd::mkfifo(&path, Mode::S_IRUSR | Mode::S_IWUSR)
            .map_err(|e| io_error("cannot create the FIFO", &path)(io::Error::from(e)))?;
        Ok(Fifo { path })
    }

    /// The FIFO's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The command that starts copying `pane`'s output into this FIFO.
    pub fn start_command(&self, pane: PaneId) -> Result<Command, PipeError> {
        Ok(commands::pipe_pane_to(
            pane,
            self.path.as_os_str().as_bytes(),
        )?)
    }

    /// Reads the FIFO until `cancel` fires, sending each chunk to `consumer`; `delivered` is
    /// called after a chunk reached the consumer (the point that counts for the watchdog). Ends
    /// with an error if the FIFO cannot be opened or read (its directory was removed, say).
    pub async fn read(
        &self,
        consumer: mpsc::Sender<Vec<u8>>,
        mut delivered: impl FnMut(usize),
        cancel: CancellationToken,
    ) -> Result<(), PipeError> {
        let mut receiver = tokio::net::unix::pipe::OpenOptions::new()
            .read_write(true)
            .open_receiver(&self.path)
            .map_err(|source| PipeError::Io {
                what: "cannot open the FIFO",
                path: self.path.display().to_string(),
                source,
            })?;
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let read = tokio::select! {
                () = cancel.cancelled() => return Ok(()),
                read = receiver.read(&mut buffer) => read,
            };
            let n = read.map_err(|source| PipeError::Io {
                what: "cannot read the FIFO",
                path: self.path.display().to_string(),
                source,
            })?;
            if n == 0 {
                // Not expected with our own write end open; stop rather than spin.
                return Ok(());
            }
            if consumer.send(buffer[..n].to_vec()).await.is_err() {
                return Ok(());
            }
            delivered(n);
        }
    }
}

impl Drop for Fifo {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
