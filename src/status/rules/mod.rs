//! Provider rule files: one TOML file per agent CLI, compiled once.
//!
//! ```toml
//! id = "claude_code"                 # the provider id
//! name = "Claude Code"
//! # extends = "opencode"            # a fork: its screens read with that provider's rules
//!
//! [detect]                           # how a pane is recognised as running this CLI
//! commands = ["claude"]              # process names: the pane's command or a descendant's
//! arguments = ["@anthropic-ai/claude-code"]   # substrings of a descendant's command line
//! banner = ["Claude Code v"]         # text on the screen
//!
//! [layer]                            # how it inherits the dialog layer (optional)
//! use = true                         # false: none of the layer's rules
//! skip = ["common.prompt"]           # layer rules it does without
//! pointers = "❯›"                    # the glyphs that point at a menu option, here
//! not = ["Press enter to continue…"] # texts that rule out every layer rule here
//!
//! [screen]
//! rule = '^\s*[─━]{8,}\s*$'          # a horizontal rule row (input box borders)
//!
//! [last_response]                    # how to cut the last answer out of the scrollback
//! start = '^● '                      # the row where the answer starts (its last occurrence)
//! end = '^(✻ |─{8,})'                # the first row after it that is no longer the answer
//! strip = ['^● ', '^  ']             # prefixes removed from the answer's rows
//! # after_shaded = true              # instead of start: the answer follows the last row on a
//!                                    # shaded background (a CLI that shades prompts and tools)
//!
//! [launch]                           # how `panectl launch` starts the CLI
//! command = ["claude"]               # program and arguments (run without a shell)
//! model_flag = "--model"             # optional: the flag before a profile's model
//! system_prompt_flag = "--append-system-prompt" # optional: the flag before a system prompt
//! resume_args = ["--resume", "{conversation}"] # optional: how `restore` resumes a conversation
//! session_args = ["--session-id", "{conversation}"] # optional: start on an id panectl chooses
//! conversation_list = ["session", "list", "--format", "json"] # optional: list conversations
//!                                    # (JSON: id, directory, created, updated), to learn one
//! hook_args = ["--settings", "{hook_settings}"] # optional: hooks for a launched agent (Launch)
//! [[launch.startup_prompts]]         # dialogs at start that `--accept-startup-prompts` answers
//! rule = "claude_code.trust_folder"  # the waiting_user_answer rule that recognises it
//! choose = 'Yes, I trust'            # optional: move the pointer (Up/Down) to this option first
//! pointer = '^\s*[❯›>●]\s'           # optional: the row of the selected option (this default)
//! keys = ["Enter"]                   # the tmux keys that accept it
//!
//! [close]                            # how `panectl close` asks the CLI to exit (optional;
//! text = "/exit"                     # without it: C-c, C-d): text typed literally, then
//! keys = ["Enter"]                   # these tmux keys
//!
//! [delivery]                         # how the inbox delivers messages (all optional)
//! ready = ["idle", "completed"]      # statuses in which a message may go in
//! submit_delay_ms = 200              # between the paste and the submit key (at least 150)
//! submit_key = "Enter"               # the tmux key name that submits
//!
//! [[rules]]
//! id = "claude_code.working"         # unique, shown by `panectl explain` and in events
//! status = "processing"              # processing | ready | idle | completed | waiting_user_answer | error
//! priority = 80                      # higher is tried first
//! region = "below_input"             # whole | above_input | input | below_input | after_last_rule | live | title
//! lines = 3                          # optional: only the region's last N non-empty rows
//! contains = ["esc to interrupt"]    # every one must appear
//! any = []                           # at least one must appear (when given)
//! regex = []                         # every one must match (rows joined by \n; use (?m) for ^ $)
//! not = []                           # none may appear
//! not_regex = []                     # none may match
//! commands = []                      # the pane's foreground command must be one of these
//! not_commands = []                  # ... and none of these
//! strong = true                      # a real working marker: may end a "ready" latch
//! detail = 'retrying in \S+'          # optional: what it reads about the status (its 1st group,
//!                                    # else the match; the screen's last match) for the API
//! menu = { numbered = true, min_options = 2, pointers = "❯>" }   # a list of options with a
//!                                    # pointer on one (see `menu.rs`); all fields optional
//! [[rules.and]]                      # further conditions on other regions, all required
//! region = "above_input"
//! regex = ['(?m)^● ']
//! seen_on = "2.1.332"                # the CLI version the rule was written against
//! description = "spinner footer"
//! ```
//!
//! A `ready` verdict becomes `idle` or `completed` by turn tracking (see the tracker); `idle` and
//! `completed` say so outright (a welcome screen, an answer on screen).
//!
//! A file with `kind = "layer"` (the built-in `common.toml`) is no provider: its rules are
//! added to every provider's (see [`Provider::inherit`]), so a dialog drawn the way CLIs draw
//! dialogs is recognised in a CLI, or a version, that no rule was written for. A provider's own
//! rule with the same id replaces the layer's.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

