//! What each CLI is: its program, its set-up, what it shows in each state, and the remarks a
//! recorded screen gets.

use super::*;

impl Cli {
    pub(crate) const ALL: [Cli; 9] = [
        Cli::Claude,
        Cli::Codex,
        Cli::Gemini,
        Cli::Aider,
        Cli::OpenCode,
        Cli::Qwen,
        Cli::Pi,
        Cli::Kilo,
        Cli::Grok,
    ];

    /// The name on the command line and of its directory in the agent cache.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Cli::Claude => "claude",
            Cli::Codex => "codex",
            Cli::Gemini => "gemini",
            Cli::Aider => "aider",
            Cli::OpenCode => "opencode",
            Cli::Qwen => "qwen",
            Cli::Pi => "pi",
            Cli::Kilo => "kilo",
            Cli::Grok => "grok",
        }
    }

    /// The provider id of the fixtures' directory.
    pub(crate) fn provider(self) -> &'static str {
        match self {
            Cli::Claude => "claude_code",
            Cli::Codex => "codex",
            Cli::Gemini => "gemini_cli",
            Cli::Aider => "aider",
            Cli::OpenCode => "opencode",
            Cli::Qwen => "qwen_code",
            Cli::Pi => "pi",
            Cli::Kilo => "kilo",
            Cli::Grok => "grok_cli",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Cli> {
        Cli::ALL
            .into_iter()
            .find(|cli| cli.name() == text || cli.provider() == text)
    }

    pub(crate) fn binary(self, cache: &Path) -> PathBuf {
        let dir = cache.join(self.name());
        match self {
            Cli::Aider => dir.join("venv/bin/aider"),
            _ => dir.join("node_modules/.bin").join(self.name()),
        }
    }

    /// Pane sizes to record; layouts change with the width.
    pub(crate) fn sizes(self) -> &'static [(u16, u16)] {
        match self {
            Cli::Claude | Cli::Codex | Cli::Gemini | Cli::Qwen | Cli::Pi | Cli::Grok => {
                &[(120, 40), (80, 24)]
            }
            Cli::Aider | Cli::OpenCode | Cli::Kilo => &[(120, 40)],
        }
    }

    /// Key names that accept the highlighted (first) answer of a permission dialog.
    pub(crate) fn approve(self) -> &'static [&'static str] {
        match self {
            Cli::Aider => &["y", "Enter"],
            _ => &["Enter"],
        }
    }

    /// How long to wait for the CLI to give up retrying a failing request, where it does so
    /// in reasonable time.
    pub(crate) fn gives_up_after(self) -> Option<Duration> {
        // `PANECTL_GIVE_UP_SECONDS` waits longer (or at all, for Gemini CLI).
        if let Some(seconds) = std::env::var("PANECTL_GIVE_UP_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
        {
            return Some(Duration::from_secs(seconds));
        }
        match self {
            Cli::Claude => Some(Duration::from_secs(300)),
            Cli::Codex => Some(Duration::from_secs(90)),
            Cli::Aider => Some(Duration::from_secs(120)),
            Cli::OpenCode | Cli::Kilo => Some(Duration::from_secs(150)),
            // Three retries, 1, 2 and 4 s apart.
            Cli::Pi | Cli::Grok => Some(Duration::from_secs(60)),
            // Gemini CLI (and Qwen Code, its fork) retries for many minutes.
            Cli::Gemini | Cli::Qwen => None,
        }
    }

    /// Start-up dialogs that a changed set-up brings up, with a text that shows each.
    pub(crate) fn startup_dialogs(self) -> &'static [(Start, &'static str, &'static str)] {
        match self {
            Cli::Claude => &[
                (Start::Untrusted, "startup-folder-trust", "trust"),
                (Start::UnapprovedKey, "startup-api-key", "API key"),
            ],
            Cli::Codex => &[(Start::Untrusted, "startup-folder-trust", "trust")],
            Cli::Gemini => &[(Start::Untrusted, "startup-folder-trust", "Do you trust")],
            Cli::Aider => &[(Start::NoGit, "startup-create-git-repo", "No git repo found")],
            Cli::OpenCode | Cli::Kilo | Cli::Pi | Cli::Grok => &[],
            Cli::Qwen => &[(Start::Untrusted, "startup-folder-trust", "Do you trust")],
        }
    }
}

/// What each CLI shows in each state.
impl Cli {
    pub(crate) fn working(self, s: &Screen) -> bool {
        match self {
            Cli::Claude | Cli::Codex | Cli::Grok => s.has("esc to interrupt"),
            Cli::Gemini | Cli::Qwen => s.has("esc to cancel"),
            // After Ctrl-C the spinner's last frame stays above the `>` prompt.
            Cli::Aider => {
                (s.has("Waiting for ") && s.last_line() != ">")
                    || s.last_line().starts_with("Running ")
            }
            Cli::OpenCode | Cli::Kilo => s.has("esc interrupt"),
            // A spinner line above the input box: "⠇ Working..." or "⠇ Retrying (1/3) in 1s...".
            Cli::Pi => s.lines().any(|l| {
                let l = l.trim_start();
                l.chars()
                    .next()
                    .is_some_and(|c| ('\u{2800}'..='\u{28ff}').contains(&c))
                    && (l.contains("Working...") || l.contains("Retrying ("))
            }),
        }
    }

