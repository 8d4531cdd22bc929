//! `panectl profiles import FILE.md`: a CLI Agent Orchestrator (CAO) agent profile (Markdown
//! with a YAML front matter: `name`, `description`, `provider`, `model`, `allowedTools`,
//! `mcpServers`...; the body is the system prompt) turned into a panectl profile, with what
//! could not be carried over named.
//!
//! The front matter is read without a YAML library: top-level `key: value` lines, lists (`- x`
//! lines under a key, or `[a, b]`), and nested blocks, which are recognised only to be
//! reported (a block under `mcpServers` has no place in a profile).

/// A CAO profile converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The profile's name (the front matter's `name`, else the file's stem).
    pub name: String,
    /// The profile's TOML text.
    pub toml: String,
    /// What was not carried over, one line each (the key and why).
    pub dropped: Vec<String>,
}

/// One top-level value of the front matter.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    Text(String),
    List(Vec<String>),
    /// A nested block (a map, or a list of maps).
    Block,
}

/// Strips matching quotes from a scalar.
fn unquote(text: &str) -> String {
    let text = text.trim();
    for quote in ['"', '\''] {
        if text.len() >= 2 && text.starts_with(quote) && text.ends_with(quote) {
            return text[1..text.len() - 1].to_string();
        }
    }
    text.to_string()
}

/// The front matter's top-level keys and values, in order, and the body after it.
fn split(text: &str) -> Result<(Vec<(String, Value)>, String), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("no front matter (the file must start with a `---` line)".into());
    }
    let mut entries: Vec<(String, Value)> = Vec::new();
    let mut closed = false;
    let mut consumed = 1;
    for line in lines.by_ref() {
        consumed += 1;
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) || line.starts_with("- ") {
            // Under the last key: list items, or a nested block.
            let Some((_, value)) = entries.last_mut() else {
                return Err(format!("line {consumed}: indented line before any key"));
            };
            let item = line.trim_start();
            match (item.strip_prefix("- "), &mut *value) {
                (Some(item), Value::List(items)) if !item.contains(": ") => {
                    items.push(unquote(item))
                }
                (Some(item), Value::Text(text)) if text.is_empty() && !item.contains(": ") => {
                    *value = Value::List(vec![unquote(item)])
                }
                _ => *value = Value::Block,
            }
            continue;
        }
        let Some((key, rest)) = line.split_once(':') else {
            return Err(format!("line {consumed}: expected `key: value`"));
        };
        let rest = rest.trim();
        let value = if rest.starts_with('[') && rest.ends_with(']') {
            Value::List(
                rest[1..rest.len() - 1]
                    .split(',')
                    .map(unquote)
                    .filter(|s| !s.is_empty())
                    .collect(),
            )
        } else if rest.starts_with('{') {
            Value::Block
        } else {
            Value::Text(unquote(rest))
        };
        entries.push((key.trim().to_string(), value));
    }
    if !closed {
        return Err("the front matter has no closing `---` line".into());
    }
    let body: Vec<&str> = text.lines().skip(consumed).collect();
    Ok((entries, body.join("\n").trim().to_string()))
}

/// A string or an array of strings as TOML (a JSON string is a valid TOML basic string).
fn toml_value(value: &toml::Value) -> String {
    let quote = |text: &str| serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into());
    match value {
        toml::Value::String(text) => quote(text),
        toml::Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_value).collect::<Vec<_>>().join(", ")
        ),
        _ => quote(""),
    }
}

/// The panectl provider of a CAO provider name.
fn provider_of(cao: &str) -> Option<&'static str> {
    match cao {
        "claude_code" | "claude" => Some("claude_code"),
        "codex" => Some("codex"),
        "gemini_cli" | "gemini" => Some("gemini_cli"),
        "kiro_cli" | "q_cli" => Some("kiro_cli"),
        "opencode" => Some("opencode"),
        "aider" => Some("aider"),
        _ => None,
    }
}

