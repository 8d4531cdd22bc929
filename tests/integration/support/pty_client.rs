//! [`PtyClient`]: an ordinary tmux client on a pseudo-terminal, as a user's terminal is.

use std::io::Read;
use std::process::{Child, Stdio};
use std::thread::JoinHandle;

use super::TmuxServer;

/// An ordinary (non-control) tmux client on a pseudo-terminal of a given size, like a user's
/// terminal. Its output is drained and thrown away.
pub struct PtyClient {
    child: Child,
    drain: Option<JoinHandle<()>>,
}

impl PtyClient {
    /// The client's pid (tests stop it to hold a dying server open).
    #[allow(dead_code)] // not every test binary that shares this harness uses it
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Attaches to session `$0` from a `width` x `height` terminal.
    pub fn attach(server: &TmuxServer, width: u16, height: u16) -> PtyClient {
        PtyClient::attach_to(server, "$0", width, height)
    }

    /// Attaches to `session` from a `width` x `height` terminal.
    pub fn attach_to(server: &TmuxServer, session: &str, width: u16, height: u16) -> PtyClient {
        let size = nix::pty::Winsize {
            ws_row: height,
            ws_col: width,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = nix::pty::openpty(Some(&size), None).expect("openpty");
        let slave = std::fs::File::from(pty.slave);
        let child = server
            .command()
            .args(["attach-session", "-t", session])
            .env("TERM", "xterm")
            .stdin(Stdio::from(slave.try_clone().expect("dup")))
            .stdout(Stdio::from(slave.try_clone().expect("dup")))
            .stderr(Stdio::from(slave))
            .spawn()
            .expect("start a tmux client");
        let mut master = std::fs::File::from(pty.master);
        let drain = std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while matches!(master.read(&mut buffer), Ok(n) if n > 0) {}
        });
        PtyClient {
            child,
            drain: Some(drain),
        }
    }
}

impl Drop for PtyClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(drain) = self.drain.take() {
            // The master reads EOF/EIO once every slave copy is closed.
            let _ = drain.join();
        }
    }
}
