//! panectl's hook in an agent CLI's own configuration, for agents the user starts themselves
//! (`panectl hook install` / `uninstall`). Pure edits of a file's text: the caller reads and
//! writes the file. An install merges with what is there and changes nothing when panectl's
//! hook is in already; an uninstall removes panectl's hook entries and nothing else (entries
//! it emptied go with them).
//!
//! What is panectl's: a hook command `panectl hook` (the program by name, or a path to a file
//! named `panectl`, quoted or not, with no other argument), and for Codex a `notify` of that
//! program and `hook`. So a hook pasted from the README is recognised as well.

use serde_json::{Map, Value, json};

use crate::status::rules::Provider;
use crate::status::rules::hook_config::{HookConfig, HookFormat};

/// Why a configuration file could not be edited.
#[derive(Debug, thiserror::Error)]
pub enum HookEditError {
    /// The file is not JSON.
    #[error("it is not valid JSON ({0}); nothing was changed")]
    BadJson(String),
    /// A part of the JSON file is not what the CLI's format says it is.
    #[error("{place} is not a JSON {expected}; nothing was changed")]
    Shape {
        /// Where (`hooks.Stop`).
        place: String,
        /// What it should be (`object`, `array`).
        expected: &'static str,
    },
    /// The file is not TOML.
    #[error("it is not valid TOML ({0}); nothing was changed")]
    BadToml(String),
    /// Codex runs one `notify` program, and it is someone else's.
    #[error(
        "Codex already runs notify = {0}, and it runs one program only; remove that line to let panectl's hook in (nothing was changed)"
    )]
    NotifyTaken(String),
}

/// The outcome of an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The file's new text (the old one when nothing changed).
    pub text: String,
    /// What changed, one phrase each (`Stop`, `notify`); empty when nothing did.
    pub changes: Vec<String>,
}

/// The events to hook for a provider: every event its `[signals.hooks]` table names
/// (`Notification` for `Notification:permission_prompt`), once each, in the table's order.
pub fn hook_events(provider: &Provider) -> Vec<String> {
    let mut events: Vec<String> = Vec::new();
    for key in provider.signals.hooks.keys() {
        let event = key.split(':').next().unwrap_or(key);
        if !events.iter().any(|e| e == event) {
            events.push(event.to_string());
        }
    }
    events
}

/// Whether a hook command is panectl's own (see the module documentation).
pub fn is_panectl_hook(command: &str) -> bool {
    let Some(program) = command.trim().strip_suffix(" hook") else {
        return false;
    };
    let program = program.trim();
    match program
        .strip_prefix('\'')
        .and_then(|p| p.strip_suffix('\''))
    {
        Some(quoted) => is_panectl_program(quoted),
        None => !program.contains(char::is_whitespace) && is_panectl_program(program),
    }
}

fn is_panectl_program(program: &str) -> bool {
    program == "panectl" || program.ends_with("/panectl")
}

/// The command line a settings file runs: `program hook`, the program quoted for `sh` when it
/// needs to be.
pub fn hook_command_line(program: &str) -> String {
    let plain = program
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
    if plain {
        format!("{program} hook")
    } else {
        format!("{} hook", shell_quote(program))
    }
}

/// Quotes a word for `sh`: single quotes, with `'` written as `'\''`.
pub fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// Adds panectl's hook (`program hook`) for `events` to the configuration `existing` (empty
/// for a file that does not exist yet).
pub fn install(
    config: &HookConfig,
    events: &[String],
    existing: &str,
    program: &str,
) -> Result<Edit, HookEditError> {
    match config.format {
        HookFormat::SettingsJson => install_settings(config, events, existing, program),
        HookFormat::CodexNotify => install_notify(existing, program),
    }
}

/// Removes panectl's hook from the configuration `existing`.
pub fn uninstall(config: &HookConfig, existing: &str) -> Result<Edit, HookEditError> {
    match config.format {
        HookFormat::SettingsJson => uninstall_settings(existing),
        HookFormat::CodexNotify => uninstall_notify(existing),
    }
}

fn parse_object(existing: &str) -> Result<Map<String, Value>, HookEditError> {
    if existing.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(existing) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(HookEditError::Shape {
            place: "the file".into(),
            expected: "object",
        }),
        Err(error) => Err(HookEditError::BadJson(error.to_string())),
    }
}

fn pretty(object: Map<String, Value>) -> String {
    // Serializing a `Value` cannot fail.
    let mut text = serde_json::to_string_pretty(&Value::Object(object)).unwrap_or_default();
    text.push('\n');
    text
}

/// The hook commands of one event's list of groups.
fn commands(groups: &[Value]) -> impl Iterator<Item = &str> {
    groups
        .iter()
        .filter_map(|group| group.get("hooks").and_then(Value::as_array))
        .flatten()
        .filter_map(|hook| hook.get("command").and_then(Value::as_str))
}

