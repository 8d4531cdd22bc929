//! Keeps a stopped or hung daemon from blocking the programs in the user's panes.
//!
//! tmux stops reading a pane's terminal when every attached client is a control client whose
//! output is backed up, and checks `pause-after` only when it queues or writes output for a
//! client. A daemon that is stopped (SIGSTOP, a debugger, a suspended laptop's stuck process)
//! or hung stops reading its control clients: with no terminal attached anywhere, the programs
//! in its sessions then block on their next write for as long as the daemon stays so, and
//! `pause-after` never fires because no output moves.
//!
//! While the daemon follows a server with `pause-after` on, this task keeps one control
//! client with `no-output` attached ([`crate::tmux::attach::OutputFreeClient`]). Such a
//! client never counts as backed up, so tmux keeps reading every pane; the daemon's clients
//! fall behind instead, tmux pauses their panes after `pause-after` seconds and discards what
//! they missed, and the daemon resyncs those panes from tmux's screens once it runs again. A
//! stopped daemon therefore holds a program back for at most `pause-after` seconds (plus the
//! time the pipe buffers take to fill). With `pause-after` 0 (flow control off) no guard runs:
//! tmux then holds programs back while the daemon is behind, losing nothing.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::address::ServerAddress;
use crate::clients::{ClientRecord, ClientRegistry};
use crate::tmux::ServerStatus;
use crate::tmux::attach;

/// The wait before the guard is attached again after it ended or failed to start; doubles up
/// to [`MAX_RETRY`] while it keeps failing.
const FIRST_RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(10);
/// A guard that stayed this long was healthy: the retry delay starts over.
const HEALTHY: Duration = Duration::from_secs(10);

/// Runs until `cancel` fires: keeps the output-free client attached whenever the server has a
/// session the daemon follows.
pub async fn run(
    address: ServerAddress,
    attach_dir: PathBuf,
    mut status: watch::Receiver<ServerStatus>,
    clients: ClientRecord,
    cancel: CancellationToken,
) {
    let mut retry = FIRST_RETRY;
    let mut failures_logged = false;
    loop {
        // Nothing to guard (and nothing to attach to) while no session is followed.
        let followed = tokio::select! {
            () = cancel.cancelled() => return,
            followed = async {
                status
                    .wait_for(|status| status.server_alive && status.sessions > 0)
                    .await
                    .is_ok()
            } => followed,
        };
        if !followed {
            return;
        }
        let started = tokio::time::Instant::now();
        match attach::output_free_client(&address, &attach_dir).await {
            Ok(client) => {
                failures_logged = false;
                debug!(server = %address, "the flow-control guard client is attached");
                if guard(&address, client, &clients, &cancel).await {
                    return;
                }
            }
            Err(error) if !failures_logged => {
                failures_logged = true;
                warn!(server = %address, %error,
                    "cannot attach the flow-control guard client; a stopped daemon may hold \
                     back the programs in its panes (retrying)");
            }
            Err(error) => debug!(server = %address, %error, "the guard client failed again"),
        }
        retry = if started.elapsed() >= HEALTHY {
            FIRST_RETRY
        } else {
            (retry * 2).min(MAX_RETRY)
        };
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(retry) => {}
        }
    }
}

/// Holds the client until it ends (its session closed, the server went) or `cancel` fires;
/// returns whether it was cancelled. The client is always reaped.
async fn guard(
    address: &ServerAddress,
    client: attach::OutputFreeClient,
    clients: &ClientRegistry,
    cancel: &CancellationToken,
) -> bool {
    let attach::OutputFreeClient {
        mut child,
        stdin,
        mut relay,
    } = client;
    let pid = child.id();
    if let Some(pid) = pid {
        clients.remember(pid);
    }
    let cancelled = tokio::select! {
        () = cancel.cancelled() => true,
        status = child.wait() => {
            info!(server = %address, ?status, "the flow-control guard client ended; attaching it again");
            false
        }
    };
    // Closing stdin is how a control client detaches.
    drop(stdin);
    if tokio::time::timeout(Duration::from_secs(2), child.wait())
        .await
        .is_err()
    {
        warn!(
            ?pid,
            "the flow-control guard client did not exit; killing it"
        );
        let _ = child.kill().await;
    }
    if let Some(pid) = pid {
        clients.forget(pid);
    }
    if tokio::time::timeout(Duration::from_secs(1), &mut relay)
        .await
        .is_err()
    {
        debug!("the guard client's relay did not stop; ending it");
        relay.abort();
    }
    cancelled
}
