//! The inbox's SQLite file: messages and their delivery states, durable before anything is
//! pasted (WAL, `synchronous=FULL`), with a versioned schema. Synchronous and owned by one
//! thread ([`super::InboxHandle`] runs it); every state change is one committed statement, so a
//! crash leaves each message in exactly one state.

use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

/// Largest message body accepted.
pub const MAX_BODY: usize = 1024 * 1024;

/// The end of a bracketed paste: a body holding it could end the paste early and have the rest
/// typed as keys, so it is refused.
const PASTE_END: &[u8] = b"\x1b[201~";

/// The schema, one migration per version; `PRAGMA user_version` says how many have run.
const MIGRATIONS: &[&str] = &[
    // 1: messages.
    "CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        pane TEXT NOT NULL,
        agent TEXT NOT NULL,
        sender TEXT NOT NULL,
        body BLOB NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        state TEXT NOT NULL,
        reason TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        attempt_at INTEGER,
        delivered_at INTEGER
    );
    CREATE INDEX messages_by_pane ON messages(pane, state, id);",
    // 2: assignments (a message to a worker whose answer goes back to the assigner's inbox).
    "CREATE TABLE assignments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        message_id INTEGER NOT NULL REFERENCES messages(id),
        worker TEXT NOT NULL,
        reply_to TEXT NOT NULL,
        reply_agent TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        deadline_at INTEGER,
        teardown INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL,
        busy_seen INTEGER NOT NULL DEFAULT 0,
        reply_id INTEGER REFERENCES messages(id),
        reason TEXT,
        finished_at INTEGER
    );
    CREATE INDEX assignments_by_state ON assignments(state, id);",
    // 3: the `uncertain` state (a panectl that does not know it refuses the file: it would not
    // parse the state) and an index for listing by state.
    "CREATE INDEX messages_by_state ON messages(state, id);",
    // 4: the git worktrees launches made (`inbox/worktrees.rs`).
    "CREATE TABLE worktrees (
        name TEXT PRIMARY KEY,
        repo TEXT NOT NULL,
        path TEXT NOT NULL,
        branch TEXT NOT NULL,
        base TEXT NOT NULL,
        pane TEXT,
        agent_name TEXT,
        created_at INTEGER NOT NULL
    );",
    // 5: the agents launches made and hooks reported, for `restore` (`inbox/agents.rs`).
    "CREATE TABLE agents (
        key TEXT PRIMARY KEY,
        name TEXT,
        provider TEXT NOT NULL,
        launch TEXT NOT NULL,
        from_env TEXT NOT NULL,
        session TEXT NOT NULL,
        window_name TEXT,
        pane TEXT NOT NULL,
        conversation TEXT,
        launched INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );",
    // 6: the agent a message was addressed to by name: it follows the agent to its next pane
    // (`held` while the agent is gone, `inbox/held.rs`).
    "ALTER TABLE messages ADD COLUMN to_agent TEXT;",
    // 7: the assigner's agent name: an assignment's answer follows it, as any message does.
    "ALTER TABLE assignments ADD COLUMN reply_name TEXT;",
    // 8: the index of an agent's window, where restore puts it back.
    "ALTER TABLE agents ADD COLUMN window_index INTEGER;",
];

pub use crate::message::State;

/// A stored message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Message {
    /// Its id, increasing in enqueue order.
    pub id: i64,
    /// The receiving pane (`%N`).
    pub pane: String,
    /// The identity of the agent in the pane when the message was queued (`pid:N`, the pane's
    /// process): a pane reused by another program does not get the message.
    pub agent: String,
    /// Who sent it: a pane, or a label such as `cli` or `api`.
    pub sender: String,
    /// The name of the agent it is for, when the receiver is a named agent: if the pane goes,
    /// the message is `held` for the agent's next launch under that name.
    #[schema(required = true)]
    pub to_agent: Option<String>,
    /// The text (bytes that are not UTF-8 are shown as U+FFFD).
    #[serde(serialize_with = "lossy", deserialize_with = "text_bytes")]
    #[schema(value_type = String)]
    pub body: Vec<u8>,
    /// When it was queued (ms since the epoch).
    pub created_at: i64,
    /// When it expires if still undelivered (ms since the epoch).
    #[schema(required = true)]
    pub expires_at: Option<i64>,
    /// Its state.
    pub state: State,
    /// Why it failed (or, for `uncertain`, what was seen).
    #[schema(required = true)]
    pub reason: Option<String>,
    /// Delivery attempts begun.
    #[schema(minimum = 0)]
    pub attempts: i64,
    /// When the last attempt began (ms since the epoch).
    #[schema(required = true)]
    pub attempt_at: Option<i64>,
    /// When it was delivered (ms since the epoch).
    #[schema(required = true)]
    pub delivered_at: Option<i64>,
}