    /// Whether it asks before running a tool (Pi never does: it has no permission dialogs).
    pub(crate) fn asks_permission(self) -> bool {
        self != Cli::Pi
    }

    pub(crate) fn dialog(self, s: &Screen) -> bool {
        match self {
            Cli::Claude => s.has("Do you want to proceed?"),
            Cli::Codex => s.has("Would you like to run the following command?"),
            Cli::Gemini => s.has("Allow execution of"),
            Cli::Qwen => s.has_any(&["Allow execution of", "Do you want to proceed"]),
            Cli::Aider => s.last_line().contains("Run shell command?"),
            Cli::OpenCode | Cli::Kilo => s.has("Permission required"),
            Cli::Pi => false,
            Cli::Grok => s.has("Do you want to proceed with this operation?"),
        }
    }

    /// Ready for input: the prompt is there and nothing runs or asks.
    pub(crate) fn ready(self, s: &Screen) -> bool {
        if self.working(s) || self.dialog(s) {
            return false;
        }
        match self {
            // The input box: `❯` right under a rule.
            Cli::Claude => {
                let lines: Vec<&str> = s.lines().collect();
                lines
                    .windows(2)
                    .any(|w| w[0].starts_with('─') && w[1].starts_with('❯'))
            }
            // 0.145.0 has no `? for shortcuts` footer: its status line names the model.
            Cli::Codex => s.has("for shortcuts") || s.lines().any(|l| l.starts_with("  gpt-5 ")),
            Cli::Gemini => s.has("Type your message"),
            // The input box: `>` right under a rule (after a turn it may hold a suggested next
            // prompt instead of the placeholder).
            Cli::Qwen => {
                let lines: Vec<&str> = s.lines().collect();
                lines
                    .windows(2)
                    .any(|w| w[0].starts_with('─') && w[1].starts_with('>'))
            }
            Cli::Aider => s.last_line() == ">",
            Cli::OpenCode | Cli::Kilo => s.has("ctrl+p commands"),
            // The input box between two rules, with the directory under it.
            Cli::Pi => {
                let lines: Vec<&str> = s.lines().collect();
                lines.iter().filter(|l| l.starts_with("────")).count() >= 2
            }
            // The input box: "│ ❯ Ask me anything..." (or the typed text).
            Cli::Grok => s.lines().any(|l| l.trim_start().starts_with("│ ❯")),
        }
    }

    /// The path of the requests that carry the conversation.
    pub(crate) fn conversation_path(self) -> &'static str {
        match self {
            Cli::Claude => "/v1/messages",
            Cli::Codex => "/v1/responses",
            Cli::Gemini => ":streamGenerateContent",
            Cli::Aider | Cli::OpenCode | Cli::Kilo | Cli::Qwen | Cli::Pi | Cli::Grok => {
                "/chat/completions"
            }
        }
    }

    /// Shows that it retries a failed request (Gemini CLI shows only its spinner).
    pub(crate) fn retry_shown(self, s: &Screen) -> bool {
        match self {
            Cli::Claude | Cli::OpenCode | Cli::Kilo => s.has_any(&["retrying in", "Retrying in"]),
            Cli::Codex => s.has("Reconnecting"),
            Cli::Aider => s.has("Retrying in"),
            Cli::Gemini | Cli::Qwen => true,
            Cli::Pi => s.has("Retrying ("),
            Cli::Grok => s.has_any(&["etry", "etrying"]),
        }
    }

    /// Shows an API error (checked together with `ready`).
    pub(crate) fn errored(self, s: &Screen) -> bool {
        match self {
            Cli::Claude => s.has_any(&["API Error", "Invalid API key", "/login"]),
            Cli::Codex => s.lines().any(|l| l.starts_with('■')),
            Cli::Gemini | Cli::Qwen => s.has("API Error"),
            Cli::Aider => s.has_any(&["litellm.", "Error:"]),
            Cli::OpenCode | Cli::Kilo => s.has("fake failure"),
            Cli::Pi => s.lines().any(|l| l.trim_start().starts_with("Error: ")),
            Cli::Grok => s.has("encountered an error"),
        }
    }
}

