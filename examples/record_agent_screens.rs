//! Records screen fixtures of real agent CLIs driven through their states by the tests' fake
//! model server (`tests/integration/fake_model.rs`).
//!
//! ```text
//! cargo run --example record_agent_screens -- [OUTPUT_DIR] [claude|codex|gemini|aider|opencode ...]
//! ```
//!
//! The CLIs come from `scripts/install-agent-clis.sh` (in `$PANECTL_AGENT_CACHE`, by default
//! `~/.cache/panectl/agents`). Without names, every installed CLI is recorded; the output
//! defaults to `fixtures/screens` of this crate. Each CLI runs in a private tmux server
//! (`tmux -L <unique> -f /dev/null`, `TMUX` unset, `TMUX_TMPDIR` in a temporary directory) with
//! its own temporary HOME and work directory; every screen is taken when a condition on the
//! pane holds (polled every 50 ms, with a time limit), and a state that does not show up stops
//! the recording with the screen it had. For each screen it writes, under
//! `OUTPUT_DIR/<provider>/<cli version>/`:
//! `<status>--<scenario>.txt` (`capture-pane -p`), `.ansi` (`capture-pane -p -e`) and `.json`
//! (title, size, alternate screen, cursor, description). See `fixtures/screens/README.md`.

#[path = "../tests/integration/fake_model.rs"]
mod fake_model;
#[path = "record_agent_screens/turns.rs"]
mod turns;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use fake_model::FakeModel;
use serde::Serialize;

/// How often a pane is looked at while waiting for a state.
const POLL: Duration = Duration::from_millis(50);
/// The fake API key every CLI is given.
const API_KEY: &str = "sk-ant-fake-recorder-key-0123456789abcdef";
/// How long the slow answer is held back: long enough for three working frames.
const SLOW_MS: u64 = 8000;
const SLOW_ANSWER: &str = "The slow answer is ready.";
const SECOND_ANSWER: &str = "Second answer is here.";
/// The command the model asks to run; the sleep leaves time to see the tool running.
const TOOL_FILE: &str = "tool-output.txt";
const TOOL_COMMAND: &str = "sleep 3 && touch tool-output.txt";
const TOOL_ANSWER: &str = "tool finished";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cli {
    Claude,
    Codex,
    Gemini,
    Aider,
    OpenCode,
}

impl Cli {
    const ALL: [Cli; 5] = [
        Cli::Claude,
        Cli::Codex,
        Cli::Gemini,
        Cli::Aider,
        Cli::OpenCode,
    ];

    /// The name on the command line and of its directory in the agent cache.
    fn name(self) -> &'static str {
        match self {
            Cli::Claude => "claude",
            Cli::Codex => "codex",
            Cli::Gemini => "gemini",
            Cli::Aider => "aider",
            Cli::OpenCode => "opencode",
        }
    }

    /// The provider id of the fixtures' directory.
    fn provider(self) -> &'static str {
        match self {
            Cli::Claude => "claude_code",
            Cli::Codex => "codex",
            Cli::Gemini => "gemini_cli",
            Cli::Aider => "aider",
            Cli::OpenCode => "opencode",
        }
    }

    fn parse(text: &str) -> Option<Cli> {
        Cli::ALL
            .into_iter()
            .find(|cli| cli.name() == text || cli.provider() == text)
    }

    fn binary(self, cache: &Path) -> PathBuf {
        let dir = cache.join(self.name());
        match self {
            Cli::Aider => dir.join("venv/bin/aider"),
            _ => dir.join("node_modules/.bin").join(self.name()),
        }
    }

    /// Pane sizes to record; layouts change with the width.
    fn sizes(self) -> &'static [(u16, u16)] {
        match self {
            Cli::Claude | Cli::Codex | Cli::Gemini => &[(120, 40), (80, 24)],
            Cli::Aider | Cli::OpenCode => &[(120, 40)],
        }
    }

    /// Key names that accept the highlighted (first) answer of a permission dialog.
    fn approve(self) -> &'static [&'static str] {
        match self {
            Cli::Aider => &["y", "Enter"],
            _ => &["Enter"],
        }
    }

    /// How long to wait for the CLI to give up retrying a failing request, where it does so
    /// in reasonable time.
    fn gives_up_after(self) -> Option<Duration> {
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
            Cli::OpenCode => Some(Duration::from_secs(150)),
            // Gemini CLI retries for many minutes.
            Cli::Gemini => None,
        }
    }

    /// Start-up dialogs that a changed set-up brings up, with a text that shows each.
    fn startup_dialogs(self) -> &'static [(Start, &'static str, &'static str)] {
        match self {
            Cli::Claude => &[
                (Start::Untrusted, "startup-folder-trust", "trust"),
                (Start::UnapprovedKey, "startup-api-key", "API key"),
            ],
            Cli::Codex => &[(Start::Untrusted, "startup-folder-trust", "trust")],
            Cli::Gemini => &[(Start::Untrusted, "startup-folder-trust", "Do you trust")],
            Cli::Aider => &[(Start::NoGit, "startup-create-git-repo", "No git repo found")],
            Cli::OpenCode => &[],
        }
    }
}

/// What a launch leaves out of the ready-to-work set-up, to bring up a start-up dialog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Start {
    Ready,
    /// Nothing pre-configured beyond what keeps it offline: first-run onboarding and sign-in.
    Fresh,
    Untrusted,
    UnapprovedKey,
    NoGit,
}

/// Variables given to a pane's program.
type Environment = Vec<(String, String)>;

/// One look at a pane.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Screen {
    text: String,
    title: String,
    width: u16,
    height: u16,
    alternate: bool,
    cursor: (u16, u16),
}

impl Screen {
    fn has(&self, needle: &str) -> bool {
        self.text.contains(needle)
    }

    fn has_any(&self, needles: &[&str]) -> bool {
        needles.iter().any(|n| self.text.contains(n))
    }

    fn lines(&self) -> std::str::Lines<'_> {
        self.text.lines()
    }

    fn last_line(&self) -> &str {
        self.lines()
            .rfind(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
    }

    /// Whether `text` shows on a line other than the one echoing the prompt (which holds the
    /// `reply:` directive), that is, as the answer.
    fn has_answer(&self, text: &str) -> bool {
        self.lines()
            .any(|l| l.contains(text) && !l.contains("reply:") && !l.contains("tool:"))
    }

    fn dump(&self) -> String {
        format!(
            "----- screen ({}x{}, alternate {}, cursor {:?}, title {:?}) -----\n{}\n-----",
            self.width, self.height, self.alternate, self.cursor, self.title, self.text
        )
    }
}

/// What each CLI shows in each state.
impl Cli {
    fn working(self, s: &Screen) -> bool {
        match self {
            Cli::Claude | Cli::Codex => s.has("esc to interrupt"),
            Cli::Gemini => s.has("esc to cancel"),
            // After Ctrl-C the spinner's last frame stays above the `>` prompt.
            Cli::Aider => {
                (s.has("Waiting for ") && s.last_line() != ">")
                    || s.last_line().starts_with("Running ")
            }
            Cli::OpenCode => s.has("esc interrupt"),
        }
    }

    fn dialog(self, s: &Screen) -> bool {
        match self {
            Cli::Claude => s.has("Do you want to proceed?"),
            Cli::Codex => s.has("Would you like to run the following command?"),
            Cli::Gemini => s.has("Allow execution of"),
            Cli::Aider => s.last_line().contains("Run shell command?"),
            Cli::OpenCode => s.has("Permission required"),
        }
    }

    /// Ready for input: the prompt is there and nothing runs or asks.
    fn ready(self, s: &Screen) -> bool {
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
            Cli::Aider => s.last_line() == ">",
            Cli::OpenCode => s.has("ctrl+p commands"),
        }
    }

    /// The path of the requests that carry the conversation.
    fn conversation_path(self) -> &'static str {
        match self {
            Cli::Claude => "/v1/messages",
            Cli::Codex => "/v1/responses",
            Cli::Gemini => ":streamGenerateContent",
            Cli::Aider | Cli::OpenCode => "/chat/completions",
        }
    }

    /// Shows that it retries a failed request (Gemini CLI shows only its spinner).
    fn retry_shown(self, s: &Screen) -> bool {
        match self {
            Cli::Claude | Cli::OpenCode => s.has_any(&["retrying in", "Retrying in"]),
            Cli::Codex => s.has("Reconnecting"),
            Cli::Aider => s.has("Retrying in"),
            Cli::Gemini => true,
        }
    }

    /// Shows an API error (checked together with `ready`).
    fn errored(self, s: &Screen) -> bool {
        match self {
            Cli::Claude => s.has_any(&["API Error", "Invalid API key", "/login"]),
            Cli::Codex => s.lines().any(|l| l.starts_with('■')),
            Cli::Gemini => s.has("API Error"),
            Cli::Aider => s.has_any(&["litellm.", "Error:"]),
            Cli::OpenCode => s.has("fake failure"),
        }
    }
}

