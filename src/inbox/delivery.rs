//! Delivers queued messages: per receiver, in order, one at a time, only while the receiver is
//! ready (`idle` or `completed`), never while it works or waits on a dialog.
//!
//! One delivery: the message is marked `delivering` (committed) before anything reaches the
//! pane; its text goes into a named paste buffer (`set-buffer`, which expands nothing, in lines
//! of bounded length) and is pasted with `paste-buffer -p`; after the submit delay the `Enter`
//! key is sent; then the turn must be seen to start: the status leaves ready, or the pasted text
//! leaves the input. Otherwise `Enter` is sent once more, but only while the status is still
//! ready and the pasted text still sits in the input, so that a submit key can never answer a
//! dialog; if the turn still does not start, the message fails with the reason.
//!
//! After a crash a message can be left `delivering`. Before anything else is sent to its pane it
//! is checked against the pane: its text still in the input (pasted, not submitted) is
//! submitted; its text in the pane's history means it was delivered; otherwise, once the pane is
//! ready, it goes back to `pending` and is delivered again.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use super::{InboxHandle, Message, now_ms};
use crate::control::command::{Format, Line, Target, commands};
use crate::daemon::events::{DaemonEvent, EventBus, EventKind};
use crate::daemon::supervisor::Connections;
use crate::ids::PaneId;
use crate::mirror::SyncState;
use crate::status::Status;
use crate::status::providers::ProviderSet;
use crate::status::rules::Delivery;
use crate::tmux::{ConnectionHandle, PaneSummary};

/// Raw bytes of message text per `set-buffer` line.
const CHUNK: usize = 16 * 1024;

/// How long history is read back when a crash left a message `delivering`.
const HISTORY_LINES: i64 = 5000;

/// Settings of the delivery task.
#[derive(Debug, Clone)]
pub struct DeliveryOptions {
    /// Between the paste and the submit key (agents that see `Enter` in the same read as the
    /// paste take it as part of the text).
    pub submit_delay: Duration,
    /// How long to wait for the turn to start after a submit key.
    pub confirm_timeout: Duration,
    /// How long a receiver may be unknown (not mirrored) before its messages fail.
    pub missing_grace: Duration,
    /// After a turn was seen to start only because the text left the input, how long to wait
    /// for the status to say so too before the next message may go.
    pub settle: Duration,
}

impl Default for DeliveryOptions {
    fn default() -> DeliveryOptions {
        DeliveryOptions {
            submit_delay: Duration::from_millis(200),
            confirm_timeout: Duration::from_secs(5),
            missing_grace: Duration::from_secs(10),
            settle: Duration::from_secs(3),
        }
    }
}

/// The identity of the program in a pane, recorded with each message so a pane reused by
/// another program does not receive it: `pid:N`, the pane's process, asked of tmux (the
/// mirror's copy follows changes only about once a second).
pub async fn agent_identity(handle: &ConnectionHandle, pane: PaneId) -> Result<String, String> {
    pane_process(handle, pane)
        .await
        .map(|(pid, _)| format!("pid:{pid}"))
}

/// The pane's process id and foreground command, as tmux has them now.
async fn pane_process(handle: &ConnectionHandle, pane: PaneId) -> Result<(u32, Vec<u8>), String> {
    const PANE_PROCESS: Format = Format::new("#{pane_pid}\t#{pane_current_command}");
    let replies = handle
        .run(Line::new(commands::display_print(
            PANE_PROCESS,
            Some(Target::Pane(pane)),
        )))
        .await
        .map_err(|e| e.to_string())?;
    let text = replies
        .first()
        .map(|reply| reply.joined_body())
        .unwrap_or_default();
    let (pid, command) = match text.iter().position(|&b| b == b'\t') {
        Some(tab) => (&text[..tab], text[tab + 1..].to_vec()),
        None => (&text[..], Vec::new()),
    };
    let pid = String::from_utf8_lossy(pid);
    match pid.trim().parse::<u32>() {
        Ok(pid) => Ok((pid, command)),
        Err(_) => Err(format!("tmux gave {:?} for the pane's pid", pid.trim())),
    }
}

/// Where a pane is and what it is doing.
struct Receiver {
    handle: ConnectionHandle,
    summary: PaneSummary,
}

