//! Every daemon of this user on this machine (local and remote servers alike), for the views
//! over many servers (`ls --all`, `events --all`, `board --all`) and for pane names with a
//! `SERVER/` prefix.
//!
//! The daemons are found where they keep their API sockets (the runtime directory): each
//! socket of this user that answers is asked its `health`, which names its server (`server`:
//! `local`, `work`, `devbox`, `devbox:work`). A daemon whose runtime directory is another one
//! (started with another `XDG_RUNTIME_DIR`) is not found.

use std::path::PathBuf;

use panectl::api::client::ApiClient;
use panectl::api::routes::Route;
use panectl::api::wire::Health;
use panectl::daemon::discovery;

use super::ServerArgs;
use super::client::block_on;

/// A running daemon and its server.
pub(super) struct Daemon {
    /// The server's short name (unique among the daemons found).
    pub label: String,
    /// How to reach the same server as a single `-L/-S/--ssh` would.
    pub server: ServerArgs,
    /// A client of its API.
    pub client: ApiClient,
}

/// The command-line options that name the server a daemon follows, from its health.
fn server_args(health: &Health) -> ServerArgs {
    let remote = health.ssh_destination.clone();
    let socket = PathBuf::from(&health.socket);
    let (socket_name, socket_path) = if remote.is_some() && !socket.is_absolute() {
        (Some(health.socket.clone()), None)
    } else {
        (None, Some(socket))
    };
    ServerArgs {
        socket_name,
        socket_path,
        ssh: remote,
        ssh_command: None,
        ssh_keepalive: 5,
    }
}

/// The API sockets of this user in the runtime directory.
fn sockets() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(panectl::runtime_dir::path()) else {
        return Vec::new();
    };
    let mut sockets: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "sock"))
        .filter(|p| discovery::is_own_socket(p))
        .collect();
    sockets.sort();
    sockets
}

/// Every daemon that answers, in the order of their labels. Labels shared by two servers
/// (two local servers with sockets of the same name) are replaced by the servers' sockets.
pub(super) fn daemons() -> anyhow::Result<Vec<Daemon>> {
    let clients: Vec<ApiClient> = sockets()
        .into_iter()
        .map(|socket| {
            let shown = socket.display().to_string();
            ApiClient::new(
                socket,
                shown,
                "start one with: panectl daemon --detach".into(),
            )
        })
        .collect();
    let health = Route::Health {}.path();
    let answers = block_on(async {
        Ok(futures::future::join_all(clients.iter().map(|c| c.get_json::<Health>(&health))).await)
    })?;
    let mut found: Vec<(Health, ApiClient)> = answers
        .into_iter()
        .zip(clients)
        .filter_map(|(health, client)| Some((health.ok()?, client)))
        .collect();
    found.sort_by(|a, b| a.0.server.cmp(&b.0.server));
    let labels: Vec<String> = found.iter().map(|(h, _)| h.server.clone()).collect();
    Ok(found
        .into_iter()
        .map(|(health, client)| {
            let shared = labels.iter().filter(|l| **l == health.server).count() > 1;
            let label = if shared || health.server.is_empty() {
                health.tmux_socket.clone()
            } else {
                health.server.clone()
            };
            Daemon {
                label,
                server: server_args(&health),
                client,
            }
        })
        .collect())
}

/// Every daemon, or an error saying there is none.
pub(super) fn some_daemons() -> anyhow::Result<Vec<Daemon>> {
    let daemons = daemons()?;
    if daemons.is_empty() {
        anyhow::bail!(
            "no panectl daemon is running on this machine (in {})",
            panectl::runtime_dir::path().display()
        );
    }
    Ok(daemons)
}

/// A pane name with a `SERVER/` prefix naming a running daemon's server: that server and the
/// rest of the name. `None` when the name has no such prefix (a window name may hold `/`).
pub(super) fn route(name: &str) -> anyhow::Result<Option<(ServerArgs, String)>> {
    let Some((prefix, rest)) = name.split_once('/') else {
        return Ok(None);
    };
    if prefix.is_empty() || rest.is_empty() {
        return Ok(None);
    }
    Ok(daemons()?
        .into_iter()
        .find(|d| d.label == prefix)
        .map(|d| (d.server, rest.to_string())))
}

/// Asks every daemon the same (`ask`, one request of its API), at once: each answer with its
/// daemon's label, in the daemons' order. A daemon that does not answer is reported on stderr
/// and left out, and the exit code says so.
pub(super) fn ask_every<T, F, Fut>(
    ask: F,
) -> anyhow::Result<(Vec<(String, T)>, std::process::ExitCode)>
where
    F: Fn(ApiClient) -> Fut,
    Fut: std::future::Future<Output = Result<T, panectl::api::client::ClientError>>,
{
    let daemons = some_daemons()?;
    let answers = block_on(async {
        Ok(futures::future::join_all(daemons.iter().map(|d| ask(d.client.clone()))).await)
    })?;
    let mut found = Vec::new();
    let mut code = std::process::ExitCode::SUCCESS;
    for (daemon, answer) in daemons.iter().zip(answers) {
        match answer {
            Ok(answer) => found.push((daemon.label.clone(), answer)),
            Err(error) => {
                eprintln!(
                    "panectl: {}: {}",
                    super::client::printable(&daemon.label),
                    super::client::printable(&error.to_string())
                );
                code = super::exit::of_error(&error.into());
            }
        }
    }
    Ok((found, code))
}
