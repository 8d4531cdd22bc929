//! One delivery: a receiver's task that pastes its next message, submits it, confirms the turn
//! began (or finds why not), and recovers a delivery a crash interrupted.

use std::time::{Duration, Instant};

use tracing::{info, warn};

use super::super::{InboxHandle, Message, now_ms};
use crate::control::command::{CommandError, Format, Line, SafeValue, Target, commands};
use crate::events::EventBus;
use crate::ids::PaneId;
use crate::mirror::SyncState;
use crate::query;
use crate::session::RunError;
use crate::status::rules::{Delivery, Verdict};
use crate::status::{Phase, Status};
use crate::tmux::watch::{PaneWatch, Seen};
use crate::tmux::{ConnectionHandle, PaneSummary};

/// Raw bytes of message text per `set-buffer` line.
const CHUNK: usize = 16 * 1024;

/// How long history is read back when a crash left a message `delivering`.
const HISTORY_LINES: i64 = 5000;

/// The pane option the paste sets, in the same tmux command line, to `ID:ATTEMPT_AT` of the
/// message pasted: what recovery reads to know whether a message's own paste happened.
const PASTED_OPTION: &str = "@panectl_pasted";

/// How often a delivery looks at its receiver while it waits.
const POLL: Duration = Duration::from_millis(50);

/// A look at the pane slower than this means a stalled machine: the receiver may still act on
/// keys it has not read yet, so a text still in its input is no proof it will not be taken.
const STALLED: Duration = Duration::from_secs(1);

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

/// Why a step of a delivery could not be done; its text becomes the reason a message failed
/// or the log line of one that waits.
#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    /// tmux did not run the commands.
    #[error(transparent)]
    Tmux(#[from] RunError),
    /// The message (or the mark of its paste) cannot be put in a tmux command.
    #[error("cannot encode the {what}: {source}")]
    Encode {
        /// What was being encoded.
        what: &'static str,
        /// Why it cannot be.
        source: CommandError,
    },
    /// A message with no text.
    #[error("the message is empty")]
    Empty,
    /// tmux answered something other than a number for a pane's pid.
    #[error("tmux gave {0:?} for the pane's pid")]
    BadPid(String),
}

/// The identity of the program in a pane, recorded with each message so a pane reused by
/// another program does not receive it: `pid:N`, the pane's process, asked of tmux (the
/// mirror's copy follows changes only about once a second).
pub async fn agent_identity(
    handle: &ConnectionHandle,
    pane: PaneId,
) -> Result<String, DeliveryError> {
    pane_process(handle, pane)
        .await
        .map(|(pid, _)| format!("pid:{pid}"))
}

/// The pane's process id and foreground command, as tmux has them now.
async fn pane_process(
    handle: &ConnectionHandle,
    pane: PaneId,
) -> Result<(u32, Vec<u8>), DeliveryError> {
    const PANE_PROCESS: Format = Format::new("#{pane_pid}\t#{pane_current_command}");
    let replies = handle
        .run(Line::new(commands::display_print(
            PANE_PROCESS,
            Some(Target::Pane(pane)),
        )))
        .await?;
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
        Err(_) => Err(DeliveryError::BadPid(pid.trim().to_string())),
    }
}

/// Where a pane is and what it is doing.
pub(super) struct Receiver {
    pub(super) handle: ConnectionHandle,
    pub(super) summary: PaneSummary,
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
    /// Another program runs in the pane: failed, or held for its agent (see
    /// [`crate::inbox::held`]).
    NotItsAgent(String),
    /// Submitted, but whether the receiver took it cannot be told.
    Uncertain(String),
    /// Not decided yet (a recovered message whose pane is busy): try again later.
    Later,
    /// A recovered message that never reached the pane.
    BackToPending,
}

/// What a receiver's task leaves for the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// A message moved on: look at the receiver again at once (its next message).
    Again,
    /// Nothing to do now (the receiver is busy, not judged yet): wait for news of it, a new
    /// message, or the next tick. Starting it again at once would spin.
    Wait,
    /// An error (the inbox database, tmux): try again after a pause that grows.
    Error,
}

/// One receiver's turn: a recovered message, or the next pending one.
pub(super) struct Task {
    pub(super) inbox: InboxHandle,
    pub(super) bus: EventBus,
    pub(super) options: DeliveryOptions,
    /// The receiver's provider's delivery settings.
    pub(super) settings: Delivery,
    pub(super) receiver: Receiver,
}

