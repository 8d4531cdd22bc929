//! Answering a dialog by option, exactly once and only while that dialog is on the screen.
//!
//! The daemon reads the pane's [`Decision`] now, checks it is the one the caller named (its
//! fingerprint), picks the option asked for, presses the keys that pick it for this dialog,
//! and waits until the dialog leaves the screen. Answers are taken one at a time per daemon,
//! so of two answers racing for one dialog the second finds it gone (or another dialog in its
//! place) and presses nothing.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Context, Error};
use crate::control::command::Line;
use crate::ids::PaneId;
use crate::status::Status;
use crate::status::decision::{Answer, Choice, Decision};
use crate::tmux::ConnectionHandle;

/// How long an answered dialog may take to leave the screen.
const LEAVE_TIMEOUT: Duration = Duration::from_secs(5);

/// How often the screen is read while waiting.
const POLL: Duration = Duration::from_millis(50);

/// How long a mark of an answer counts: a dialog that leaves later was not closed by it.
const MARK_LIFETIME: Duration = Duration::from_secs(30);

/// Who answers a dialog through panectl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnsweredBy {
    /// A request: the API, the CLI, an MCP tool, the board.
    Request,
    /// An `[[auto_answer]]` rule, by name.
    Rule(String),
}

impl std::fmt::Display for AnsweredBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnsweredBy::Request => f.write_str("request"),
            AnsweredBy::Rule(name) => write!(f, "auto_answer {name}"),
        }
    }
}

/// Answers one at a time, and the answers panectl gave, by pane: what tells a dialog
/// answered through panectl from one answered by a key pressed in the pane when it leaves the
/// screen ([`Context::answering`]).
#[derive(Debug, Default)]
pub struct Answering {
    /// Held while a dialog is answered, so that two answers racing for one dialog cannot both
    /// press keys into it.
    turn: tokio::sync::Mutex<()>,
    /// The recent answers (held only to read or write them, never across an await).
    marks: std::sync::Mutex<std::collections::HashMap<PaneId, Mark>>,
}

/// An answer about to be given.
#[derive(Debug, Clone)]
pub struct Mark {
    /// The dialog answered.
    pub fingerprint: String,
    /// The option picked.
    pub option: usize,
    /// Its label.
    pub label: String,
    /// Who answered.
    pub by: AnsweredBy,
    at: std::time::Instant,
}

impl Answering {
    fn marks(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<PaneId, Mark>> {
        // A poisoned lock only means a panic elsewhere; the map is still whole.
        self.marks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes an answer to the dialog on `pane`, before its keys are pressed.
    fn mark(&self, pane: PaneId, fingerprint: &str, choice: &Choice, by: AnsweredBy) {
        let now = std::time::Instant::now();
        let mut marks = self.marks();
        marks.retain(|_, mark| now - mark.at < MARK_LIFETIME);
        marks.insert(
            pane,
            Mark {
                fingerprint: fingerprint.to_string(),
                option: choice.number,
                label: choice.label.clone(),
                by,
                at: now,
            },
        );
    }

    /// The answer panectl gave to the dialog `fingerprint` on `pane`, if it did (recently).
    pub fn take(&self, pane: PaneId, fingerprint: &str) -> Option<Mark> {
        let mark = self.marks().remove(&pane)?;
        (mark.fingerprint == fingerprint && mark.at.elapsed() < MARK_LIFETIME).then_some(mark)
    }
}

/// What an answer asks for: one of `option`, `label`, `yes`, `no`, and the dialog it is for.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerBody {
    /// The option's number, as shown.
    #[serde(default)]
    pub option: Option<usize>,
    /// The option's label (ignoring case), or the start of exactly one option's label.
    #[serde(default)]
    pub label: Option<String>,
    /// The dialog's first affirmative option (Yes, Allow, Approve, Proceed, Trust...).
    #[serde(default)]
    pub yes: bool,
    /// The dialog's first negative option (No, Deny, Reject, Cancel, Don't...).
    #[serde(default)]
    pub no: bool,
    /// The fingerprint of the dialog answered (from `explain`'s `decision`): when another
    /// dialog is on the screen, nothing is pressed. Without it, whatever dialog is there now.
    #[serde(default)]
    pub decision: Option<String>,
}

impl AnswerBody {
    /// The one choice the body makes.
    pub fn answer(&self) -> Result<Answer, Error> {
        let mut chosen = Vec::new();
        if let Some(number) = self.option {
            chosen.push(Answer::Option(number));
        }
        if let Some(label) = &self.label {
            chosen.push(Answer::Label(label.clone()));
        }
        if self.yes {
            chosen.push(Answer::Yes);
        }
        if self.no {
            chosen.push(Answer::No);
        }
        match chosen.len() {
            1 => Ok(chosen.remove(0)),
            0 => Err(Error::BadRequest(
                "say which option: option, label, yes or no".into(),
            )),
            _ => Err(Error::BadRequest(
                "option, label, yes and no are exclusive: give one".into(),
            )),
        }
    }
}

/// What came of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The keys were pressed and the dialog left the screen.
    Answered,
    /// The keys were pressed, and the dialog was still there after five seconds.
    Unconfirmed,
    /// No dialog is on the screen (it was answered already, or closed): nothing pressed.
    Gone,
    /// Another dialog than the one named is on the screen: nothing pressed.
    Changed,
}

