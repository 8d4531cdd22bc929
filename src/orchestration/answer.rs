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
use crate::status::decision::{Answer, Decision};
use crate::tmux::ConnectionHandle;

/// How long an answered dialog may take to leave the screen.
const LEAVE_TIMEOUT: Duration = Duration::from_secs(5);

/// How often the screen is read while waiting.
const POLL: Duration = Duration::from_millis(50);

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
async fn read(
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
    let wanted = body.answer()?;
    let (pane, handle) = state.find(name).await?;
    let _one_at_a_time = state.answering.lock().await;
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
    let Some(line) = Line::keys(pane.pane, &choice.keys) else {
        return Err(Error::Failed("the option names no keys".into()));
    };
    super::first_reply_line(&handle, line).await?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