use super::Status;
use super::view::Region;
pub use close::{Close, FALLBACK_KEYS};
use launch::LaunchSpec;
pub use launch::{DEFAULT_POINTER, Launch, StartupPrompt, new_conversation_id};
use signals::SignalsSpec;
pub use signals::{Meaning, Signals, TitleSignal};

pub mod close;
pub mod hook_config;
mod inherit;
pub mod launch;
pub mod signals;

/// Why a rule file was refused. Names the file and the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct RuleError {
    /// The file (or `<builtin NAME>` for an embedded default).
    pub file: String,
    /// The 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// What a status rule concludes when it matches (`ready` becomes `idle` or `completed`
/// depending on the turn).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The agent is working.
    Processing,
    /// Ready for input; idle or completed depending on the turn.
    Ready,
    /// Ready, with nothing answered on screen.
    Idle,
    /// Ready, with a finished turn on screen.
    Completed,
    /// Blocked on a question or dialog.
    WaitingUserAnswer,
    /// Stopped on an error.
    Error,
}

impl Verdict {
    /// The status the verdict maps to before turn tracking.
    pub fn status(self) -> Status {
        match self {
            Verdict::Processing => Status::Processing,
            Verdict::Ready | Verdict::Idle => Status::Idle,
            Verdict::Completed => Status::Completed,
            Verdict::WaitingUserAnswer => Status::WaitingUserAnswer,
            Verdict::Error => Status::Error,
        }
    }

