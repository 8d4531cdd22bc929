//! Tests of the hook configuration edits, on the built-in providers' `[hook_config]`.

use super::*;
use crate::status::providers::ProviderSet;

fn provider(id: &str) -> (HookConfig, Vec<String>) {
    let set = ProviderSet::builtin().unwrap();
    let provider = set.get(id).unwrap();
    (provider.hook_config.clone().unwrap(), hook_events(provider))
}

#[test]
fn the_events_are_those_the_provider_maps_once_each() {
    let (_, claude) = provider("claude_code");
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "Notification",
        "Stop",
        "SessionEnd",
    ] {
        assert_eq!(
            claude.iter().filter(|e| *e == event).count(),
            1,
            "{claude:?}"
        );
    }
    let (_, gemini) = provider("gemini_cli");
    assert!(gemini.contains(&"BeforeAgent".to_string()), "{gemini:?}");
    assert!(gemini.contains(&"AfterAgent".to_string()), "{gemini:?}");
}

#[test]
fn panectl_hooks_are_recognised_by_program_and_argument() {
    for ours in [
        "panectl hook",
        "/usr/local/bin/panectl hook",
        "'/home/a b/.cargo/bin/panectl' hook",
    ] {
        assert!(is_panectl_hook(ours), "{ours}");
    }
    for theirs in [
        "panectl hook --socket /x",
        "my-panectl hook",
        "panectl-hook",
        "notify-send done",
        "panectl status",
    ] {
        assert!(!is_panectl_hook(theirs), "{theirs}");
    }
    assert_eq!(hook_command_line("panectl"), "panectl hook");
    assert_eq!(hook_command_line("/a b/panectl"), "'/a b/panectl' hook");
    assert!(is_panectl_hook(&hook_command_line("/it's/panectl")));
}

#[test]
fn an_install_merges_with_the_users_settings_and_is_idempotent() {
    let (config, events) = provider("claude_code");
    let existing = r#"{
  "model": "opus",
  "permissions": {"allow": ["Bash(ls)"]},
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  }
}"#;
    let installed = install(&config, &events, existing, "panectl").unwrap();
    assert_eq!(installed.changes, events);
    let value: Value = serde_json::from_str(&installed.text).unwrap();
    // The user's keys stay, in their order, and so does their own Stop hook.
    let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "permissions", "hooks"]);
    let stop = value["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(stop.len(), 2);
    assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done");
    assert_eq!(stop[1]["hooks"][0]["command"], "panectl hook");
    assert_eq!(stop[1]["hooks"][0]["timeout"], 5);
    // Again: nothing to do, the text is left as it is.
    let again = install(&config, &events, &installed.text, "/other/panectl").unwrap();
    assert!(again.changes.is_empty());
    assert_eq!(again.text, installed.text);
    // Uninstall gives back what was there (as JSON: the layout is the serializer's).
    let removed = uninstall(&config, &installed.text).unwrap();
    assert_eq!(removed.changes.len(), events.len());
    let back: Value = serde_json::from_str(&removed.text).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(existing).unwrap());
    let nothing = uninstall(&config, &removed.text).unwrap();
    assert!(nothing.changes.is_empty());
    assert_eq!(nothing.text, removed.text);
}

#[test]
fn a_new_file_gets_only_panectls_hooks_and_loses_them_all_again() {
    let (config, events) = provider("gemini_cli");
    let installed = install(&config, &events, "", "panectl").unwrap();
    let value: Value = serde_json::from_str(&installed.text).unwrap();
    assert_eq!(value["hooks"]["AfterAgent"][0]["hooks"][0]["timeout"], 5000);
    let removed = uninstall(&config, &installed.text).unwrap();
    assert_eq!(removed.text, "{}\n");
}

#[test]
fn files_of_the_wrong_shape_are_refused_untouched() {
    let (config, events) = provider("claude_code");
    for (text, says) in [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "the file is not a JSON object"),
        (r#"{"hooks": true}"#, "hooks is not a JSON object"),
        (
            r#"{"hooks": {"Stop": {"x": 1}}}"#,
            "hooks.Stop is not a JSON array",
        ),
    ] {
        let error = install(&config, &events, text, "panectl").unwrap_err();
        assert!(error.to_string().contains(says), "{text}: {error}");
    }
    // An uninstall leaves what it does not understand alone.
    let odd = r#"{"hooks": {"enabled": true, "Stop": [{"hooks": [{"command": "panectl hook"}]}]}}"#;
    let removed = uninstall(&config, odd).unwrap();
    let value: Value = serde_json::from_str(&removed.text).unwrap();
    assert_eq!(value, json!({"hooks": {"enabled": true}}));
}

#[test]
fn codex_notify_is_set_kept_refused_and_removed_with_the_users_comments_kept() {
    let (config, _) = provider("codex");
    let existing =
        "# my settings\nmodel = \"gpt-5\" # the model\n\n[features]\nweb_search = true\n";
    let installed = install(&config, &[], existing, "/opt/bin/panectl").unwrap();
    assert_eq!(installed.changes, ["notify"]);
    assert!(
        installed.text.contains("# my settings"),
        "{}",
        installed.text
    );
    assert!(installed.text.contains("# the model"), "{}", installed.text);
    let parsed: toml::Table = toml::from_str(&installed.text).unwrap();
    assert_eq!(
        parsed["notify"],
        toml::Value::Array(vec!["/opt/bin/panectl".into(), "hook".into()])
    );
    assert_eq!(parsed["features"]["web_search"], toml::Value::Boolean(true));
    let again = install(&config, &[], &installed.text, "panectl").unwrap();
    assert!(again.changes.is_empty());
    let removed = uninstall(&config, &installed.text).unwrap();
    assert_eq!(removed.changes, ["notify"]);
    assert_eq!(removed.text, existing);
    // Someone else's notify: refused, named.
    let theirs = "notify = [\"notify-send\", \"codex\"]\n";
    let error = install(&config, &[], theirs, "panectl").unwrap_err();
    assert!(error.to_string().contains("notify-send"), "{error}");
    assert!(uninstall(&config, theirs).unwrap().changes.is_empty());
    assert!(matches!(
        install(&config, &[], "model = ", "panectl"),
        Err(HookEditError::BadToml(_))
    ));
}
