//! Keeping provider rules current: the user's rule files are read at start and again when they
//! change (checked every two seconds) or on SIGHUP. A broken file is reported (file and line,
//! in the log and in `panectl health`) and the rules in force stay as they were.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::status::providers::ProviderSet;
use crate::status::rules::rule_files;

/// What the reloader publishes.
#[derive(Debug, Clone)]
pub struct RulesState {
    /// The rules in force.
    pub providers: watch::Receiver<Arc<ProviderSet>>,
    /// Errors of the last attempt to read the user's files (empty when it worked).
    pub errors: watch::Receiver<Vec<String>>,
}

/// Names, sizes and times of the rule files: what changes when a file is edited.
fn fingerprint(dir: &Path) -> Vec<(PathBuf, u64, Option<SystemTime>)> {
    rule_files(dir)
        .into_iter()
        .map(|file| {
            let metadata = std::fs::metadata(&file).ok();
            let size = metadata.as_ref().map_or(0, |m| m.len());
            let modified = metadata.and_then(|m| m.modified().ok());
            (file, size, modified)
        })
        .collect()
}

/// Loads the rules; on error the built-ins (at start) or nothing (on reload).
fn load(dir: Option<&Path>) -> Result<ProviderSet, Vec<String>> {
    ProviderSet::load(dir).map_err(|errors| errors.iter().map(ToString::to_string).collect())
}

/// Reads the rules once and starts watching `dir` for changes.
pub fn start(
    dir: Option<PathBuf>,
    cancel: CancellationToken,
    tracker: &tokio_util::task::TaskTracker,
) -> RulesState {
    let (initial, initial_errors) = match load(dir.as_deref()) {
        Ok(set) => (set, Vec::new()),
        Err(errors) => {
            for error in &errors {
                warn!(%error, "a provider rule file is broken; using the built-in rules");
            }
            (ProviderSet::builtin().unwrap_or_default(), errors)
        }
    };
    let (providers, providers_receiver) = watch::channel(Arc::new(initial));
    let (errors, errors_receiver) = watch::channel(initial_errors);
    tracker.spawn(async move {
        let Ok(mut hangup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        else {
            warn!("cannot handle SIGHUP; rule files are still checked every 2 s");
            return;
        };
        let mut last = dir.as_deref().map(fingerprint).unwrap_or_default();
        let mut poll = tokio::time::interval(Duration::from_secs(2));
        loop {
            let forced = tokio::select! {
                () = cancel.cancelled() => return,
                _ = hangup.recv() => true,
                _ = poll.tick() => false,
            };
            let now = dir.as_deref().map(fingerprint).unwrap_or_default();
            if !forced && now == last {
                continue;
            }
            last = now;
            match load(dir.as_deref()) {
                Ok(set) => {
                    info!(providers = set.iter().count(), "provider rules reloaded");
                    providers.send_replace(Arc::new(set));
                    errors.send_replace(Vec::new());
                }
                Err(list) => {
                    for error in &list {
                        warn!(%error, "a provider rule file is broken; keeping the rules in force");
                    }
                    errors.send_replace(list);
                }
            }
        }
    });
    RulesState {
        providers: providers_receiver,
        errors: errors_receiver,
    }
}
