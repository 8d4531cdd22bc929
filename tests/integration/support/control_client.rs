//! [`ControlClient`]: a `tmux -C` client a test writes lines to and reads replies from.

use std::io::Write;
use std::process::{Child, ChildStdin};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use panectl::control::command::Line;
use panectl::control::{Decoder, Event, Reply};

/// A `tmux -C` client driven synchronously: write a line, wait for its replies.
pub struct ControlClient {
    pub(super) child: Child,
    pub(super) stdin: Option<ChildStdin>,
    pub(super) chunks: Receiver<Vec<u8>>,
    pub(super) reader: Option<JoinHandle<()>>,
    pub(super) decoder: Decoder,
    /// Every event decoded so far that was not a reply to [`ControlClient::run`].
    pub events: Vec<Event>,
    pub(super) next_tag: u64,
}

impl ControlClient {
    /// Writes a line and returns the replies to its commands, in order (`None` for a command
    /// tmux skipped because an earlier one failed).
    pub fn run(&mut self, line: &Line) -> Vec<Option<Reply>> {
        let first = self.next_tag;
        let expected = line.expected(first);
        self.next_tag += expected.len() as u64;
        self.decoder.expect_line(expected.iter().copied());
        let stdin = self.stdin.as_mut().expect("client is open");
        stdin
            .write_all(&line.to_bytes())
            .expect("write to the control client");
        stdin.flush().expect("flush the control client");

        let mut replies: Vec<Option<Option<Reply>>> = vec![None; expected.len()];
        let deadline = Instant::now() + Duration::from_secs(10);
        while replies.iter().any(Option::is_none) {
            let timeout = deadline.saturating_duration_since(Instant::now());
            let chunk = match self.chunks.recv_timeout(timeout) {
                Ok(chunk) => chunk,
                Err(RecvTimeoutError::Timeout) => panic!("no reply to {line:?} within 10 s"),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("control client exited during {line:?}")
                }
            };
            for event in self.decoder.feed_vec(&chunk) {
                match event {
                    Event::Reply(reply) if reply.tag.is_some_and(|t| t >= first) => {
                        let index = (reply.tag.unwrap_or_default() - first) as usize;
                        replies[index] = Some(Some(reply));
                    }
                    Event::Abandoned { tag } if tag >= first => {
                        replies[(tag - first) as usize] = Some(None);
                    }
                    other => self.events.push(other),
                }
            }
        }
        replies.into_iter().flatten().collect()
    }
}

impl Drop for ControlClient {
    fn drop(&mut self) {
        // EOF on stdin makes the client exit.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}
