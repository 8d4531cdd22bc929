//! Messages that wait for their agent: a message for a named agent (`to_agent`) follows the
//! agent, not its pane. When the pane goes (tmux died, the agent exited) or another program
//! runs in it, such a message is `held`, not failed, as long as `restore` knows the agent (an
//! agent `close`d is forgotten, and its held messages cancelled); a message sent by name while
//! the agent is down is queued `held`. The agent's next launch under that name (`restore`, or
//! `launch --name`) takes them: `pending` again, for its new pane and process, in their order,
//! and delivered as any message is, once, when the agent is ready.

use rusqlite::{OptionalExtension, params};

use super::store::{
    COLUMNS, InboxError, Message, NewMessage, State, Store, check_body, insert_message, message,
    set_reason,
};

/// The reason a held message shows.
pub fn held_reason(name: &str) -> String {
    format!("agent {name:?} is gone: held until it is restored or launched again under its name")
}

impl Store {
    /// Whether `restore` knows an agent of this name (a plain shell is no agent: text for it
    /// would run as commands): messages for it can wait for it.
    pub fn knows_agent(&self, name: &str) -> Result<bool, InboxError> {
        self.connection
            .query_row(
                "SELECT 1 FROM agents WHERE name = ?1 AND provider != ?2",
                params![name, crate::status::providers::SHELL],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
            .map_err(self.db())
    }

    /// Queues a message for a named agent that is gone, `held` (its `to_agent` must be set).
    pub fn enqueue_held(&mut self, new: NewMessage) -> Result<Message, InboxError> {
        check_body(&new.body)?;
        let name = new.to_agent.clone().unwrap_or_default();
        let path = self.path.clone();
        let db = |source| InboxError::Database {
            path: path.clone(),
            source,
        };
        let transaction = self.connection.transaction().map_err(db)?;
        let id = insert_message(&transaction, &new).map_err(db)?;
        transaction
            .execute(
                "UPDATE messages SET state = 'held', reason = ?2 WHERE id = ?1",
                params![id, held_reason(&name)],
            )
            .map_err(db)?;
        transaction.commit().map_err(db)?;
        self.changed.push(id);
        self.get(id)
    }

    /// Gives up a pending message whose receiver is gone or runs another program: `held` when
    /// it is for an agent `restore` knows, else `failed` with `reason`.
    pub fn fail_or_hold(&mut self, id: i64, reason: &str) -> Result<Message, InboxError> {
        let pending = self.get(id)?;
        match pending.to_agent.as_deref() {
            Some(name) if pending.state == State::Pending && self.knows_agent(name)? => {
                let why = held_reason(name);
                self.transition(id, State::Pending, State::Held, |c| set_reason(c, id, &why))?;
                self.get(id)
            }
            _ => self.failed(id, reason),
        }
    }

    /// Messages for the agent `name` in `state`, oldest first.
    fn for_agent(&self, name: &str, state: State) -> Result<Vec<Message>, InboxError> {
        let mut statement = self
            .connection
            .prepare(&format!(
                "SELECT {COLUMNS} FROM messages WHERE to_agent = ?1 AND state = ?2 ORDER BY id"
            ))
            .map_err(self.db())?;
        let rows = statement
            .query_map(params![name, state.as_str()], message)
            .map_err(self.db())?;
        rows.collect::<Result<_, _>>().map_err(self.db())
    }

    /// Whether any message waits for the agent `name` (held, or pending by name): a launch
    /// under a name nothing waits for has nothing to release and need not ask tmux who runs.
    pub fn waits_for_agent(&self, name: &str) -> Result<bool, InboxError> {
        self.connection
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM messages WHERE to_agent = ?1 AND state IN (?2, ?3))",
                params![name, State::Held.as_str(), State::Pending.as_str()],
                |row| row.get(0),
            )
            .map_err(self.db())
    }

    /// Gives the messages waiting for the agent `name` to its new pane and process: the held
    /// ones, and (with `pending_elsewhere`, when no other live pane has the name) those still
    /// pending for a pane it left; each `pending` again for `pane` and `agent`. Returns their
    /// ids, oldest first.
    pub fn release_to_agent(
        &mut self,
        name: &str,
        pane: &str,
        agent: &str,
        pending_elsewhere: bool,
    ) -> Result<Vec<i64>, InboxError> {
        let mut moved = Vec::new();
        for m in self.for_agent(name, State::Held)? {
            self.transition(m.id, State::Held, State::Pending, |c| {
                c.execute(
                    "UPDATE messages SET pane = ?2, agent = ?3, reason = NULL WHERE id = ?1",
                    params![m.id, pane, agent],
                )
                .map(|_| ())
            })?;
            moved.push(m.id);
        }
        if pending_elsewhere {
            for m in self.for_agent(name, State::Pending)? {
                if m.pane == pane && m.agent == agent {
                    continue;
                }
                self.transition(m.id, State::Pending, State::Pending, |c| {
                    c.execute(
                        "UPDATE messages SET pane = ?2, agent = ?3 WHERE id = ?1",
                        params![m.id, pane, agent],
                    )
                    .map(|_| ())
                })?;
                moved.push(m.id);
            }
        }
        moved.sort_unstable();
        Ok(moved)
    }

    /// Cancels the messages held for the agent `name`, each with `reason` (it was closed: it
    /// will not come back); returns them.
    pub fn cancel_held(&mut self, name: &str, reason: &str) -> Result<Vec<Message>, InboxError> {
        let mut cancelled = Vec::new();
        for m in self.for_agent(name, State::Held)? {
            self.transition(m.id, State::Held, State::Cancelled, |c| {
                set_reason(c, m.id, reason)
            })?;
            cancelled.push(self.get(m.id)?);
        }
        Ok(cancelled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbox::AgentRecord;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("inbox.db")).unwrap();
        (dir, store)
    }

    fn new(pane: &str, to_agent: Option<&str>, body: &str) -> NewMessage {
        NewMessage {
            pane: pane.into(),
            agent: "pid:1".into(),
            sender: "cli".into(),
            to_agent: to_agent.map(str::to_string),
            body: body.as_bytes().to_vec(),
            now: 1,
            ttl_ms: None,
        }
    }

    fn known(store: &mut Store, name: &str) {
        store
            .put_agent(&AgentRecord {
                key: name.into(),
                name: Some(name.into()),
                provider: "fake".into(),
                launch: "{}".into(),
                from_env: Vec::new(),
                session: "s".into(),
                window_name: None,
                window_index: None,
                pane: "%1".into(),
                conversation: None,
                launched: true,
                seq: 0,
                updated_at: 1,
            })
            .unwrap();
    }

    #[test]
    fn a_known_agents_messages_wait_for_it_and_follow_it_once() {
        let (_dir, mut store) = store();
        known(&mut store, "worker");
        assert!(!store.waits_for_agent("worker").unwrap());
        let named = store.enqueue(new("%1", Some("worker"), "one")).unwrap();
        assert!(store.waits_for_agent("worker").unwrap());
        assert!(!store.waits_for_agent("nobody").unwrap());
        let unnamed = store.enqueue(new("%1", None, "two")).unwrap();
        let stranger = store.enqueue(new("%1", Some("nobody"), "three")).unwrap();
        // The pane goes: the known agent's message waits, the others fail.
        let held = store.fail_or_hold(named.id, "the pane is gone").unwrap();
        assert_eq!(held.state, State::Held);
        assert!(held.reason.unwrap().contains("\"worker\""));
        for id in [unnamed.id, stranger.id] {
            let failed = store.fail_or_hold(id, "the pane is gone").unwrap();
            assert_eq!(failed.state, State::Failed);
            assert_eq!(failed.reason.as_deref(), Some("the pane is gone"));
        }
        // Sent while it is down: held at once.
        let later = store
            .enqueue_held(new("%1", Some("worker"), "four"))
            .unwrap();
        assert_eq!(later.state, State::Held);
        assert_eq!(store.receivers().unwrap(), Vec::<String>::new());
        // Back in %7: both are its, pending, in order; a second release moves nothing.
        let moved = store
            .release_to_agent("worker", "%7", "pid:9", true)
            .unwrap();
        assert_eq!(moved, vec![named.id, later.id]);
        for id in moved {
            let m = store.get(id).unwrap();
            assert_eq!(
                (m.state, m.pane.as_str(), m.agent.as_str()),
                (State::Pending, "%7", "pid:9")
            );
            assert_eq!(m.reason, None);
        }
        assert!(
            store
                .release_to_agent("worker", "%7", "pid:9", true)
                .unwrap()
                .is_empty()
        );
        assert_eq!(store.receivers().unwrap(), vec!["%7".to_string()]);
        // Delivered, nothing waits for it any more.
        for id in [named.id, later.id] {
            store.cancel(id).unwrap();
        }
        assert!(!store.waits_for_agent("worker").unwrap());
    }

    #[test]
    fn pending_messages_left_on_an_old_pane_follow_only_when_asked() {
        let (_dir, mut store) = store();
        known(&mut store, "worker");
        let old = store.enqueue(new("%1", Some("worker"), "one")).unwrap();
        assert!(
            store
                .release_to_agent("worker", "%2", "pid:5", false)
                .unwrap()
                .is_empty()
        );
        assert_eq!(store.get(old.id).unwrap().pane, "%1");
        assert_eq!(
            store
                .release_to_agent("worker", "%2", "pid:5", true)
                .unwrap(),
            vec![old.id]
        );
        assert_eq!(store.get(old.id).unwrap().pane, "%2");
    }

    #[test]
    fn held_messages_expire_cancel_and_are_cancelled_with_their_agent() {
        let (_dir, mut store) = store();
        known(&mut store, "worker");
        let mut timed = new("%1", Some("worker"), "one");
        timed.ttl_ms = Some(10);
        let timed = store.enqueue_held(timed).unwrap();
        let by_hand = store
            .enqueue_held(new("%1", Some("worker"), "two"))
            .unwrap();
        let closed = store
            .enqueue_held(new("%1", Some("worker"), "three"))
            .unwrap();
        let expired = store.expire(100).unwrap();
        assert_eq!(
            expired.iter().map(|m| m.id).collect::<Vec<_>>(),
            vec![timed.id]
        );
        assert_eq!(store.cancel(by_hand.id).unwrap().state, State::Cancelled);
        let cancelled = store.cancel_held("worker", "agent closed").unwrap();
        assert_eq!(cancelled.len(), 1);
        assert_eq!(cancelled[0].id, closed.id);
        assert_eq!(cancelled[0].reason.as_deref(), Some("agent closed"));
        assert!(!store.knows_agent("nobody").unwrap());
    }
}