fn lossy<S: serde::Serializer>(body: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&String::from_utf8_lossy(body))
}

/// The other way of [`lossy`]: the text's bytes (a client reads what the daemon sent).
fn text_bytes<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
    String::deserialize(deserializer).map(String::into_bytes)
}

/// A message to queue.
#[derive(Debug, Clone)]
pub struct NewMessage {
    /// The receiving pane.
    pub pane: String,
    /// The identity of the agent in it now.
    pub agent: String,
    /// The sender.
    pub sender: String,
    /// The receiving agent's name, when it has one (the message follows it; see
    /// [`Message::to_agent`]).
    pub to_agent: Option<String>,
    /// The text.
    pub body: Vec<u8>,
    /// Now (ms since the epoch).
    pub now: i64,
    /// Time to live in ms.
    pub ttl_ms: Option<i64>,
}

/// Why the inbox refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum InboxError {
    /// SQLite failed.
    #[error("inbox database {path}: {source}")]
    Database {
        /// The file.
        path: String,
        /// The failure.
        source: rusqlite::Error,
    },
    /// The body cannot be delivered safely.
    #[error("message refused: {0}")]
    Refused(String),
    /// No message has that id.
    #[error("no message {0}")]
    NoSuchMessage(i64),
    /// No assignment has that id.
    #[error("no assignment {0}")]
    NoSuchAssignment(i64),
    /// The assignment has already ended.
    #[error("assignment {id} is already {state}")]
    AssignmentEnded {
        /// The assignment.
        id: i64,
        /// Its state.
        state: String,
    },
    /// The message is past the point where it can be changed.
    #[error("message {id} is {state}, not pending")]
    NotPending {
        /// The message.
        id: i64,
        /// Its state.
        state: State,
    },
    /// The database was written by a newer panectl.
    #[error("inbox database {path} has schema version {found}; this panectl knows up to {known}")]
    TooNew {
        /// The file.
        path: String,
        /// Its version.
        found: i64,
        /// Ours.
        known: i64,
    },
    /// There is no safe place for the inbox by default.
    #[error(
        "no place for the inbox: XDG_STATE_HOME and HOME are unset (or not absolute) and the \
         user database gives no home directory for uid {uid}; set XDG_STATE_HOME or HOME, or \
         pass --inbox PATH (panectl never keeps state in a shared directory such as /tmp)"
    )]
    NoStateDir {
        /// This user.
        uid: u32,
    },
    /// The database, its directory or one of its side files is not this user's own.
    #[error("the inbox: {0}")]
    Untrusted(#[from] crate::trust::TrustError),
    /// The database file exists but is empty: not an inbox panectl wrote.
    #[error(
        "the inbox database {path} is an empty file, not an inbox panectl wrote (a new inbox is \
         only made where no file exists). If no messages are lost with it, remove it \
         (rm {path}) to start with an empty inbox, or pass --inbox PATH"
    )]
    Empty {
        /// The file.
        path: String,
    },
    /// SQLite finds the database damaged.
    #[error(
        "the inbox database {path} is damaged ({detail}). Move it aside (mv {path} {path}.damaged) \
         to start with an empty inbox, or restore it from a backup; the sqlite3 shell's .recover \
         may save its messages"
    )]
    Damaged {
        /// The file.
        path: String,
        /// What SQLite said.
        detail: String,
    },
    /// The thread that owns the database is gone (the daemon is shutting down).
    #[error("the inbox is closed")]
    Closed,
}