/// The answer of `POST /v1/panes/{pane}/decision`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AnswerOutcome {
    /// The pane.
    #[schema(value_type = PaneId)]
    pub pane: String,
    /// What came of it.
    pub outcome: Outcome,
    /// The option picked (`answered`, `unconfirmed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option: Option<usize>,
    /// Its label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The keys pressed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
    /// The pane's status afterwards.
    #[serde(deserialize_with = "crate::status::lenient")]
    pub status: Status,
    /// The dialog on the screen now: the new one for `changed`, the one still there for
    /// `unconfirmed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
}

/// A waiting pane's decision, as `GET /v1/decisions` lists it.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PaneDecision {
    /// The pane.
    #[schema(value_type = PaneId)]
    pub pane: String,
    /// Its name (`@panectl_name`), if it has one.
    #[schema(required = true)]
    pub name: Option<String>,
    /// Its session's name.
    #[schema(value_type = String)]
    pub session: crate::raw::RawBytes,
    /// The provider whose dialog it is.
    #[schema(required = true)]
    pub provider: Option<String>,
    /// The dialog.
    pub decision: Decision,
}

/// `GET /v1/decisions`: the dialog of every pane that waits for an answer and shows one.
pub async fn decisions(state: &Context) -> Vec<PaneDecision> {
    let mut found = Vec::new();
    let handles = state.handles();
    for pane in state.all_panes().await {
        if pane.status != Status::WaitingUserAnswer {
            continue;
        }
        let Some(handle) = handles.get(&pane.session_id) else {
            continue;
        };
        if let Ok((Some(decision), _)) = read(handle, pane.pane).await {
            found.push(PaneDecision {
                pane: pane.pane.to_string(),
                name: pane.name.clone(),
                session: pane.session.clone(),
                provider: pane.provider.clone(),
                decision,
            });
        }
    }
    found
}

/// The decision on the pane's screen now, and its status.
pub(super) async fn read(
    handle: &ConnectionHandle,
    pane: PaneId,
) -> Result<(Option<Decision>, Status), Error> {
    match handle.explain(pane).await {
        Ok(Some(explained)) => Ok((explained.decision, explained.status)),
        Ok(None) => Err(Error::Gone(format!("{pane} closed"))),
        Err(error) => Err(Error::Unavailable(error.to_string())),
    }
}

/// `POST /v1/panes/{pane}/decision`: picks an option of the dialog on the pane's screen.
pub async fn answer(
    state: &Context,
    name: &str,
    body: &AnswerBody,
) -> Result<AnswerOutcome, Error> {
    answer_as(state, name, body, AnsweredBy::Request).await
}

