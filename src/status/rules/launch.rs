//! How `panectl launch` starts a provider's CLI (its `[launch]` table): the command, and the
//! dialogs it may show at start with the keys that accept them.

use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

/// How `panectl launch` starts a CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Dialogs the CLI may show at start, and how to accept each, for launches that opt in.
    pub startup_prompts: Vec<StartupPrompt>,
    /// The flag that chooses the model (`--model`, `-m`), followed by the model's name; a
    /// launch asking for a model is refused for a provider without one.
    pub model_flag: Option<String>,
    /// The flag that adds a system prompt (`--append-system-prompt`), followed by its text;
    /// without one, a profile's system prompt is sent as the agent's first message.
    pub system_prompt_flag: Option<String>,
    /// The arguments that resume the CLI's conversation `{conversation}` (its id, from the
    /// agent's hooks): what `panectl restore` adds; empty when the CLI cannot be resumed.
    pub resume_args: Vec<String>,
    /// The arguments that start the CLI on a new conversation whose id `{conversation}`
    /// panectl chooses (a UUID): the conversation is then known from the launch, hooks or not,
    /// and a restore that cannot resume it (nothing was said in it yet) starts it again under
    /// the same id. Empty when the CLI chooses its own ids.
    pub session_args: Vec<String>,
    /// The arguments that, after the launch command's program, list the CLI's conversations as
    /// JSON (OpenCode's `session list --format json`: objects with `id`, `directory`, `created`
    /// and `updated` in ms): how the daemon learns the conversation of a CLI that has no hooks
    /// to say it, at the end of a turn. Empty: none.
    pub conversation_list: Vec<String>,
    /// The arguments that give an agent `panectl launch` starts panectl's hooks, without the
    /// user's files: `{hook_settings}` is replaced by a `settings_json` text whose hooks run
    /// `panectl hook --socket S` on each event of the provider's `[signals.hooks]`,
    /// `{hook_program}` by that command as a JSON array (a TOML array too). Empty: none.
    pub hook_args: Vec<String>,
}

impl Launch {
    /// The arguments that resume `conversation`, or none when the CLI cannot be resumed.
    pub fn resume(&self, conversation: &str) -> Option<Vec<String>> {
        with_conversation(&self.resume_args, conversation)
    }

    /// The arguments that start a new conversation with the id `conversation`, or none when
    /// the CLI chooses its own ids.
    pub fn session(&self, conversation: &str) -> Option<Vec<String>> {
        with_conversation(&self.session_args, conversation)
    }
}

/// `args` with `{conversation}` replaced; none when there are no arguments.
fn with_conversation(args: &[String], conversation: &str) -> Option<Vec<String>> {
    (!args.is_empty()).then(|| {
        args.iter()
            .map(|a| a.replace("{conversation}", conversation))
            .collect()
    })
}

/// A new conversation id for a CLI that takes one at start: a random UUID (version 4), from
/// the system's random source; none if it cannot be read.
pub fn new_conversation_id() -> Option<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .ok()?;
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// The `[launch]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LaunchSpec {
    pub(super) command: Spanned<Vec<String>>,
    #[serde(default)]
    pub(super) startup_prompts: Vec<StartupPromptSpec>,
    pub(super) model_flag: Option<String>,
    pub(super) system_prompt_flag: Option<String>,
    #[serde(default)]
    pub(super) resume_args: Vec<String>,
    #[serde(default)]
    pub(super) session_args: Vec<String>,
    #[serde(default)]
    pub(super) conversation_list: Vec<String>,
    #[serde(default)]
    pub(super) hook_args: Vec<String>,
}

/// A `[[launch.startup_prompts]]` entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StartupPromptSpec {
    pub(super) rule: Spanned<String>,
    pub(super) keys: Spanned<Vec<String>>,
    pub(super) choose: Option<Spanned<String>>,
    pub(super) pointer: Option<Spanned<String>>,
}

/// A dialog at start (folder trust, say) and the keys that accept it.
#[derive(Debug, Clone)]
pub struct StartupPrompt {
    /// The `waiting_user_answer` rule that recognises the dialog.
    pub rule: String,
    /// The tmux keys that accept it (after the pointer was moved to `choose`).
    pub keys: Vec<String>,
    /// The option to select first (the CLI's default choice is not always the accepting one).
    pub choose: Option<Regex>,
    /// The row of the selected option.
    pub pointer: Regex,
}

impl PartialEq for StartupPrompt {
    fn eq(&self, other: &Self) -> bool {
        self.rule == other.rule
            && self.keys == other.keys
            && self.choose.as_ref().map(Regex::as_str) == other.choose.as_ref().map(Regex::as_str)
            && self.pointer.as_str() == other.pointer.as_str()
    }
}

impl Eq for StartupPrompt {}

/// Why a start-up dialog's option cannot be chosen on the screen shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoChoice {
    /// No row matches the option to choose (its pattern).
    #[error("no option matching {0:?} on the screen")]
    Option(String),
    /// No row shows the selection pointer.
    #[error("no selected option (pointer) on the screen")]
    Pointer,
}

/// The default row of a dialog's selected option: a pointer or a filled radio button.
pub const DEFAULT_POINTER: &str = r"^\s*[❯›>●]\s";

impl StartupPrompt {
    /// The keys that accept the dialog on this screen (its rows, top to bottom): arrows that
    /// move the pointer to the `choose` option, then `keys`.
    pub fn keys_for(&self, rows: &[&str]) -> Result<Vec<String>, NoChoice> {
        let Some(choose) = &self.choose else {
            return Ok(self.keys.clone());
        };
        let target = rows
            .iter()
            .rposition(|row| choose.is_match(row))
            .ok_or_else(|| NoChoice::Option(choose.as_str().to_string()))?;
        let pointer = rows
            .iter()
            .enumerate()
            .filter(|(_, row)| self.pointer.is_match(row))
            .min_by_key(|(index, _)| index.abs_diff(target))
            .map(|(index, _)| index)
            .ok_or(NoChoice::Pointer)?;
        let arrow = if target > pointer { "Down" } else { "Up" };
        let mut keys = vec![arrow.to_string(); target.abs_diff(pointer)];
        keys.extend(self.keys.iter().cloned());
        Ok(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversation_ids_are_version_4_uuids_and_differ() {
        let a = new_conversation_id().expect("an id");
        let b = new_conversation_id().expect("an id");
        assert_ne!(a, b);
        let groups: Vec<&str> = a.split('-').collect();
        let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
        assert_eq!(lengths, vec![8, 4, 4, 4, 12], "{a}");
        assert!(groups[2].starts_with('4'), "{a}");
        assert!(matches!(&groups[3][..1], "8" | "9" | "a" | "b"), "{a}");
        assert!(a.bytes().all(|c| c == b'-' || c.is_ascii_hexdigit()));
    }

    #[test]
    fn session_and_resume_arguments_name_the_conversation() {
        let launch = Launch {
            command: vec!["gemini".into()],
            startup_prompts: Vec::new(),
            model_flag: None,
            system_prompt_flag: None,
            resume_args: vec!["--resume".into(), "{conversation}".into()],
            session_args: vec!["--session-id={conversation}".into()],
            conversation_list: Vec::new(),
            hook_args: Vec::new(),
        };
        assert_eq!(
            launch.resume("c1"),
            Some(vec!["--resume".to_string(), "c1".to_string()])
        );
        assert_eq!(
            launch.session("c1"),
            Some(vec!["--session-id=c1".to_string()])
        );
        let none = Launch {
            session_args: Vec::new(),
            ..launch
        };
        assert_eq!(none.session("c1"), None);
    }
}