async fn find(connections: &Connections, pane: PaneId) -> Option<Receiver> {
    for handle in connections.values() {
        if let Ok(panes) = handle.panes().await
            && let Some(summary) = panes.into_iter().find(|p| p.pane == pane)
        {
            return Some(Receiver {
                handle: handle.clone(),
                summary,
            });
        }
    }
    None
}

/// How a turn was seen to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Confirmation {
    /// The status left ready.
    Status,
    /// The pasted text left the input.
    Input,
}

/// Why a delivery ended without a turn starting.
#[derive(Debug)]
enum Outcome {
    Delivered,
    Failed(String),
    /// Not decided yet (a recovered message whose pane is busy): try again later.
    Later,
    /// A recovered message that never reached the pane.
    BackToPending,
}

/// Runs deliveries until `cancel` fires.
pub async fn run(
    inbox: InboxHandle,
    mut connections: watch::Receiver<Connections>,
    providers: watch::Receiver<Arc<ProviderSet>>,
    bus: EventBus,
    options: DeliveryOptions,
    cancel: CancellationToken,
) {
    let mut events = bus.subscribe();
    let (done_sender, mut done) = mpsc::unbounded_channel::<PaneId>();
    let mut in_flight: BTreeSet<PaneId> = BTreeSet::new();
    let mut missing_since: BTreeMap<PaneId, Instant> = BTreeMap::new();
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            () = inbox.queued() => {}
            Some(pane) = done.recv() => { in_flight.remove(&pane); }
            event = events.recv() => match event {
                Ok(event) if !is_relevant(&event) => continue,
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => break,
            },
            _ = connections.changed() => {}
            _ = tick.tick() => {}
        }
        // A damaged database was reported once (and is in health): nothing is delivered from
        // it, and the warnings of every pass would only repeat that.
        if inbox.damage().is_some() {
            continue;
        }
        let current = connections.borrow().clone();
        if let Err(error) = inbox.call(|store| store.expire(now_ms())).await {
            warn!(%error, "cannot expire messages");
        }
        let receivers = match inbox
            .call(|store| {
                let mut panes = store.receivers()?;
                for m in store.list(None, Some(super::State::Delivering))? {
                    if !panes.contains(&m.pane) {
                        panes.push(m.pane);
                    }
                }
                Ok(panes)
            })
            .await
        {
            Ok(receivers) => receivers,
            Err(error) => {
                warn!(%error, "cannot read the inbox");
                continue;
            }
        };
        for name in receivers {
            let Ok(pane) = name.parse::<PaneId>() else {
                fail_all(&inbox, &name, "not a pane id").await;
                continue;
            };
            if in_flight.contains(&pane) {
                continue;
            }
            let Some(receiver) = find(&current, pane).await else {
                let since = *missing_since.entry(pane).or_insert_with(Instant::now);
                if since.elapsed() >= options.missing_grace {
                    fail_all(&inbox, &name, "the pane is gone").await;
                    missing_since.remove(&pane);
                }
                continue;
            };
            missing_since.remove(&pane);
            in_flight.insert(pane);
            let settings = receiver
                .summary
                .provider
                .as_deref()
                .and_then(|id| providers.borrow().get(id).map(|p| p.delivery.clone()))
                .unwrap_or_default();
            let task = Task {
                inbox: inbox.clone(),
                bus: bus.clone(),
                options: options.clone(),
                settings,
                receiver,
            };
            let done = done_sender.clone();
            tokio::spawn(async move {
                task.serve().await;
                let _ = done.send(pane);
            });
        }
    }
}

fn is_relevant(event: &DaemonEvent) -> bool {
    matches!(
        event.kind,
        EventKind::Status { .. } | EventKind::PaneRemoved { .. } | EventKind::PaneAdded { .. }
    )
}

/// Fails every pending or delivering message of a receiver.
async fn fail_all(inbox: &InboxHandle, pane: &str, reason: &'static str) {
    let pane = pane.to_string();
    let result = inbox
        .call(move |store| {
            let mut failed = Vec::new();
            for state in [super::State::Delivering, super::State::Pending] {
                for m in store.list(Some(&pane), Some(state))? {
                    failed.push(store.failed(m.id, reason)?.id);
                }
            }
            Ok(failed)
        })
        .await;
    match result {
        Ok(ids) if !ids.is_empty() => warn!(?ids, reason, "messages failed"),
        Ok(_) => {}
        Err(error) => warn!(%error, "cannot fail messages"),
    }
}

