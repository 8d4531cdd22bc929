//! Text is typed only into agents: a pane whose provider is the plain shell, or not known at
//! all, would run it as commands. The routes that type text (messages, input, handoff and
//! assign, for the worker and the pane the answer goes to) refuse such a pane unless the caller
//! asks for it (`allow_shell`). Requests that come through `panectl mcp` (marked with
//! [`CLIENT_HEADER`]) cannot ask: for them the daemon's `--mcp-allow-shell` decides.
//!
//! The check is made when the text is queued (or typed), with the provider the pane has then; a
//! pane whose provider is not known yet (the daemon just started and has not looked at it) is
//! refused like a shell.

use crate::status::providers::SHELL;
use crate::tmux::PaneSummary;

/// The request header that names the kind of client; `panectl mcp` sends [`MCP_CLIENT`].
pub const CLIENT_HEADER: &str = "x-panectl-client";

/// The value of [`CLIENT_HEADER`] on requests of `panectl mcp`.
pub const MCP_CLIENT: &str = "mcp";

/// Text refused for a pane without an agent: the reason, for the caller (the API answers it
/// with 409 Conflict).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShellRefused(pub String);

/// Who asks to type text, and whether they may type it into a pane without an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShellPermission {
    /// The request comes from an MCP client.
    pub mcp: bool,
    /// Text may go to a pane without an agent.
    pub allowed: bool,
}

impl ShellPermission {
    /// The permission of a request: its own `allow_shell`, or for MCP clients (`mcp`: the
    /// request came with [`CLIENT_HEADER`] set to [`MCP_CLIENT`]) the daemon's
    /// `--mcp-allow-shell` (`mcp_allow_shell`).
    pub fn of(mcp_allow_shell: bool, mcp: bool, asked: bool) -> ShellPermission {
        ShellPermission {
            mcp,
            allowed: if mcp { mcp_allow_shell } else { asked },
        }
    }

    /// Refuses `pane` if it runs no recognised agent and that is not allowed.
    pub(crate) fn check(&self, pane: &PaneSummary) -> Result<(), ShellRefused> {
        let what = match pane.provider.as_deref() {
            Some(SHELL) => "a plain shell (provider shell)",
            None => "no agent panectl recognises (no provider)",
            Some(_) => return Ok(()),
        };
        if self.allowed {
            return Ok(());
        }
        let how = if self.mcp {
            "MCP clients may do that only when the daemon runs with --mcp-allow-shell"
        } else {
            "pass --allow-shell (allow_shell: true) to send anyway"
        };
        Err(ShellRefused(format!(
            "{} runs {what}: the text would run as commands; {how}",
            pane.pane
        )))
    }
}