impl Task {
    fn pane(&self) -> PaneId {
        self.receiver.summary.pane
    }

    fn is_ready(&self, status: Status) -> bool {
        self.settings.ready.contains(&status)
    }

    /// Whether a status means the receiver took the input: any status of a live agent that is
    /// not ready for the provider (its `ready` list): working, asking something, and also an
    /// error, which ends a turn that started. Broader than a turn follower's "in a turn"
    /// ([`crate::status::Phase::is_in_turn`]), on purpose: here the question is only whether
    /// the input went in. Nothing says so when the status is unknown or the agent has exited.
    fn is_busy(&self, status: Status) -> bool {
        !self.is_ready(status) && status.phase() != Phase::Unknown && status != Status::Exited
    }

    pub(super) async fn serve(self) -> Next {
        let pane = self.pane().to_string();
        let name = pane.clone();
        let found = self
            .inbox
            .call(move |store| {
                let delivering =
                    store.list(Some(&name), Some(crate::message::State::Delivering))?;
                Ok(match delivering.into_iter().next() {
                    Some(m) => Some((m, true)),
                    None => store.next_for(&name)?.map(|m| (m, false)),
                })
            })
            .await;
        let (message, recovered) = match found {
            Ok(Some(found)) => found,
            Ok(None) => return Next::Wait,
            Err(error) => {
                warn!(%error, "cannot read the inbox");
                return Next::Error;
            }
        };
        let summary = &self.receiver.summary;
        // Only a screen that equals tmux's, with its status evaluated, can be judged.
        if summary.sync != SyncState::Live || !summary.status_settled {
            return Next::Wait;
        }
        let outcome = if recovered {
            self.recover(&message).await
        } else {
            // tmux is asked only when something would be done: the mirror says the receiver is
            // ready, or that a different program runs in the pane. A busy receiver costs nothing.
            let mirrored = format!("pid:{}", summary.pid);
            let ready = self.is_ready(summary.status) && !summary.dead;
            if !ready && message.agent == mirrored {
                return Next::Wait;
            }
            let (pid, command) = match pane_process(&self.receiver.handle, self.pane()).await {
                Ok(process) => process,
                Err(error) => {
                    warn!(%error, pane, "cannot read the pane's process");
                    return Next::Error;
                }
            };
            let identity = format!("pid:{pid}");
            if message.agent != identity {
                let reason = format!(
                    "{pane} now runs another program ({identity}; the message was for {})",
                    message.agent
                );
                return self
                    .finish(&message, Outcome::NotItsAgent(reason), false)
                    .await;
            }
            // The mirror learns of a new program in the pane up to a second late; until it has,
            // the status may be the previous program's.
            if !ready || summary.pid != pid || summary.command.as_bytes() != command.as_slice() {
                return Next::Wait;
            }
            let id = message.id;
            let begun = match self
                .inbox
                .call(move |store| store.begin_delivery(id, now_ms()))
                .await
            {
                Ok(begun) => begun,
                Err(error) => {
                    warn!(%error, id, "cannot begin a delivery");
                    return Next::Error;
                }
            };
            self.deliver(&begun).await
        };
        self.finish(&message, outcome, recovered).await
    }