/// One receiver's turn: a recovered message, or the next pending one.
struct Task {
    inbox: InboxHandle,
    bus: EventBus,
    options: DeliveryOptions,
    /// The receiver's provider's delivery settings.
    settings: Delivery,
    receiver: Receiver,
}

impl Task {
    fn pane(&self) -> PaneId {
        self.receiver.summary.pane
    }

    fn is_ready(&self, status: Status) -> bool {
        self.settings.ready.contains(&status)
    }

    /// Whether a status means the receiver took the input: working, asking something, or any
    /// other status that is not ready (an error ends a turn that started).
    fn is_busy(&self, status: Status) -> bool {
        !self.is_ready(status) && !matches!(status, Status::Unknown | Status::Exited)
    }

    async fn serve(self) {
        let pane = self.pane().to_string();
        let name = pane.clone();
        let found = self
            .inbox
            .call(move |store| {
                let delivering = store.list(Some(&name), Some(super::State::Delivering))?;
                Ok(match delivering.into_iter().next() {
                    Some(m) => Some((m, true)),
                    None => store.next_for(&name)?.map(|m| (m, false)),
                })
            })
            .await;
        let (message, recovered) = match found {
            Ok(Some(found)) => found,
            Ok(None) => return,
            Err(error) => {
                warn!(%error, "cannot read the inbox");
                return;
            }
        };
        let summary = &self.receiver.summary;
        // Only a screen that equals tmux's, with its status evaluated, can be judged.
        if summary.sync != SyncState::Live || !summary.status_settled {
            return;
        }
        let outcome = if recovered {
            self.recover(&message).await
        } else {
            // tmux is asked only when something would be done: the mirror says the receiver is
            // ready, or that a different program runs in the pane. A busy receiver costs nothing.
            let mirrored = format!("pid:{}", summary.pid);
            let ready = self.is_ready(summary.status) && !summary.dead;
            if !ready && message.agent == mirrored {
                return;
            }
            let (pid, command) = match pane_process(&self.receiver.handle, self.pane()).await {
                Ok(process) => process,
                Err(error) => {
                    warn!(error, pane, "cannot read the pane's process");
                    return;
                }
            };
            let identity = format!("pid:{pid}");
            if message.agent != identity {
                let reason = format!(
                    "{pane} now runs another program ({identity}; the message was for {})",
                    message.agent
                );
                self.finish(&message, Outcome::Failed(reason), false).await;
                return;
            }
            // The mirror learns of a new program in the pane up to a second late; until it has,
            // the status may be the previous program's.
            if !ready || summary.pid != pid || summary.command.as_bytes() != command.as_slice() {
                return;
            }
            let id = message.id;
            if let Err(error) = self
                .inbox
                .call(move |store| store.begin_delivery(id, now_ms()))
                .await
            {
                warn!(%error, id, "cannot begin a delivery");
                return;
            }
            self.deliver(&message).await
        };
        self.finish(&message, outcome, recovered).await;
    }

    async fn finish(&self, message: &Message, outcome: Outcome, recovered: bool) {
        let id = message.id;
        let result = match &outcome {
            Outcome::Delivered => self
                .inbox
                .call(move |store| store.delivered(id, now_ms()))
                .await
                .map(|_| ()),
            Outcome::Failed(reason) => {
                let reason = reason.clone();
                self.inbox
                    .call(move |store| store.failed(id, &reason))
                    .await
                    .map(|_| ())
            }
            Outcome::BackToPending => self
                .inbox
                .call(move |store| store.back_to_pending(id))
                .await
                .map(|_| ()),
            Outcome::Later => Ok(()),
        };
        match result {
            Ok(()) => info!(id, pane = %self.pane(), ?outcome, recovered, "message delivery"),
            Err(error) => warn!(%error, id, "cannot record a delivery's outcome"),
        }
    }

    async fn input(&self) -> Option<String> {
        self.receiver
            .handle
            .input_text(self.pane())
            .await
            .ok()
            .flatten()
    }

    async fn status(&self) -> Option<PaneSummary> {
        let panes = self.receiver.handle.panes().await.ok()?;
        panes.into_iter().find(|p| p.pane == self.pane())
    }

