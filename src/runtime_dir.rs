//! The directory of this user's panectl runtime files (API sockets, locks, logs, the sockets of
//! ssh masters), in one place below everything that names a file in it.

use std::path::PathBuf;

/// The directory of every daemon's runtime files: `$XDG_RUNTIME_DIR/panectl/` or, without
/// it, `${TMUX_TMPDIR:-/tmp}/panectl-UID/`.
pub fn path() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(runtime) => PathBuf::from(runtime).join("panectl"),
        None => {
            let base = std::env::var_os("TMUX_TMPDIR")
                .filter(|v| !v.is_empty())
                .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
            base.join(format!("panectl-{}", nix::unistd::getuid()))
        }
    }
}
