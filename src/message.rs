//! What a queued message is, in the words every layer shares: the inbox stores it, the event
//! bus reports its changes and the API and CLI show it, so its state sits below all of them.

use serde::{Deserialize, Serialize};

/// Where a message is in its life. `pending`: waiting for the receiver to be ready; `held`:
/// its agent (addressed by name) is gone, and the message waits for the agent to be restored
/// or launched again under that name;
/// `delivering`: being pasted and submitted; `delivered`: submitted and the receiver's turn
/// started; `failed`: given up, the receiver did not take the text (see `reason`);
/// `uncertain`: submitted, but whether the receiver took it cannot be told (see `reason`);
/// never retried automatically, as a retry could deliver it twice; `expired`: its TTL ran out
/// before delivery; `cancelled`: cancelled before delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = MessageState)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Waiting for its receiver to be ready.
    Pending,
    /// Being pasted and submitted (committed before the paste).
    Delivering,
    /// Addressed to a named agent whose pane is gone: kept for the agent's next launch under
    /// that name (`panectl restore`, or `launch --name`), then pending again.
    Held,
    /// Submitted, and the receiver's turn started.
    Delivered,
    /// Given up (the reason says why): the receiver is known not to have taken the text.
    Failed,
    /// The text was pasted and submitted but whether the receiver took it cannot be told (a
    /// stalled machine, a turn too short to see whose text does not stay on the screen); the
    /// reason says what was seen. Never retried automatically: retrying could deliver it twice.
    Uncertain,
    /// Its time to live ran out before it could be delivered.
    Expired,
    /// Cancelled before delivery.
    Cancelled,
}

impl State {
    /// Every state, in life order.
    pub const ALL: [State; 8] = [
        State::Pending,
        State::Delivering,
        State::Held,
        State::Delivered,
        State::Failed,
        State::Uncertain,
        State::Expired,
        State::Cancelled,
    ];

    /// The word stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Delivering => "delivering",
            State::Held => "held",
            State::Delivered => "delivered",
            State::Failed => "failed",
            State::Uncertain => "uncertain",
            State::Expired => "expired",
            State::Cancelled => "cancelled",
        }
    }

    /// Reads a state word.
    pub fn parse(word: &str) -> Option<State> {
        State::ALL.into_iter().find(|s| s.as_str() == word)
    }

    /// Every state word, comma-separated: what an error about an unknown one lists.
    pub fn words() -> String {
        State::ALL.map(State::as_str).join(", ")
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A state on a command line (`panectl inbox --state`): its word, as [`State::as_str`] gives it.
impl clap::ValueEnum for State {
    fn value_variants<'a>() -> &'a [Self] {
        &State::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}