    /// Pastes and submits a message marked `delivering`.
    async fn deliver(&self, message: &Message) -> Outcome {
        let mut events = self.bus.subscribe();
        let before = self.input().await.unwrap_or_default();
        if let Err(reason) = self.paste(message).await {
            return Outcome::Failed(reason);
        }
        let delay = self
            .settings
            .submit_delay
            .unwrap_or(self.options.submit_delay);
        tokio::time::sleep(delay).await;
        let pasted = self.input().await.unwrap_or_default();
        let probe = probe(&message.body);
        self.submit(&before, &pasted, &mut events, probe.as_deref())
            .await
    }

    /// Sends the submit key and confirms the turn started, retrying once when that is safe.
    async fn submit(
        &self,
        before: &str,
        pasted: &str,
        events: &mut broadcast::Receiver<Arc<DaemonEvent>>,
        probe: Option<&str>,
    ) -> Outcome {
        let pane = self.pane();
        for attempt in 0..2 {
            if let Err(reason) = self.key(pane).await {
                return Outcome::Failed(reason);
            }
            match self.confirm(before, pasted, events).await {
                Some(Confirmation::Status) => return Outcome::Delivered,
                Some(Confirmation::Input) => {
                    // The text left the input, but the status has not said "busy" yet: wait
                    // for it (briefly) so that the next message does not go in on a status
                    // that only lags behind the screen. A turn too short to be seen busy
                    // leaves the text in the pane's history; a program that swallowed the
                    // paste (still starting, say) does not.
                    if self.await_busy(events).await || self.in_history(probe).await {
                        return Outcome::Delivered;
                    }
                    return Outcome::Failed(
                        "the text left the input, but no turn started and the text is not in \
                         the pane"
                            .into(),
                    );
                }
                None => {}
            }
            if attempt == 1 {
                break;
            }
            // The turn did not start. Press Enter again only if nothing but the pasted text
            // can take it: the status is still ready and the text still sits in the input.
            let still_ready = self
                .status()
                .await
                .is_some_and(|s| self.is_ready(s.status) && !s.dead);
            let sitting = pasted != before && self.input().await.as_deref() == Some(pasted);
            if !(still_ready && sitting) {
                // The submit key went in and the text no longer sits there as pasted: a
                // receiver slow to react (a loaded machine) may yet start the turn. Only a
                // turn seen, or the text in the history, makes it delivered.
                if self.await_busy(events).await || self.in_history(probe).await {
                    return Outcome::Delivered;
                }
                return Outcome::Failed(format!(
                    "no sign that the turn started within {:?} of the submit key (status still \
                     ready: {still_ready}; text still in the input: {sitting})",
                    self.options.confirm_timeout
                ));
            }
        }
        Outcome::Failed(format!(
            "the agent did not start a turn after two submit keys ({:?} each)",
            self.options.confirm_timeout
        ))
    }

