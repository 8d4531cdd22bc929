//! [`EventReader`]: `panectl events --json` read in the background, and waits for events.

use std::process::Stdio;
use std::time::{Duration, Instant};

use super::TmuxServer;

/// Reads `panectl events --json` in the background.
pub struct EventReader {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<serde_json::Value>,
    seen: std::cell::RefCell<Vec<serde_json::Value>>,
}

impl EventReader {
    pub fn start(server: &TmuxServer) -> EventReader {
        use std::io::BufRead;
        let mut child = server
            .panectl()
            .args(["events", "--json", "--output"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel::<serde_json::Value>();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if let Ok(value) = serde_json::from_str(&line)
                    && sender.send(value).is_err()
                {
                    break;
                }
            }
        });
        // The stream's first event says the subscription is in place.
        match lines.recv_timeout(Duration::from_secs(10)) {
            Ok(first) if first["type"] == "subscribed" => {}
            other => panic!("panectl events did not start with `subscribed`: {other:?}"),
        }
        EventReader {
            child,
            lines,
            seen: std::cell::RefCell::new(Vec::new()),
        }
    }

    /// Waits for an event matching `wanted` (seen before or arriving now); returns it.
    pub fn expect(
        &self,
        what: &str,
        wanted: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        self.expect_within(what, Duration::from_secs(10), wanted)
    }

    /// [`EventReader::expect`] with another deadline (a program's cold start on a loaded
    /// machine, say).
    pub fn expect_within(
        &self,
        what: &str,
        within: Duration,
        wanted: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        if let Some(event) = self.seen.borrow().iter().find(|e| wanted(e)) {
            return event.clone();
        }
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(event) => {
                    self.seen.borrow_mut().push(event.clone());
                    if wanted(&event) {
                        return event;
                    }
                }
                Err(_) => panic!(
                    "no {what} event within {within:?}; saw {:#?}",
                    self.seen.borrow()
                ),
            }
        }
    }
}

impl EventReader {
    /// Every event seen so far (also the ones that arrive now).
    #[allow(dead_code)] // for the agent tests
    pub fn seen_events(&self) -> Vec<serde_json::Value> {
        while let Ok(event) = self.lines.try_recv() {
            self.seen.borrow_mut().push(event);
        }
        self.seen.borrow().clone()
    }
}

impl Drop for EventReader {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
