//! Following dialogs as they open and close: a `decision` event when a pane shows a dialog
//! (with its question and options), a `decision_closed` event when it leaves (answered through
//! panectl, answered in the pane, or its pane gone), and the user's `[[auto_answer]]` rules
//! applied to each new dialog.
//!
//! One task reads the event bus: a pane's status turning `waiting_user_answer`, and while it
//! waits, its output (another dialog may replace the first), make it read the pane's decision
//! again, at most every [`SETTLE`]. What panectl answered is in the [`Answering`] the answer
//! workflow keeps (it notes an answer before it presses the keys), so the close says who answered.
//!
//! [`Answering`]: super::answer::Answering

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tracing::{info, warn};

use super::Context;
use super::answer::{self, AnswerBody, AnsweredBy, Outcome};
use crate::events::{DecisionEnd, EventKind};
use crate::ids::PaneId;
use crate::status::Status;
use crate::status::decision::Decision;

/// How long a waiting pane's screen is left to settle before its dialog is read again.
const SETTLE: Duration = Duration::from_millis(150);

/// A dialog on a pane's screen, as last announced.
#[derive(Debug, Clone)]
struct Open {
    fingerprint: String,
}

/// What the task knows of the panes.
#[derive(Debug, Default)]
struct Dialogs {
    /// Panes whose status is `waiting_user_answer`.
    waiting: HashSet<PaneId>,
    /// The dialog announced for each pane.
    open: HashMap<PaneId, Open>,
    /// Waiting panes to read again.
    dirty: HashSet<PaneId>,
}

/// Runs until shutdown: publishes `decision` and `decision_closed` events and applies the
/// `[[auto_answer]]` rules. Subscribes at once, so that no status published after the call is
/// missed (the task may start later).
pub fn follow(context: Context) -> impl std::future::Future<Output = ()> {
    let events = context.bus.subscribe();
    run(context, events)
}

async fn run(
    context: Context,
    mut events: tokio::sync::broadcast::Receiver<std::sync::Arc<crate::events::DaemonEvent>>,
) {
    let mut dialogs = Dialogs::default();
    let mut settle = tokio::time::interval(SETTLE);
    settle.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = context.shutdown.cancelled() => return,
            event = events.recv() => match event {
                Ok(event) => dialogs.seen(&context, &event.kind).await,
                Err(RecvError::Lagged(missed)) => {
                    // Statuses may have changed unseen: read every pane again.
                    warn!(missed, "the dialog follower fell behind the events; reading every pane again");
                    dialogs.resync(&context).await;
                }
                Err(RecvError::Closed) => return,
            },
            _ = settle.tick(), if !dialogs.dirty.is_empty() => {
                let panes: Vec<PaneId> = dialogs.dirty.drain().collect();
                for pane in panes {
                    dialogs.read(&context, pane).await;
                }
            }
        }
    }
}

impl Dialogs {
    async fn seen(&mut self, context: &Context, kind: &EventKind) {
        match kind {
            EventKind::Status { pane, status, .. } if *status == Status::WaitingUserAnswer => {
                self.waiting.insert(*pane);
                self.dirty.insert(*pane);
            }
            EventKind::Status { pane, .. } => {
                self.waiting.remove(pane);
                self.dirty.remove(pane);
                if let Some(open) = self.open.remove(pane) {
                    close(context, *pane, open, false);
                }
            }
            EventKind::Output { pane, .. } if self.waiting.contains(pane) => {
                self.dirty.insert(*pane);
            }
            EventKind::PaneRemoved { pane } => {
                self.waiting.remove(pane);
                self.dirty.remove(pane);
                if let Some(open) = self.open.remove(pane) {
                    close(context, *pane, open, true);
                }
            }
            _ => {}
        }
    }

    /// After missed events: the waiting panes as they are now.
    async fn resync(&mut self, context: &Context) {
        let panes = context.all_panes().await;
        let waiting: HashSet<PaneId> = panes
            .iter()
            .filter(|p| p.status == Status::WaitingUserAnswer)
            .map(|p| p.pane)
            .collect();
        let known: HashSet<PaneId> = panes.iter().map(|p| p.pane).collect();
        let left: Vec<PaneId> = self
            .open
            .keys()
            .filter(|pane| !waiting.contains(pane))
            .copied()
            .collect();
        for pane in left {
            if let Some(open) = self.open.remove(&pane) {
                close(context, pane, open, !known.contains(&pane));
            }
        }
        self.dirty.extend(waiting.iter().copied());
        self.waiting = waiting;
    }

    /// Reads the dialog of a waiting pane; announces it when it is another than the last.
    async fn read(&mut self, context: &Context, pane: PaneId) {
        let Ok((summary, handle)) = context.find(&pane.to_string()).await else {
            return;
        };
        let Ok((Some(decision), _status)) = answer::read(&handle, pane).await else {
            return;
        };
        if self
            .open
            .get(&pane)
            .is_some_and(|open| open.fingerprint == decision.fingerprint)
        {
            return;
        }
        if let Some(open) = self.open.remove(&pane) {
            // Another dialog in the place of the last: the last one was answered.
            close(context, pane, open, false);
        }
        self.open.insert(
            pane,
            Open {
                fingerprint: decision.fingerprint.clone(),
            },
        );
        info!(%pane, fingerprint = %decision.fingerprint, options = decision.options.len(), "a dialog waits for an answer");
        context.bus.publish(EventKind::Decision {
            pane,
            provider: summary.provider.clone(),
            decision: decision.clone(),
        });
        auto_answer(context, pane, summary.provider.as_deref(), &decision);
    }
}

/// Publishes the end of a dialog: answered through panectl when the ledger says so, else in
/// the pane (or gone with its pane).
fn close(context: &Context, pane: PaneId, open: Open, pane_gone: bool) {
    let mark = context.answering.take(pane, &open.fingerprint);
    let (how, option, label, by) = match mark {
        Some(mark) => (
            DecisionEnd::Answered,
            Some(mark.option),
            Some(mark.label),
            Some(mark.by.to_string()),
        ),
        None if pane_gone => (DecisionEnd::Gone, None, None, None),
        None => (DecisionEnd::AnsweredElsewhere, None, None, None),
    };
    context.bus.publish(EventKind::DecisionClosed {
        pane,
        fingerprint: open.fingerprint,
        how,
        option,
        label,
        by,
    });
}

/// Answers a new dialog when an `[[auto_answer]]` rule says so, in a task of its own (the
/// answer waits for the dialog to leave, which this task's events tell).
fn auto_answer(context: &Context, pane: PaneId, provider: Option<&str>, decision: &Decision) {
    let providers = context.providers.borrow().clone();
    let Some((rule, choice)) =
        crate::status::auto_answer::matching(&providers.auto_answers, provider, decision)
    else {
        return;
    };
    info!(%pane, rule = %rule.name, option = choice.number, label = %choice.label, fingerprint = %decision.fingerprint, "auto-answering a dialog");
    let body = AnswerBody {
        label: Some(choice.label.clone()),
        decision: Some(decision.fingerprint.clone()),
        ..AnswerBody::default()
    };
    let by = AnsweredBy::Rule(rule.name.clone());
    let context = context.clone();
    context.tasks.clone().spawn(async move {
        match answer::answer_as(&context, &pane.to_string(), &body, by).await {
            Ok(done) if done.outcome == Outcome::Answered => {}
            Ok(done) => {
                warn!(%pane, outcome = ?done.outcome, "an auto-answer did not close its dialog")
            }
            Err(error) => warn!(%pane, %error, "an auto-answer failed"),
        }
    });
}
