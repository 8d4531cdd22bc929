//! The wire types: every request body and answer of the local API, in one place, as the
//! server sends them and the clients (the CLI, `panectl mcp`) read them back. They are the
//! server's own types (each defined next to the code that makes it), so a field exists once;
//! the JSON a value serializes to deserializes to the same value, and serializes again to the
//! same JSON.

pub use super::health::Health;
pub use super::messages::SendBody;
pub use super::panes::{
    FailedPane, ProviderBody, ProviderInfo, SessionTransportAnswer, TransportBody,
};
pub use crate::inbox::{Assignment, AssignmentState, Message};
pub use crate::message::State as MessageState;
pub use crate::orchestration::handoff::{Assigned, HandoffAnswer, HandoffBody};
pub use crate::orchestration::input::{InputBody, KeysBody, WaitAnswer, WaitBody};
pub use crate::orchestration::launch::{LaunchBody, Launched};
pub use crate::session::{Explanation, PaneSummary, SignalReport};
pub use crate::status::engine::RuleReport;
