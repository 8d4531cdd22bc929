//! A real agent CLI under the daemon, as the provider end-to-end tests drive it: its own tmux
//! server with the agent in `%0` (a shell beside it), the daemon following it, and the steps
//! every provider is checked through (recognised by its processes, a queued message's turn,
//! `close`).

use std::path::Path;
use std::time::Duration;

use crate::answer_claude::{answer, touch, wait_for_decision};
use crate::hook_install::{ProcessTree, respawn, send_line};
use crate::signals::pane;
use crate::support::{Daemon, TmuxServer};

/// See the module documentation.
pub struct AgentSession {
    // Dropped in this order: the agent's processes, the daemon, then the server.
    _tree: ProcessTree,
    _daemon: Daemon,
    /// The agent's tmux server.
    pub server: TmuxServer,
    provider: &'static str,
}

impl AgentSession {
    /// Starts a server of 120x40 and the daemon, then runs `command` (a shell command line) in
    /// `%0` in `dir`, and waits until the daemon recognises `provider` there by its processes,
    /// idle at its prompt.
    pub fn start(provider: &'static str, dir: &str, command: &str) -> AgentSession {
        let server = TmuxServer::start(120, 40);
        server.tmux(&["split-window", "-d", "-t", "%0", "sh"]);
        let daemon = server.start_daemon(&[]);
        server.wait_for_panes(2);
        let tree = respawn(&server, dir, command);
        let session = AgentSession {
            server,
            provider,
            _tree: tree,
            _daemon: daemon,
        };
        session.wait_status(&["idle"]);
        assert_eq!(pane(&session.server)["provider_source"], "process");
        session
    }

    /// Waits until `%0` shows one of `wanted` as this provider's.
    pub fn wait_status(&self, wanted: &[&str]) {
        let what = format!("{} {wanted:?}", self.provider);
        self.server.wait_for(&what, Duration::from_secs(90), || {
            let pane = pane(&self.server);
            pane["provider"] == self.provider
                && wanted.contains(&pane["status"].as_str().unwrap_or_default())
        });
    }

    /// Queues `message` for `%0`: it is delivered when the agent is ready, and the turn it
    /// starts runs (`processing`) and ends (`completed`).
    pub fn queued_turn(&self, message: &str) {
        let id = self.server.panectl_ok(&["send", "%0", message]);
        self.wait_status(&["processing"]);
        self.wait_status(&["completed"]);
        let inbox = self.server.panectl_ok(&["inbox", "--json"]);
        assert!(
            inbox.contains(id.trim()) && inbox.contains("delivered"),
            "{inbox}"
        );
    }

    /// Asks the model to run `touch FILE`; the agent's dialog about it is a decision of this
    /// provider while `%0` waits for the user, `panectl answer --yes` picks `label`, and the
    /// command runs and the turn ends. Returns the decision as `decisions` listed it.
    pub fn allow_with_answer(&self, file: &Path, label: &str) -> serde_json::Value {
        let waiting = self.answer_dialog(file, &["--yes"], label);
        self.server.wait_for(
            "the allowed command to run",
            Duration::from_secs(60),
            || file.exists(),
        );
        self.wait_status(&["completed"]);
        waiting
    }

    /// Asks the model to run `touch FILE`; the agent's dialog about it is a decision of this
    /// provider while `%0` waits for the user, and `panectl answer ARGS --decision F` (F the
    /// dialog's fingerprint) picks the option labelled `label`. Returns the decision as
    /// `decisions` listed it.
    pub fn answer_dialog(&self, file: &Path, args: &[&str], label: &str) -> serde_json::Value {
        let server = &self.server;
        send_line(server, &touch(file));
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        let waiting = wait_for_decision(server, &name);
        assert_eq!(waiting["provider"], self.provider, "{waiting:#}");
        assert_eq!(pane(server)["status"], "waiting_user_answer");
        assert!(!file.exists());
        let fingerprint = waiting["decision"]["fingerprint"].as_str().unwrap();
        let mut all = args.to_vec();
        all.extend(["--decision", fingerprint]);
        let (outcome, code) = answer(server, &all);
        assert_eq!(outcome["outcome"], "answered", "{outcome:#}");
        assert_eq!(outcome["label"], label, "{outcome:#}");
        assert_eq!(code, Some(0));
        waiting
    }

    /// `panectl close %0`: the agent is asked to leave with `text` and Enter, and does.
    pub fn close_with(&self, text: &str) {
        let closed: serde_json::Value = serde_json::from_str(&self.server.panectl_ok(&[
            "close",
            "%0",
            "--json",
            "--timeout",
            "20s",
        ]))
        .expect("close --json");
        assert_eq!(closed["provider"], self.provider, "{closed}");
        assert_eq!(closed["text"], text, "{closed}");
        assert_eq!(closed["keys"], serde_json::json!(["Enter"]), "{closed}");
        assert_eq!(closed["how"], "exited", "{closed}");
    }
}