/// Checks a body before it is queued: size, NUL (tmux cannot carry it in a paste buffer) and the
/// bracketed-paste end marker.
pub fn check_body(body: &[u8]) -> Result<(), InboxError> {
    if body.is_empty() {
        return Err(InboxError::Refused("the message is empty".into()));
    }
    if body.len() > MAX_BODY {
        return Err(InboxError::Refused(format!(
            "the message is {} bytes; at most {MAX_BODY} are accepted",
            body.len()
        )));
    }
    if body.contains(&0) {
        return Err(InboxError::Refused(
            "the message contains a NUL byte, which tmux cannot paste".into(),
        ));
    }
    if body.windows(PASTE_END.len()).any(|w| w == PASTE_END) {
        return Err(InboxError::Refused(
            "the message contains ESC [201~, which would end the bracketed paste early".into(),
        ));
    }
    Ok(())
}

/// Inserts a pending message (its body checked already); returns its id.
pub(super) fn insert_message(connection: &Connection, new: &NewMessage) -> rusqlite::Result<i64> {
    let expires_at = new.ttl_ms.map(|ttl| new.now.saturating_add(ttl));
    connection.execute(
        "INSERT INTO messages (pane, agent, sender, body, created_at, expires_at, state, to_agent)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7)",
        params![
            new.pane,
            new.agent,
            new.sender,
            new.body,
            new.now,
            expires_at,
            new.to_agent
        ],
    )?;
    Ok(connection.last_insert_rowid())
}

/// Whether SQLite's error says the database file is damaged or not a database at all.
pub fn is_damage(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

/// The inbox database.
pub struct Store {
    pub(super) connection: Connection,
    pub(super) path: String,
    /// Messages queued or moved to another state since [`Store::take_changes`] last ran.
    pub(super) changed: Vec<i64>,
}

pub(super) const COLUMNS: &str = "id, pane, agent, sender, body, created_at, expires_at, state, \
                                  reason, attempts, attempt_at, delivered_at, to_agent";

pub(super) fn message(row: &Row<'_>) -> rusqlite::Result<Message> {
    let state: String = row.get(7)?;
    Ok(Message {
        id: row.get(0)?,
        pane: row.get(1)?,
        agent: row.get(2)?,
        sender: row.get(3)?,
        to_agent: row.get(12)?,
        body: row.get(4)?,
        created_at: row.get(5)?,
        expires_at: row.get(6)?,
        state: State::parse(&state).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                7,
                rusqlite::types::Type::Text,
                format!("unknown state {state:?}").into(),
            )
        })?,
        reason: row.get(8)?,
        attempts: row.get(9)?,
        attempt_at: row.get(10)?,
        delivered_at: row.get(11)?,
    })
}