/// Converts the CAO profile `text` (from a file whose stem is `stem`). `provider` replaces the
/// one the file names (or gives one when it names none).
pub fn import_cao(text: &str, stem: &str, provider: Option<&str>) -> Result<Imported, String> {
    let (entries, body) = split(text)?;
    let mut table = toml::Table::new();
    let mut dropped = Vec::new();
    let mut name = stem.to_string();
    let mut chosen = provider.map(str::to_string);
    let mut allowed_tools: Option<Vec<String>> = None;
    for (key, value) in entries {
        match (key.as_str(), value) {
            ("name", Value::Text(text)) if !text.is_empty() => name = text,
            ("description", Value::Text(text)) if !text.is_empty() => {
                table.insert("description".into(), toml::Value::String(text));
            }
            ("provider", Value::Text(text)) if chosen.is_none() => match provider_of(&text) {
                Some(known) => chosen = Some(known.to_string()),
                None => dropped.push(format!(
                    "provider: {text:?} is not a panectl provider (give --provider)"
                )),
            },
            ("provider", _) => {}
            ("model", Value::Text(text)) if !text.is_empty() => {
                table.insert("model".into(), toml::Value::String(text));
            }
            ("allowedTools", Value::List(tools)) => allowed_tools = Some(tools),
            ("mcpServers", _) => dropped.push(
                "mcpServers: a profile does not start MCP servers; add them to the CLI's own \
                 config (`claude mcp add ...`)"
                    .into(),
            ),
            (key, _) => dropped.push(format!("{key}: no panectl equivalent")),
        }
    }
    if !super::names::is_plain_name(&name) {
        return Err(format!(
            "name {name:?}: use 1-64 letters, digits, '_', '-' or '.'"
        ));
    }
    let provider = chosen.ok_or("the profile names no provider panectl knows; give --provider")?;
    if let Some(tools) = allowed_tools {
        if provider == "claude_code" && !tools.is_empty() {
            table.insert(
                "args".into(),
                toml::Value::Array(vec![
                    toml::Value::String("--allowedTools".into()),
                    toml::Value::String(tools.join(",")),
                ]),
            );
        } else {
            dropped.push(format!(
                "allowedTools: only Claude Code takes them as a flag (this is {provider})"
            ));
        }
    }
    table.insert("provider".into(), toml::Value::String(provider));
    if !body.is_empty() {
        table.insert("system_prompt".into(), toml::Value::String(body));
    }
    let mut toml =
        String::from("# Imported from a CAO agent profile by `panectl profiles import`.\n");
    for (key, value) in &table {
        toml.push_str(&format!("{key} = {}\n", toml_value(value)));
    }
    Ok(Imported {
        name,
        toml,
        dropped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orchestration::profile::{Profile, Source};

    /// A profile in CAO's documented shape.
    const DEVELOPER: &str = "---\nname: developer\ndescription: Developer Agent in a multi-agent system\n\
provider: claude_code\nmodel: sonnet\nallowedTools:\n  - Read\n  - \"Edit\"\nmcpServers:\n  cao-mcp-server:\n    type: stdio\n    command: uvx\n    args:\n      - \"--from\"\n      - \"git+https://github.com/awslabs/cli-agent-orchestrator.git@main\"\n      - \"cao-mcp-server\"\ntoolAliases: {}\n---\n\n# DEVELOPER AGENT\n\n## Role\nYou write code: \"quotes\", 'apostrophes', #{not a format} and \\ backslashes.\n";

    #[test]
    fn a_cao_profile_becomes_a_valid_profile_and_says_what_it_dropped() {
        let imported = import_cao(DEVELOPER, "file", None).unwrap();
        assert_eq!(imported.name, "developer");
        let profile = Profile::parse("developer", &imported.toml, Source::User, "x", None)
            .unwrap_or_else(|e| panic!("{e}\n{}", imported.toml));
        assert_eq!(profile.provider, "claude_code");
        assert_eq!(profile.model.as_deref(), Some("sonnet"));
        assert_eq!(profile.args, ["--allowedTools", "Read,Edit"]);
        assert_eq!(
            profile.description.as_deref(),
            Some("Developer Agent in a multi-agent system")
        );
        let prompt = profile.system_prompt.unwrap();
        assert!(
            prompt.starts_with("# DEVELOPER AGENT\n\n## Role\n"),
            "{prompt}"
        );
        assert!(
            prompt.ends_with("#{not a format} and \\ backslashes."),
            "{prompt}"
        );
        assert_eq!(imported.dropped.len(), 2, "{:?}", imported.dropped);
        assert!(imported.dropped[0].starts_with("mcpServers:"));
        assert!(imported.dropped[1].starts_with("toolAliases:"));
    }

    #[test]
    fn other_providers_keep_tools_out_and_unknown_ones_need_a_choice() {
        let codex = DEVELOPER.replace("provider: claude_code", "provider: codex");
        let imported = import_cao(&codex, "file", None).unwrap();
        assert!(
            imported
                .dropped
                .iter()
                .any(|d| d.starts_with("allowedTools:"))
        );
        let q = DEVELOPER.replace("provider: claude_code", "provider: mystery");
        assert!(
            import_cao(&q, "file", None)
                .unwrap_err()
                .contains("--provider")
        );
        let chosen = import_cao(&q, "file", Some("gemini_cli")).unwrap();
        assert!(chosen.toml.contains("provider = \"gemini_cli\""));
        assert!(import_cao("# no front matter", "f", None).is_err());
        assert!(
            import_cao("---\nname: x\n", "f", None)
                .unwrap_err()
                .contains("closing")
        );
        let unnamed = import_cao("---\nprovider: codex\n---\nbody\n", "from-file", None).unwrap();
        assert_eq!(unnamed.name, "from-file");
    }
}
