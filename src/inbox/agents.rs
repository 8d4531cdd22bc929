//! The agents `restore` brings back: one row per agent panectl launched (what the launch asked
//! for, without the values taken from the caller's environment, whose names alone are kept) or
//! learned of through its hooks, with its tmux placement, its last pane and the CLI's own
//! conversation id (Claude Code's `session_id`), kept in the inbox database with the same
//! durability as the messages.

use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use super::store::{InboxError, Store};

/// An agent as `restore` knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AgentRecord {
    /// Its key: the agent's name, else its first pane (`%N`).
    pub key: String,
    /// Its name (`@panectl_name`), if it has one.
    pub name: Option<String>,
    /// Its provider.
    pub provider: String,
    /// The launch request that started it, as JSON (values from the caller's environment left
    /// out); `{}` for an agent learned of through its hooks.
    pub launch: String,
    /// The names of the variables the launch took from the caller's environment: a restore
    /// takes them from its own caller's.
    pub from_env: Vec<String>,
    /// The name of its tmux session.
    pub session: String,
    /// Its window's name, when it was seen.
    pub window_name: Option<String>,
    /// Its window's index when it was launched: restore puts the window back there when the
    /// index is free in its session.
    #[schema(required = true)]
    pub window_index: Option<u32>,
    /// Its last pane.
    pub pane: String,
    /// The CLI's own conversation id, from its hooks, when it has one.
    pub conversation: Option<String>,
    /// Whether panectl launched it (else it was learned of through its hooks).
    pub launched: bool,
    /// Its place in launch order: windows come back in this order.
    pub seq: i64,
    /// When the row last changed (ms since the epoch).
    pub updated_at: i64,
}

fn record(row: &Row<'_>) -> rusqlite::Result<AgentRecord> {
    let from_env: String = row.get(4)?;
    Ok(AgentRecord {
        key: row.get(0)?,
        name: row.get(1)?,
        provider: row.get(2)?,
        launch: row.get(3)?,
        from_env: serde_json::from_str(&from_env).unwrap_or_default(),
        session: row.get(5)?,
        window_name: row.get(6)?,
        pane: row.get(7)?,
        conversation: row.get(8)?,
        launched: row.get(9)?,
        seq: row.get(10)?,
        updated_at: row.get(11)?,
        window_index: row.get(12)?,
    })
}

const COLUMNS: &str = "key, name, provider, launch, from_env, session, window_name, pane, \
                       conversation, launched, seq, updated_at, window_index";

impl Store {
    /// Records an agent, replacing the row of the same key (a relaunch under the same name);
    /// its place in launch order is the one it names, else a new one at the end.
    pub fn put_agent(&mut self, agent: &AgentRecord) -> Result<(), InboxError> {
        let db = self.db();
        let from_env = serde_json::to_string(&agent.from_env).unwrap_or_else(|_| "[]".into());
        self.connection
            .execute(
                &format!(
                    "INSERT OR REPLACE INTO agents ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, \
                     ?7, ?8, ?9, ?10, \
                     COALESCE(?11, (SELECT COALESCE(MAX(seq), 0) + 1 FROM agents)), ?12, ?13)"
                ),
                params![
                    agent.key,
                    agent.name,
                    agent.provider,
                    agent.launch,
                    from_env,
                    agent.session,
                    agent.window_name,
                    agent.pane,
                    agent.conversation,
                    agent.launched,
                    (agent.seq > 0).then_some(agent.seq),
                    agent.updated_at,
                    agent.window_index
                ],
            )
            .map_err(db)?;
        Ok(())
    }

    /// Notes the conversation id the agent in `pane` reported; false when no agent has that
    /// pane.
    pub fn set_agent_conversation(
        &mut self,
        pane: &str,
        conversation: &str,
        now: i64,
    ) -> Result<bool, InboxError> {
        let db = self.db();
        let changed = self
            .connection
            .execute(
                "UPDATE agents SET conversation = ?2, updated_at = ?3 WHERE pane = ?1",
                params![pane, conversation, now],
            )
            .map_err(db)?;
        Ok(changed > 0)
    }

    /// Notes the pane an agent was restored into.
    pub fn set_agent_pane(&mut self, key: &str, pane: &str, now: i64) -> Result<(), InboxError> {
        let db = self.db();
        self.connection
            .execute(
                "UPDATE agents SET pane = ?2, updated_at = ?3 WHERE key = ?1",
                params![key, pane, now],
            )
            .map_err(db)?;
        Ok(())
    }

    /// Every recorded agent, in launch order.
    pub fn agents(&self) -> Result<Vec<AgentRecord>, InboxError> {
        let db = self.db();
        let mut statement = self
            .connection
            .prepare(&format!("SELECT {COLUMNS} FROM agents ORDER BY seq, key"))
            .map_err(&db)?;
        let rows = statement.query_map([], record).map_err(&db)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(&db)
    }

    /// The agent recorded with `pane` as its last pane.
    pub fn agent_in_pane(&self, pane: &str) -> Result<Option<AgentRecord>, InboxError> {
        let db = self.db();
        self.connection
            .query_row(
                &format!("SELECT {COLUMNS} FROM agents WHERE pane = ?1"),
                params![pane],
                record,
            )
            .optional()
            .map_err(db)
    }

    /// Forgets an agent; false when none had that key.
    pub fn delete_agent(&mut self, key: &str) -> Result<bool, InboxError> {
        let db = self.db();
        let deleted = self
            .connection
            .execute("DELETE FROM agents WHERE key = ?1", params![key])
            .map_err(db)?;
        Ok(deleted == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(key: &str, pane: &str) -> AgentRecord {
        AgentRecord {
            key: key.into(),
            name: Some(key.into()),
            provider: "claude_code".into(),
            launch: "{}".into(),
            from_env: vec!["API_KEY".into()],
            session: "work".into(),
            window_name: Some(key.into()),
            window_index: Some(3),
            pane: pane.into(),
            conversation: None,
            launched: true,
            seq: 0,
            updated_at: 1,
        }
    }

    #[test]
    fn agents_keep_launch_order_their_pane_and_conversation() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("inbox.sqlite")).unwrap();
        store.put_agent(&agent("b", "%2")).unwrap();
        store.put_agent(&agent("a", "%5")).unwrap();
        assert!(store.set_agent_conversation("%5", "conv-a", 2).unwrap());
        assert!(!store.set_agent_conversation("%9", "nobody", 2).unwrap());
        let all = store.agents().unwrap();
        let keys: Vec<&str> = all.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(keys, ["b", "a"]);
        assert_eq!(all[1].conversation.as_deref(), Some("conv-a"));
        assert_eq!(all[1].from_env, ["API_KEY"]);
        assert_eq!(all[1].window_index, Some(3));
        // Restored into another pane: found there, in the same place in the order.
        store.set_agent_pane("a", "%11", 3).unwrap();
        let found = store.agent_in_pane("%11").unwrap().unwrap();
        assert_eq!((found.key.as_str(), found.seq), ("a", all[1].seq));
        // Launched again under the same name: a new place at the end.
        store.put_agent(&agent("b", "%12")).unwrap();
        let keys: Vec<String> = store.agents().unwrap().into_iter().map(|a| a.key).collect();
        assert_eq!(keys, ["a", "b"]);
        assert!(store.delete_agent("a").unwrap());
        assert!(!store.delete_agent("a").unwrap());
    }
}
