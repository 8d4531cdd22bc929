//! Values the shell completes that only the daemon or the user's files know: panes and agent
//! names (from the running daemon), profiles (built in and the user's). clap_complete's
//! dynamic completion asks the binary at each TAB (`COMPLETE=bash panectl -- WORDS`), so the
//! values are the ones of the moment; statuses and providers are value lists clap knows
//! already. A completion never fails: no daemon, no values.

use std::time::Duration;

use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};
use panectl::api::client::ApiClient;
use panectl::daemon::discovery;
use panectl::tmux::ServerAddress;

/// How long a TAB waits for the daemon before it offers nothing.
const DAEMON_WAIT: Duration = Duration::from_millis(800);

/// Completes a pane argument: `%N` of every pane and the name of every named agent.
pub fn panes() -> ArgValueCandidates {
    ArgValueCandidates::new(pane_candidates)
}

/// Completes a profile name.
pub fn profiles() -> ArgValueCandidates {
    ArgValueCandidates::new(profile_candidates)
}

/// The panes of the server the shell is in (`$TMUX`), else of the default server.
fn pane_candidates() -> Vec<CompletionCandidate> {
    let Ok(address) = ServerAddress::resolve(None, None) else {
        return Vec::new();
    };
    let found = discovery::find_api(&address);
    let client = ApiClient::new(found.socket, address.to_string(), String::new());
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    let panes = runtime
        .block_on(async { tokio::time::timeout(DAEMON_WAIT, client.panes()).await })
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    let mut candidates = Vec::new();
    for pane in &panes {
        let provider = pane.provider.as_deref().unwrap_or("shell");
        let about = format!("{provider} {}", pane.status.as_str());
        if let Some(name) = &pane.name {
            candidates.push(
                CompletionCandidate::new(name).help(Some(format!("{} {about}", pane.pane).into())),
            );
        }
        candidates.push(CompletionCandidate::new(pane.pane.to_string()).help(Some(about.into())));
    }
    candidates
}

/// The built-in profiles and the user's.
fn profile_candidates() -> Vec<CompletionCandidate> {
    let (profiles, _refused) = panectl::orchestration::profile::all(None);
    profiles
        .into_iter()
        .map(|p| {
            let help = p.description.unwrap_or(p.provider);
            CompletionCandidate::new(p.name).help(Some(help.into()))
        })
        .collect()
}