impl Store {
    /// Opens (creating if needed, mode 0600) and migrates the database at `path`. Refused: a
    /// directory, database or `-wal`/`-shm`/`-journal` file that is another user's, a symlink,
    /// or writable by others (the daemon types what the database holds into terminals); an
    /// empty file (a new inbox is made only where no file exists); a damaged database
    /// (`PRAGMA quick_check`). Side files of this user readable by others are made 0600.
    pub fn open(path: &Path) -> Result<Store, InboxError> {
        use crate::trust::{Access, check_dir, check_file};
        let name = path.display().to_string();
        let db = |source| InboxError::Database {
            path: name.clone(),
            source,
        };
        let damaged = |source: rusqlite::Error| {
            if is_damage(&source) {
                InboxError::Damaged {
                    path: name.clone(),
                    detail: source.to_string(),
                }
            } else {
                db(source)
            }
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            check_dir("inbox directory", dir, Access::NotWritable)?;
        }
        let mut exists = false;
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut file = path.as_os_str().to_owned();
            file.push(suffix);
            let file = std::path::PathBuf::from(file);
            let what = if suffix.is_empty() {
                "inbox database"
            } else {
                "inbox database side file"
            };
            let Some(metadata) = check_file(what, &file, Access::NotWritable)? else {
                continue;
            };
            if suffix.is_empty() {
                exists = true;
                if metadata.len() == 0 {
                    return Err(InboxError::Empty { path: name });
                }
            }
            if metadata.mode() & 0o077 != 0 {
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).map_err(
                    |source| crate::trust::TrustError::Io {
                        what: "cannot make private",
                        path: file.clone(),
                        source,
                    },
                )?;
            }
        }
        if !exists {
            // Made here, 0600, so that SQLite (which gives its -wal and -shm files the
            // database's mode) never makes one readable by others.
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .map_err(|source| crate::trust::TrustError::Io {
                    what: "cannot create the inbox database",
                    path: path.to_path_buf(),
                    source,
                })?;
        }
        let connection = Connection::open(path).map_err(damaged)?;
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;",
            )
            .map_err(damaged)?;
        connection
            .busy_timeout(std::time::Duration::from_secs(5))
            .map_err(db)?;
        if exists {
            let verdict: String = connection
                .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
                .map_err(damaged)?;
            if verdict != "ok" {
                return Err(InboxError::Damaged {
                    path: name,
                    detail: verdict,
                });
            }
        }
        let mut store = Store {
            connection,
            path: name,
            changed: Vec::new(),
        };
        store.migrate()?;
        Ok(store)
    }

    pub(super) fn db(&self) -> impl Fn(rusqlite::Error) -> InboxError + '_ {
        |source| InboxError::Database {
            path: self.path.clone(),
            source,
        }
    }

    fn migrate(&mut self) -> Result<(), InboxError> {
        let version: i64 = self
            .connection
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(self.db())?;
        let known = MIGRATIONS.len() as i64;
        if version > known {
            return Err(InboxError::TooNew {
                path: self.path.clone(),
                found: version,
                known,
            });
        }
        let path = self.path.clone();
        let db = |source| InboxError::Database {
            path: path.clone(),
            source,
        };
        for (index, migration) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let transaction = self.connection.transaction().map_err(db)?;
            transaction.execute_batch(migration).map_err(db)?;
            transaction
                .pragma_update(None, "user_version", index as i64 + 1)
                .map_err(db)?;
            transaction.commit().map_err(db)?;
        }
        Ok(())
    }

    /// The schema version.
    pub fn schema_version(&self) -> Result<i64, InboxError> {
        self.connection
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(self.db())
    }

    /// Queues a message; returns it with its id.
    pub fn enqueue(&mut self, new: NewMessage) -> Result<Message, InboxError> {
        check_body(&new.body)?;
        let id = insert_message(&self.connection, &new).map_err(self.db())?;
        self.changed.push(id);
        self.get(id)
    }

    /// One message.
    pub fn get(&self, id: i64) -> Result<Message, InboxError> {
        self.connection
            .query_row(
                &format!("SELECT {COLUMNS} FROM messages WHERE id = ?1"),
                [id],
                message,
            )
            .optional()
            .map_err(self.db())?
            .ok_or(InboxError::NoSuchMessage(id))
    }

    /// Messages, oldest first, optionally of one pane and one state.
    pub fn list(
        &self,
        pane: Option<&str>,
        state: Option<State>,
    ) -> Result<Vec<Message>, InboxError> {
        let mut statement = self
            .connection
            .prepare(&format!(
                "SELECT {COLUMNS} FROM messages
                 WHERE (?1 IS NULL OR pane = ?1) AND (?2 IS NULL OR state = ?2) ORDER BY id"
            ))
            .map_err(self.db())?;
        let rows = statement
            .query_map(params![pane, state.map(State::as_str)], message)
            .map_err(self.db())?;
        rows.collect::<Result<_, _>>().map_err(self.db())
    }

    /// Cancels a pending (or held) message.
    pub fn cancel(&mut self, id: i64) -> Result<Message, InboxError> {
        match self.transition(id, State::Pending, State::Cancelled, |_| Ok(())) {
            Err(InboxError::NotPending {
                state: State::Held, ..
            }) => self.transition(id, State::Held, State::Cancelled, |_| Ok(()))?,
            other => other?,
        }
        self.get(id)
    }

    /// Cancels every pending message for `pane`, each with `reason` (its pane closed: no one
    /// will take them); returns them, oldest first.
    pub fn cancel_pending(&mut self, pane: &str, reason: &str) -> Result<Vec<Message>, InboxError> {
        let pending = self.list(Some(pane), Some(State::Pending))?;
        let mut cancelled = Vec::with_capacity(pending.len());
        for m in pending {
            self.transition(m.id, State::Pending, State::Cancelled, |c| {
                set_reason(c, m.id, reason)
            })?;
            cancelled.push(self.get(m.id)?);
        }
        Ok(cancelled)
    }

    /// Marks pending and held messages whose time ran out as expired; returns them.
    pub fn expire(&mut self, now: i64) -> Result<Vec<Message>, InboxError> {
        let mut expired = Vec::new();
        for state in [State::Pending, State::Held] {
            for m in self.list(None, Some(state))? {
                if m.expires_at.is_some_and(|at| at <= now) {
                    self.transition(m.id, state, State::Expired, |_| Ok(()))?;
                    expired.push(m);
                }
            }
        }
        expired.sort_by_key(|m| m.id);
        Ok(expired)
    }

    /// Receivers with messages pending, in the order of their oldest message.
    pub fn receivers(&self) -> Result<Vec<String>, InboxError> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT pane FROM messages WHERE state = 'pending'
                 GROUP BY pane ORDER BY MIN(id)",
            )
            .map_err(self.db())?;
        let rows = statement.query_map([], |r| r.get(0)).map_err(self.db())?;
        rows.collect::<Result<_, _>>().map_err(self.db())
    }

    /// The next message for a pane: its oldest pending one, unless one is still being
    /// delivered (order: one at a time).
    pub fn next_for(&self, pane: &str) -> Result<Option<Message>, InboxError> {
        let delivering: i64 = self
            .connection
            .query_row(
                "SELECT COUNT(*) FROM messages WHERE pane = ?1 AND state = 'delivering'",
                [pane],
                |r| r.get(0),
            )
            .map_err(self.db())?;
        if delivering > 0 {
            return Ok(None);
        }
        self.connection
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM messages WHERE pane = ?1 AND state = 'pending'
                     ORDER BY id LIMIT 1"
                ),
                [pane],
                message,
            )
            .optional()
            .map_err(self.db())
    }

    /// Pending -> delivering, committed (and synced) before the paste.
    pub fn begin_delivery(&mut self, id: i64, now: i64) -> Result<Message, InboxError> {
        self.transition(id, State::Pending, State::Delivering, |c| {
            c.execute(
                "UPDATE messages SET attempts = attempts + 1, attempt_at = ?2 WHERE id = ?1",
                params![id, now],
            )
            .map(|_| ())
        })?;
        self.get(id)
    }

    /// Delivering -> delivered.
    pub fn delivered(&mut self, id: i64, now: i64) -> Result<Message, InboxError> {
        self.transition(id, State::Delivering, State::Delivered, |c| {
            c.execute(
                "UPDATE messages SET delivered_at = ?2 WHERE id = ?1",
                params![id, now],
            )
            .map(|_| ())
        })?;
        self.get(id)
    }

    /// Delivering or pending -> failed, with the reason.
    pub fn failed(&mut self, id: i64, reason: &str) -> Result<Message, InboxError> {
        let current = self.get(id)?;
        if !matches!(current.state, State::Pending | State::Delivering) {
            return Err(InboxError::NotPending {
                id,
                state: current.state,
            });
        }
        self.transition(id, current.state, State::Failed, |c| {
            set_reason(c, id, reason)
        })?;
        self.get(id)
    }

    /// Delivering -> uncertain, with what was seen: the text may have been taken, so it is not
    /// delivered again.
    pub fn uncertain(&mut self, id: i64, reason: &str) -> Result<Message, InboxError> {
        self.transition(id, State::Delivering, State::Uncertain, |c| {
            set_reason(c, id, reason)
        })?;
        self.get(id)
    }

    /// Delivering -> pending: the attempt is known not to have reached the pane.
    pub fn back_to_pending(&mut self, id: i64) -> Result<Message, InboxError> {
        self.transition(id, State::Delivering, State::Pending, |_| Ok(()))?;
        self.get(id)
    }

    /// Changes a message's state from `from` to `to` with `also` in the same transaction.
    pub(super) fn transition(
        &mut self,
        id: i64,
        from: State,
        to: State,
        also: impl FnOnce(&Connection) -> rusqlite::Result<()>,
    ) -> Result<(), InboxError> {
        let path = self.path.clone();
        let db = |source| InboxError::Database {
            path: path.clone(),
            source,
        };
        let transaction = self.connection.transaction().map_err(db)?;
        let changed = transaction
            .execute(
                "UPDATE messages SET state = ?3 WHERE id = ?1 AND state = ?2",
                params![id, from.as_str(), to.as_str()],
            )
            .map_err(db)?;
        if changed == 0 {
            let state: Option<String> = transaction
                .query_row("SELECT state FROM messages WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(db)?;
            return Err(match state.as_deref().and_then(State::parse) {
                None => InboxError::NoSuchMessage(id),
                Some(state) => InboxError::NotPending { id, state },
            });
        }
        also(&transaction).map_err(db)?;
        transaction.commit().map_err(db)?;
        self.changed.push(id);
        Ok(())
    }

    /// The messages queued or moved since the last call, as they are now (for the event
    /// stream: orchestrators and the turn watcher follow messages through it).
    pub fn take_changes(&mut self) -> Vec<Message> {
        let mut ids = std::mem::take(&mut self.changed);
        ids.dedup();
        ids.into_iter().filter_map(|id| self.get(id).ok()).collect()
    }
}

