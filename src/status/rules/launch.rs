//! How `panectl launch` starts a provider's CLI (its `[launch]` table): the command, and the
//! dialogs it may show at start with the keys that accept them.

use regex::Regex;

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
}

impl Launch {
    /// The arguments that resume `conversation`, or none when the CLI cannot be resumed.
    pub fn resume(&self, conversation: &str) -> Option<Vec<String>> {
        (!self.resume_args.is_empty()).then(|| {
            self.resume_args
                .iter()
                .map(|a| a.replace("{conversation}", conversation))
                .collect()
        })
    }
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

/// The default row of a dialog's selected option: a pointer or a filled radio button.
pub const DEFAULT_POINTER: &str = r"^\s*[❯›>●]\s";

impl StartupPrompt {
    /// The keys that accept the dialog on this screen (its rows, top to bottom): arrows that
    /// move the pointer to the `choose` option, then `keys`.
    pub fn keys_for(&self, rows: &[&str]) -> Result<Vec<String>, String> {
        let Some(choose) = &self.choose else {
            return Ok(self.keys.clone());
        };
        let target = rows
            .iter()
            .rposition(|row| choose.is_match(row))
            .ok_or_else(|| format!("no option matching {:?} on the screen", choose.as_str()))?;
        let pointer = rows
            .iter()
            .enumerate()
            .filter(|(_, row)| self.pointer.is_match(row))
            .min_by_key(|(index, _)| index.abs_diff(target))
            .map(|(index, _)| index)
            .ok_or_else(|| "no selected option (pointer) on the screen".to_string())?;
        let arrow = if target > pointer { "Down" } else { "Up" };
        let mut keys = vec![arrow.to_string(); target.abs_diff(pointer)];
        keys.extend(self.keys.iter().cloned());
        Ok(keys)
    }
}