    async fn finish(&self, message: &Message, outcome: Outcome, recovered: bool) -> Next {
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
            Outcome::NotItsAgent(reason) => {
                let reason = reason.clone();
                self.inbox
                    .call(move |store| store.fail_or_hold(id, &reason))
                    .await
                    .map(|_| ())
            }
            Outcome::Uncertain(reason) => {
                let reason = reason.clone();
                self.inbox
                    .call(move |store| store.uncertain(id, &reason))
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
            Ok(()) if matches!(outcome, Outcome::Later) => Next::Wait,
            Ok(()) => {
                info!(id, pane = %self.pane(), ?outcome, recovered, "message delivery");
                Next::Again
            }
            Err(error) => {
                warn!(%error, id, "cannot record a delivery's outcome");
                Next::Error
            }
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

    /// Pastes and submits a message marked `delivering` (`message` as `begin_delivery` left it).
    async fn deliver(&self, message: &Message) -> Outcome {
        let mut watch = PaneWatch::new(&self.bus, self.pane());
        let before = self.input().await.unwrap_or_default();
        if let Err(reason) = self.paste(message).await {
            return Outcome::Failed(reason.to_string());
        }
        let delay = self
            .settings
            .submit_delay
            .unwrap_or(self.options.submit_delay);
        tokio::time::sleep(delay).await;
        let pasted = self.input().await.unwrap_or_default();
        let probe = probe(&message.body);
        self.submit(&before, &pasted, &mut watch, probe.as_deref())
            .await
    }

    /// Sends the submit key and confirms the turn started, retrying once when that is safe.
    async fn submit(
        &self,
        before: &str,
        pasted: &str,
        watch: &mut PaneWatch,
        probe: Option<&str>,
    ) -> Outcome {
        let pane = self.pane();
        for attempt in 0..2 {
            if let Err(reason) = self.key(pane).await {
                return Outcome::Failed(reason.to_string());
            }
            match self.confirm(before, pasted, watch).await {
                Some(Confirmation::Status) => return Outcome::Delivered,
                Some(Confirmation::Input) => {
                    // The text left the input, but the status has not said "busy" yet: wait
                    // for it (briefly) so that the next message does not go in on a status
                    // that only lags behind the screen, unless the turn is seen to be over
                    // already (the prompt back). A turn too short to be seen busy leaves the
                    // text in the pane's history; a program that swallowed the paste (still
                    // starting, say) does not.
                    if self.await_turn(watch, pasted, probe).await {
                        return Outcome::Delivered;
                    }
                    return self
                        .look_again(
                            before,
                            pasted,
                            probe,
                            "the text left the input, but no turn was seen",
                        )
                        .await;
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
                if self.await_turn(watch, pasted, probe).await {
                    return Outcome::Delivered;
                }
                let what = format!(
                    "no sign that the turn started within {:?} of the submit key (status still \
                     ready: {still_ready}; text still in the input: {sitting})",
                    self.options.confirm_timeout
                );
                return self.look_again(before, pasted, probe, &what).await;
            }
        }
        let what = format!(
            "the agent did not start a turn after two submit keys ({:?} each)",
            self.options.confirm_timeout
        );
        self.look_again(before, pasted, probe, &what).await
    }

    /// The last look before giving a submitted message up: after a tmux round trip (so that
    /// the daemon's copy of the screen has caught up with a stalled tmux), a turn seen, or the
    /// text gone from the input and in the history, means delivered; the text still in the
    /// input of a receiver that answers promptly means failed (it was not taken); anything else
    /// cannot be told, and a retry could deliver it twice: uncertain.
    async fn look_again(
        &self,
        before: &str,
        pasted: &str,
        probe: Option<&str>,
        what: &str,
    ) -> Outcome {
        let started = Instant::now();
        if let Err(reason) = self.round_trip().await {
            return Outcome::Uncertain(format!(
                "{what}; tmux did not answer a last look at the pane: {reason}"
            ));
        }
        if self
            .status()
            .await
            .is_some_and(|s| self.is_busy(s.status) || s.dead)
        {
            return Outcome::Delivered;
        }
        let sitting = pasted != before && self.input().await.as_deref() == Some(pasted);
        if !sitting && self.in_history(probe).await {
            return Outcome::Delivered;
        }
        let took = started.elapsed();
        if sitting && took < STALLED {
            return Outcome::Failed(format!(
                "{what}; the text still sits in the input, not submitted"
            ));
        }
        if sitting {
            return Outcome::Uncertain(format!(
                "{what}; the text still sits in the input, but tmux took {took:?} to answer a \
                 look at the pane: on a machine this slow the receiver may still submit it"
            ));
        }
        Outcome::Uncertain(format!(
            "{what}; the text is no longer in the input nor in the pane's history: the receiver \
             may have taken it"
        ))
    }

    /// A tmux command answered: every output tmux wrote before it is in the daemon's copy of
    /// the screen.
    async fn round_trip(&self) -> Result<(), DeliveryError> {
        const CURSOR: Format = Format::new("#{cursor_y}");
        self.run(Line::new(commands::display_print(
            CURSOR,
            Some(Target::Pane(self.pane())),
        )))
        .await
    }

    /// Waits for the turn to start: a status that is not ready, or the pasted text gone from
    /// the input. `None` if neither happens in time.
    async fn confirm(
        &self,
        before: &str,
        pasted: &str,
        watch: &mut PaneWatch,
    ) -> Option<Confirmation> {
        let deadline = tokio::time::Instant::now() + self.options.confirm_timeout;
        let mut poll = tokio::time::interval(POLL);
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => return None,
                seen = watch.next() => match seen {
                    Seen::Status { status, .. } if self.is_busy(status) => {
                        return Some(Confirmation::Status);
                    }
                    // Anything else is looked at by the poll.
                    Seen::Status { .. } | Seen::Stale | Seen::Gone | Seen::Other(_) => {}
                    Seen::Closed => return None,
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

    /// Whether the message's probe is in the pane's history or screen, outside the input.
    /// `true` when the message has no probe (nothing to look for).
    async fn in_history(&self, probe: Option<&str>) -> bool {
        let Some(probe) = probe else {
            return true;
        };
        let input = self.input().await.unwrap_or_default();
        match self.history(Some(HISTORY_LINES)).await {
            Ok(lines) => outside_input(&lines, probe, &input),
            Err(_) => false,
        }
    }

    /// After the text left the input: waits up to the settle time for the status to say the
    /// receiver is busy, or for the turn to be seen over already (see
    /// [`Task::prompt_back`]); returns whether either happened.
    async fn await_turn(&self, watch: &mut PaneWatch, pasted: &str, probe: Option<&str>) -> bool {
        let deadline = tokio::time::Instant::now() + self.options.settle;
        let mut poll = tokio::time::interval(POLL);
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => return false,
                seen = watch.next() => match seen {
                    Seen::Status { status, .. } if self.is_busy(status) => return true,
                    // Anything else is looked at by the poll.
                    Seen::Status { .. } | Seen::Stale | Seen::Gone | Seen::Other(_) => {}
                    Seen::Closed => return false,
                },
                _ = poll.tick() => {
                    let Some(summary) = self.status().await else {
                        continue;
                    };
                    if self.is_busy(summary.status) || summary.dead {
                        return true;
                    }
                    if let Some(probe) = probe
                        && self.prompt_back(&summary, pasted, probe).await
                    {
                        return true;
                    }
                }
            }
        }
    }

    /// Whether a turn too short to be seen busy is over: the receiver's input is the cursor's
    /// row (a provider drawing an input box empties it the moment it takes the text, long
    /// before it shows it works, so there the settle wait stays), the pasted text left it and
    /// is on the screen above it, the status is ready and up to date, and a ready rule matches
    /// the screen as it is now: the program printed its prompt again, so it reads input again.
    /// (The status alone would not do: a screen no rule matches keeps the last status for a
    /// grace time.)
    async fn prompt_back(&self, summary: &PaneSummary, pasted: &str, probe: &str) -> bool {
        if !self.is_ready(summary.status)
            || !summary.status_settled
            || summary.sync != SyncState::Live
        {
            return false;
        }
        // tmux's screen first: the daemon's copy then holds at least what it shows.
        let Ok(screen) = self.history(None).await else {
            return false;
        };
        let Ok(Some(input)) = self.receiver.handle.input_view(self.pane()).await else {
            return false;
        };
        if input.boxed || input.text == pasted || !outside_input(&screen, probe, &input.text) {
            return false;
        }
        let Ok(Some(explanation)) = self.receiver.handle.explain(self.pane()).await else {
            return false;
        };
        let ready_rule = explanation.rules.iter().any(|rule| {
            rule.decisive
                && matches!(
                    rule.verdict,
                    Verdict::Ready | Verdict::Idle | Verdict::Completed
                )
        });
        ready_rule && explanation.signal.is_none_or(|s| !self.is_busy(s.status))
    }

    /// Puts the text into a paste buffer of its own and pastes it; the same command line marks
    /// the pane with the message's paste (see [`PASTED_OPTION`]).
    async fn paste(&self, message: &Message) -> Result<(), DeliveryError> {
        let buffer = format!("panectl-msg-{}", message.id);
        let mut line = None::<Line>;
        for (index, chunk) in message.body.chunks(CHUNK).enumerate() {
            let command = if index == 0 {
                commands::set_buffer(buffer.as_bytes(), chunk)
            } else {
                commands::append_buffer(buffer.as_bytes(), chunk)
            }
            .map_err(|source| DeliveryError::Encode {
                what: "message",
                source,
            })?;
            // One command per line keeps each line bounded.
            if let Some(previous) = line.replace(Line::new(command)) {
                self.run(previous).await?;
            }
        }
        let paste = commands::paste_buffer(buffer.as_bytes(), self.pane()).map_err(|source| {
            DeliveryError::Encode {
                what: "paste",
                source,
            }
        })?;
        let mark = SafeValue::new(paste_mark(message)).map_err(|source| DeliveryError::Encode {
            what: "paste's mark",
            source,
        })?;
        let mark = query::set_pane_option(self.pane(), PASTED_OPTION, Some(&mark));
        let last = match line {
            Some(line) => line.then(paste).then(mark),
            None => return Err(DeliveryError::Empty),
        };
        self.run(last).await
    }

    /// The pane's paste mark: `Some(value)` as the last paste left it, `None` when unset.
    async fn pasted_mark(&self) -> Result<Option<String>, DeliveryError> {
        let replies = self
            .receiver
            .handle
            .run(Line::new(query::show_pane_option(
                self.pane(),
                PASTED_OPTION,
            )))
            .await?;
        let value = replies
            .first()
            .map(|reply| reply.joined_body())
            .unwrap_or_default();
        let value = String::from_utf8_lossy(&value).trim().to_string();
        Ok((!value.is_empty()).then_some(value))
    }

    async fn key(&self, pane: PaneId) -> Result<(), DeliveryError> {
        self.run(Line::new(commands::send_key(
            pane,
            &self.settings.submit_key,
        )))
        .await?;
        // The turn it starts is followed even from a weak working marker.
        let _ = self.receiver.handle.input_sent(pane).await;
        Ok(())
    }

    async fn run(&self, line: Line) -> Result<(), DeliveryError> {
        self.receiver.handle.run(line).await?;
        Ok(())
    }

    /// Decides what became of a message a crash left `delivering`: the pane's paste mark
    /// says whether its own paste happened (text like it on the screen proves nothing: an
    /// earlier message, or the user, may have put it there).
    async fn recover(&self, message: &Message) -> Outcome {
        let pasted = match self.pasted_mark().await {
            Ok(mark) => mark.as_deref() == Some(paste_mark(message).as_str()),
            Err(reason) => {
                warn!(%reason, id = message.id, "cannot read the pane's paste mark");
                return Outcome::Later;
            }
        };
        if !pasted {
            // The crash came between `delivering` and the paste: it never reached the pane.
            return if self.is_ready(self.receiver.summary.status) {
                Outcome::BackToPending
            } else {
                Outcome::Later
            };
        }
        let Some(probe) = probe(&message.body) else {
            return Outcome::Uncertain(
                "pasted before a daemon crash; the text has nothing printable to look for on the \
                 screen"
                    .into(),
            );
        };
        let input = self.input().await.unwrap_or_default();
        if input.contains(&probe) {
            // Pasted, not submitted: submit it now.
            let mut watch = PaneWatch::new(&self.bus, self.pane());
            let before = input.replace(&probe, "");
            return self.submit(&before, &input, &mut watch, Some(&probe)).await;
        }
        match self.history(Some(HISTORY_LINES)).await {
            Ok(history) if history.iter().any(|line| line.contains(&probe)) => Outcome::Delivered,
            Ok(_) => Outcome::Uncertain(
                "pasted before a daemon crash; the text is neither in the input nor in the pane's \
                 history"
                    .into(),
            ),
            Err(reason) => {
                warn!(%reason, id = message.id, "cannot read the pane's history");
                Outcome::Later
            }
        }
    }

    /// The pane's text as lines, wrapped lines joined: its screen, and with `history` that many
    /// lines of history above it.
    async fn history(&self, history: Option<i64>) -> Result<Vec<String>, DeliveryError> {
        let command = crate::control::command::Command::new("capture-pane")
            .flag("-p")
            .flag("-J");
        let command = match history {
            Some(lines) => command.number("-S", -lines),
            None => command,
        };
        let command = command.target("-t", self.pane());
        let replies = self.receiver.handle.run(Line::new(command)).await?;
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

/// The value of [`PASTED_OPTION`] for a message's current attempt: its id and when the attempt
/// began, so that a mark left by another inbox file's message of the same id does not count.
fn paste_mark(message: &Message) -> String {
    format!("{}:{}", message.id, message.attempt_at.unwrap_or_default())
}

/// Whether a line holding `probe` is among `lines` other than the input's own.
fn outside_input(lines: &[String], probe: &str, input: &str) -> bool {
    lines
        .iter()
        .any(|l| l.contains(probe) && !input.contains(l.trim()))
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