/// [`answer`], saying who answers (the `decision_closed` event carries it).
pub async fn answer_as(
    state: &Context,
    name: &str,
    body: &AnswerBody,
    by: AnsweredBy,
) -> Result<AnswerOutcome, Error> {
    let wanted = body.answer()?;
    let (pane, handle) = state.find(name).await?;
    let _one_at_a_time = state.answering.turn.lock().await;
    let (decision, status) = read(&handle, pane.pane).await?;
    let outcome = |outcome, status, decision| AnswerOutcome {
        pane: pane.pane.to_string(),
        outcome,
        option: None,
        label: None,
        keys: Vec::new(),
        status,
        decision,
    };
    let Some(decision) = decision else {
        return Ok(outcome(Outcome::Gone, status, None));
    };
    if body
        .decision
        .as_ref()
        .is_some_and(|named| *named != decision.fingerprint)
    {
        return Ok(outcome(Outcome::Changed, status, Some(decision)));
    }
    let choice = decision
        .choose(&wanted)
        .map_err(|error| Error::BadRequest(error.to_string()))?
        .clone();
    let Some((last, moves)) = choice.keys.split_last() else {
        return Err(Error::Failed("the option names no keys".into()));
    };
    state
        .answering
        .mark(pane.pane, &decision.fingerprint, &choice, by);
    // The pointer moves first, and the key that picks goes only once the screen shows the
    // pointer on the option: Claude Code 2.1.332 drops an Enter that arrives in one read with
    // the arrows before it, and an Enter on the wrong row would answer another option.
    if let Some(line) = Line::keys(pane.pane, moves) {
        super::first_reply_line(&handle, line).await?;
        if is_menu_move(moves) {
            let pointed =
                pointer_on(&handle, pane.pane, &decision.fingerprint, choice.number).await?;
            if !pointed {
                let (shown, status) = read(&handle, pane.pane).await?;
                return Ok(AnswerOutcome {
                    option: Some(choice.number),
                    label: Some(choice.label),
                    keys: moves.to_vec(),
                    ..outcome(Outcome::Unconfirmed, status, shown)
                });
            }
        } else {
            tokio::time::sleep(KEY_GAP).await;
        }
    }
    if let Some(line) = Line::keys(pane.pane, std::slice::from_ref(last)) {
        super::first_reply_line(&handle, line).await?;
    }
    let deadline = tokio::time::Instant::now() + LEAVE_TIMEOUT;
    let (left, status, now_shown) = loop {
        let (shown, status) = read(&handle, pane.pane).await?;
        let still = shown
            .as_ref()
            .is_some_and(|d| d.fingerprint == decision.fingerprint);
        if !still {
            break (true, status, shown);
        }
        if tokio::time::Instant::now() >= deadline {
            break (false, status, shown);
        }
        tokio::time::sleep(POLL).await;
    };
    Ok(AnswerOutcome {
        option: Some(choice.number),
        label: Some(choice.label),
        keys: choice.keys,
        ..outcome(
            if left {
                Outcome::Answered
            } else {
                Outcome::Unconfirmed
            },
            status,
            now_shown,
        )
    })
}

/// How long the pointer may take to reach the option the arrows moved it to.
const POINTER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long after the pointer shows on the option the key that picks it waits: Claude Code
/// 2.1.332 draws the pointer before its input handler follows it, and drops an Enter that
/// comes sooner.
const POINTER_SETTLE: Duration = Duration::from_millis(300);

/// The pause between a letter and the Enter after it (a letter prompt reads a line).
const KEY_GAP: Duration = Duration::from_millis(100);

/// Whether keys only move a menu's pointer (or the selection among buttons side by side).
fn is_menu_move(keys: &[String]) -> bool {
    !keys.is_empty()
        && keys
            .iter()
            .all(|k| matches!(k.as_str(), "Up" | "Down" | "Left" | "Right"))
}

/// How many times the arrows still needed are pressed again when the pointer stopped short.
const POINTER_CORRECTIONS: usize = 2;