/// Records why a message ended as it did (inside a state transition).
pub(super) fn set_reason(connection: &Connection, id: i64, reason: &str) -> rusqlite::Result<()> {
    connection
        .execute(
            "UPDATE messages SET reason = ?2 WHERE id = ?1",
            params![id, reason],
        )
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(pane: &str, body: &str, now: i64) -> NewMessage {
        NewMessage {
            pane: pane.into(),
            agent: "pid:1".into(),
            sender: "cli".into(),
            to_agent: None,
            body: body.as_bytes().to_vec(),
            now,
            ttl_ms: None,
        }
    }

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("inbox.sqlite")).unwrap();
        (dir, store)
    }

    #[test]
    fn messages_go_one_at_a_time_in_order_per_pane() {
        let (_dir, mut store) = store();
        let a1 = store.enqueue(new("%1", "a1", 10)).unwrap();
        let b1 = store.enqueue(new("%2", "b1", 11)).unwrap();
        let a2 = store.enqueue(new("%1", "a2", 12)).unwrap();
        assert_eq!(store.receivers().unwrap(), ["%1", "%2"]);
        assert_eq!(store.next_for("%1").unwrap().unwrap().id, a1.id);
        store.begin_delivery(a1.id, 20).unwrap();
        // Still delivering: the next one waits.
        assert_eq!(store.next_for("%1").unwrap(), None);
        assert_eq!(store.next_for("%2").unwrap().unwrap().id, b1.id);
        let done = store.delivered(a1.id, 30).unwrap();
        assert_eq!(done.state, State::Delivered);
        assert_eq!(
            (done.attempts, done.attempt_at, done.delivered_at),
            (1, Some(20), Some(30))
        );
        assert_eq!(store.next_for("%1").unwrap().unwrap().id, a2.id);
    }

    #[test]
    fn states_change_only_along_the_allowed_paths() {
        let (_dir, mut store) = store();
        let m = store.enqueue(new("%1", "x", 0)).unwrap();
        assert!(matches!(
            store.delivered(m.id, 1),
            Err(InboxError::NotPending { .. })
        ));
        store.begin_delivery(m.id, 1).unwrap();
        assert!(matches!(
            store.cancel(m.id),
            Err(InboxError::NotPending {
                state: State::Delivering,
                ..
            })
        ));
        let back = store.back_to_pending(m.id).unwrap();
        assert_eq!((back.state, back.attempts), (State::Pending, 1));
        let cancelled = store.cancel(m.id).unwrap();
        assert_eq!(cancelled.state, State::Cancelled);
        assert!(matches!(
            store.failed(m.id, "x"),
            Err(InboxError::NotPending { .. })
        ));
        assert!(matches!(
            store.cancel(999),
            Err(InboxError::NoSuchMessage(999))
        ));
        // Uncertain only from delivering, with its reason, and then final.
        let u = store.enqueue(new("%1", "u", 0)).unwrap();
        assert!(matches!(
            store.uncertain(u.id, "x"),
            Err(InboxError::NotPending { .. })
        ));
        store.begin_delivery(u.id, 1).unwrap();
        let unsure = store.uncertain(u.id, "the machine stalled").unwrap();
        assert_eq!(unsure.state, State::Uncertain);
        assert_eq!(unsure.reason.as_deref(), Some("the machine stalled"));
        assert_eq!(store.next_for("%1").unwrap(), None);
        assert!(store.back_to_pending(u.id).is_err());
        assert_eq!(State::parse("uncertain"), Some(State::Uncertain));
        let f = store.enqueue(new("%1", "y", 0)).unwrap();
        let failed = store.failed(f.id, "the pane is gone").unwrap();
        assert_eq!(failed.reason.as_deref(), Some("the pane is gone"));
    }

    #[test]
    fn a_closed_panes_pending_messages_are_cancelled_with_the_reason() {
        let (_dir, mut store) = store();
        let first = store.enqueue(new("%1", "one", 1)).unwrap();
        let second = store.enqueue(new("%1", "two", 2)).unwrap();
        let other = store.enqueue(new("%2", "three", 3)).unwrap();
        // One already on its way is not pending: it is left alone.
        store.begin_delivery(first.id, 4).unwrap();
        store.take_changes();
        let cancelled = store.cancel_pending("%1", "agent closed").unwrap();
        assert_eq!(
            cancelled.iter().map(|m| m.id).collect::<Vec<_>>(),
            [second.id]
        );
        assert_eq!(cancelled[0].state, State::Cancelled);
        assert_eq!(cancelled[0].reason.as_deref(), Some("agent closed"));
        assert_eq!(store.get(first.id).unwrap().state, State::Delivering);
        assert_eq!(store.get(other.id).unwrap().state, State::Pending);
        // The change reaches the event stream.
        let changes = store.take_changes();
        assert_eq!(
            changes.iter().map(|m| m.id).collect::<Vec<_>>(),
            [second.id]
        );
        assert!(store.cancel_pending("%1", "again").unwrap().is_empty());
    }

    #[test]
    fn time_to_live_expires_pending_messages_only() {
        let (_dir, mut store) = store();
        let mut short = new("%1", "short", 100);
        short.ttl_ms = Some(50);
        let short = store.enqueue(short).unwrap();
        let forever = store.enqueue(new("%1", "forever", 100)).unwrap();
        assert!(store.expire(149).unwrap().is_empty());
        let expired = store.expire(150).unwrap();
        assert_eq!(expired.iter().map(|m| m.id).collect::<Vec<_>>(), [short.id]);
        assert_eq!(store.get(short.id).unwrap().state, State::Expired);
        assert_eq!(store.get(forever.id).unwrap().state, State::Pending);
    }

    #[test]
    fn bodies_that_cannot_be_pasted_safely_are_refused() {
        let (_dir, mut store) = store();
        for body in [
            &b""[..],
            b"a\0b",
            b"before \x1b[201~ after",
            &vec![b'x'; MAX_BODY + 1],
        ] {
            let mut m = new("%1", "", 0);
            m.body = body.to_vec();
            assert!(matches!(store.enqueue(m), Err(InboxError::Refused(_))));
        }
        let mut m = new("%1", "", 0);
        m.body = b"\xff\xfe #{pane_id} ; $HOME ~ '\" \\ \x1b[31m\n".to_vec();
        let stored = store.enqueue(m.clone()).unwrap();
        assert_eq!(stored.body, m.body);
        let mut big = new("%1", "", 0);
        big.body = vec![b'y'; MAX_BODY];
        assert_eq!(store.enqueue(big).unwrap().body.len(), MAX_BODY);
    }

    #[test]
    fn the_database_survives_reopening_and_refuses_a_newer_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inbox.sqlite");
        let id = {
            let mut store = Store::open(&path).unwrap();
            let m = store.enqueue(new("%3", "kept", 5)).unwrap();
            store.begin_delivery(m.id, 6).unwrap();
            m.id
        };
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as i64);
        assert_eq!(store.get(id).unwrap().state, State::Delivering);
        assert_eq!(
            store
                .list(Some("%3"), Some(State::Delivering))
                .unwrap()
                .len(),
            1
        );
        store
            .connection
            .pragma_update(None, "user_version", 99)
            .unwrap();
        drop(store);
        assert!(matches!(
            Store::open(&path),
            Err(InboxError::TooNew { found: 99, .. })
        ));
    }
}
