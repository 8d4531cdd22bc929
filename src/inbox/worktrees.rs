//! The git worktrees launches made (`panectl launch --worktree`): one row each, kept in the
//! inbox database so that `panectl worktrees` knows them after a daemon restart. A row is
//! deleted when its worktree is removed; the branch stays in the repository.

use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use super::store::{InboxError, Store};

/// A worktree a launch made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WorktreeRecord {
    /// Its name (unique): the last part of its directory and of its branch.
    pub name: String,
    /// The top directory of the repository it belongs to.
    pub repo: String,
    /// Its directory.
    pub path: String,
    /// Its branch (`panectl/NAME` by default).
    pub branch: String,
    /// The ref it was made from (ahead/behind are counted against it).
    pub base: String,
    /// The pane of the agent launched in it, once launched.
    pub pane: Option<String>,
    /// The agent's name, if it had one.
    pub agent_name: Option<String>,
    /// When it was made (ms since the epoch).
    pub created_at: i64,
}

fn record(row: &Row<'_>) -> rusqlite::Result<WorktreeRecord> {
    Ok(WorktreeRecord {
        name: row.get(0)?,
        repo: row.get(1)?,
        path: row.get(2)?,
        branch: row.get(3)?,
        base: row.get(4)?,
        pane: row.get(5)?,
        agent_name: row.get(6)?,
        created_at: row.get(7)?,
    })
}

const COLUMNS: &str = "name, repo, path, branch, base, pane, agent_name, created_at";

impl Store {
    /// Records a worktree; false when one of that name is recorded already.
    pub fn add_worktree(&mut self, new: &WorktreeRecord) -> Result<bool, InboxError> {
        let db = self.db();
        let added = self
            .connection
            .execute(
                &format!(
                    "INSERT OR IGNORE INTO worktrees ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
                ),
                params![
                    new.name,
                    new.repo,
                    new.path,
                    new.branch,
                    new.base,
                    new.pane,
                    new.agent_name,
                    new.created_at
                ],
            )
            .map_err(db)?;
        Ok(added == 1)
    }

    /// Notes the pane of the agent launched in a worktree.
    pub fn set_worktree_pane(&mut self, name: &str, pane: &str) -> Result<(), InboxError> {
        let db = self.db();
        self.connection
            .execute(
                "UPDATE worktrees SET pane = ?2 WHERE name = ?1",
                params![name, pane],
            )
            .map_err(db)?;
        Ok(())
    }

    /// Every recorded worktree, oldest first.
    pub fn worktrees(&self) -> Result<Vec<WorktreeRecord>, InboxError> {
        let db = self.db();
        let mut statement = self
            .connection
            .prepare(&format!(
                "SELECT {COLUMNS} FROM worktrees ORDER BY created_at, name"
            ))
            .map_err(&db)?;
        let rows = statement.query_map([], record).map_err(&db)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(&db)
    }

    /// One recorded worktree.
    pub fn worktree(&self, name: &str) -> Result<Option<WorktreeRecord>, InboxError> {
        let db = self.db();
        self.connection
            .query_row(
                &format!("SELECT {COLUMNS} FROM worktrees WHERE name = ?1"),
                params![name],
                record,
            )
            .optional()
            .map_err(db)
    }

    /// Forgets a worktree (its directory was removed); false when none had that name.
    pub fn delete_worktree(&mut self, name: &str) -> Result<bool, InboxError> {
        let db = self.db();
        let deleted = self
            .connection
            .execute("DELETE FROM worktrees WHERE name = ?1", params![name])
            .map_err(db)?;
        Ok(deleted == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worktrees_are_recorded_once_by_name_and_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("inbox.sqlite")).unwrap();
        let new = WorktreeRecord {
            name: "w1".into(),
            repo: "/r".into(),
            path: "/r.worktrees/w1".into(),
            branch: "panectl/w1".into(),
            base: "HEAD".into(),
            pane: None,
            agent_name: Some("w1".into()),
            created_at: 5,
        };
        assert!(store.add_worktree(&new).unwrap());
        assert!(!store.add_worktree(&new).unwrap());
        store.set_worktree_pane("w1", "%3").unwrap();
        let listed = store.worktrees().unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].pane.as_deref(), Some("%3"));
        assert_eq!(store.worktree("w1").unwrap().unwrap().branch, "panectl/w1");
        assert!(store.delete_worktree("w1").unwrap());
        assert!(!store.delete_worktree("w1").unwrap());
        assert!(store.worktree("w1").unwrap().is_none());
    }
}