/// Remarks on things a detector must not be fooled by, found on a screen.
fn notes(cli: Cli, s: &Screen) -> Vec<String> {
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
        cli == Cli::OpenCode && s.lines().any(|l| l.contains("┃  fake failure  ┃")),
        "The box at the top right ('fake failure') is OpenCode's error toast; it goes away after a few seconds.",
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

/// A private tmux server, killed on drop together with every process its panes started.
struct Tmux {
    socket: String,
    dir: tempfile::TempDir,
    pane_pids: Vec<i32>,
}

impl Tmux {
    fn start() -> Result<Tmux> {
        let dir = tempfile::Builder::new()
            .prefix("panectl-rec-tmux-")
            .tempdir()
            .context("temporary directory for tmux")?;
        let socket = format!("panectl-rec-{}", std::process::id());
        let tmux = Tmux {
            socket,
            dir,
            pane_pids: Vec::new(),
        };
        // The server stays up without sessions; panes get a common terminal type, and a pane
        // whose program exits keeps its last screen for the error report.
        tmux.run(&[
            "start-server",
            ";",
            "set",
            "-s",
            "exit-empty",
            "off",
            ";",
            "set",
            "-g",
            "default-terminal",
            "tmux-256color",
            ";",
            "set",
            "-g",
            "remain-on-exit",
            "on",
            ";",
            "set",
            "-g",
            "history-limit",
            "10000",
        ])?;
        Ok(tmux)
    }

    /// A `tmux` command for this server. Its environment is cleared, so the panes start from
    /// a known environment (the server's global one) and never see the caller's API keys.
    fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TMUX_TMPDIR", self.dir.path())
            .env("LANG", "C.UTF-8")
            .env("LC_ALL", "C.UTF-8")
            .env("COLORTERM", "truecolor")
            .env("TERM", "xterm-256color")
            .stdin(Stdio::null());
        command
    }

    fn run(&self, args: &[&str]) -> Result<String> {
        let output = self.command().args(args).output().context("run tmux")?;
        if !output.status.success() {
            bail!(
                "tmux {args:?} failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Starts `argv` in a new session of the given size; returns its pane id.
    fn launch(
        &mut self,
        name: &str,
        size: (u16, u16),
        cwd: &Path,
        env: &[(String, String)],
        argv: &[String],
    ) -> Result<String> {
        let (width, height) = (size.0.to_string(), size.1.to_string());
        let cwd = cwd.to_string_lossy();
        let mut args: Vec<&str> = vec![
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_id} #{pane_pid}",
            "-s",
            name,
            "-x",
            &width,
            "-y",
            &height,
            "-c",
            &cwd,
        ];
        let assignments: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for assignment in &assignments {
            args.push("-e");
            args.push(assignment);
        }
        args.extend(argv.iter().map(String::as_str));
        let output = self.run(&args)?;
        let mut fields = output.split_whitespace();
        let pane = fields
            .next()
            .context("new-session printed no pane")?
            .to_string();
        if let Some(pid) = fields.next().and_then(|p| p.parse().ok()) {
            self.pane_pids.push(pid);
        }
        Ok(pane)
    }

    /// Kills a session and every process its pane started.
    fn kill_session(&self, name: &str) {
        let pids: Vec<i32> = self
            .run(&["list-panes", "-s", "-t", name, "-F", "#{pane_pid}"])
            .map(|out| out.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default();
        let _ = self.run(&["kill-session", "-t", name]);
        for pid in pids {
            kill_processes(pid);
        }
    }

    fn look(&self, pane: &str) -> Result<Screen> {
        let info = self.run(&[
            "display-message",
            "-p",
            "-t",
            pane,
            "#{pane_width} #{pane_height} #{alternate_on} #{cursor_x} #{cursor_y} #{pane_title}",
        ])?;
        let info = info.strip_suffix('\n').unwrap_or(&info);
        let mut fields = info.splitn(6, ' ');
        let mut number = || -> Result<u16> {
            fields
                .next()
                .and_then(|f| f.parse().ok())
                .ok_or_else(|| anyhow!("bad display-message output {info:?}"))
        };
        let (width, height, alternate, x, y) =
            (number()?, number()?, number()?, number()?, number()?);
        let title = fields.next().unwrap_or("").to_string();
        let text = self.run(&["capture-pane", "-p", "-t", pane])?;
        Ok(Screen {
            text,
            title,
            width,
            height,
            alternate: alternate == 1,
            cursor: (x, y),
        })
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let server_pid: Option<i32> = self
            .run(&["display-message", "-p", "#{pid}"])
            .ok()
            .and_then(|p| p.trim().parse().ok());
        let _ = self.run(&["kill-server"]);
        for &pid in &self.pane_pids {
            kill_processes(pid);
        }
        if let Some(pid) = server_pid {
            kill_processes(pid);
        }
    }
}

/// The session id and parent of every process, from /proc.
fn processes() -> Vec<(i32, i32, i32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let pid: i32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // "pid (comm) state ppid pgrp session ...": the command may hold spaces.
            let rest = &stat[stat.rfind(')')? + 2..];
            let fields: Vec<&str> = rest.split(' ').collect();
            Some((
                pid,
                fields.get(1)?.parse().ok()?,
                fields.get(3)?.parse().ok()?,
            ))
        })
        .collect()
}

/// Ends a process, its descendants and its session's members: SIGTERM, then SIGKILL.
fn kill_processes(root: i32) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let family = || -> Vec<i32> {
        let all = processes();
        let mut found: BTreeSet<i32> = BTreeSet::new();
        if all.iter().any(|&(pid, _, _)| pid == root) {
            found.insert(root);
        }
        found.extend(all.iter().filter(|p| p.2 == root).map(|p| p.0));
        loop {
            let more: Vec<i32> = all
                .iter()
                .filter(|p| found.contains(&p.1) && !found.contains(&p.0))
                .map(|p| p.0)
                .collect();
            if more.is_empty() {
                break;
            }
            found.extend(more);
        }
        found.into_iter().collect()
    };
    for pid in family() {
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if family().is_empty() {
            return;
        }
        std::thread::sleep(POLL);
    }
    for pid in family() {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

/// Removes escape sequences, to compare a `-e` capture with the plain one.
fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('\x40'..='\x7e').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn same_lines(a: &str, b: &str) -> bool {
    let trimmed = |t: &str| -> Vec<String> {
        let mut lines: Vec<String> = t.lines().map(|l| l.trim_end().to_string()).collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        lines
    };
    trimmed(a) == trimmed(b)
}

#[derive(Serialize)]
struct Meta<'a> {
    provider: &'a str,
    cli_version: &'a str,
    status: &'a str,
    scenario: &'a str,
    title: &'a str,
    width: u16,
    height: u16,
    alternate_screen: bool,
    cursor: [u16; 2],
    description: String,
}

/// Records one CLI: every size, every scenario.
struct Recorder<'a> {
    cli: Cli,
    binary: PathBuf,
    version: String,
    out: PathBuf,
    fake: &'a FakeModel,
    tmux: Tmux,
    saved: Vec<String>,
    next_session: u32,
}

/// One launch of the CLI in a pane.
struct Run {
    session: String,
    pane: String,
    work: PathBuf,
    /// Appended to scenario names (the pane size when not the default one).
    suffix: String,
    _root: tempfile::TempDir,
}

impl<'a> Recorder<'a> {
    fn new(
        cli: Cli,
        binary: PathBuf,
        out_root: &Path,
        fake: &'a FakeModel,
        clear: bool,
    ) -> Result<Self> {
        let version = cli_version(&binary)?;
        let out = out_root.join(cli.provider()).join(&version);
        if clear && out.exists() {
            std::fs::remove_dir_all(&out).with_context(|| format!("clear {}", out.display()))?;
        }
        std::fs::create_dir_all(&out).with_context(|| format!("create {}", out.display()))?;
        Ok(Recorder {
            cli,
            binary,
            version,
            out,
            fake,
            tmux: Tmux::start()?,
            saved: Vec::new(),
            next_session: 0,
        })
    }

