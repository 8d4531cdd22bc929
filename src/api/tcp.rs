//! The optional TCP listener, for tools that cannot use a Unix socket: the same API, each
//! request carrying `Authorization: Bearer TOKEN`, the token kept in a file only the user can
//! read (0600). Only loopback addresses are accepted unless the user says `--allow-remote`,
//! because the API types into terminals.

use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::server::router;
use super::state::ApiState;

/// Where and how the TCP listener runs.
#[derive(Debug, Clone)]
pub struct TcpOptions {
    /// The address to listen on.
    pub address: std::net::SocketAddr,
    /// Allow an address that is not loopback.
    pub allow_remote: bool,
    /// The file holding the bearer token (created, 0600, when missing).
    pub token_file: PathBuf,
}

/// Why the TCP listener cannot start.
#[derive(Debug, thiserror::Error)]
pub enum TcpError {
    /// The address is reachable from other machines and the user did not allow it.
    #[error(
        "--listen {0} is not a loopback address; anyone who can reach it with the token can type \
         into your terminals. Use 127.0.0.1 or ::1, or add --allow-remote"
    )]
    Remote(std::net::SocketAddr),
    /// The token file is readable or writable by other users.
    #[error("the token file {0} is open to other users; run: chmod 600 {0}")]
    TokenExposed(String),
    /// The token file is not this user's own (a symlink, another user's).
    #[error(transparent)]
    Untrusted(crate::trust::TrustError),
    /// The token file is empty or not text.
    #[error("the token file {0} holds no token (at least 16 printable characters)")]
    TokenInvalid(String),
    /// A file or socket operation failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// On what.
        path: String,
        /// The failure.
        source: io::Error,
    },
}

/// Refuses a non-loopback address unless allowed.
pub fn check_address(address: std::net::SocketAddr, allow_remote: bool) -> Result<(), TcpError> {
    if address.ip().is_loopback() || allow_remote {
        Ok(())
    } else {
        Err(TcpError::Remote(address))
    }
}

/// Reads the token from `path` (refused unless a regular file of this user, mode 0600 or
/// stricter), or creates the file (0600) with a new random token.
pub fn load_or_create_token(path: &Path) -> Result<String, TcpError> {
    let shown = path.display().to_string();
    let io_error = |what| {
        let shown = shown.clone();
        move |source| TcpError::Io {
            what,
            path: shown,
            source,
        }
    };
    // O_NOFOLLOW: a symlink is refused, not followed; the open file is then checked (owner,
    // mode), so nothing can be swapped between the check and the read.
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(mut file) => {
            match crate::trust::check_open_file(
                "the token file",
                path,
                &file,
                crate::trust::Access::Private,
            ) {
                Ok(_) => {}
                Err(crate::trust::TrustError::OpenToOthers { .. }) => {
                    return Err(TcpError::TokenExposed(shown));
                }
                Err(error) => return Err(TcpError::Untrusted(error)),
            }
            let mut text = String::new();
            file.read_to_string(&mut text)
                .map_err(|_| TcpError::TokenInvalid(shown.clone()))?;
            let token = text.trim().to_string();
            if token.len() < 16 || !token.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(TcpError::TokenInvalid(shown));
            }
            Ok(token)
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            let mut bytes = [0u8; 32];
            std::fs::File::open("/dev/urandom")
                .and_then(|mut random| random.read_exact(&mut bytes))
                .map_err(io_error("cannot read random bytes for the token"))?;
            let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .map_err(io_error("cannot create the token file"))?;
            writeln!(file, "{token}").map_err(io_error("cannot write the token file"))?;
            Ok(token)
        }
        Err(error) if error.raw_os_error() == Some(nix::libc::ELOOP) => {
            Err(TcpError::Untrusted(crate::trust::TrustError::Symlink {
                what: "the token file",
                path: path.to_path_buf(),
            }))
        }
        Err(error) => Err(io_error("cannot open the token file")(error)),
    }
}

