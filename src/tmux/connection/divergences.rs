//! Saving divergence records: each one the watchdog confirms is written as JSON into the
//! daemon's directory for them, the newest [`KEPT`] kept, and no more than [`KEPT_BYTES`] of
//! them (the directory is in `$XDG_RUNTIME_DIR`, often a small tmpfs).

use std::path::{Path, PathBuf};

use crate::ids::SessionId;
use crate::mirror::DivergenceRecord;

/// Records kept in the directory: the oldest go first.
pub const KEPT: usize = 20;

/// Bytes of records kept in the directory at most: the oldest go first, and a record larger
/// than this alone is not saved. A record's journal holds at most
/// [`crate::mirror::journal::JOURNAL_MAX_BYTES`] of output (about five times that as escaped
/// JSON at worst), so a few of the largest fit, and twenty of the usual, far smaller, ones.
pub const KEPT_BYTES: u64 = 32 << 20;

/// Why a record could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// The directory is not private to this user or cannot be made.
    #[error(transparent)]
    Directory(#[from] crate::trust::TrustError),
    /// The record could not be made JSON.
    #[error("cannot encode the record: {0}")]
    Encode(#[from] serde_json::Error),
    /// The record alone is larger than [`KEPT_BYTES`].
    #[error("the record is {bytes} bytes, more than the {KEPT_BYTES} kept of all records")]
    TooLarge {
        /// Its size as JSON.
        bytes: u64,
    },
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
/// private if missing, after removing the oldest records that would leave more than [`KEPT`]
/// records or [`KEPT_BYTES`] with it. Returns the file.
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
    let bytes = u64::try_from(text.len()).unwrap_or(u64::MAX);
    if bytes > KEPT_BYTES {
        return Err(SaveError::TooLarge { bytes });
    }
    // Room first: a full tmpfs is when it matters.
    make_room(dir, bytes);
    crate::trust::write_private(&path, &text).map_err(|source| SaveError::Write {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// Removes the oldest records until one more of `incoming` bytes leaves at most [`KEPT`]
/// records and [`KEPT_BYTES`] (names start with the time, so they sort by it).
fn make_room(dir: &Path, incoming: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut records: Vec<(PathBuf, u64)> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().extension().is_some_and(|e| e == "json"))
        .map(|entry| {
            let size = entry.metadata().map_or(0, |m| m.len());
            (entry.path(), size)
        })
        .collect();
    records.sort_by_key(|(path, _)| {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        let millis = stem
            .as_deref()
            .and_then(|s| s.split('-').next())
            .and_then(|s| s.parse::<u128>().ok());
        (millis, path.clone())
    });
    let mut total = records
        .iter()
        .fold(incoming, |sum, (_, size)| sum.saturating_add(*size));
    let mut left = records.len() + 1;
    for (path, size) in &records {
        if left <= KEPT && total <= KEPT_BYTES {
            break;
        }
        if std::fs::remove_file(path).is_ok() {
            left -= 1;
            total = total.saturating_sub(*size);
        }
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
            dialect: crate::screen::Dialect::V3_3,
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
            truncated: false,
            tmux_screen: screen.clone(),
            mirror_screen: screen,
        }
    }

    /// A private directory for records, in `parent`.
    fn private_dir(parent: &Path) -> PathBuf {
        let records = parent.join("divergences");
        std::fs::create_dir(&records).unwrap();
        std::fs::set_permissions(
            &records,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        records
    }

    #[test]
    fn records_keep_within_their_bytes_and_one_too_large_is_not_saved() {
        let dir = tempfile::tempdir().unwrap();
        let records = private_dir(dir.path());
        // Three older records of 12 MiB (sparse: their size is what counts).
        for millis in 0..3 {
            let file = std::fs::File::create(records.join(format!("{millis}-0-1.json"))).unwrap();
            file.set_len(12 << 20).unwrap();
        }
        let path = save(&records, SessionId(3), &record()).unwrap();
        // It holds screen contents: its owner's alone.
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&path).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
        let mut left: Vec<String> = std::fs::read_dir(&records)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left.len(), 3, "{left:?}");
        assert!(!left.contains(&"0-0-1.json".to_string()));
        assert!(path.exists());
        let total: u64 = std::fs::read_dir(&records)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        assert!(total <= KEPT_BYTES, "{total}");
        // A record whose output escapes to more than all records may hold is refused whole,
        // and nothing is removed for it.
        let mut huge = record();
        huge.steps = vec![crate::mirror::journal::Step::Output(vec![0x1b; 7 << 20])];
        match save(&records, SessionId(3), &huge) {
            Err(SaveError::TooLarge { bytes }) => assert!(bytes > KEPT_BYTES),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read_dir(&records).unwrap().count(), 3);
    }

    #[test]
    fn records_are_saved_readable_and_the_oldest_go() {
        let dir = tempfile::tempdir().unwrap();
        // Older records from before, one of them not a record at all.
        let records = private_dir(dir.path());
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
