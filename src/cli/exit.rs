//! The exit codes of every command, one table (docs/commands.md, "Exit codes"), so that a
//! script can tell "not yet" from "wrong" from "nobody there" without reading messages:
//!
//! | code | meaning |
//! |---|---|
//! | 0 | done |
//! | 1 | not reached: timed out, not found (or gone), `health` not `ok`, a `doctor` check failed, `daemon status` with none running |
//! | 2 | usage or refused: a bad command line or value, a request the daemon refused |
//! | 3 | unreachable: no daemon for the server, or the daemon could not reach tmux |

use std::process::ExitCode;

use hyper::StatusCode;
use panectl::api::client::ClientError;

/// Not reached: timed out, not found, not healthy, not running.
pub const NOT_REACHED: u8 = 1;
/// Usage or refused.
pub const REFUSED: u8 = 2;
/// Unreachable: no daemon, or no tmux behind it.
pub const UNREACHABLE: u8 = 3;

/// The code for an HTTP status the daemon answered with.
fn of_status(status: StatusCode) -> u8 {
    match status {
        StatusCode::NOT_FOUND | StatusCode::GONE | StatusCode::GATEWAY_TIMEOUT => NOT_REACHED,
        status if status.is_client_error() => REFUSED,
        status if status.is_server_error() => UNREACHABLE,
        _ => REFUSED,
    }
}

/// The code of a command that failed with `error`: from the daemon's answer where there is one,
/// else a refusal (the command line or a value in it could not be used).
pub fn of_error(error: &anyhow::Error) -> ExitCode {
    let client = error
        .chain()
        .find_map(|cause| cause.downcast_ref::<ClientError>());
    ExitCode::from(match client {
        Some(ClientError::NoDaemon { .. } | ClientError::Transport(_)) => UNREACHABLE,
        Some(ClientError::Protocol(_)) => UNREACHABLE,
        Some(ClientError::Untrusted(_)) => REFUSED,
        Some(ClientError::Status { status, .. }) => of_status(*status),
        None => REFUSED,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daemon_answers_map_to_the_table() {
        assert_eq!(of_status(StatusCode::NOT_FOUND), NOT_REACHED);
        assert_eq!(of_status(StatusCode::GONE), NOT_REACHED);
        assert_eq!(of_status(StatusCode::GATEWAY_TIMEOUT), NOT_REACHED);
        assert_eq!(of_status(StatusCode::BAD_REQUEST), REFUSED);
        assert_eq!(of_status(StatusCode::CONFLICT), REFUSED);
        assert_eq!(of_status(StatusCode::UNPROCESSABLE_ENTITY), REFUSED);
        assert_eq!(of_status(StatusCode::SERVICE_UNAVAILABLE), UNREACHABLE);
        assert_eq!(of_status(StatusCode::BAD_GATEWAY), UNREACHABLE);
        let no_daemon = anyhow::Error::new(ClientError::NoDaemon {
            server: "s".into(),
            start: "start one with: panectl daemon".into(),
        })
        .context("ls");
        assert_eq!(of_error(&no_daemon), ExitCode::from(UNREACHABLE));
        assert_eq!(
            of_error(&anyhow::anyhow!("give --reply-to PANE")),
            ExitCode::from(REFUSED)
        );
    }
}