    /// `--extra`: first-run onboarding, questions to the user, file-write and web-fetch
    /// permissions, interrupts, a rejected command, HTTP 429, a long tool run and `/compact`.
    /// A scenario that fails is reported and skipped; the others still run.
    fn record_extra(&mut self) -> Result<()> {
        let mut failed = Vec::new();
        let mut attempt = |name: &str, result: Result<()>| {
            if let Err(error) = result {
                println!("  !! {name} failed: {error:#}");
                failed.push(name.to_string());
            }
        };
        for &size in &[(120, 40), (80, 24)] {
            let suffix = if size == (120, 40) {
                String::new()
            } else {
                format!("-{}x{}", size.0, size.1)
            };
            let small = size != (120, 40);
            if small && matches!(self.cli, Cli::Aider | Cli::OpenCode) {
                continue;
            }
            let only = std::env::var("PANECTL_EXTRA_ONLY").unwrap_or_default();
            let wanted = |name: &str| only.is_empty() || only.split(',').any(|o| o == name);
            if wanted("onboarding") {
                let result = self.onboarding(size, &suffix);
                attempt("onboarding", result);
            }
            if wanted("ask") {
                let result = self.ask_user(size, &suffix);
                attempt("ask", result);
            }
            if wanted("write") {
                let result = self.write_and_fetch(size, &suffix);
                attempt("write", result);
            }
            if small {
                continue;
            }
            if wanted("interrupt") {
                let result = self.interrupts(size, &suffix);
                attempt("interrupt", result);
            }
            if wanted("429") {
                let result = self.http_429(size, &suffix);
                attempt("429", result);
            }
            // Only when picked by name: HTTP 529 (Anthropic's "overloaded") to every try.
            if only.split(',').any(|o| o == "529") {
                let result = self.http_529(size, &suffix);
                attempt("529", result);
            }
            if wanted("long") {
                let result = self.long_tool_and_compact(size, &suffix);
                attempt("long", result);
            }
            if wanted("turns") {
                let result = self.turns(size, &suffix);
                attempt("turns", result);
            }
            // Only when picked by name: Esc (Ctrl-C for Aider) while an approved command runs.
            if only.split(',').any(|o| o == "interrupttool") {
                let result = self.interrupt_tool(size, &suffix);
                attempt("interrupttool", result);
            }
        }
        if !failed.is_empty() {
            println!(
                "  {} {}: failed scenarios: {failed:?}",
                self.cli.name(),
                self.version
            );
        }
        Ok(())
    }

    fn record(&mut self) -> Result<()> {
        for &size in self.cli.sizes() {
            let suffix = if size == (120, 40) {
                String::new()
            } else {
                format!("-{}x{}", size.0, size.1)
            };
            self.main_sequence(size, &suffix)?;
            self.error_401(size, &suffix)?;
            self.http_500(size, &suffix)?;
            for &(start, scenario, marker) in self.cli.startup_dialogs() {
                self.startup_dialog(size, &suffix, start, scenario, marker)?;
            }
        }
        Ok(())
    }

    /// Fresh start, a slow answer, a tool that needs permission, a second prompt, HTTP 400.
    fn main_sequence(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let cli = self.cli;
        let run = self.launch_ready(size, suffix)?;
        self.save(
            &run,
            "idle",
            "fresh-start",
            "Just launched, ready for input; nothing asked yet.",
            |s| cli.ready(s),
        )?;

        let prompt = format!("slow:{SLOW_MS} reply:{SLOW_ANSWER}");
        self.submit(&run, &prompt)?;
        let submitted = Instant::now();
        let mut previous: Option<Screen> = None;
        for frame in 1..=3 {
            let since = Instant::now();
            let first = frame == 1;
            let before = previous.clone();
            let screen =
                self.wait_for(&run, "the working state", Duration::from_secs(20), |s| {
                    cli.working(s)
                        && (first
                            || (since.elapsed() >= Duration::from_millis(1200)
                                && before.as_ref().is_none_or(|b| b.text != s.text)))
                })?;
            previous = Some(screen);
            self.save(
                &run,
                "processing",
                &format!("slow-reply-{frame}"),
                &format!(
                    "Working on a prompt whose answer the fake model holds back for {} s (frame {frame} of 3, {:.1} s after Enter).",
                    SLOW_MS / 1000,
                    submitted.elapsed().as_secs_f64()
                ),
                |s| cli.working(s),
            )?;
        }
        self.wait_stable(&run, "the slow answer", Duration::from_secs(30), |s| {
            cli.ready(s) && s.has_answer(SLOW_ANSWER)
        })?;
        self.save(
            &run,
            "completed",
            "slow-reply",
            "The held-back answer arrived; ready for the next prompt.",
            |s| cli.ready(s),
        )?;

        self.submit(&run, &format!("tool:{TOOL_COMMAND}"))?;
        self.wait_stable(
            &run,
            "the tool permission dialog",
            Duration::from_secs(30),
            |s| cli.dialog(s),
        )?;
        self.save(
            &run,
            "waiting_user_answer",
            "tool-permission",
            &format!("The model asked to run `{TOOL_COMMAND}`; the CLI asks for permission."),
            |s| cli.dialog(s),
        )?;
        for key in cli.approve() {
            self.tmux.run(&["send-keys", "-t", &run.pane, key])?;
        }
        let file = run.work.join(TOOL_FILE);
        self.wait_for(
            &run,
            "the approved command running",
            Duration::from_secs(10),
            |s| !cli.dialog(s) && cli.working(s) && !file.exists(),
        )?;
        self.save(
            &run,
            "processing",
            "tool-running",
            "Permission given (first answer); the approved command is running (it sleeps 3 s).",
            |s| !cli.dialog(s) && cli.working(s) && !file.exists(),
        )?;
        // Aider does not send a silent command's result back to the model, so no answer follows.
        let answer = (cli != Cli::Aider).then_some(TOOL_ANSWER);
        self.wait_stable(
            &run,
            "the end of the tool's turn",
            Duration::from_secs(30),
            |s| file.exists() && cli.ready(s) && answer.is_none_or(|a| s.has_answer(a)),
        )?;
        self.save(
            &run,
            "completed",
            "tool-approved",
            "The approved command ran and the turn ended; ready for the next prompt.",
            |s| cli.ready(s),
        )?;

        self.submit(&run, &format!("reply:{SECOND_ANSWER}"))?;
        self.wait_stable(&run, "the second answer", Duration::from_secs(30), |s| {
            cli.ready(s) && s.has_answer(SECOND_ANSWER)
        })?;
        self.save(
            &run,
            "completed",
            "second-prompt",
            "A second prompt was answered; ready for the next prompt.",
            |s| cli.ready(s),
        )?;

        // Last in this session: Claude Code keeps a failed prompt in the conversation and sends
        // it again with the next one.
        self.submit(&run, "fail:400")?;
        self.wait_stable(&run, "the HTTP 400 error", Duration::from_secs(60), |s| {
            cli.ready(s) && cli.errored(s)
        })?;
        self.save(
            &run,
            "error",
            "http-400",
            "The fake model answered HTTP 400 to the prompt; the CLI shows the error and is ready for input again.",
            |s| cli.ready(s) && cli.errored(s),
        )?;
        self.end(run);
        Ok(())
    }

    /// A typed prompt not yet sent, then HTTP 401, in a fresh session.
    fn error_401(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let run = self.launch_ready(size, suffix)?;
        self.type_text(&run, "fail:401")?;
        self.wait_stable(&run, "the typed prompt", Duration::from_secs(10), |s| {
            s.has("fail:401")
        })?;
        self.save(
            &run,
            "idle",
            "prompt-typed",
            "Just launched; a prompt is typed into the input but Enter was not pressed.",
            |s| s.has("fail:401"),
        )?;
        self.failure(&run, 401, false)?;
        self.end(run);
        Ok(())
    }

    /// HTTP 500 to every try, in a fresh session.
    fn http_500(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let run = self.launch_ready(size, suffix)?;
        self.submit(&run, "fail:500")?;
        self.failure(&run, 500, true)?;
        self.end(run);
        Ok(())
    }