/// Remarks on things a detector must not be fooled by, found on a screen.
pub(crate) fn notes(cli: Cli, s: &Screen) -> Vec<String> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let mut notes = Vec::new();
    let mut note = |when: bool, text: &str| {
        if when {
            notes.push(text.to_string());
        }
    };
    note(
        s.has("focus-events"),
        "The line 'tmux focus-events off · add ...' is Claude Code's hint about the tmux option (this tmux runs without a configuration file).",
    );
    note(
        cli == Cli::Codex && s.has("· f2 to view"),
        "'⚠ N warning(s) · f2 to view' in the footer counts Codex's own warnings: bubblewrap is not on PATH (it falls back to its bundled copy) and, after the first request, no model metadata for `gpt-5` from the fake provider.",
    );
    note(
        cli == Cli::Codex && !s.title.is_empty() && s.title != "work" && s.title != host.trim(),
        "Codex titles the pane with the session's name (its first prompt) and the work directory, prefixed by a spinner glyph while working and by '[ ! ] Action Required' (blinking to '[ . ] Action Required') in dialogs.",
    );
    note(
        s.has("True color"),
        "Gemini CLI warns that true colour is not detected.",
    );
    note(
        s.has_any(&["Update available", "update available", "Updating"]),
        "An update notice is shown.",
    );
    note(
        !host.trim().is_empty() && s.title == host.trim(),
        &format!(
            "The pane title '{}' is tmux's default (the host name): the CLI has not set a title{}.",
            s.title,
            if cli == Cli::Aider {
                " (Aider never does)"
            } else {
                " yet"
            }
        ),
    );
    note(
        cli == Cli::Claude && !s.alternate,
        "Claude Code draws its start-up dialogs on the main screen, before it switches to the alternate screen; '❯' marks the selected answer here, as it marks the input line elsewhere.",
    );
    note(
        cli == Cli::Claude && s.has_any(&["❯ Once fixed", "❯ Resend your message"]),
        "The text in the input box after '❯' is Claude Code's placeholder after an error, not typed input.",
    );
    note(
        matches!(cli, Cli::OpenCode | Cli::Kilo)
            && s.lines().any(|l| l.contains("┃  fake failure  ┃")),
        "The box at the top right ('fake failure') is OpenCode's (and Kilo CLI's) error toast; it goes away after a few seconds.",
    );
    note(
        cli == Cli::Gemini && s.has("▄▄▄▄"),
        "With true colour Gemini CLI draws the input box and past prompts between half-block rules (▄▄▄ / ▀▀▀).",
    );
    note(
        cli == Cli::Aider && s.has("Tokens:"),
        "Aider prints a 'Tokens: … Cost: …' line after each answer.",
    );
    note(
        cli == Cli::Gemini
            && s.title.contains("Ready")
            && s.has_any(&["Do you trust this folder?", "Allow execution of"]),
        "The pane title says 'Ready' although a dialog waits for an answer: Gemini CLI's title is not reliable here.",
    );
    notes
}

/// What the `--extra` scenarios need to know of each CLI.
impl Cli {
    /// A choice, a question or a permission dialog is shown (besides `dialog`, the shell one).
    pub(crate) fn pending(self, s: &Screen) -> bool {
        self.dialog(s)
            || match self {
                Cli::Claude => s.has_any(&["Esc to cancel", "Enter to select", "Do you want"]),
                Cli::Codex => s.has_any(&[
                    "Press enter to confirm",
                    "Would you like",
                    "enter to submit",
                    "esc to dismiss",
                    "Enter to submit",
                ]),
                Cli::Gemini | Cli::Qwen => s.has_any(&[
                    "Allow execution",
                    "Apply this change",
                    "Answer Questions",
                    "Do you want to proceed",
                    "Allow once",
                ]),
                Cli::OpenCode | Cli::Kilo => {
                    s.has_any(&["Permission required", "enter confirm", "enter submit"])
                }
                Cli::Aider => s.last_line().contains("(Y)es/(N)o"),
                Cli::Pi => false,
                Cli::Grok => s.has("Do you want to proceed"),
            }
    }

    /// Ready for input with nothing pending.
    pub(crate) fn idle_ready(self, s: &Screen) -> bool {
        self.ready(s) && !self.pending(s)
    }

    /// Keys that refuse a permission dialog.
    pub(crate) fn reject(self) -> &'static [&'static str] {
        match self {
            Cli::Aider => &["n", "Enter"],
            Cli::OpenCode | Cli::Kilo => &["Right", "Right", "Enter"],
            _ => &["Escape"],
        }
    }

    /// Keys that interrupt a running turn.
    pub(crate) fn interrupt(self) -> &'static [&'static str] {
        match self {
            Cli::Aider => &["C-c"],
            Cli::OpenCode | Cli::Kilo => &["Escape", "Escape"],
            _ => &["Escape"],
        }
    }

    /// A shell command that waits `seconds`, then makes `file`. Qwen Code refuses a `sleep`
    /// followed by other commands (it asks for a background job instead).
    pub(crate) fn sleep_then(self, seconds: u32, file: &str) -> String {
        match self {
            Cli::Qwen => {
                format!("python3 -c 'import time; time.sleep({seconds})' && touch {file}")
            }
            _ => format!("sleep {seconds} && touch {file}"),
        }
    }

    /// The command that compacts the conversation, if the CLI has one.
    pub(crate) fn compact_command(self) -> Option<&'static str> {
        match self {
            Cli::Claude | Cli::Codex | Cli::OpenCode | Cli::Kilo | Cli::Pi => Some("/compact"),
            Cli::Gemini | Cli::Qwen => Some("/compress"),
            Cli::Aider | Cli::Grok => None,
        }
    }
}
