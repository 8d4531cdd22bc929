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
pub use crate::events::CloseHow;
pub use crate::inbox::WorktreeRecord;
pub use crate::inbox::{Assignment, AssignmentState, Message};
pub use crate::message::State as MessageState;
pub use crate::orchestration::answer::{AnswerBody, AnswerOutcome, Outcome, PaneDecision};
pub use crate::orchestration::close::{CloseBody, Closed};
pub use crate::orchestration::handoff::{Assigned, HandoffAnswer, HandoffBody};
pub use crate::orchestration::input::{InputBody, KeysBody, WaitAnswer, WaitBody};
pub use crate::orchestration::launch::{LaunchBody, Launched};
pub use crate::orchestration::restore::{RestoreBody, RestoreOutcome, Restored};
pub use crate::orchestration::worktrees::WorktreeListing;
pub use crate::session::{Explanation, PaneSummary, SignalReport};
pub use crate::status::decision::{Choice, Decision};
pub use crate::status::engine::RuleReport;

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::json;

    use super::*;
    use crate::ids::{PaneId, SessionId, WindowId};
    use crate::mirror::{PaneCounters, SyncState};
    use crate::pipe::Transport;
    use crate::raw::RawBytes;
    use crate::status::Status;
    use crate::status::pane::ProviderSource;
    use crate::status::signal::StatusSource;

    /// Serializes `value`, reads it back as `T` and serializes that: the same JSON both times.
    fn round_trip<T: Serialize + DeserializeOwned>(value: &T) -> String {
        let sent = serde_json::to_string(value).expect("serializes");
        let read: T = serde_json::from_str(&sent).expect("reads back");
        assert_eq!(
            serde_json::to_string(&read).expect("serializes again"),
            sent
        );
        sent
    }

    fn pane() -> PaneSummary {
        PaneSummary {
            name: Some("worker".into()),
            pane: PaneId(3),
            session_id: SessionId(1),
            session: RawBytes(b"caf\xc3\xa9 \xff".to_vec()),
            window_id: WindowId(4),
            window_index: 2,
            window: "w\"x\n".into(),
            index: 1,
            title: "\u{1b}]0;t".into(),
            command: "node".into(),
            pid: 4242,
            width: 80,
            height: 24,
            dead: false,
            in_mode: true,
            active: true,
            alternate_screen: false,
            sync: SyncState::Stale,
            transport: Transport::CrossCheck,
            output_seq: 1 << 40,
            counters: PaneCounters {
                bytes: 9,
                chunks: 3,
                resyncs: 1,
                pauses: 0,
                divergences: 2,
                early_answers: 0,
            },
            provider: Some("codex".into()),
            provider_source: Some(ProviderSource::Banner),
            status: Status::WaitingUserAnswer,
            status_rule: Some("approval".into()),
            status_detail: None,
            status_source: StatusSource::Hook,
            status_settled: false,
            status_seconds: 12.345_678_9,
            seen: true,
        }
    }

    #[test]
    fn a_pane_reads_back_to_the_json_the_server_sent() {
        let sent = round_trip(&pane());
        assert!(sent.contains("\"session\":\"café \u{fffd}\""), "{sent}");
        // Without a name, the field stays out, and reads back as none.
        let mut unnamed = pane();
        unnamed.name = None;
        unnamed.provider = None;
        unnamed.provider_source = None;
        assert!(!round_trip(&unnamed).contains("\"name\""));
        // A list, as `GET /v1/panes` sends it.
        round_trip(&vec![pane(), unnamed]);
    }

    #[test]
    fn a_status_word_this_build_does_not_know_reads_as_unknown() {
        let mut json = serde_json::to_value(pane()).unwrap();
        json["status"] = json!("pondering");
        json["a_newer_field"] = json!(1);
        let read: PaneSummary = serde_json::from_value(json).expect("still a pane");
        assert_eq!(read.status, Status::Unknown);
    }

    #[test]
    fn provider_sources_are_the_words_the_api_writes() {
        for source in [
            ProviderSource::Assigned,
            ProviderSource::Process,
            ProviderSource::Banner,
        ] {
            assert_eq!(json!(source), json!(source.as_str()));
        }
    }

    #[test]
    fn the_other_answers_read_back_to_the_same_json() {
        let message: Message = serde_json::from_value(json!({"id": 7, "pane": "%3",
            "agent": "pid:1", "sender": "cli", "body": "hi\nthere", "created_at": 1,
            "expires_at": null, "state": "uncertain", "reason": "why", "attempts": 2,
            "attempt_at": 5, "delivered_at": null}))
        .expect("a message");
        round_trip(&message);
        let assignment: Assignment = serde_json::from_value(json!({"id": 1, "message_id": 7,
            "worker": "%3", "reply_to": "%1", "reply_agent": "pid:2", "created_at": 1,
            "deadline_at": null, "teardown": true, "state": "answered", "busy_seen": true,
            "reply_id": 9, "reason": null, "finished_at": 3}))
        .expect("an assignment");
        round_trip(&assignment);
        let explanation: Explanation = serde_json::from_value(json!({"pane": "%3",
            "provider": "codex", "provider_source": "process", "status": "processing",
            "rule": "spinner", "source": "osc", "screen_status": "idle",
            "screen_changed_seconds": 2.5,
            "signal": {"source": "osc", "status": "processing", "detail": "busy",
                       "age_seconds": 0.5, "pid": null},
            "rules": [{"rule": "spinner", "verdict": "processing", "priority": 10,
                       "matched": true, "reason": "", "decisive": true, "layer": "common"},
                      {"rule": "prompt", "verdict": "ready", "priority": 5,
                       "matched": false, "reason": "no prompt", "decisive": false}]}))
        .expect("an explanation");
        round_trip(&explanation);
        round_trip(&Launched {
            pane: "%4".into(),
            provider: "codex".into(),
            name: None,
            status: "idle".into(),
            accepted_prompts: vec!["trust".into()],
            worktree: None,
            queued_messages: vec![7],
        });
        round_trip(&HandoffAnswer {
            pane: "%4".into(),
            message_id: 3,
            status: "completed".into(),
            answer: "done".into(),
            waited_seconds: 1.25,
            torn_down: true,
        });
        round_trip(&Assigned {
            assignment: 2,
            pane: "%4".into(),
            message_id: 3,
            reply_to: "%1".into(),
        });
        let closed = Closed {
            pane: "%4".into(),
            how: CloseHow::Killed,
            provider: None,
            text: None,
            keys: vec!["C-c".into(), "C-d".into()],
            fallback: true,
            cancelled: vec![7, 8],
            finished_first: vec![6],
            removed_worktree: None,
            worktree_error: None,
        };
        assert_eq!(
            round_trip(&closed),
            r#"{"pane":"%4","how":"killed","provider":null,"text":null,"keys":["C-c","C-d"],"fallback":true,"cancelled":[7,8],"finished_first":[6]}"#
        );
        assert_eq!(round_trip(&CloseBody::default()), "{}");
        round_trip(&WaitAnswer {
            pane: "%4".into(),
            reached: false,
            status: "processing".into(),
            waited_seconds: 3.0,
        });
        round_trip(&SessionTransportAnswer {
            session: SessionId(1),
            transport: Transport::Pipe,
            panes: vec![pane()],
            failed: vec![FailedPane {
                pane: PaneId(5),
                error: "gone".into(),
            }],
        });
    }
}