    /// After `fail:CODE` was sent (`sent` false: only typed, Enter still to press): records
    /// the retries while the CLI retries, and the error it shows when it gives up (if it gives
    /// up within its time limit).
    fn failure(&mut self, run: &Run, code: u16, sent: bool) -> Result<()> {
        let cli = self.cli;
        let fake = self.fake;
        // Requests on the conversation's endpoint (Gemini CLI also asks a routing classifier).
        let path = cli.conversation_path();
        let sent_count = || fake.log().iter().filter(|l| l.path.contains(path)).count();
        let before = sent_count();
        if !sent {
            self.press_enter(run)?;
        }
        let tries = || sent_count() - before;
        let failed = |s: &Screen| cli.ready(s) && cli.errored(s);
        let retrying =
            |s: &Screen, wanted: usize| cli.working(s) && cli.retry_shown(s) && tries() >= wanted;
        let first = self.wait_for(
            run,
            &format!("the HTTP {code} error or a retry"),
            Duration::from_secs(60),
            |s| failed(s) || retrying(s, 2),
        )?;
        let mut scenario = format!("http-{code}");
        let retried = !failed(&first);
        if retried {
            let mut previous: Option<Screen> = None;
            for frame in 1..=2 {
                let since = Instant::now();
                let shown =
                    self.wait_for(run, "the CLI retrying", Duration::from_secs(90), |s| {
                        retrying(s, frame + 1)
                            && since.elapsed() >= Duration::from_millis(700)
                            && previous.as_ref().is_none_or(|p| p.text != s.text)
                    })?;
                previous = Some(shown);
                self.save(
                    run,
                    "processing",
                    &format!("http-{code}-retrying-{frame}"),
                    &format!(
                        "The fake model answers HTTP {code} to every try; the CLI is retrying (frame {frame} of 2)."
                    ),
                    |s| cli.working(s) && cli.retry_shown(s),
                )?;
            }
            let Some(limit) = cli.gives_up_after() else {
                println!(
                    "    ({} retries HTTP {code} too long to wait for the end)",
                    cli.name()
                );
                return Ok(());
            };
            self.wait_stable(
                run,
                &format!("the CLI giving up after HTTP {code}"),
                limit,
                failed,
            )?;
            scenario.push_str("-gave-up");
        }
        let description = if retried {
            format!(
                "The fake model answered HTTP {code} to every try; the CLI retried, gave up, shows the error and is ready for input again."
            )
        } else {
            format!(
                "The fake model answered HTTP {code}; the CLI shows the error and is ready for input again."
            )
        };
        self.save(run, "error", &scenario, &description, failed)
    }

    fn startup_dialog(
        &mut self,
        size: (u16, u16),
        suffix: &str,
        start: Start,
        scenario: &str,
        marker: &str,
    ) -> Result<()> {
        let run = self.launch(start, size, suffix)?;
        self.wait_stable(
            &run,
            &format!("the start-up dialog ({marker})"),
            Duration::from_secs(60),
            |s| s.has(marker),
        )?;
        let what = match start {
            Start::Untrusted => {
                "the work directory is not marked as trusted: the CLI asks whether to trust it"
            }
            Start::UnapprovedKey => {
                "the API key in the environment was not approved before: the CLI asks whether to use it"
            }
            Start::NoGit => "the work directory is no git repository: the CLI offers to create one",
            Start::Ready | Start::Fresh => "",
        };
        self.save(
            &run,
            "waiting_user_answer",
            scenario,
            &format!("Just launched; {what}."),
            |s| s.has(marker),
        )?;
        self.end(run);
        Ok(())
    }

    /// Starts the CLI in a fresh, ready set-up and waits for its prompt.
    fn launch_ready(&mut self, size: (u16, u16), suffix: &str) -> Result<Run> {
        let cli = self.cli;
        let run = self.launch(Start::Ready, size, suffix)?;
        let shown = self.wait_stable(
            &run,
            "the prompt after start-up",
            Duration::from_secs(60),
            |s| cli.ready(s) || turns::model_upgrade(cli, s),
        )?;
        if turns::model_upgrade(cli, &shown) {
            self.model_upgrade(&run)?;
        }
        Ok(run)
    }

    /// Prepares a temporary HOME and work directory and starts the CLI in a new session.
    fn launch(&mut self, start: Start, size: (u16, u16), suffix: &str) -> Result<Run> {
        let root = tempfile::Builder::new()
            .prefix(&format!("panectl-rec-{}-", self.cli.name()))
            .tempdir()
            .context("temporary directory")?;
        let home = root.path().join("home");
        let work = root.path().join("work");
        std::fs::create_dir_all(&home)?;
        std::fs::create_dir_all(&work)?;
        let (env, argv) = self.setup(start, &home, &work)?;
        let session = format!("{}-{}", self.cli.name(), self.next_session);
        self.next_session += 1;
        let pane = self.tmux.launch(&session, size, &work, &env, &argv)?;
        println!(
            "  {session}: {:?} {}x{} in pane {pane}",
            start, size.0, size.1
        );
        Ok(Run {
            session,
            pane,
            work,
            suffix: suffix.to_string(),
            _root: root,
        })
    }

    fn end(&self, run: Run) {
        self.tmux.kill_session(&run.session);
    }

