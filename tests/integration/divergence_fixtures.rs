//! Every divergence the daemon saved and someone kept (`fixtures/divergences/`): its replay
//! must now give tmux's screen, or, where `explained` says why the bytes cannot, the mirror's
//! screen; an early answer (tmux's reply from an earlier point of the output) must be found
//! where the daemon looks for it.

use std::path::PathBuf;

use panectl::mirror::DivergenceRecord;
use panectl::mirror::asked::{Asked, Looks};
use panectl::mirror::journal::{ScreenRecord, Step};
use panectl::screen::{PaneScreen, Snapshot};

fn records() -> Vec<(PathBuf, DivergenceRecord)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/divergences");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let record = serde_json::from_slice(&std::fs::read(&path).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path, record)
        })
        .collect()
}

/// Whether the daemon's check, sent at the record's start and answered after its output
/// arrived in `chunk`-byte `%output` lines, finds the point tmux's screen showed.
fn daemon_places_the_answer(record: &DivergenceRecord, chunk: usize) -> bool {
    let start = Snapshot::from(&record.snapshot);
    let mut screen = PaneScreen::with_scrollback(start.width, start.height, record.scrollback)
        .with_dialect(record.dialect);
    screen.reseed(&start);
    let mut asked = Asked::new(1, &screen);
    for step in &record.steps {
        let Step::Output(data) = step else {
            return false;
        };
        for part in data.chunks(chunk) {
            asked.output(part);
        }
    }
    let [x, y] = record.tmux_screen.cursor;
    let looks = Looks::new(
        record.dialect,
        &record.tmux_screen.rows,
        screen.size(),
        (x, y),
        record.tmux_screen.alternate,
    );
    asked.point_of(&looks).is_some()
}

#[test]
fn kept_divergences_replay_to_tmuxs_screen_or_are_explained() {
    let records = records();
    assert!(!records.is_empty());
    for (path, record) in records {
        let name = path.display();
        assert!(
            !record.truncated,
            "{name}: a truncated record cannot be replayed from its start"
        );
        let replay = record.replay();
        let replayed = ScreenRecord::of(&replay);
        // Both in the model's codes (tmux 3.4 and later print the same cells otherwise).
        let (width, height) = replay.size();
        let dialect = record.dialect;
        let tmux = record.tmux_screen.recaptured(dialect, width, height);
        let same =
            replayed == record.tmux_screen || replayed.recaptured(dialect, width, height) == tmux;
        match &record.explained {
            None => assert!(
                same,
                "{name}: the model still differs from tmux: {:?}",
                replayed
                    .recaptured(dialect, width, height)
                    .difference(&tmux, "tmux")
            ),
            Some(why) => {
                assert_eq!(replayed, record.mirror_screen, "{name}: {why}");
                assert!(!same, "{name}: no longer a divergence");
                if why.starts_with("early answer") {
                    let at = record.tmux_point();
                    assert!(at.is_some(), "{name}: tmux's screen is at no point");
                    // tmux's reply may show a point inside an `%output` line.
                    assert!(daemon_places_the_answer(&record, 4096), "{name}");
                }
            }
        }
    }
}