    /// Waits for the turn to start: a status that is not ready, or the pasted text gone from
    /// the input. `None` if neither happens in time.
    async fn confirm(
        &self,
        before: &str,
        pasted: &str,
        events: &mut broadcast::Receiver<Arc<DaemonEvent>>,
    ) -> Option<Confirmation> {
        let deadline = tokio::time::Instant::now() + self.options.confirm_timeout;
        let mut poll = tokio::time::interval(Duration::from_millis(100));
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => return None,
                event = events.recv() => match event {
                    Ok(event) if self.is_busy_event(&event) => return Some(Confirmation::Status),
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                _ = poll.tick() => {
                    if let Some(summary) = self.status().await
                        && self.is_busy(summary.status)
                    {
                        return Some(Confirmation::Status);
                    }
                    if pasted != before
                        && let Some(now) = self.input().await
                        && now != pasted
                    {
                        return Some(Confirmation::Input);
                    }
                }
            }
        }
    }

    fn is_busy_event(&self, event: &DaemonEvent) -> bool {
        matches!(&event.kind, EventKind::Status { pane, status, .. }
            if *pane == self.pane() && self.is_busy(*status))
    }

    /// Whether the message's probe is in the pane's history or screen, outside the input.
    /// `true` when the message has no probe (nothing to look for).
    async fn in_history(&self, probe: Option<&str>) -> bool {
        let Some(probe) = probe else {
            return true;
        };
        let input = self.input().await.unwrap_or_default();
        match self.history().await {
            Ok(lines) => lines
                .iter()
                .any(|l| l.contains(probe) && !input.contains(l.trim())),
            Err(_) => false,
        }
    }

    /// Waits up to the settle time for the status to say the receiver is busy; returns
    /// whether it did.
    async fn await_busy(&self, events: &mut broadcast::Receiver<Arc<DaemonEvent>>) -> bool {
        let deadline = tokio::time::Instant::now() + self.options.settle;
        let mut poll = tokio::time::interval(Duration::from_millis(100));
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => return false,
                event = events.recv() => match event {
                    Ok(event) if self.is_busy_event(&event) => return true,
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return false,
                },
                _ = poll.tick() => {
                    if self.status().await.is_some_and(|s| self.is_busy(s.status) || s.dead) {
                        return true;
                    }
                }
            }
        }
    }

    /// Puts the text into a paste buffer of its own and pastes it.
    async fn paste(&self, message: &Message) -> Result<(), String> {
        let buffer = format!("panectl-msg-{}", message.id);
        let mut line = None::<Line>;
        for (index, chunk) in message.body.chunks(CHUNK).enumerate() {
            let command = if index == 0 {
                commands::set_buffer(buffer.as_bytes(), chunk)
            } else {
                commands::append_buffer(buffer.as_bytes(), chunk)
            }
            .map_err(|e| format!("cannot encode the message: {e}"))?;
            // One command per line keeps each line bounded.
            if let Some(previous) = line.replace(Line::new(command)) {
                self.run(previous).await?;
            }
        }
        let paste = commands::paste_buffer(buffer.as_bytes(), self.pane())
            .map_err(|e| format!("cannot encode the paste: {e}"))?;
        let last = match line {
            Some(line) => line.then(paste),
            None => return Err("the message is empty".into()),
        };
        self.run(last).await
    }

    async fn key(&self, pane: PaneId) -> Result<(), String> {
        self.run(Line::new(commands::send_key(
            pane,
            &self.settings.submit_key,
        )))
        .await?;
        // The turn it starts is followed even from a weak working marker.
        let _ = self.receiver.handle.input_sent(pane).await;
        Ok(())
    }

    async fn run(&self, line: Line) -> Result<(), String> {
        self.receiver
            .handle
            .run(line)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Decides what became of a message a crash left `delivering`.
    async fn recover(&self, message: &Message) -> Outcome {
        let Some(probe) = probe(&message.body) else {
            return Outcome::BackToPending;
        };
        let input = self.input().await.unwrap_or_default();
        if input.contains(&probe) {
            // Pasted, not submitted: submit it now.
            let mut events = self.bus.subscribe();
            let before = input.replace(&probe, "");
            return self
                .submit(&before, &input, &mut events, Some(&probe))
                .await;
        }
        match self.history().await {
            Ok(history) if history.iter().any(|line| line.contains(&probe)) => Outcome::Delivered,
            Ok(_) if self.is_ready(self.receiver.summary.status) => Outcome::BackToPending,
            Ok(_) => Outcome::Later,
            Err(reason) => {
                warn!(reason, id = message.id, "cannot read the pane's history");
                Outcome::Later
            }
        }
    }

    /// The pane's history and screen as text lines, wrapped lines joined.
    async fn history(&self) -> Result<Vec<String>, String> {
        let command = crate::control::command::Command::new("capture-pane")
            .flag("-p")
            .flag("-J")
            .number("-S", -HISTORY_LINES)
            .target("-t", self.pane());
        let replies = self
            .receiver
            .handle
            .run(Line::new(command))
            .await
            .map_err(|e| e.to_string())?;
        Ok(replies
            .first()
            .map(|reply| {
                reply
                    .body
                    .iter()
                    .map(|line| String::from_utf8_lossy(line).into_owned())
                    .collect()
            })
            .unwrap_or_default())
    }
}

/// What identifies a message's text on a screen: its first non-blank line, trimmed, up to 60
/// characters. `None` for a body with no printable text.
pub fn probe(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let line = text
        .split(['\n', '\r'])
        .map(|l| l.trim())
        .find(|l| !l.is_empty() && !l.chars().any(char::is_control))?;
    Some(line.chars().take(60).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_are_the_first_printable_line() {
        assert_eq!(
            probe(b"\n  hello world  \nmore").as_deref(),
            Some("hello world")
        );
        assert_eq!(probe(b"\x1b[31m\nplain").as_deref(), Some("plain"));
        assert_eq!(probe(b"\n \n"), None);
        assert_eq!(
            probe("é".repeat(100).as_bytes()).unwrap().chars().count(),
            60
        );
    }
}