    /// The files and environment that make the CLI start offline, against the fake model.
    fn setup(&self, start: Start, home: &Path, work: &Path) -> Result<(Environment, Vec<String>)> {
        let url = self.fake.url();
        let work_str = work.to_string_lossy().to_string();
        let write = |path: PathBuf, text: String| -> Result<()> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, text).with_context(|| format!("write {}", path.display()))
        };
        let binary = self.binary.to_string_lossy().to_string();
        let var = |k: &str, v: &str| (k.to_string(), v.to_string());
        let mut env = vec![var("HOME", &home.to_string_lossy())];
        let mut argv = vec![binary];
        match self.cli {
            Cli::Claude => {
                let approved = if start == Start::UnapprovedKey {
                    serde_json::json!([])
                } else {
                    serde_json::json!([API_KEY, &API_KEY[API_KEY.len() - 20..]])
                };
                let mut project = serde_json::json!({"allowedTools": []});
                if start != Start::Untrusted {
                    project["hasTrustDialogAccepted"] = true.into();
                }
                let nudged = start != Start::Fresh;
                let config = serde_json::json!({
                    "hasCompletedOnboarding": true, "theme": "dark", "hasSeenAutoDefaultNudge": nudged,
                    "hasResetAutoModeOptInForDefaultOffer": nudged,
                    "customApiKeyResponses": {"approved": approved, "rejected": []},
                    "projects": {work_str.clone(): project},
                });
                write(
                    home.join(".claude.json"),
                    serde_json::to_string_pretty(&config)?,
                )?;
                env.push(var("ANTHROPIC_API_KEY", API_KEY));
                write(
                    home.join(".claude/settings.json"),
                    r#"{"permissions":{"defaultMode":"default"}}"#.into(),
                )?;
                env.extend([
                    var("ANTHROPIC_BASE_URL", &url),
                    var("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                    var("DISABLE_AUTOUPDATER", "1"),
                ]);
            }
            Cli::Codex => {
                let mut config = format!(
                    "model = \"gpt-5\"\nmodel_provider = \"fake\"\napproval_policy = \"on-request\"\nsandbox_mode = \"read-only\"\ncheck_for_update_on_startup = false\n\n\
                     [model_providers.fake]\nname = \"fake\"\nbase_url = \"{url}/v1\"\nenv_key = \"FAKE_KEY\"\nwire_api = \"responses\"\n"
                );
                if start == Start::Untrusted {
                    // Codex asks about trust only in a version-controlled folder.
                    let status = Command::new("git")
                        .args(["init", "-q"])
                        .current_dir(work)
                        .status()
                        .context("run git init")?;
                    if !status.success() {
                        bail!("git init failed in {}", work.display());
                    }
                } else {
                    config.push_str(&format!(
                        "\n[projects.\"{work_str}\"]\ntrust_level = \"trusted\"\n"
                    ));
                }
                if start != Start::Fresh {
                    // Codex answers `request_user_input` with "request_user_input is unavailable
                    // in Default mode" unless this (under-development) feature is on.
                    config.insert_str(0, "suppress_unstable_features_warning = true\n");
                    config.push_str("\n[features]\ndefault_mode_request_user_input = true\n");
                }
                if start == Start::Fresh {
                    // Nothing but the update check off (an older version would offer to update).
                    config = "check_for_update_on_startup = false\n".into();
                }
                write(home.join(".codex/config.toml"), config)?;
                env.push(var("FAKE_KEY", API_KEY));
                // Older versions have no daemon and no such option.
                let help = Command::new(&self.binary)
                    .arg("--help")
                    .stdin(Stdio::null())
                    .output()
                    .context("run codex --help")?;
                if String::from_utf8_lossy(&help.stdout).contains("--no-daemon") {
                    argv.push("--no-daemon".into());
                }
            }
            Cli::Gemini => {
                // Without `enableAutoUpdate: false` an older version installs the newest one
                // globally with npm at start-up.
                let settings = if start == Start::Fresh {
                    r#"{"general": {"enableAutoUpdate": false}}"#
                } else {
                    r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"enableAutoUpdate": false}}"#
                };
                write(home.join(".gemini/settings.json"), settings.into())?;
                if start != Start::Untrusted {
                    write(
                        home.join(".gemini/trustedFolders.json"),
                        serde_json::json!({work_str.clone(): "TRUST_FOLDER"}).to_string(),
                    )?;
                }
                if start != Start::Fresh {
                    env.push(var("GEMINI_API_KEY", API_KEY));
                }
                env.push(var("GOOGLE_GEMINI_BASE_URL", &url));
            }
            Cli::Aider => {
                // Aider fetches LiteLLM's model table from the network unless its cache holds
                // a fresh copy; the one LiteLLM ships is as good offline.
                let table = litellm_model_table(&self.binary)?;
                std::fs::create_dir_all(home.join(".aider/caches"))?;
                std::fs::copy(
                    &table,
                    home.join(".aider/caches/model_prices_and_context_window.json"),
                )
                .context("copy LiteLLM's model table")?;
                if start != Start::Fresh {
                    write(
                    home.join(".aider/analytics.json"),
                    r#"{"uuid": "00000000-0000-4000-8000-000000000000", "permanently_disable": true, "asked_opt_in": true}"#
                        .into(),
                )?;
                }
                env.push(var("LITELLM_LOCAL_MODEL_COST_MAP", "True"));
                if start == Start::Fresh {
                    argv.extend(["--no-check-update", "--no-show-release-notes"].map(String::from));
                } else {
                    env.push(var("OPENAI_API_KEY", API_KEY));
                    argv.extend(
                        [
                            "--model",
                            "openai/gpt-4o",
                            "--openai-api-base",
                            &format!("{url}/v1"),
                            "--no-check-update",
                            "--no-show-release-notes",
                        ]
                        .map(String::from),
                    );
                }
                if start != Start::NoGit {
                    argv.push("--no-git".into());
                }
            }
            Cli::OpenCode => {
                let config = serde_json::json!({
                    "$schema": "https://opencode.ai/config.json",
                    "autoupdate": false,
                    "share": "disabled",
                    "model": "fake/gpt-fake",
                    "permission": {"bash": "ask", "edit": "ask", "webfetch": "ask"},
                    "provider": {"fake": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "Fake",
                        "options": {"baseURL": format!("{url}/v1"), "apiKey": API_KEY},
                        "models": {"gpt-fake": {"name": "GPT Fake"}},
                    }},
                });
                if start != Start::Fresh {
                    write(
                        home.join(".config/opencode/opencode.json"),
                        serde_json::to_string_pretty(&config)?,
                    )?;
                }
                env.extend([
                    var("OPENCODE_DISABLE_AUTOUPDATE", "1"),
                    var("OPENCODE_DISABLE_MODELS_FETCH", "1"),
                    var("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
                    // It installs its plugin package with npm at start-up; keep that offline.
                    var("npm_config_offline", "true"),
                ]);
            }
        }
        Ok((env, argv))
    }

    /// Types text into the pane and waits until it shows.
    fn type_text(&self, run: &Run, text: &str) -> Result<()> {
        self.tmux.run(&["send-keys", "-t", &run.pane, "-l", text])?;
        self.wait_for(
            run,
            &format!("the typed text {text:?}"),
            Duration::from_secs(10),
            // Also when the input wraps it over several lines (a long prompt at 80 columns).
            |s| s.has(text) || flat(&s.text).contains(&flat(text)),
        )?;
        Ok(())
    }

    /// Types a prompt and presses Enter in a separate write.
    fn submit(&self, run: &Run, text: &str) -> Result<()> {
        self.type_text(run, text)?;
        self.press_enter(run)
    }

    /// Presses Enter once the typed input has settled, and again if the screen does not react
    /// (Gemini CLI sometimes drops an Enter that follows typed text closely).
    fn press_enter(&self, run: &Run) -> Result<()> {
        let typed = self.wait_quiet(
            run,
            "the typed input to settle",
            Duration::from_secs(10),
            Duration::from_millis(300),
            |_| true,
        )?;
        for _ in 0..3 {
            self.tmux.run(&["send-keys", "-t", &run.pane, "Enter"])?;
            let reacted = self.wait_for(run, "a reaction to Enter", Duration::from_secs(3), |s| {
                s.text != typed.text
            });
            if reacted.is_ok() {
                return Ok(());
            }
            println!("    (the screen did not react to Enter; pressing it again)");
        }
        bail!(
            "{} ({}): Enter had no effect\n{}",
            self.cli.name(),
            run.session,
            typed.dump()
        )
    }

    /// Polls the pane until `done` holds; fails with the screen after `limit`.
    fn wait_for(
        &self,
        run: &Run,
        what: &str,
        limit: Duration,
        mut done: impl FnMut(&Screen) -> bool,
    ) -> Result<Screen> {
        let deadline = Instant::now() + limit;
        loop {
            let screen = self.tmux.look(&run.pane)?;
            if done(&screen) {
                return Ok(screen);
            }
            if Instant::now() >= deadline {
                let log: Vec<String> = self
                    .fake
                    .log()
                    .iter()
                    .rev()
                    .take(8)
                    .map(|l| {
                        format!(
                            "  {} {:?}",
                            l.path,
                            l.prompt.chars().take(80).collect::<String>()
                        )
                    })
                    .collect();
                bail!(
                    "{} ({}): {what} did not show within {:?}\n{}\nlatest requests to the fake model (newest first):\n{}",
                    self.cli.name(),
                    run.session,
                    limit,
                    screen.dump(),
                    log.join("\n")
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Like `wait_for`, and then until the screen stays the same for 800 ms while `done` holds.
    fn wait_stable(
        &self,
        run: &Run,
        what: &str,
        limit: Duration,
        done: impl Fn(&Screen) -> bool,
    ) -> Result<Screen> {
        self.wait_quiet(run, what, limit, Duration::from_millis(800), done)
    }

    /// Like `wait_for`, and then until the screen stays the same for `quiet` while `done` holds
    /// (or `done` has held for four times that long on a screen that keeps changing).
    fn wait_quiet(
        &self,
        run: &Run,
        what: &str,
        limit: Duration,
        quiet: Duration,
        done: impl Fn(&Screen) -> bool,
    ) -> Result<Screen> {
        // A screen that keeps animating (a blinking marker, a clock) is taken once the state has
        // held for a while.
        let animated = quiet * 4;
        let mut held: Option<Instant> = None;
        let mut since: Option<(Screen, Instant)> = None;
        self.wait_for(run, what, limit, |s| {
            if !done(s) {
                held = None;
                since = None;
                return false;
            }
            let held_for = held.get_or_insert_with(Instant::now).elapsed();
            match &since {
                Some((last, at)) if last == s => at.elapsed() >= quiet || held_for >= animated,
                _ => {
                    since = Some((s.clone(), Instant::now()));
                    held_for >= animated
                }
            }
        })
    }

    /// Saves the pane as `<status>--<scenario><suffix>`: a plain and an escaped capture that
    /// agree with each other, taken while `holds` is true, and the metadata.
    fn save(
        &mut self,
        run: &Run,
        status: &str,
        scenario: &str,
        description: &str,
        holds: impl Fn(&Screen) -> bool,
    ) -> Result<()> {
        let scenario = format!("{scenario}{}", run.suffix);
        let deadline = Instant::now() + Duration::from_secs(5);
        let (screen, ansi) = loop {
            let screen = self.tmux.look(&run.pane)?;
            let ansi = self
                .tmux
                .run(&["capture-pane", "-p", "-e", "-t", &run.pane])?;
            let again = self.tmux.look(&run.pane)?;
            let agree = screen == again && same_lines(&strip_escapes(&ansi), &screen.text);
            if agree && holds(&screen) {
                break (screen, ansi);
            }
            if Instant::now() >= deadline {
                bail!(
                    "{} ({}): could not take a steady {status}--{scenario} screen (state held: {}, captures agreed: {agree})\n{}",
                    self.cli.name(),
                    run.session,
                    holds(&screen),
                    screen.dump()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut description = description.to_string();
        for note in notes(self.cli, &screen) {
            description.push(' ');
            description.push_str(&note);
        }
        let meta = Meta {
            provider: self.cli.provider(),
            cli_version: &self.version,
            status,
            scenario: &scenario,
            title: &screen.title,
            width: screen.width,
            height: screen.height,
            alternate_screen: screen.alternate,
            cursor: [screen.cursor.0, screen.cursor.1],
            description,
        };
        let base = self.out.join(format!("{status}--{scenario}"));
        let with = |ext: &str| base.with_extension(ext);
        std::fs::write(with("txt"), &screen.text)?;
        std::fs::write(with("ansi"), &ansi)?;
        std::fs::write(with("json"), serde_json::to_string_pretty(&meta)? + "\n")?;
        println!("    saved {status}--{scenario}");
        self.saved.push(format!("{status}--{scenario}"));
        Ok(())
    }
}

/// The text without any whitespace, line breaks included.
fn flat(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The version a CLI reports, such as `2.1.332` from `2.1.332 (Claude Code)`.
fn cli_version(binary: &Path) -> Result<String> {
    let output = Command::new(binary)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("run {} --version", binary.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace()
        .map(|word| word.trim_start_matches('v'))
        .find(|word| {
            let parts: Vec<&str> = word.split('.').collect();
            parts.len() >= 2
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        })
        .map(str::to_string)
        .ok_or_else(|| {
            anyhow!(
                "no version in the output of {} --version: {text:?}",
                binary.display()
            )
        })
}

/// LiteLLM's bundled model table in Aider's virtual environment.
fn litellm_model_table(aider: &Path) -> Result<PathBuf> {
    let lib = aider
        .parent()
        .and_then(Path::parent)
        .map(|venv| venv.join("lib"))
        .context("aider's virtual environment")?;
    for entry in std::fs::read_dir(&lib).with_context(|| format!("read {}", lib.display()))? {
        let table = entry?
            .path()
            .join("site-packages/litellm/model_prices_and_context_window_backup.json");
        if table.exists() {
            return Ok(table);
        }
    }
    bail!("LiteLLM's model table is not under {}", lib.display())
}

fn main() -> Result<()> {
    let mut out = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/screens"));
    let mut chosen = Vec::new();
    let mut extra = false;
    let mut explore = false;
    for (index, arg) in std::env::args().skip(1).enumerate() {
        if arg == "--extra" {
            extra = true;
            continue;
        }
        if arg == "--explore" {
            explore = true;
            continue;
        }
        match Cli::parse(&arg) {
            Some(cli) => chosen.push(cli),
            None if index == 0 && !arg.starts_with('-') => out = PathBuf::from(arg),
            None => bail!(
                "usage: record_agent_screens [OUTPUT_DIR] [claude|codex|gemini|aider|opencode ...] (unknown: {arg})"
            ),
        }
    }
    let cache = std::env::var_os("PANECTL_AGENT_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/panectl/agents"))
        })
        .context("neither PANECTL_AGENT_CACHE nor HOME is set")?;
    let explicit = !chosen.is_empty();
    if !explicit {
        chosen = Cli::ALL.to_vec();
    }
    let fake = FakeModel::start();
    println!("fake model server at {}", fake.url());
    let mut recorded = Vec::new();
    for cli in chosen {
        let binary = cli.binary(&cache);
        if !binary.exists() {
            if explicit {
                bail!(
                    "{} is not installed at {} (run scripts/install-agent-clis.sh)",
                    cli.name(),
                    binary.display()
                );
            }
            println!(
                "skipping {}: not installed at {}",
                cli.name(),
                binary.display()
            );
            continue;
        }
        if explore {
            return explore_cli(cli, binary, &fake);
        }
        let mut recorder = Recorder::new(cli, binary, &out, &fake, !extra)?;
        println!(
            "recording {} {} into {}",
            cli.name(),
            recorder.version,
            recorder.out.display()
        );
        if extra {
            recorder.record_extra()?;
        } else {
            recorder.record()?;
        }
        recorded.push(format!(
            "{} {}: {} screens",
            cli.provider(),
            recorder.version,
            recorder.saved.len()
        ));
    }
    if recorded.is_empty() {
        bail!(
            "no agent CLI is installed under {} (run scripts/install-agent-clis.sh)",
            cache.display()
        );
    }
    for line in recorded {
        println!("{line}");
    }
    Ok(())
}

/// `--explore CLI`: starts the CLI in a set-up given by `PANECTL_EXPLORE_START` (`ready`, the
/// default, `fresh`, `untrusted`) in a private tmux server, prints how to reach its pane and keeps
/// it for `PANECTL_EXPLORE_SECONDS` (default 600) seconds, to find out what a CLI shows.
fn explore_cli(cli: Cli, binary: PathBuf, fake: &FakeModel) -> Result<()> {
    let start = match std::env::var("PANECTL_EXPLORE_START").as_deref() {
        Ok("fresh") => Start::Fresh,
        Ok("untrusted") => Start::Untrusted,
        Ok("nogit") => Start::NoGit,
        _ => Start::Ready,
    };
    let seconds: u64 = std::env::var("PANECTL_EXPLORE_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let scratch = tempfile::tempdir()?;
    let mut recorder = Recorder::new(cli, binary, scratch.path(), fake, true)?;
    let run = recorder.launch(start, (120, 40), "")?;
    println!(
        "explore: TMUX_TMPDIR={} tmux -L {} -f /dev/null capture-pane -p -t {}",
        recorder.tmux.dir.path().display(),
        recorder.tmux.socket,
        run.pane
    );
    std::thread::sleep(Duration::from_secs(seconds));
    recorder.end(run);
    Ok(())
}

/// What the `--extra` scenarios need to know of each CLI.
impl Cli {
    /// A choice, a question or a permission dialog is shown (besides `dialog`, the shell one).
    fn pending(self, s: &Screen) -> bool {
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
                Cli::Gemini => s.has_any(&[
                    "Allow execution",
                    "Apply this change",
                    "Answer Questions",
                    "Do you want to proceed",
                    "Allow once",
                ]),
                Cli::OpenCode => {
                    s.has_any(&["Permission required", "enter confirm", "enter submit"])
                }
                Cli::Aider => s.last_line().contains("(Y)es/(N)o"),
            }
    }

    /// Ready for input with nothing pending.
    fn idle_ready(self, s: &Screen) -> bool {
        self.ready(s) && !self.pending(s)
    }

    /// Keys that refuse a permission dialog.
    fn reject(self) -> &'static [&'static str] {
        match self {
            Cli::Aider => &["n", "Enter"],
            Cli::OpenCode => &["Right", "Right", "Enter"],
            _ => &["Escape"],
        }
    }

    /// Keys that interrupt a running turn.
    fn interrupt(self) -> &'static [&'static str] {
        match self {
            Cli::Aider => &["C-c"],
            Cli::OpenCode => &["Escape", "Escape"],
            _ => &["Escape"],
        }
    }

    /// The command that compacts the conversation, if the CLI has one.
    fn compact_command(self) -> Option<&'static str> {
        match self {
            Cli::Claude | Cli::Codex | Cli::OpenCode => Some("/compact"),
            Cli::Gemini => Some("/compress"),
            Cli::Aider => None,
        }
    }
}

const WARM_UP: &str = "reply:Warm-up answer.";
/// No `?`: typed into an empty input it opens the shortcuts help of Codex and Gemini CLI.
const ASK_QUESTION: &str = "Which colour should the banner use";

impl Recorder<'_> {
    fn keys(&self, run: &Run, keys: &[&str]) -> Result<()> {
        for key in keys {
            self.tmux.run(&["send-keys", "-t", &run.pane, key])?;
            std::thread::sleep(Duration::from_millis(150));
        }
        Ok(())
    }

    /// A prompt answered first, so that what follows happens in a session that has answered.
    fn warm_up(&self, run: &Run, prompt: &str) -> Result<()> {
        let cli = self.cli;
        self.submit(run, prompt)?;
        self.wait_stable(run, "the warm-up answer", Duration::from_secs(40), |s| {
            cli.idle_ready(s) && s.has_answer("answer.")
        })?;
        Ok(())
    }

    /// Waits for a steady screen that `holds` and saves it.
    fn snap(
        &mut self,
        run: &Run,
        status: &str,
        scenario: &str,
        description: &str,
        limit: Duration,
        holds: impl Fn(&Screen) -> bool,
    ) -> Result<()> {
        self.wait_quiet(run, scenario, limit, Duration::from_millis(1200), &holds)?;
        self.save(run, status, scenario, description, &holds)
    }

    /// The first run with nothing configured: each step's screen, then the keys to go on.
    fn onboarding(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let cli = self.cli;
        let steps = onboarding_steps(cli, &self.version);
        if steps.is_empty() {
            return Ok(());
        }
        let run = self.launch(Start::Fresh, size, suffix)?;
        for step in steps {
            let markers = step.markers;
            let unless = step.unless;
            let holds = move |s: &Screen| {
                markers.iter().all(|m| s.has(m)) && !unless.iter().any(|m| s.has(m))
            };
            let limit = Duration::from_secs(if step.optional { 15 } else { 45 });
            let shown = self.snap(
                &run,
                step.status,
                step.scenario,
                step.description,
                limit,
                holds,
            );
            match shown {
                Err(_) if step.optional => {
                    println!("    ({} did not show; optional)", step.scenario);
                    continue;
                }
                other => other?,
            }
            for key in step.keys {
                if let Some(text) = key.strip_prefix("text:") {
                    self.tmux.run(&["send-keys", "-t", &run.pane, "-l", text])?;
                } else {
                    self.tmux.run(&["send-keys", "-t", &run.pane, key])?;
                }
                std::thread::sleep(Duration::from_millis(400));
            }
        }
        self.end(run);
        Ok(())
    }

    /// The model asks the user a question with choices; then the first choice is taken.
    fn ask_user(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        if self.cli == Cli::Aider {
            return Ok(());
        }
        let cli = self.cli;
        let run = self.launch_ready(size, suffix)?;
        let question = ASK_QUESTION;
        self.submit(&run, &format!("ask:{question}|Crimson|Teal"))?;
        // Codex 0.145.0 lists `esc to interrupt` among the question's keys.
        let asking = |s: &Screen| {
            (!cli.working(s) || s.has("enter to submit answer"))
                && !s.has("no tool for")
                // Not the prompt itself, even where a status line shows it wrapped.
                && s.lines().any(|l| l.contains("Teal") && !l.contains("ask:") && !l.contains("|Teal"))
        };
        self.snap(
            &run,
            "waiting_user_answer",
            "ask-user-question",
            &format!(
                "The model called the CLI's ask-the-user tool with the question '{question}' and the choices Crimson and Teal; the CLI shows the question and waits for a choice."
            ),
            Duration::from_secs(40),
            asking,
        )?;
        self.keys(&run, &["Enter"])?;
        // Some CLIs show a review step (submit the answers) after the last question.
        let answered = |s: &Screen| cli.idle_ready(s) && s.has_answer(TOOL_ANSWER);
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let screen = self.tmux.look(&run.pane)?;
            if answered(&screen) {
                break;
            }
            if cli.pending(&screen) {
                std::thread::sleep(Duration::from_millis(1500));
                let again = self.tmux.look(&run.pane)?;
                if cli.pending(&again) && again.text == screen.text {
                    self.keys(&run, &["Enter"])?;
                }
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        self.snap(
            &run,
            "completed",
            "ask-user-answered",
            "The first choice (Crimson) was given to the model's question; the model answered and the CLI is ready for the next prompt.",
            Duration::from_secs(20),
            answered,
        )?;
        self.end(run);
        Ok(())
    }

    /// Writing a file and fetching a web page, each behind a permission dialog.
    fn write_and_fetch(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let cli = self.cli;
        // Codex offers no `apply_patch` for a model it has no metadata for (the fake `gpt-5`).
        if cli == Cli::Codex {
            return Ok(());
        }
        let run = self.launch_ready(size, suffix)?;
        let name = "notes.txt";
        let file = run.work.join(name);
        // Claude Code and Gemini CLI want a full path; the others take it relative.
        let path = if !matches!(cli, Cli::Claude | Cli::Gemini) {
            name.to_string()
        } else {
            file.to_string_lossy().into_owned()
        };
        self.submit(&run, &format!("write:{path}|hello from the recorder"))?;
        let file_check = file.clone();
        let asking = move |s: &Screen| {
            !cli.working(s) && !s.has("no tool for") && cli.pending(s) && !file_check.exists()
        };
        self.snap(
            &run,
            "waiting_user_answer",
            "write-permission",
            &format!(
                "The model asked to create the file {name} with the CLI's file-writing tool; the CLI asks for permission (the file does not exist yet)."
            ),
            Duration::from_secs(40),
            asking,
        )?;
        for key in cli.approve() {
            self.tmux.run(&["send-keys", "-t", &run.pane, key])?;
        }
        let written = file.clone();
        self.snap(
            &run,
            "completed",
            "write-approved",
            "Permission given (first answer): the file was written and the turn ended; ready for the next prompt.",
            Duration::from_secs(40),
            move |s| cli.idle_ready(s) && written.exists(),
        )?;
        // Claude Code 2.1.332 offers WebFetch only through ToolSearch (deferred), so it is not
        // called directly.
        let fetches = match cli {
            Cli::Claude => self.version != "2.1.332",
            Cli::Gemini | Cli::OpenCode => true,
            Cli::Codex | Cli::Aider => false,
        };
        if fetches {
            self.submit(&run, "fetch:https://example.com/fake-page")?;
            self.snap(
                &run,
                "waiting_user_answer",
                "fetch-permission",
                "The model asked to fetch https://example.com/fake-page with the CLI's web-fetch tool; the CLI asks for permission.",
                Duration::from_secs(40),
                move |s| !cli.working(s) && !s.has("no tool for") && cli.pending(s),
            )?;
            self.keys(&run, cli.reject())?;
            self.snap(
                &run,
                "completed",
                "fetch-rejected",
                "The web fetch was refused in the permission dialog; the turn ended (a file was written earlier in this session) and the CLI is ready for input: an interrupted or refused turn is a finished turn, not an error.",
                Duration::from_secs(40),
                move |s| cli.idle_ready(s),
            )?;
        }
        self.end(run);
        Ok(())
    }

    /// Esc (Ctrl-C for Aider) while a reply is pending, then a refused shell command.
    fn interrupts(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let cli = self.cli;
        let run = self.launch_ready(size, suffix)?;
        self.warm_up(&run, WARM_UP)?;
        self.submit(&run, "slow:60000 reply:This answer never arrives.")?;
        self.wait_for(&run, "the working state", Duration::from_secs(20), |s| {
            cli.working(s)
        })?;
        std::thread::sleep(Duration::from_millis(1500));
        self.keys(&run, cli.interrupt())?;
        self.snap(
            &run,
            "completed",
            "interrupted",
            &format!(
                "A first prompt was answered; a second one was interrupted with {} while the CLI waited for the model. The interrupted turn is over and the CLI is ready for input (label: completed, since the session has answered before; an interrupt is not an error).",
                cli.interrupt().join(" ")
            ),
            Duration::from_secs(30),
            move |s| cli.idle_ready(s),
        )?;
        self.submit(&run, "tool:touch refused.txt")?;
        self.wait_stable(
            &run,
            "the permission dialog",
            Duration::from_secs(30),
            |s| cli.dialog(s),
        )?;
        self.keys(&run, cli.reject())?;
        self.snap(
            &run,
            "completed",
            "tool-rejected",
            &format!(
                "The model asked to run `touch refused.txt` (a CLI that puts the interrupted prompt back into its input box sent it in front of this one); the command was refused in the permission dialog ({}). The turn is over and the CLI is ready for input (label: completed, like an interrupt, since the session has answered before).",
                cli.reject().join(" ")
            ),
            Duration::from_secs(30),
            move |s| cli.idle_ready(s),
        )?;
        self.end(run);
        Ok(())
    }

    /// Esc (Ctrl-C for Aider) while an approved command runs, after an answered prompt.
    fn interrupt_tool(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let cli = self.cli;
        let run = self.launch_ready(size, suffix)?;
        self.warm_up(&run, WARM_UP)?;
        let file = run.work.join("interrupted-output.txt");
        self.submit(&run, "tool:sleep 20 && touch interrupted-output.txt")?;
        self.wait_stable(
            &run,
            "the permission dialog",
            Duration::from_secs(30),
            |s| cli.dialog(s),
        )?;
        for key in cli.approve() {
            self.tmux.run(&["send-keys", "-t", &run.pane, key])?;
        }
        self.wait_for(
            &run,
            "the approved command running",
            Duration::from_secs(10),
            |s| !cli.dialog(s) && cli.working(s),
        )?;
        std::thread::sleep(Duration::from_secs(3));
        self.keys(&run, cli.interrupt())?;
        self.snap(
            &run,
            "completed",
            "interrupted-tool-run",
            &format!(
                "A first prompt was answered; then the approved command `sleep 20 && touch interrupted-output.txt` was interrupted with {} about 3 s into its run. The interrupted turn is over and the CLI is ready for input (label: completed, since the session has answered before; an interrupt is not an error).",
                cli.interrupt().join(" ")
            ),
            Duration::from_secs(30),
            move |s| cli.idle_ready(s) && !file.exists(),
        )?;
        self.end(run);
        Ok(())
    }

    /// HTTP 429 to every try.
    fn http_429(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let run = self.launch_ready(size, suffix)?;
        self.submit(&run, "fail:429")?;
        self.failure(&run, 429, true)?;
        self.end(run);
        Ok(())
    }

    /// A command that runs for a while, then `/compact` of the conversation.
    fn long_tool_and_compact(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let cli = self.cli;
        let run = self.launch_ready(size, suffix)?;
        self.warm_up(&run, "compactslow:8000 reply:Compaction warm-up answer.")?;
        let file = run.work.join("long-output.txt");
        self.submit(&run, "tool:sleep 20 && touch long-output.txt")?;
        self.wait_stable(
            &run,
            "the permission dialog",
            Duration::from_secs(30),
            |s| cli.dialog(s),
        )?;
        for key in cli.approve() {
            self.tmux.run(&["send-keys", "-t", &run.pane, key])?;
        }
        let started = Instant::now();
        for (frame, at) in [(1, 4), (2, 12)] {
            while started.elapsed() < Duration::from_secs(at) {
                std::thread::sleep(POLL);
            }
            let running = file.clone();
            self.save(
                &run,
                "processing",
                &format!("long-tool-running-{frame}"),
                &format!(
                    "Permission given; the approved command `sleep 20 && touch long-output.txt` has been running for about {at} s (frame {frame} of 2)."
                ),
                move |s| !cli.dialog(s) && cli.working(s) && !running.exists(),
            )?;
        }
        let done = file.clone();
        let answer = (cli != Cli::Aider).then_some(TOOL_ANSWER);
        self.wait_stable(
            &run,
            "the end of the long tool",
            Duration::from_secs(40),
            move |s| done.exists() && cli.idle_ready(s) && answer.is_none_or(|a| s.has_answer(a)),
        )?;
        let Some(command) = cli.compact_command() else {
            self.end(run);
            return Ok(());
        };
        self.type_text(&run, command)?;
        self.press_enter(&run)?;
        self.snap(
            &run,
            "processing",
            "compacting",
            &format!(
                "`{command}` was entered after two answered turns; the CLI is compacting the conversation (the fake model holds the summary back for 8 s)."
            ),
            Duration::from_secs(20),
            move |s| cli.working(s) || s.has_any(&["ompacting", "ompressing"]),
        )?;
        self.snap(
            &run,
            "completed",
            "compacted",
            &format!(
                "`{command}` finished: the conversation was compacted and the CLI is ready for the next prompt."
            ),
            Duration::from_secs(40),
            move |s| cli.idle_ready(s) && !s.has_any(&["ompacting…", "ompressing…"]),
        )?;
        self.end(run);
        Ok(())
    }
}

/// One screen of a first-run flow: it shows when every marker is on it and none of `unless`;
/// `keys` go on to the next (`text:…` is typed literally).
struct OnboardingStep {
    markers: &'static [&'static str],
    unless: &'static [&'static str],
    status: &'static str,
    scenario: &'static str,
    description: &'static str,
    keys: &'static [&'static str],
    /// Skipped when it does not show (a question some runs ask and others do not).
    optional: bool,
}

