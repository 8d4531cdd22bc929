//! The connection task's loop: waits on the client's output, the requests, the timers and
//! cancellation, hands each to the [`SessionCore`] with the time, and carries out its actions.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;
use tracing::debug;

use super::{ConnectionError, EndReason, Request, Upcall};
use crate::control::Reply;
use crate::events::EventBus;
use crate::session::{Action, Answer, ReplyId, SessionCore};
use crate::status::providers::ProviderSet;

/// A request waiting for tmux, under its [`ReplyId`].
enum Waiter {
    Command(oneshot::Sender<Result<Vec<Option<Reply>>, ConnectionError>>),
    LastResponse(oneshot::Sender<Option<String>>),
}

/// The core and where its actions go.
pub(super) struct Driver {
    core: SessionCore,
    lines: mpsc::UnboundedSender<Vec<u8>>,
    bus: EventBus,
    upcalls: mpsc::UnboundedSender<Upcall>,
    providers: watch::Receiver<Arc<ProviderSet>>,
    synced: watch::Sender<bool>,
    waiters: HashMap<ReplyId, Waiter>,
    next_reply: u64,
    /// The actions being carried out (kept for its memory).
    actions: Vec<Action>,
    /// Where divergence records go (none: they are only logged).
    divergence_dir: Option<std::path::PathBuf>,
}

impl Driver {
    pub(super) fn new(
        core: SessionCore,
        lines: mpsc::UnboundedSender<Vec<u8>>,
        bus: EventBus,
        upcalls: mpsc::UnboundedSender<Upcall>,
        providers: watch::Receiver<Arc<ProviderSet>>,
        synced: watch::Sender<bool>,
    ) -> Driver {
        Driver {
            core,
            lines,
            bus,
            upcalls,
            providers,
            synced,
            waiters: HashMap::new(),
            next_reply: 0,
            actions: Vec::new(),
            divergence_dir: None,
        }
    }

    /// Saves divergence records in `dir` (see [`super::divergences`]).
    pub(super) fn save_divergences_in(&mut self, dir: Option<std::path::PathBuf>) {
        self.divergence_dir = dir;
    }

    /// Starts the core and runs until the client ends or `cancel` fires.
    pub(super) async fn run(
        &mut self,
        stdout: &mut tokio::process::ChildStdout,
        mut requests: mpsc::Receiver<Request>,
        cancel: &CancellationToken,
    ) -> EndReason {
        self.core.start(Instant::now());
        self.execute();
        let mut buffer = vec![0u8; 64 * 1024];
        let mut ticker = tokio::time::interval(Duration::from_millis(200));
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let status_due = self.core.next_wakeup(Instant::now());
            let status_timer = async {
                match status_due {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = cancel.cancelled() => return EndReason::Cancelled,
                () = status_timer => self.core.wake(Instant::now()),
                Ok(()) = self.providers.changed() => {
                    let providers = self.providers.borrow().clone();
                    self.core.providers_reloaded(providers, Instant::now());
                }
                read = stdout.read(&mut buffer) => match read {
                    Ok(0) => {
                        let exit = self.core.finish(Instant::now());
                        self.execute();
                        return match exit {
                            Some(exit) => EndReason::Exit(exit.reason),
                            None => EndReason::Eof,
                        };
                    }
                    Ok(n) => self.core.feed(&buffer[..n], Instant::now()),
                    Err(error) => return EndReason::Failed(format!("reading the control client: {error}")),
                },
                Some(request) = requests.recv() => self.request(request),
                _ = ticker.tick() => self.core.tick(Instant::now()),
            }
            self.execute();
        }
    }

    /// The daemon shuts down: the core's last lines go out.
    pub(super) fn shutdown(&mut self) {
        self.core.shutdown(Instant::now());
        self.execute();
    }

    fn waiter(&mut self, waiter: Waiter) -> ReplyId {
        self.next_reply += 1;
        let id = ReplyId(self.next_reply);
        self.waiters.insert(id, waiter);
        id
    }