/// Waits until the dialog `fingerprint` shows its pointer on option `number`: false when it
/// does not, or the dialog left or changed meanwhile. A CLI can drop arrows that come while
/// it sets its dialog up (Gemini CLI under load): when the pointer rests on another option of
/// the same dialog for [`POINTER_TIMEOUT`], the arrows from there are pressed again, at most
/// [`POINTER_CORRECTIONS`] times. No key but an arrow is pressed here.
async fn pointer_on(
    handle: &ConnectionHandle,
    pane: PaneId,
    fingerprint: &str,
    number: usize,
) -> Result<bool, Error> {
    let mut deadline = tokio::time::Instant::now() + POINTER_TIMEOUT;
    let mut corrections = 0;
    loop {
        let (shown, _) = read(handle, pane).await?;
        // A program that redraws its whole dialog on each key can be caught mid-redraw, with
        // no dialog or half of one on the screen: that passes. Only a dialog gone or another
        // one for the whole wait ends it (nothing more is pressed then).
        let Some(shown) = shown.filter(|d| d.fingerprint == fingerprint) else {
            if tokio::time::Instant::now() >= deadline {
                return Ok(false);
            }
            tokio::time::sleep(POLL).await;
            continue;
        };
        if shown
            .options
            .iter()
            .any(|o| o.number == number && o.pointed)
        {
            tokio::time::sleep(POINTER_SETTLE).await;
            return Ok(true);
        }
        if tokio::time::Instant::now() >= deadline {
            let still = arrows_to(&shown, number);
            if corrections == POINTER_CORRECTIONS || still.is_empty() {
                return Ok(false);
            }
            corrections += 1;
            if let Some(line) = Line::keys(pane, &still) {
                super::first_reply_line(handle, line).await?;
            }
            deadline = tokio::time::Instant::now() + POINTER_TIMEOUT;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The arrows that move the pointer of `shown` from where it is to option `number` (none when
/// either is not there).
fn arrows_to(shown: &Decision, number: usize) -> Vec<String> {
    let from = shown.options.iter().position(|o| o.pointed);
    let to = shown.options.iter().position(|o| o.number == number);
    // Buttons side by side move with Left and Right, a menu with Up and Down.
    let sideways =
        (shown.options.iter()).any(|o| o.keys.iter().any(|k| k == "Left" || k == "Right"));
    let (back, forward) = if sideways {
        ("Left", "Right")
    } else {
        ("Up", "Down")
    };
    match (from, to) {
        (Some(from), Some(to)) => {
            let key = if to > from { forward } else { back };
            std::iter::repeat_n(key.to_string(), from.abs_diff(to)).collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arrows_still_needed_go_from_where_the_pointer_rests() {
        let choice = |number: usize, pointed: bool| crate::status::decision::Choice {
            number,
            label: format!("option {number}"),
            detail: String::new(),
            pointed,
            keys: Vec::new(),
        };
        let shown = Decision {
            question: "Run it?".into(),
            options: vec![choice(1, false), choice(2, true), choice(3, false)],
            fingerprint: "f".into(),
        };
        assert_eq!(arrows_to(&shown, 3), ["Down"]);
        assert_eq!(arrows_to(&shown, 1), ["Up"]);
        assert!(arrows_to(&shown, 2).is_empty());
        assert!(arrows_to(&shown, 9).is_empty());
        // Buttons side by side: the options' own keys say which way they move.
        let mut buttons = shown.clone();
        buttons.options[0].keys = vec!["Left".into(), "Enter".into()];
        assert_eq!(arrows_to(&buttons, 3), ["Right"]);
        assert_eq!(arrows_to(&buttons, 1), ["Left"]);
    }

    #[test]
    fn only_arrows_wait_for_the_pointer() {
        let keys = |k: &[&str]| k.iter().map(|k| k.to_string()).collect::<Vec<_>>();
        assert!(is_menu_move(&keys(&["Down", "Down"])));
        assert!(is_menu_move(&keys(&["Up"])));
        assert!(is_menu_move(&keys(&["Right", "Right"])));
        assert!(!is_menu_move(&keys(&["y"])));
        assert!(!is_menu_move(&keys(&["Down", "3"])));
        assert!(!is_menu_move(&[]));
    }

    #[test]
    fn a_body_makes_exactly_one_choice() {
        let body = |json: &str| serde_json::from_str::<AnswerBody>(json).unwrap().answer();
        assert_eq!(body(r#"{"option": 3}"#), Ok(Answer::Option(3)));
        assert_eq!(body(r#"{"label": "No"}"#), Ok(Answer::Label("No".into())));
        assert_eq!(body(r#"{"yes": true, "decision": "ab"}"#), Ok(Answer::Yes));
        assert_eq!(body(r#"{"no": true}"#), Ok(Answer::No));
        assert!(matches!(body("{}"), Err(Error::BadRequest(_))));
        assert!(matches!(
            body(r#"{"yes": true, "no": true}"#),
            Err(Error::BadRequest(_))
        ));
        assert!(serde_json::from_str::<AnswerBody>(r#"{"optoin": 1}"#).is_err());
    }
}
