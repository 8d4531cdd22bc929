//! What a remote host has for panectl (its tmux, python3 for the attach gate), learned with one
//! probe over ssh, and how control clients can attach there.

use crate::tmux_version::{self as versions, TmuxVersion};

/// Why a remote host could not be asked something over ssh.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    /// The daemon's ssh link to the host is down (what ssh last said, if anything).
    #[error("{0}")]
    NotConnected(String),
    /// ssh could not be started or waited for.
    #[error("cannot run ssh: {0}")]
    Spawn(String),
    /// ssh did not finish in time.
    #[error("ssh did not finish within {0:?}")]
    TimedOut(std::time::Duration),
    /// ssh itself failed (exit 255), with the last line it wrote.
    #[error("{0}")]
    Ssh(String),
}

/// Why control clients cannot attach on a remote host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoAttach {
    /// No tmux there.
    #[error("tmux is not installed on the host")]
    NoTmux,
    /// A tmux with the attach crash and no python3 for the gate.
    #[error(
        "the host's tmux ({tmux}) can crash when a control client attaches, and the host has \
         no python3 for panectl's attach gate: install python3 there, or tmux 3.8 or later"
    )]
    NoGate {
        /// Its version, as it says it.
        tmux: String,
    },
}

/// What the remote host has, learned once per connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteInfo {
    /// `tmux -V` there, if tmux is installed.
    pub tmux: Option<String>,
    /// Whether `python3` is there (the attach gate needs it).
    pub python3: bool,
}

impl RemoteInfo {
    /// Reads the probe's output (see [`PROBE`]).
    pub(crate) fn parse(output: &str) -> RemoteInfo {
        let mut info = RemoteInfo {
            tmux: None,
            python3: false,
        };
        for line in output.lines() {
            if let Some(version) = line.strip_prefix("tmux ") {
                info.tmux = Some(version.trim().to_string());
            } else if line.trim() == "python3: yes" {
                info.python3 = true;
            }
        }
        info
    }

    /// How control clients attach on this host: through panectl's gate (python3), directly
    /// (a tmux without the attach crash), or not at all (why).
    pub fn attach_way(&self) -> Result<&'static str, NoAttach> {
        if self.tmux.is_none() {
            Err(NoAttach::NoTmux)
        } else if self.python3 {
            Ok("control clients attach through panectl's gate (python3)")
        } else if !self.needs_gate() {
            Ok("control clients attach directly (this tmux has no attach crash)")
        } else {
            Err(NoAttach::NoGate {
                tmux: self
                    .tmux
                    .clone()
                    .unwrap_or_else(|| "version unknown".into()),
            })
        }
    }

    /// Whether this host's tmux has the crash an unguarded control client can set off.
    pub(crate) fn needs_gate(&self) -> bool {
        self.tmux
            .as_deref()
            .and_then(TmuxVersion::parse)
            .is_none_or(|v| !versions::known_crashes(&v).is_empty())
    }
}

/// The remote probe: the tmux version and whether `python3` is there, in one round trip.
pub(crate) const PROBE: &str = "tmux -V 2>/dev/null || echo 'no tmux'; \
                     if command -v python3 >/dev/null 2>&1; then echo 'python3: yes'; fi";