/// Compares without stopping at the first difference, so timing tells nothing of the token.
fn same(given: &[u8], token: &[u8]) -> bool {
    given.len() == token.len()
        && given
            .iter()
            .zip(token)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// The credentials of an `Authorization` value of the `Bearer` scheme, whose name is
/// case-insensitive (RFC 9110, 11.1): `Bearer`, `bearer` and `BEARER` alike.
fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, credentials) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
}

async fn require_token(State(token): State<Arc<str>>, request: Request, next: Next) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_credentials);
    if given.is_some_and(|given| same(given.as_bytes(), token.as_bytes())) {
        return next.run(request).await;
    }
    let mut answer = (
        StatusCode::UNAUTHORIZED,
        axum::Json(serde_json::json!({
            "error": "missing or wrong bearer token (Authorization: Bearer TOKEN, from the daemon's token file)"
        })),
    )
        .into_response();
    answer
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    answer
}

/// Binds the listener (checked address).
pub async fn bind(options: &TcpOptions) -> Result<TcpListener, TcpError> {
    check_address(options.address, options.allow_remote)?;
    TcpListener::bind(options.address)
        .await
        .map_err(|source| TcpError::Io {
            what: "cannot listen on",
            path: options.address.to_string(),
            source,
        })
}

/// Serves the API over TCP within `limits`, every request checked against `token`, until
/// `cancel` fires.
pub async fn serve(
    listener: TcpListener,
    token: String,
    state: ApiState,
    limits: super::listen::Limits,
    cancel: CancellationToken,
) {
    let token: Arc<str> = Arc::from(token);
    let app = router(state).layer(axum::middleware::from_fn_with_state(token, require_token));
    super::listen::serve(listener, app, limits, "tcp", cancel).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_loopback_unless_allowed() {
        assert!(check_address("127.0.0.1:7000".parse().unwrap(), false).is_ok());
        assert!(check_address("[::1]:7000".parse().unwrap(), false).is_ok());
        let remote = check_address("0.0.0.0:7000".parse().unwrap(), false).unwrap_err();
        assert!(remote.to_string().contains("--allow-remote"));
        assert!(check_address("192.168.1.2:7000".parse().unwrap(), true).is_ok());
    }

    #[test]
    fn tokens_are_created_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("api.token");
        let token = load_or_create_token(&path).unwrap();
        assert_eq!(token.len(), 64);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load_or_create_token(&path).unwrap(), token);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(
            load_or_create_token(&path),
            Err(TcpError::TokenExposed(_))
        ));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("link.token");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(matches!(
            load_or_create_token(&link),
            Err(TcpError::Untrusted(
                crate::trust::TrustError::Symlink { .. }
            ))
        ));
        if crate::trust::uid() == 0 {
            let nobody = Some(nix::unistd::Uid::from_raw(65534));
            nix::unistd::chown(&path, nobody, None).unwrap();
            assert!(matches!(
                load_or_create_token(&path),
                Err(TcpError::Untrusted(
                    crate::trust::TrustError::NotOwned { .. }
                ))
            ));
            nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(0)), None).unwrap();
        }
        std::fs::write(&path, "short\n").unwrap();
        assert!(matches!(
            load_or_create_token(&path),
            Err(TcpError::TokenInvalid(_))
        ));
    }

    #[test]
    fn the_scheme_is_case_insensitive() {
        assert_eq!(bearer_credentials("Bearer abc"), Some("abc"));
        assert_eq!(bearer_credentials("bearer abc"), Some("abc"));
        assert_eq!(bearer_credentials("BEARER  abc "), Some("abc"));
        assert_eq!(bearer_credentials("Basic abc"), None);
        assert_eq!(bearer_credentials("Bearerabc"), None);
    }

    #[test]
    fn comparison_needs_the_whole_token() {
        assert!(same(b"abcdef", b"abcdef"));
        assert!(!same(b"abcdeg", b"abcdef"));
        assert!(!same(b"abcde", b"abcdef"));
        assert!(!same(b"", b"abcdef"));
    }
}
