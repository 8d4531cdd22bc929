//! Records screen fixtures of real agent CLIs driven through their states by the tests' fake
//! model server (`tests/integration/fake_model.rs`).
//!
//! ```text
//! cargo run --example record_agent_screens -- [OUTPUT_DIR] [claude|codex|gemini|aider|opencode|qwen|pi|kilo|grok ...]
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

#[path = "record_agent_screens/cli.rs"]
mod cli;
#[path = "../tests/integration/fake_model.rs"]
mod fake_model;
#[path = "record_agent_screens/recorder.rs"]
mod recorder;
#[path = "record_agent_screens/scenarios.rs"]
mod scenarios;
#[path = "record_agent_screens/tmux.rs"]
mod tmux;
#[path = "record_agent_screens/turns.rs"]
mod turns;
#[path = "record_agent_screens/typing.rs"]
mod typing;

use cli::notes;
use tmux::{same_lines, strip_escapes};

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
/// The file the command the model asks to run makes; its sleep (`Cli::sleep_then`) leaves
/// time to see the tool running.
const TOOL_FILE: &str = "tool-output.txt";
const TOOL_ANSWER: &str = "tool finished";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cli {
    Claude,
    Codex,
    Gemini,
    Aider,
    OpenCode,
    Qwen,
    Pi,
    Kilo,
    Grok,
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

/// A private tmux server, killed on drop together with every process its panes started.
struct Tmux {
    socket: String,
    dir: tempfile::TempDir,
    pane_pids: Vec<i32>,
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
    // Pi prints its version on stderr.
    let text = format!(
        "{} {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
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
                "usage: record_agent_screens [OUTPUT_DIR] [claude|codex|gemini|aider|opencode|qwen|pi|kilo|grok ...] (unknown: {arg})"
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

const WARM_UP: &str = "reply:Warm-up answer.";
/// No `?`: typed into an empty input it opens the shortcuts help of Codex and Gemini CLI.
const ASK_QUESTION: &str = "Which colour should the banner use";

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