    /// The word used in rule files.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Processing => "processing",
            Verdict::Ready => "ready",
            Verdict::Idle => "idle",
            Verdict::Completed => "completed",
            Verdict::WaitingUserAnswer => "waiting_user_answer",
            Verdict::Error => "error",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    id: Spanned<String>,
    /// `layer` for a file of rules that every provider inherits (`providers/common.toml`).
    kind: Option<Spanned<String>>,
    name: Option<String>,
    /// How this provider inherits the layer.
    layer: Option<LayerUseSpec>,
    /// A fork's base: the provider whose rules read its screens.
    extends: Option<Spanned<String>>,
    #[serde(default)]
    detect: DetectSpec,
    #[serde(default)]
    screen: ScreenSpec,
    last_response: Option<LastResponseSpec>,
    #[serde(default)]
    delivery: DeliverySpec,
    launch: Option<LaunchSpec>,
    close: Option<Spanned<close::CloseSpec>>,
    hook_config: Option<hook_config::HookConfigSpec>,
    #[serde(default)]
    signals: SignalsSpec,
    /// Why the provider has no recorded screens (a CLI that cannot be run here).
    unrecorded: Option<String>,
    #[serde(default)]
    rules: Vec<RuleSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LayerUseSpec {
    #[serde(default = "yes", rename = "use")]
    use_layer: bool,
    #[serde(default)]
    skip: Vec<Spanned<String>>,
    pointers: Option<Spanned<String>>,
    #[serde(default)]
    not: Vec<String>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DetectSpec {
    #[serde(default)]
    commands: Vec<String>,
    #[serde(default)]
    arguments: Vec<String>,
    #[serde(default)]
    banner: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScreenSpec {
    rule: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeliverySpec {
    ready: Option<Spanned<Vec<String>>>,
    submit_delay_ms: Option<Spanned<u64>>,
    submit_key: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LastResponseSpec {
    start: Option<Spanned<String>>,
    #[serde(default)]
    after_shaded: bool,
    end: Option<Spanned<String>>,
    #[serde(default)]
    strip: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    id: Spanned<String>,
    status: Verdict,
    #[serde(default)]
    priority: i32,
    #[serde(default = "whole")]
    region: Region,
    lines: Option<usize>,
    #[serde(default)]
    contains: Vec<String>,
    #[serde(default)]
    any: Vec<String>,
    #[serde(default)]
    regex: Vec<Spanned<String>>,
    #[serde(default)]
    not: Vec<String>,
    #[serde(default)]
    not_regex: Vec<Spanned<String>>,
    menu: Option<MenuSpec>,
    #[serde(default)]
    commands: Vec<String>,
    #[serde(default)]
    not_commands: Vec<String>,
    #[serde(default)]
    strong: bool,
    detail: Option<Spanned<String>>,
    seen_on: Option<String>,
    description: Option<String>,
    #[serde(default)]
    and: Vec<ConditionSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConditionSpec {
    #[serde(default = "whole")]
    region: Region,
    lines: Option<usize>,
    #[serde(default)]
    contains: Vec<String>,
    #[serde(default)]
    any: Vec<String>,
    #[serde(default)]
    regex: Vec<Spanned<String>>,
    #[serde(default)]
    not: Vec<String>,
    #[serde(default)]
    not_regex: Vec<Spanned<String>>,
    menu: Option<MenuSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MenuSpec {
    numbered: Option<bool>,
    #[serde(default = "two")]
    min_options: usize,
    pointers: Option<String>,
}

fn two() -> usize {
    2
}

fn whole() -> Region {
    Region::Whole
}

/// Text conditions on one region of the screen.
#[derive(Debug, Clone)]
pub struct Condition {
    /// Where it looks.
    pub region: Region,
    /// Only the region's last N non-empty rows.
    pub lines: Option<usize>,
    /// All must appear.
    pub contains: Vec<String>,
    /// One must appear (when not empty).
    pub any: Vec<String>,
    /// All must match.
    pub regex: Vec<Regex>,
    /// None may appear.
    pub not: Vec<String>,
    /// None may match.
    pub not_regex: Vec<Regex>,
    /// A list of options with a pointer on one of them must be there.
    pub menu: Option<Menu>,
}

impl Condition {
    fn is_empty(&self) -> bool {
        self.contains.is_empty()
            && self.any.is_empty()
            && self.regex.is_empty()
            && self.not.is_empty()
            && self.not_regex.is_empty()
            && self.menu.is_none()
    }
}

/// A list of options a dialog shows, one of them marked by a pointer (see [`Menu::find`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Menu {
    /// `Some(true)`: the options are numbered (`1.`, `2)`); `Some(false)`: they are not;
    /// `None`: either.
    pub numbered: Option<bool>,
    /// Options there must be at least, the pointed one included.
    pub min_options: usize,
    /// The glyphs that mark the selected option.
    pub pointers: String,
}

/// The pointer glyphs a menu looks for unless a rule or provider says otherwise.
pub const DEFAULT_MENU_POINTERS: &str = "❯›>●◉▶";

/// A compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Its id.
    pub id: Arc<str>,
    /// What it concludes.
    pub verdict: Verdict,
    /// Higher first.
    pub priority: i32,
    /// Its text conditions, all required (the first from the rule's own fields, then `and`).
    pub conditions: Vec<Condition>,
    /// The foreground command must be one of these (when not empty).
    pub commands: Vec<String>,
    /// The foreground command may not be one of these.
    pub not_commands: Vec<String>,
    /// A real working marker.
    pub strong: bool,
    /// Says more about the status it decides (a retry's attempt, a limit's reset time): its
    /// first capture group that took part (else its whole match) at the last place it
    /// matches on the screen.
    pub detail: Option<Regex>,
    /// The CLI version it was written against.
    pub seen_on: Option<String>,
    /// What it recognises.
    pub description: Option<String>,
    /// The layer it was inherited from (`common`), for a rule that is not the provider's own.
    pub layer: Option<Arc<str>>,
}

/// How to recognise a provider's panes.
#[derive(Debug, Clone, Default)]
pub struct Detect {
    /// Process names.
    pub commands: Vec<String>,
    /// Command-line substrings.
    pub arguments: Vec<String>,
    /// Screen text.
    pub banner: Vec<String>,
}

impl Detect {
    /// The process of `processes` (a pane's tree, breadth first) that is this provider's
    /// program: the first whose name or command line it recognises.
    pub fn agent_process<'a>(
        &self,
        processes: &'a [crate::status::process::ProcessEntry],
    ) -> Option<&'a crate::status::process::ProcessEntry> {
        processes.iter().find(|p| {
            self.commands.contains(&p.name)
                || self
                    .arguments
                    .iter()
                    .any(|a| p.command_line.contains(a.as_str()))
        })
    }
}

/// How to cut the last answer out of the scrollback.
#[derive(Debug, Clone)]
pub struct LastResponse {
    /// Where the answer starts.
    pub start: AnswerStart,
    /// The first row after the start that is no longer the answer.
    pub end: Option<Regex>,
    /// Prefixes removed from each row.
    pub strip: Vec<Regex>,
}

/// Where a provider's last answer starts in the scrollback.
#[derive(Debug, Clone)]
pub enum AnswerStart {
    /// On the last row this matches.
    Row(Regex),
    /// On the first plain row after the last one drawn on a shaded background (read from a
    /// capture with its colours: [`crate::status::shading`]).
    AfterShaded,
}

/// How the inbox delivers messages to a provider's panes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Statuses in which a message may go in.
    pub ready: Vec<Status>,
    /// Between the paste and the submit key (`None`: the daemon's default).
    pub submit_delay: Option<std::time::Duration>,
    /// The tmux key name that submits.
    pub submit_key: String,
}

impl Default for Delivery {
    fn default() -> Delivery {
        Delivery {
            ready: vec![Status::Idle, Status::Completed],
            submit_delay: None,
            submit_key: "Enter".into(),
        }
    }
}

/// Shortest submit delay accepted: agents that read the key in the same read as the paste take
/// it as part of the text.
pub const MIN_SUBMIT_DELAY_MS: u64 = 150;

/// Key names a provider may submit with.
const SUBMIT_KEYS: &[&str] = &["Enter", "C-m", "C-j", "M-Enter", "C-s", "Tab"];

/// A compiled provider.
#[derive(Debug, Clone)]
pub struct Provider {
    /// Its id.
    pub id: Arc<str>,
    /// Its display name.
    pub name: String,
    /// Where it came from (a path, or `<builtin ID>`).
    pub source: String,
    /// How its panes are recognised.
    pub detect: Detect,
    /// The horizontal rule row pattern.
    pub rule_line: Regex,
    /// Last-answer extraction, if the provider has one.
    pub last_response: Option<LastResponse>,
    /// Message delivery settings.
    pub delivery: Delivery,
    /// How `panectl launch` starts the CLI, if it can be launched.
    pub launch: Option<Launch>,
    /// How `panectl close` asks the CLI to exit (`None`: [`FALLBACK_KEYS`]).
    pub close: Option<Close>,
    /// Where `panectl hook install` writes the CLI's hook configuration.
    pub hook_config: Option<hook_config::HookConfig>,
    /// Which of the agent's own signals are believed for its panes.
    pub signals: Signals,
    /// Why its rules were written without recorded screens, when they were (a CLI that cannot
    /// be installed or run offline): the recordings test holds every other built-in provider
    /// to recordings of each status its rules claim.
    pub unrecorded: Option<String>,
    /// Its rules, highest priority first (file order among equals); after
    /// [`Provider::inherit`], the layer's too.
    pub rules: Vec<Rule>,
    /// Whether this file is a layer of rules for every provider rather than a provider.
    pub is_layer: bool,
    /// The provider whose rules read this one's screens (a fork of that CLI): see
    /// [`Provider::fork_of`].
    pub extends: Option<String>,
    /// How it inherits the layer.
    pub layer_use: LayerUse,
}

/// How a provider inherits the shared layer of rules (`providers/common.toml`): its `[layer]`
/// table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerUse {
    /// `false`: the provider inherits none of the layer's rules.
    pub enabled: bool,
    /// Layer rules the provider does not inherit.
    pub skip: Vec<String>,
    /// The pointer glyphs of the layer's menus, for this provider (Claude Code's answers
    /// start with `●`, which is no pointer there).
    pub pointers: Option<String>,
    /// Texts that rule out every layer rule for this provider (none may appear on the screen).
    pub not: Vec<String>,
}

impl Default for LayerUse {
    fn default() -> Self {
        LayerUse {
            enabled: true,
            skip: Vec::new(),
            pointers: None,
            not: Vec::new(),
        }
    }
}

/// The default horizontal rule row: eight or more box-drawing horizontal lines.
pub const DEFAULT_RULE_LINE: &str = r"^\s*[─━═]{8,}\s*$";

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl Provider {
    /// Parses and compiles a rule file. `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Provider, RuleError> {
        let error = |offset: usize, message: String| RuleError {
            file: source.to_string(),
            line: line_of(text, offset),
            message,
        };
        let spec: FileSpec = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            error(offset, e.message().trim().to_string())
        })?;
        let extends = match &spec.extends {
            Some(base)
                if !spec.rules.is_empty()
                    || spec.last_response.is_some()
                    || spec.screen.rule.is_some() =>
            {
                return Err(error(
                    base.span().start,
                    "a fork (extends) reads its screens with its base's rules: it has no \
                     [screen], [last_response] or [[rules]] of its own"
                        .into(),
                ));
            }
            Some(base) => Some(base.get_ref().clone()),
            None => None,
        };
        let compile = |pattern: &Spanned<String>| {
            Regex::new(pattern.get_ref()).map_err(|e| {
                let detail = e.to_string();
                let first = detail.lines().last().unwrap_or_default().trim().to_string();
                error(
                    pattern.span().start,
                    format!("bad regex {:?}: {first}", pattern.get_ref()),
                )
            })
        };
        let id = spec.id.get_ref().trim();
        if id.is_empty()
            || !id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(error(
                spec.id.span().start,
                format!("provider id {id:?} must be lowercase letters, digits and _"),
            ));
        }
        let rule_line = match &spec.screen.rule {
            Some(pattern) => compile(pattern)?,
            None => Regex::new(DEFAULT_RULE_LINE).map_err(|e| error(0, e.to_string()))?,
        };
        let last_response = match &spec.last_response {
            Some(last) => Some(LastResponse {
                start: match (&last.start, last.after_shaded) {
                    (Some(start), false) => AnswerStart::Row(compile(start)?),
                    (None, true) => AnswerStart::AfterShaded,
                    _ => {
                        return Err(error(
                            0,
                            "[last_response] takes start or after_shaded".into(),
                        ));
                    }
                },
                end: last.end.as_ref().map(compile).transpose()?,
                strip: last.strip.iter().map(compile).collect::<Result<_, _>>()?,
            }),
            None => None,
        };
        let mut delivery = Delivery::default();
        if let Some(ready) = &spec.delivery.ready {
            delivery.ready = ready
                .get_ref()
                .iter()
                .map(|word| match Status::parse(word) {
                    // In a turn, or gone: never a time to type.
                    Some(s) if s.phase().is_in_turn() || s == Status::Exited => Err(error(
                        ready.span().start,
                        format!("a message may never go in while {word}"),
                    )),
                    Some(status) => Ok(status),
                    None => Err(error(
                        ready.span().start,
                        format!("unknown status {word:?} ({})", Status::words()),
                    )),
                })
                .collect::<Result<_, _>>()?;
        }
        if let Some(delay) = &spec.delivery.submit_delay_ms {
            if *delay.get_ref() < MIN_SUBMIT_DELAY_MS {
                return Err(error(
                    delay.span().start,
                    format!("submit_delay_ms must be at least {MIN_SUBMIT_DELAY_MS}"),
                ));
            }
            delivery.submit_delay = Some(std::time::Duration::from_millis(*delay.get_ref()));
        }
        if let Some(key) = &spec.delivery.submit_key {
            if !SUBMIT_KEYS.contains(&key.get_ref().as_str()) {
                return Err(error(
                    key.span().start,
                    format!("submit_key must be one of {SUBMIT_KEYS:?}"),
                ));
            }
            delivery.submit_key = key.get_ref().clone();
        }
        let launch = match &spec.launch {
            Some(launch) if launch.command.get_ref().is_empty() => {
                return Err(error(
                    launch.command.span().start,
                    "launch.command is empty".into(),
                ));
            }
            Some(launch) => {
                let default_pointer =
                    Regex::new(DEFAULT_POINTER).map_err(|e| error(0, e.to_string()))?;
                let mut startup_prompts = Vec::new();
                for prompt in &launch.startup_prompts {
                    let rule = prompt.rule.get_ref();
                    let known = spec
                        .rules
                        .iter()
                        .any(|r| r.id.get_ref() == rule && r.status == Verdict::WaitingUserAnswer);
                    if !known {
                        return Err(error(
                            prompt.rule.span().start,
                            format!(
                                "startup prompt rule {rule:?} is not a waiting_user_answer rule of this file"
                            ),
                        ));
                    }
                    let keys = prompt.keys.get_ref();
                    if keys.is_empty() {
                        return Err(error(prompt.keys.span().start, "keys is empty".into()));
                    }
                    if let Some(bad) = keys
                        .iter()
                        .find(|k| !crate::control::command::commands::is_key_name(k))
                    {
                        return Err(error(
                            prompt.keys.span().start,
                            format!("{bad:?} is not a tmux key name"),
                        ));
                    }
                    startup_prompts.push(StartupPrompt {
                        rule: rule.clone(),
                        keys: keys.clone(),
                        choose: prompt.choose.as_ref().map(compile).transpose()?,
                        pointer: match &prompt.pointer {
                            Some(pattern) => compile(pattern)?,
                            None => default_pointer.clone(),
                        },
                    });
                }
                Some(Launch {
                    command: launch.command.get_ref().clone(),
                    startup_prompts,
                    model_flag: launch.model_flag.clone(),
                    system_prompt_flag: launch.system_prompt_flag.clone(),
                    resume_args: launch.resume_args.clone(),
                    session_args: launch.session_args.clone(),
                    conversation_list: launch.conversation_list.clone(),
                    hook_args: launch.hook_args.clone(),
                })
            }
            None => None,
        };
        let mut rules = Vec::with_capacity(spec.rules.len());
        let mut seen = std::collections::HashSet::new();
        for rule in &spec.rules {
            if !seen.insert(rule.id.get_ref().clone()) {
                return Err(error(
                    rule.id.span().start,
                    format!("duplicate rule id {:?}", rule.id.get_ref()),
                ));
            }
            let compile_condition = |spec: ConditionSpec| -> Result<Condition, RuleError> {
                Ok(Condition {
                    region: spec.region,
                    lines: spec.lines,
                    contains: spec.contains,
                    any: spec.any,
                    regex: spec.regex.iter().map(compile).collect::<Result<_, _>>()?,
                    not: spec.not,
                    not_regex: spec
                        .not_regex
                        .iter()
                        .map(compile)
                        .collect::<Result<_, _>>()?,
                    menu: spec.menu.map(|menu| Menu {
                        numbered: menu.numbered,
                        min_options: menu.min_options.max(1),
                        pointers: menu
                            .pointers
                            .unwrap_or_else(|| DEFAULT_MENU_POINTERS.to_string()),
                    }),
                })
            };
            let own = ConditionSpec {
                region: rule.region,
                lines: rule.lines,
                contains: rule.contains.clone(),
                any: rule.any.clone(),
                regex: rule.regex.clone(),
                not: rule.not.clone(),
                not_regex: rule.not_regex.clone(),
                menu: rule.menu.clone(),
            };
            let mut conditions = vec![compile_condition(own)?];
            for extra in &rule.and {
                conditions.push(compile_condition(ConditionSpec {
                    region: extra.region,
                    lines: extra.lines,
                    contains: extra.contains.clone(),
                    any: extra.any.clone(),
                    regex: extra.regex.clone(),
                    not: extra.not.clone(),
                    not_regex: extra.not_regex.clone(),
                    menu: extra.menu.clone(),
                })?);
            }
            conditions.retain(|c| !c.is_empty());
            if conditions.is_empty() && rule.commands.is_empty() && rule.not_commands.is_empty() {
                return Err(error(
                    rule.id.span().start,
                    format!(
                        "rule {:?} has no condition and would always match",
                        rule.id.get_ref()
                    ),
                ));
            }
            rules.push(Rule {
                id: Arc::from(rule.id.get_ref().as_str()),
                verdict: rule.status,
                priority: rule.priority,
                conditions,
                commands: rule.commands.clone(),
                not_commands: rule.not_commands.clone(),
                strong: rule.strong,
                detail: rule.detail.as_ref().map(compile).transpose()?,
                seen_on: rule.seen_on.clone(),
                description: rule.description.clone(),
                layer: None,
            });
        }
        // Stable: equal priorities keep file order.
        rules.sort_by_key(|r| std::cmp::Reverse(r.priority));
        let is_layer = match &spec.kind {
            None => false,
            Some(kind) if kind.get_ref() == "layer" => true,
            Some(kind) if kind.get_ref() == "provider" => false,
            Some(kind) => {
                return Err(error(
                    kind.span().start,
                    format!(
                        "kind must be \"provider\" or \"layer\", not {:?}",
                        kind.get_ref()
                    ),
                ));
            }
        };
        let close = spec
            .close
            .map(Close::from_spec)
            .transpose()
            .map_err(|(offset, message)| error(offset, message))?;
        let hook_config = spec
            .hook_config
            .map(hook_config::HookConfig::from_spec)
            .transpose()
            .map_err(|(offset, message)| error(offset, message))?;
        let signals =
            Signals::from_spec(spec.signals).map_err(|(offset, message)| error(offset, message))?;
        let layer_use = match spec.layer {
            None => LayerUse::default(),
            Some(layer) => {
                if let Some(pointers) = &layer.pointers
                    && pointers.get_ref().trim().is_empty()
                {
                    return Err(error(pointers.span().start, "pointers is empty".into()));
                }
                LayerUse {
                    enabled: layer.use_layer,
                    skip: layer.skip.iter().map(|s| s.get_ref().clone()).collect(),
                    pointers: layer.pointers.map(Spanned::into_inner),
                    not: layer.not,
                }
            }
        };
        Ok(Provider {
            id: Arc::from(id),
            name: spec.name.unwrap_or_else(|| id.to_string()),
            source: source.to_string(),
            detect: Detect {
                commands: spec.detect.commands,
                arguments: spec.detect.arguments,
                banner: spec.detect.banner,
            },
            rule_line,
            last_response,
            delivery,
            launch,
            close,
            hook_config,
            signals,
            unrecorded: spec.unrecorded,
            rules,
            is_layer,
            extends,
            layer_use,
        })
    }

    /// Reads and compiles a rule file from disk.
    pub fn load(path: &Path) -> Result<Provider, RuleError> {
        let text = std::fs::read_to_string(path).map_err(|e| RuleError {
            file: path.display().to_string(),
            line: 1,
            message: format!("cannot read: {e}"),
        })?;
        Provider::parse(&text, &path.display().to_string())
    }
}

/// The rule files in a directory (`*.toml`), sorted by name.
pub fn rule_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[cfg(test)]
mod tests;
