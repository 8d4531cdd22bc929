//! Assignments: a message to a worker agent whose answer, once the worker's turn ends, is
//! queued for the agent that assigned it. Kept in the inbox database so that a daemon restart
//! neither forgets an assignment nor sends its answer twice: the answer message and the end of
//! the assignment are committed in one transaction.

use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use super::store::{InboxError, Message, NewMessage, Store, check_body, insert_message};

/// Where an assignment is in its life. `working`: the answer is awaited; `answered`: the
/// answer was queued for the assigner; `failed`: the worker did not answer, and the assigner
/// was told so in a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssignmentState {
    /// The worker has the task (or will get it); its answer is awaited.
    Working,
    /// The answer was queued for the assigner.
    Answered,
    /// The worker did not answer (timeout, message failed, pane gone, error); the assigner was
    /// told so in a message.
    Failed,
}

impl AssignmentState {
    /// The word stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            AssignmentState::Working => "working",
            AssignmentState::Answered => "answered",
            AssignmentState::Failed => "failed",
        }
    }

    /// Every state.
    pub const ALL: [AssignmentState; 3] = [
        AssignmentState::Working,
        AssignmentState::Answered,
        AssignmentState::Failed,
    ];

    /// Reads a state word.
    pub fn parse(word: &str) -> Option<AssignmentState> {
        AssignmentState::ALL
            .into_iter()
            .find(|s| s.as_str() == word)
    }

    /// Every state word, comma-separated: what an error about an unknown one lists.
    pub fn words() -> String {
        AssignmentState::ALL.map(AssignmentState::as_str).join(", ")
    }
}

/// A state on a command line (`panectl assignments --state`): its word, as
/// [`AssignmentState::as_str`] gives it.
impl clap::ValueEnum for AssignmentState {
    fn value_variants<'a>() -> &'a [Self] {
        &AssignmentState::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}

/// A stored assignment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Assignment {
    /// Its id.
    pub id: i64,
    /// The message that carries the task to the worker.
    pub message_id: i64,
    /// The worker's pane (`%N`).
    pub worker: String,
    /// The pane (`%N`) the answer goes to.
    pub reply_to: String,
    /// The program in `reply_to` when it assigned (`pid:N`); a reused pane gets nothing.
    pub reply_agent: String,
    /// The assigner's agent name, when it has one: the answer follows the agent (held while it
    /// is down, its again when it is restored), as any message for a named agent does.
    #[schema(required = true)]
    pub reply_name: Option<String>,
    /// When it was made (ms since the epoch).
    pub created_at: i64,
    /// When to give up waiting for the worker (ms since the epoch).
    #[schema(required = true)]
    pub deadline_at: Option<i64>,
    /// Close the worker's pane once it answered.
    pub teardown: bool,
    /// Its state.
    pub state: AssignmentState,
    /// Whether the worker was seen working on the task (kept across restarts).
    pub busy_seen: bool,
    /// The message that carried the answer (or the failure) back.
    #[schema(required = true)]
    pub reply_id: Option<i64>,
    /// Why it failed.
    #[schema(required = true)]
    pub reason: Option<String>,
    /// When it ended (ms since the epoch).
    #[schema(required = true)]
    pub finished_at: Option<i64>,
}

/// An assignment to make: the task message and where the answer goes.
#[derive(Debug, Clone)]
pub struct NewAssignment {
    /// The task, to the worker.
    pub task: NewMessage,
    /// The pane the answer goes to.
    pub reply_to: String,
    /// The identity of the agent there now.
    pub reply_agent: String,
    /// The assigner's agent name, when it has one.
    pub reply_name: Option<String>,
    /// When to give up (ms since the epoch).
    pub deadline_at: Option<i64>,
    /// Close the worker's pane once it answered.
    pub teardown: bool,
}

const COLUMNS: &str = "id, message_id, worker, reply_to, reply_agent, created_at, deadline_at, \
                       teardown, state, busy_seen, reply_id, reason, finished_at, reply_name";

fn assignment(row: &Row<'_>) -> rusqlite::Result<Assignment> {
    let state: String = row.get(8)?;
    Ok(Assignment {
        id: row.get(0)?,
        message_id: row.get(1)?,
        worker: row.get(2)?,
        reply_to: row.get(3)?,
        reply_agent: row.get(4)?,
        reply_name: row.get(13)?,
        created_at: row.get(5)?,
        deadline_at: row.get(6)?,
        teardown: row.get(7)?,
        state: AssignmentState::parse(&state).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                8,
                rusqlite::types::Type::Text,
                format!("unknown assignment state {state:?}").into(),
            )
        })?,
        busy_seen: row.get(9)?,
        reply_id: row.get(10)?,
        reason: row.get(11)?,
        finished_at: row.get(12)?,
    })
}