fn install_settings(
    config: &HookConfig,
    events: &[String],
    existing: &str,
    program: &str,
) -> Result<Edit, HookEditError> {
    add_settings_hooks(
        config,
        events,
        existing,
        &hook_command_line(program),
        is_panectl_hook,
    )
}

/// A settings file's text whose hooks run `command` on each of `events` (the `settings_json`
/// format, with the configuration's timeout): what `panectl launch` passes a CLI that takes
/// settings of its own on its command line (Claude Code's `--settings`), the command naming
/// the daemon's socket.
pub fn settings_with_hooks(config: &HookConfig, events: &[String], command: &str) -> String {
    match add_settings_hooks(config, events, "", command, |c| c == command) {
        Ok(edit) => edit.text,
        // An empty file has no shape to be wrong.
        Err(_) => String::new(),
    }
}

fn add_settings_hooks(
    config: &HookConfig,
    events: &[String],
    existing: &str,
    command: &str,
    present: impl Fn(&str) -> bool,
) -> Result<Edit, HookEditError> {
    let mut root = parse_object(existing)?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(HookEditError::Shape {
            place: "hooks".into(),
            expected: "object",
        });
    };
    let mut hook = json!({"type": "command", "command": command});
    if let Some(timeout) = config.timeout {
        hook["timeout"] = json!(timeout);
    }
    let mut changes = Vec::new();
    for event in events {
        let groups = hooks
            .entry(event.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Some(groups) = groups.as_array_mut() else {
            return Err(HookEditError::Shape {
                place: format!("hooks.{event}"),
                expected: "array",
            });
        };
        if commands(groups).any(&present) {
            continue;
        }
        groups.push(json!({"hooks": [hook.clone()]}));
        changes.push(event.clone());
    }
    if changes.is_empty() {
        return Ok(Edit {
            text: existing.to_string(),
            changes,
        });
    }
    Ok(Edit {
        text: pretty(root),
        changes,
    })
}

fn uninstall_settings(existing: &str) -> Result<Edit, HookEditError> {
    let unchanged = || Edit {
        text: existing.to_string(),
        changes: Vec::new(),
    };
    if existing.trim().is_empty() {
        return Ok(unchanged());
    }
    let mut root = parse_object(existing)?;
    let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) else {
        return Ok(unchanged());
    };
    let mut changes = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            continue;
        };
        let mut removed = false;
        groups.retain_mut(|group| {
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = list.len();
            list.retain(|hook| {
                !hook
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(is_panectl_hook)
            });
            let emptied = list.len() < before;
            removed |= emptied;
            !(emptied && list.is_empty())
        });
        if removed {
            changes.push(event.clone());
        }
    }
    if changes.is_empty() {
        return Ok(unchanged());
    }
    hooks.retain(|event, groups| {
        !(changes.contains(event) && groups.as_array().is_some_and(Vec::is_empty))
    });
    if hooks.is_empty() {
        root.remove("hooks");
    }
    Ok(Edit {
        text: pretty(root),
        changes,
    })
}

fn parse_toml(existing: &str) -> Result<toml_edit::DocumentMut, HookEditError> {
    existing
        .parse::<toml_edit::DocumentMut>()
        .map_err(|error| HookEditError::BadToml(error.to_string().trim().to_string()))
}

/// Whether a `notify` value is panectl's: `[".../panectl", "hook"]`.
fn notify_is_panectl(value: &toml_edit::Item) -> bool {
    let Some(array) = value.as_array() else {
        return false;
    };
    let words: Vec<&str> = array.iter().filter_map(|v| v.as_str()).collect();
    words.len() == array.len()
        && matches!(words.as_slice(), [program, "hook"] if is_panectl_program(program))
}

fn install_notify(existing: &str, program: &str) -> Result<Edit, HookEditError> {
    let mut document = parse_toml(existing)?;
    if let Some(notify) = document.get("notify") {
        if notify_is_panectl(notify) {
            return Ok(Edit {
                text: existing.to_string(),
                changes: Vec::new(),
            });
        }
        return Err(HookEditError::NotifyTaken(
            notify.to_string().trim().to_string(),
        ));
    }
    let mut array = toml_edit::Array::new();
    array.push(program);
    array.push("hook");
    document.insert("notify", toml_edit::value(array));
    Ok(Edit {
        text: document.to_string(),
        changes: vec!["notify".into()],
    })
}

fn uninstall_notify(existing: &str) -> Result<Edit, HookEditError> {
    let mut document = parse_toml(existing)?;
    if !document.get("notify").is_some_and(notify_is_panectl) {
        return Ok(Edit {
            text: existing.to_string(),
            changes: Vec::new(),
        });
    }
    document.remove("notify");
    Ok(Edit {
        text: document.to_string(),
        changes: vec!["notify".into()],
    })
}

#[cfg(test)]
#[path = "agent_hooks_tests.rs"]
mod tests;