/// The first-run screens of each CLI, as far as they go offline.
fn onboarding_steps(cli: Cli, version: &str) -> Vec<OnboardingStep> {
    let step = |markers, status, scenario, description, keys| OnboardingStep {
        markers,
        unless: &[],
        status,
        scenario,
        description,
        keys,
        optional: false,
    };
    const WAIT: &str = "waiting_user_answer";
    match cli {
        // Without `hasSeenAutoDefaultNudge`, 2.1.332 offers auto mode at start-up. (A first
        // run with no configuration at all checks api.anthropic.com and exits offline.)
        Cli::Claude if version != "2.1.219" => vec![step(
            &["Make auto mode your default permission mode?"],
            WAIT,
            "startup-auto-mode-offer",
            "Launched with onboarding done but the auto-mode offer not yet seen: Claude Code asks whether to make auto mode the default permission mode (Yes / No, keep manual mode) and waits for the answer.",
            &[],
        )],
        Cli::Claude => Vec::new(),
        Cli::Codex => {
            let mut steps = vec![step(
                &["Sign in with ChatGPT", "Press enter to continue"],
                WAIT,
                "onboarding-sign-in-menu",
                "First run with no configuration and no credentials: Codex's welcome screen asks how to sign in (a numbered menu) and waits for a choice.",
                &["Down", "Down", "Enter"],
            )];
            if version != "0.145.0" {
                steps.push(step(
                    &["Sign in another way", "Use an OpenAI API key"],
                    WAIT,
                    "onboarding-sign-in-another-way",
                    "First run: 'Sign in another way' was chosen; Codex shows the second menu (OpenAI API key, Amazon Bedrock) and waits for a choice.",
                    &["Enter"],
                ));
            }
            steps.push(step(
                &["Press enter to save", "Paste or type your API key"],
                WAIT,
                "onboarding-api-key-entry",
                "First run: the API-key sign-in was chosen; Codex shows an empty API-key entry box ('Press enter to save') and waits for the key.",
                &["text:sk-typed-but-not-saved"],
            ));
            steps.push(step(
                &["Press enter to save", "sk-typed-but-not-saved"],
                WAIT,
                "onboarding-api-key-typed",
                "First run: an API key is typed into Codex's entry box but Enter was not pressed; Codex still waits for the user.",
                &[],
            ));
            steps
        }
        Cli::Gemini => vec![
            step(
                &["How would you like to authenticate"],
                WAIT,
                "onboarding-auth-method",
                "First run with no settings and no API key (the folder is trusted): Gemini CLI asks how to authenticate (Sign in with Google / Use Gemini API Key / Vertex AI) and waits for a choice.",
                &["Down", "Enter"],
            ),
            step(
                &["Enter Gemini API Key"],
                WAIT,
                "onboarding-api-key-entry",
                "First run: 'Use Gemini API Key' was chosen; Gemini CLI shows an empty API-key entry box and waits for the key.",
                &[],
            ),
        ],
        Cli::Aider => vec![
            OnboardingStep {
                optional: true,
                ..step(
                    &["Allow collection of anonymous analytics"],
                    WAIT,
                    "onboarding-analytics-question",
                    "First run with no model, no API key and no analytics choice: Aider asks whether to allow anonymous analytics, (Y)es/(N)o, and waits for the answer.",
                    &["n", "Enter"],
                )
            },
            step(
                &["Login to OpenRouter or create a free account?"],
                WAIT,
                "onboarding-openrouter-login",
                "First run with no model and no API key: Aider offers to log in to OpenRouter, (Y)es/(N)o [Yes], and waits for the answer.",
                &[],
            ),
        ],
        Cli::OpenCode => vec![step(
            &["ctrl+p commands"],
            "idle",
            "fresh-start-unconfigured",
            "First run with no configuration at all: OpenCode starts with its default provider (OpenCode Zen) and a tip to run /connect; the prompt is ready and nothing was asked.",
            &[],
        )],
    }
}
