//! Test harness: private tmux servers and control clients.
//!
//! Every server runs with `-L <unique name> -f /dev/null`, `TMUX` unset and `TMUX_TMPDIR`
//! pointing into a temporary directory owned by the test, so its socket never meets the user's
//! server and disappears with the directory. Dropping a [`TmuxServer`] kills that server (by
//! command, then by pid if it lingers); dropping a [`ControlClient`] ends and reaps its child.
//!
//! [`tmux_server`] starts and ends the servers, [`control_client`] and [`pty_client`] are the
//! two kinds of tmux client a test drives, [`daemon`] runs `panectl` and its daemon against a
//! server, and [`events`] reads the daemon's event stream.

mod control_client;
mod daemon;
mod events;
mod pty_client;
mod tmux_server;

pub use self::control_client::ControlClient;
pub use self::daemon::Daemon;
pub use self::events::EventReader;
#[allow(unused_imports)] // the benchmarks, which share this harness, drive no PtyClient
pub use self::pty_client::PtyClient;
pub use self::tmux_server::TmuxServer;

/// Sends SIGKILL to each of `pids` (processes a test found and must kill, such as tmux's pipe
/// writer or the daemon's control client).
#[allow(dead_code)] // not every test module uses it
pub fn kill_all(pids: impl IntoIterator<Item = i32>) {
    for pid in pids {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        )
        .expect("kill a process the test started");
    }
}

/// Serializes the tests that run a daemon: they measure time and share two CPU cores.
pub fn daemon_test_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