    fn request(&mut self, request: Request) {
        let now = Instant::now();
        match request {
            Request::Command { line, reply } => {
                let id = self.waiter(Waiter::Command(reply));
                self.core.command(id, line, now);
            }
            Request::LastResponse { pane, reply } => {
                let id = self.waiter(Waiter::LastResponse(reply));
                self.core.last_response(id, pane, now);
            }
            Request::Explain { pane, reply } => {
                let _ = reply.send(self.core.explain(pane, now));
            }
            Request::InputText { pane, reply } => {
                let _ = reply.send(self.core.input_view(pane));
            }
            Request::SetTransport {
                pane,
                transport,
                reply,
            } => {
                let _ = reply.send(self.core.set_transport(pane, transport, now));
            }
            Request::SessionTransport { transport, reply } => {
                let _ = reply.send(self.core.set_session_transport(transport, now));
            }
            Request::PipeOutput {
                pane,
                generation,
                data,
            } => self.core.pipe_output(pane, generation, &data, now),
            Request::PipeFailed {
                pane,
                generation,
                error,
            } => self.core.pipe_failed(pane, generation, error, now),
            Request::PaneStates { updates } => self.core.pane_updates(updates, now),
            Request::Hook {
                pane,
                report,
                sender,
                reply,
            } => {
                let now_ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64);
                let _ = reply.send(self.core.hook(pane, report, &sender, now, now_ms));
            }
            Request::InputSent { pane } => self.core.input_sent(pane, now),
            Request::SetProvider {
                pane,
                provider,
                reply,
            } => {
                let _ = reply.send(self.core.set_provider(pane, provider, now));
            }
            Request::Panes { reply } => {
                let _ = reply.send(self.core.panes(now));
            }
            Request::Screen { pane, ansi, reply } => {
                let _ = reply.send(self.core.screen(pane, ansi));
            }
            Request::Output {
                pane,
                from,
                limit,
                reply,
            } => {
                let _ = reply.send(self.core.output_from(pane, from, limit));
            }
            Request::Stats { reply } => {
                let _ = reply.send(self.core.stats());
            }
        }
    }

    /// Carries out what the core decided, in order.
    fn execute(&mut self) {
        self.core.take_actions(&mut self.actions);
        for action in self.actions.drain(..) {
            match action {
                // A closed writer means the client is gone; the read side notices and ends the
                // task.
                Action::Send { bytes, .. } => {
                    let _ = self.lines.send(bytes);
                }
                Action::Publish(event) => self.bus.publish(event),
                Action::Upcall(upcall) => {
                    let _ = self.upcalls.send(upcall);
                }
                Action::Reply(id, answer) => match (self.waiters.remove(&id), answer) {
                    (Some(Waiter::Command(sender)), Answer::Command(result)) => {
                        let _ = sender.send(result);
                    }
                    (Some(Waiter::LastResponse(sender)), Answer::LastResponse(answer)) => {
                        let _ = sender.send(answer);
                    }
                    (_, answer) => debug!(?id, ?answer, "an answer nobody waits for"),
                },
                Action::Forget(id) => {
                    self.waiters.remove(&id);
                }
                Action::SaveDivergence(record) => {
                    let Some(dir) = self.divergence_dir.clone() else {
                        continue;
                    };
                    let session = self.core.session();
                    // A rare, small write: off the connection's task, so it never waits on a disk.
                    tokio::task::spawn_blocking(move || {
                        match super::divergences::save(&dir, session, &record) {
                            Ok(path) => {
                                tracing::info!(path = %path.display(), "divergence record saved")
                            }
                            Err(error) => {
                                tracing::warn!(%error, "divergence record not saved")
                            }
                        }
                    });
                }
                Action::Synced => {
                    self.synced
                        .send_if_modified(|synced| !std::mem::replace(synced, true));
                }
            }
        }
    }
}