/// Makes a reply body safe to queue: no NUL, no bracketed-paste end, at most `MAX_BODY` bytes.
pub fn reply_body(text: &str) -> Vec<u8> {
    let mut body = text.replace('\0', "").replace("\x1b[201~", "");
    let limit = super::store::MAX_BODY - 64;
    if body.len() > limit {
        let mut cut = limit;
        while !body.is_char_boundary(cut) {
            cut -= 1;
        }
        body.truncate(cut);
        body.push_str("\n[panectl: answer cut at 1 MiB]");
    }
    body.into_bytes()
}

impl Store {
    /// Queues the task message and records the assignment, in one transaction.
    pub fn assign(&mut self, new: NewAssignment) -> Result<(Assignment, Message), InboxError> {
        check_body(&new.task.body)?;
        let path = self.path.clone();
        let db = |source| InboxError::Database {
            path: path.clone(),
            source,
        };
        let transaction = self.connection.transaction().map_err(db)?;
        let message_id = insert_message(&transaction, &new.task).map_err(db)?;
        transaction
            .execute(
                "INSERT INTO assignments (message_id, worker, reply_to, reply_agent, created_at,
                                          deadline_at, teardown, state, reply_name)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'working', ?8)",
                params![
                    message_id,
                    new.task.pane,
                    new.reply_to,
                    new.reply_agent,
                    new.task.now,
                    new.deadline_at,
                    new.teardown,
                    new.reply_name
                ],
            )
            .map_err(db)?;
        let id = transaction.last_insert_rowid();
        transaction.commit().map_err(db)?;
        self.changed.push(message_id);
        Ok((self.assignment(id)?, self.get(message_id)?))
    }

    /// One assignment.
    pub fn assignment(&self, id: i64) -> Result<Assignment, InboxError> {
        self.connection
            .query_row(
                &format!("SELECT {COLUMNS} FROM assignments WHERE id = ?1"),
                [id],
                assignment,
            )
            .optional()
            .map_err(self.db())?
            .ok_or(InboxError::NoSuchAssignment(id))
    }

    /// Assignments, oldest first, optionally only those in one state.
    pub fn assignments(
        &self,
        state: Option<AssignmentState>,
    ) -> Result<Vec<Assignment>, InboxError> {
        let mut statement = self
            .connection
            .prepare(&format!(
                "SELECT {COLUMNS} FROM assignments WHERE (?1 IS NULL OR state = ?1) ORDER BY id"
            ))
            .map_err(self.db())?;
        let rows = statement
            .query_map(params![state.map(AssignmentState::as_str)], assignment)
            .map_err(self.db())?;
        rows.collect::<Result<_, _>>().map_err(self.db())
    }

    /// Records that the worker was seen working on the task.
    pub fn assignment_busy(&mut self, id: i64) -> Result<(), InboxError> {
        self.connection
            .execute("UPDATE assignments SET busy_seen = 1 WHERE id = ?1", [id])
            .map_err(self.db())?;
        Ok(())
    }

    /// Records the worker's new pane: its task followed the agent there (restored, or launched
    /// again under its name).
    pub fn set_assignment_worker(&mut self, id: i64, pane: &str) -> Result<(), InboxError> {
        self.connection
            .execute(
                "UPDATE assignments SET worker = ?2 WHERE id = ?1 AND state = 'working'",
                params![id, pane],
            )
            .map_err(self.db())?;
        Ok(())
    }

    /// Points a working assignment's answer at its assigner's pane now (`pane`, running
    /// `agent`): the assigner, named, was restored or launched again in another pane.
    pub fn set_assignment_reply_to(
        &mut self,
        id: i64,
        pane: &str,
        agent: &str,
    ) -> Result<(), InboxError> {
        self.connection
            .execute(
                "UPDATE assignments SET reply_to = ?2, reply_agent = ?3
                 WHERE id = ?1 AND state = 'working'",
                params![id, pane, agent],
            )
            .map_err(self.db())?;
        Ok(())
    }

    /// Ends a working assignment and queues `reply` for its assigner, in one transaction: the
    /// reply is queued exactly once even if the daemon dies here. `reason` makes it failed.
    pub fn finish_assignment(
        &mut self,
        id: i64,
        reply: Vec<u8>,
        reason: Option<&str>,
        now: i64,
    ) -> Result<(Assignment, Message), InboxError> {
        check_body(&reply)?;
        let current = self.assignment(id)?;
        if current.state != AssignmentState::Working {
            return Err(InboxError::AssignmentEnded {
                id,
                state: current.state.as_str().into(),
            });
        }
        let path = self.path.clone();
        let db = |source| InboxError::Database {
            path: path.clone(),
            source,
        };
        let transaction = self.connection.transaction().map_err(db)?;
        let reply_id = insert_message(
            &transaction,
            &NewMessage {
                pane: current.reply_to.clone(),
                agent: current.reply_agent.clone(),
                sender: current.worker.clone(),
                to_agent: current.reply_name.clone(),
                body: reply,
                now,
                ttl_ms: None,
            },
        )
        .map_err(db)?;
        let state = if reason.is_some() {
            AssignmentState::Failed
        } else {
            AssignmentState::Answered
        };
        let changed = transaction
            .execute(
                "UPDATE assignments SET state = ?2, reply_id = ?3, reason = ?4, finished_at = ?5
                 WHERE id = ?1 AND state = 'working'",
                params![id, state.as_str(), reply_id, reason, now],
            )
            .map_err(db)?;
        if changed != 1 {
            return Err(InboxError::AssignmentEnded {
                id,
                state: "finished".into(),
            });
        }
        transaction.commit().map_err(db)?;
        self.changed.push(reply_id);
        Ok((self.assignment(id)?, self.get(reply_id)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbox::State;

    fn task(now: i64) -> NewAssignment {
        NewAssignment {
            task: NewMessage {
                pane: "%5".into(),
                agent: "pid:50".into(),
                sender: "%1".into(),
                to_agent: None,
                body: b"summarise the logs".to_vec(),
                now,
                ttl_ms: None,
            },
            reply_to: "%1".into(),
            reply_agent: "pid:10".into(),
            reply_name: Some("boss".into()),
            deadline_at: Some(now + 60_000),
            teardown: true,
        }
    }

    #[test]
    fn an_assignment_queues_its_task_and_later_exactly_one_answer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inbox.sqlite");
        let mut store = Store::open(&path).unwrap();
        let (made, message) = store.assign(task(1000)).unwrap();
        assert_eq!(made.state, AssignmentState::Working);
        assert_eq!(
            (message.pane.as_str(), message.state),
            ("%5", State::Pending)
        );
        assert_eq!(made.message_id, message.id);
        store.assignment_busy(made.id).unwrap();
        drop(store);

        // A restart keeps it, and what was seen of it.
        let mut store = Store::open(&path).unwrap();
        let working = store.assignments(Some(AssignmentState::Working)).unwrap();
        assert_eq!(working.len(), 1);
        assert!(working[0].busy_seen && working[0].teardown);

        let (done, reply) = store
            .finish_assignment(made.id, b"the answer".to_vec(), None, 2000)
            .unwrap();
        assert_eq!(done.state, AssignmentState::Answered);
        assert_eq!(done.reply_id, Some(reply.id));
        assert_eq!(
            (
                reply.pane.as_str(),
                reply.agent.as_str(),
                reply.sender.as_str()
            ),
            ("%1", "pid:10", "%5")
        );
        assert_eq!(reply.body, b"the answer");
        // The answer follows the assigner by its name (held if it is down when it comes).
        assert_eq!(done.reply_name.as_deref(), Some("boss"));
        assert_eq!(reply.to_agent.as_deref(), Some("boss"));
        // Finishing twice is refused: one answer only.
        assert!(matches!(
            store.finish_assignment(made.id, b"again".to_vec(), None, 3000),
            Err(InboxError::AssignmentEnded { .. })
        ));
        assert_eq!(store.list(Some("%1"), None).unwrap().len(), 1);
        assert!(
            store
                .assignments(Some(AssignmentState::Working))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_failed_assignment_keeps_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("inbox.sqlite")).unwrap();
        let (made, _) = store.assign(task(1000)).unwrap();
        let (done, _) = store
            .finish_assignment(made.id, b"it failed".to_vec(), Some("timed out"), 2000)
            .unwrap();
        assert_eq!(done.state, AssignmentState::Failed);
        assert_eq!(done.reason.as_deref(), Some("timed out"));
    }

    #[test]
    fn reply_bodies_are_made_safe_to_paste() {
        assert_eq!(reply_body("a\0b\x1b[201~c"), b"abc");
        let long = "é".repeat(super::super::store::MAX_BODY);
        let body = reply_body(&long);
        assert!(body.len() <= super::super::store::MAX_BODY);
        assert!(String::from_utf8(body).unwrap().ends_with("cut at 1 MiB]"));
    }
}
