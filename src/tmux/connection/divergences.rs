//! Saving divergence records: each one the watchdog confirms is written as JSON into the
//! daemon's directory for them, the newest [`KEPT`] kept.

use std::path::{Path, PathBuf};

use crate::ids::SessionId;
use crate::mirror::DivergenceRecord;

/// Records kept in the directory: the oldest go first.
pub const KEPT: usize = 20;

/// Why a record could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// The directory is not private to this user or cannot be made.
    #[error(transparent)]
    Directory(#[from] crate::trust::TrustError),
    /// The record could not be made JSON.
    #[error("cannot encode the record: {0}")]
    Encode(#[from] serde_json::Error),
    /// Writing failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Writes a record as `<unix ms>-<session>-<pane>.json` (without `$` and `%`) in `dir`, made
/// private if missing, and removes the oldest records past [`KEPT`]. Returns the file.
pub fn save(
    dir: &Path,
    session: SessionId,
    record: &DivergenceRecord,
) -> Result<PathBuf, SaveError> {
    crate::trust::ensure_private_dir("divergence directory", dir)?;
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let name = format!(
        "{millis}-{}-{}.json",
        session.to_string().trim_start_matches('$'),
        record.pane.trim_start_matches('%')
    );
    let path = dir.join(name);
    let mut text = serde_json::to_vec_pretty(record)?;
    text.push(b'\n');
    std::fs::write(&path, text).map_err(|source| SaveError::Write {
        path: path.clone(),
        source,
    })?;
    prune(dir);
    Ok(path)
}

/// Removes the oldest records past [`KEPT`] (names start with the time, so they sort by it).
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut records: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    records.sort_by_key(|path| {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        let millis = stem
            .as_deref()
            .and_then(|s| s.split('-').next())
            .and_then(|s| s.parse::<u128>().ok());
        (millis, path.clone())
    });
    let excess = records.len().saturating_sub(KEPT);
    for path in &records[..excess] {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mirror::journal::{JournalStart, ScreenRecord, SnapshotRecord};

    fn record() -> DivergenceRecord {
        let screen = ScreenRecord {
            rows: vec![b"a\x1b[31mb".to_vec()],
            cursor: [2, 0],
            alternate: false,
        };
        DivergenceRecord {
            panectl: "0".into(),
            tmux: "3.3a".into(),
            pane: "%4".into(),
            difference: "row 0".into(),
            explained: None,
            scrollback: 10,
            start: JournalStart::Blank,
            snapshot: SnapshotRecord::from(&crate::screen::Snapshot {
                width: 5,
                height: 1,
                ..Default::default()
            }),
            steps: Vec::new(),
            tmux_screen: screen.clone(),
            mirror_screen: screen,
        }
    }

    #[test]
    fn records_are_saved_readable_and_the_oldest_go() {
        let dir = tempfile::tempdir().unwrap();
        let records = dir.path().join("divergences");
        // Older records from before, one of them not a record at all.
        std::fs::create_dir(&records).unwrap();
        std::fs::set_permissions(
            &records,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        for millis in 0..KEPT {
            std::fs::write(records.join(format!("{millis}-0-1.json")), "{}").unwrap();
        }
        std::fs::write(records.join("notes.txt"), "mine").unwrap();
        let path = save(&records, SessionId(3), &record()).unwrap();
        assert!(
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .ends_with("-3-4.json")
        );
        let back: DivergenceRecord =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(back, record());
        let mut left: Vec<String> = std::fs::read_dir(&records)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left.len(), KEPT + 1);
        assert!(!left.contains(&"0-0-1.json".to_string()));
        assert!(left.contains(&"1-0-1.json".to_string()));
        assert!(left.contains(&"notes.txt".to_string()));
    }
}
