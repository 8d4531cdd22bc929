//! Watching what tmux shows in a pane, independently of the daemon: `capture-pane` every 10 ms,
//! classified with the built-in rules. Tests and benchmarks measure the daemon's status events
//! against it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use panectl::status::providers::ProviderSet;
use panectl::status::view::ScreenView;
use panectl::status::{Status, classify};

use crate::support::TmuxServer;

/// Milliseconds since the Unix epoch (the clock of the daemon's `time_ms`).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// What the screen shows, coarsely: the classes a status change is measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Ready for input.
    Ready,
    /// Working.
    Working,
    /// Asking the user.
    Asking,
    /// Anything else.
    Other,
}

pub fn class(status: Status) -> Shown {
    match status {
        Status::Idle | Status::Completed => Shown::Ready,
        Status::Processing => Shown::Working,
        Status::WaitingUserAnswer => Shown::Asking,
        _ => Shown::Other,
    }
}

/// Polls tmux's screen of a pane every 10 ms and records when what it shows changes.
pub struct ScreenWatch {
    stop: Arc<AtomicBool>,
    /// When what the screen shows changed, and to what.
    pub changes: Arc<Mutex<Vec<(u64, Shown)>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ScreenWatch {
    /// Starts watching `pane` of `server`, classified with `provider`'s built-in rules.
    pub fn start(server: &TmuxServer, pane: &'static str, provider: &str) -> ScreenWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let changes: Arc<Mutex<Vec<(u64, Shown)>>> = Arc::default();
        let provider = ProviderSet::builtin()
            .unwrap()
            .get(provider)
            .unwrap()
            .clone();
        let mut command = server.command();
        command.args(["capture-pane", "-p", "-t", pane]);
        let (stop_flag, recorded) = (stop.clone(), changes.clone());
        let thread = std::thread::spawn(move || {
            let mut last = None;
            while !stop_flag.load(Ordering::Relaxed) {
                let tick = Instant::now();
                if let Ok(output) = command.output() {
                    let at = now_ms();
                    let view = ScreenView::from_text(
                        &String::from_utf8_lossy(&output.stdout),
                        "",
                        "claude",
                    );
                    let shown = class(classify(&provider, &view).0);
                    if last != Some(shown) {
                        last = Some(shown);
                        recorded.lock().unwrap().push((at, shown));
                    }
                }
                std::thread::sleep(Duration::from_millis(10).saturating_sub(tick.elapsed()));
            }
        });
        ScreenWatch {
            stop,
            changes,
            thread: Some(thread),
        }
    }

    /// When the screen last started to show `shown`, at or before `at` (+ a poll period).
    pub fn shown_since(&self, shown: Shown, at: u64) -> Option<u64> {
        let changes = self.changes.lock().unwrap();
        changes
            .iter()
            .rev()
            .find(|(t, s)| *s == shown && *t <= at + 20)
            .map(|(t, _)| *t)
    }
}

impl Drop for ScreenWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
