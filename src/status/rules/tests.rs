//! The rule files' tests: parsing, checks, and the embedded providers.

use super::*;

const GOOD: &str = r#"
id = "demo"

[[rules]]
id = "demo.low"
status = "ready"
priority = 1
contains = ["$"]

[[rules]]
id = "demo.high"
status = "processing"
priority = 9
region = "below_input"
lines = 2
regex = ['(?m)^working']
strong = true
"#;

const LAYER: &str = r#"
id = "common"
kind = "layer"

[[rules]]
id = "common.choice"
status = "waiting_user_answer"
priority = 85
menu = { numbered = true }

[[rules]]
id = "common.prompt"
status = "ready"
priority = 5
regex = ['(?m)^> ']
"#;

#[test]
fn a_provider_inherits_the_layer_as_its_layer_table_says() {
    let layer = Provider::parse(LAYER, "common.toml").unwrap();
    assert!(layer.is_layer);
    let plain = Provider::parse(GOOD, "demo.toml").unwrap().inherit(&layer);
    let ids: Vec<&str> = plain.rules.iter().map(|r| &*r.id).collect();
    assert_eq!(
        ids,
        ["common.choice", "demo.high", "common.prompt", "demo.low"]
    );
    assert_eq!(plain.rules[0].layer.as_deref(), Some("common"));
    assert_eq!(plain.rules[1].layer, None);

    let narrowed = GOOD.replace(
        "id = \"demo\"\n",
        "id = \"demo\"\n[layer]\nskip = [\"common.prompt\"]\npointers = \"❯\"\nnot = [\"Quit?\"]\n",
    );
    let narrowed = Provider::parse(&narrowed, "demo.toml")
        .unwrap()
        .inherit(&layer);
    let ids: Vec<&str> = narrowed.rules.iter().map(|r| &*r.id).collect();
    assert_eq!(ids, ["common.choice", "demo.high", "demo.low"]);
    let choice = &narrowed.rules[0];
    assert_eq!(choice.conditions[0].menu.as_ref().unwrap().pointers, "❯");
    assert_eq!(choice.conditions.last().unwrap().not, ["Quit?"]);

    let off = GOOD.replace("id = \"demo\"\n", "id = \"demo\"\n[layer]\nuse = false\n");
    let off = Provider::parse(&off, "demo.toml").unwrap().inherit(&layer);
    assert_eq!(off.rules.len(), 2);
}

#[test]
fn a_providers_own_rule_replaces_the_layer_rule_of_its_id() {
    let layer = Provider::parse(LAYER, "common.toml").unwrap();
    let own = format!(
        "{GOOD}\n[[rules]]\nid = \"common.prompt\"\nstatus = \"idle\"\npriority = 7\ncontains = [\"%\"]\n"
    );
    let provider = Provider::parse(&own, "demo.toml").unwrap().inherit(&layer);
    let prompt: Vec<&Rule> = provider
        .rules
        .iter()
        .filter(|r| &*r.id == "common.prompt")
        .collect();
    assert_eq!(prompt.len(), 1);
    assert_eq!(prompt[0].verdict, Verdict::Idle);
    assert_eq!(prompt[0].layer, None);
}

#[test]
fn layer_and_menu_mistakes_are_refused_with_their_line() {
    let bad_kind = LAYER.replace("kind = \"layer\"", "kind = \"overlay\"");
    let error = Provider::parse(&bad_kind, "common.toml").unwrap_err();
    assert!(error.to_string().contains("kind must be"), "{error}");
    let bad_menu = LAYER.replace("menu = { numbered = true }", "menu = { numbred = true }");
    let error = Provider::parse(&bad_menu, "common.toml").unwrap_err();
    assert!(error.to_string().contains("numbred"), "{error}");
}

#[test]
fn rules_compile_sorted_by_priority() {
    let provider = Provider::parse(GOOD, "demo.toml").unwrap();
    assert_eq!(&*provider.id, "demo");
    let ids: Vec<&str> = provider.rules.iter().map(|r| &*r.id).collect();
    assert_eq!(ids, ["demo.high", "demo.low"]);
    assert_eq!(provider.rules[0].conditions[0].region, Region::BelowInput);
    assert!(provider.rules[0].strong);
}

#[test]
fn delivery_settings_default_and_are_checked() {
    let plain = Provider::parse(GOOD, "demo.toml").unwrap();
    assert_eq!(plain.delivery, Delivery::default());
    let with = GOOD.replace(
            "id = \"demo\"\n",
            "id = \"demo\"\n[delivery]\nready = [\"idle\", \"completed\", \"error\"]\nsubmit_delay_ms = 400\nsubmit_key = \"C-m\"\n",
        );
    let provider = Provider::parse(&with, "demo.toml").unwrap();
    assert_eq!(
        provider.delivery.ready,
        [Status::Idle, Status::Completed, Status::Error]
    );
    assert_eq!(
        provider.delivery.submit_delay,
        Some(std::time::Duration::from_millis(400))
    );
    assert_eq!(provider.delivery.submit_key, "C-m");
    for (bad, message) in [
        ("ready = [\"processing\"]", "never go in while processing"),
        ("ready = [\"sleepy\"]", "unknown status"),
        ("submit_delay_ms = 10", "at least 150"),
        ("submit_key = \"y\"", "submit_key must be one of"),
    ] {
        let text = GOOD.replace(
            "id = \"demo\"\n",
            &format!("id = \"demo\"\n[delivery]\n{bad}\n"),
        );
        let error = Provider::parse(&text, "demo.toml").unwrap_err();
        assert!(error.message.contains(message), "{bad}: {error}");
        assert_eq!(error.line, 4, "{bad}: {error}");
    }
}

#[test]
fn errors_name_the_file_and_line() {
    let bad_regex = GOOD.replace("'(?m)^working'", "'(unclosed'");
    let error = Provider::parse(&bad_regex, "user/demo.toml").unwrap_err();
    assert_eq!((error.file.as_str(), error.line), ("user/demo.toml", 16));
    assert!(error.message.contains("bad regex"), "{error}");

    let bad_status = GOOD.replace("status = \"ready\"", "status = \"sleepy\"");
    let error = Provider::parse(&bad_status, "demo.toml").unwrap_err();
    assert_eq!(error.line, 6, "{error}");
    assert!(error.to_string().starts_with("demo.toml:6: "), "{error}");

    let unknown_field = GOOD.replace("priority = 1", "priority = 1\ncolour = \"red\"");
    let error = Provider::parse(&unknown_field, "demo.toml").unwrap_err();
    assert_eq!(error.line, 8, "{error}");

    let syntax = "id = \"x\"\n[[rules]\n";
    assert_eq!(Provider::parse(syntax, "s.toml").unwrap_err().line, 2);
}

#[test]
fn startup_prompts_name_a_dialog_rule_and_valid_keys() {
    let rules = "[[rules]]\nid = \"x.trust\"\nstatus = \"waiting_user_answer\"\ncontains = [\"Trust?\"]\n[[rules]]\nid = \"x.ready\"\nstatus = \"ready\"\ncontains = [\"> \"]\n";
    let file = |prompts: &str| {
        format!("id = \"x\"\n[launch]\ncommand = [\"x\"]\nstartup_prompts = [{prompts}]\n{rules}")
    };
    let good = Provider::parse(
        &file("{ rule = \"x.trust\", keys = [\"Down\", \"Enter\"] }"),
        "x.toml",
    )
    .unwrap();
    let launch = good.launch.unwrap();
    assert_eq!(launch.command, ["x"]);
    assert_eq!(launch.startup_prompts.len(), 1);
    assert_eq!(launch.startup_prompts[0].rule, "x.trust");
    assert_eq!(launch.startup_prompts[0].keys, ["Down", "Enter"]);
    assert!(launch.startup_prompts[0].choose.is_none());
    for (prompts, words) in [
        (
            "{ rule = \"x.nope\", keys = [\"Enter\"] }",
            "is not a waiting_user_answer rule",
        ),
        (
            "{ rule = \"x.ready\", keys = [\"Enter\"] }",
            "is not a waiting_user_answer rule",
        ),
        ("{ rule = \"x.trust\", keys = [] }", "keys is empty"),
        (
            "{ rule = \"x.trust\", keys = [\"Enter; kill-server\"] }",
            "is not a tmux key name",
        ),
    ] {
        let error = Provider::parse(&file(prompts), "x.toml").unwrap_err();
        assert!(error.message.contains(words), "{prompts}: {error}");
        assert_eq!(error.line, 4, "{prompts}");
    }
    // The built-in providers' prompts are valid.
    for id in ["claude_code", "codex", "gemini_cli"] {
        let set = super::super::providers::ProviderSet::builtin().unwrap();
        let provider = set.get(id).unwrap();
        assert!(
            !provider.launch.as_ref().unwrap().startup_prompts.is_empty(),
            "{id}"
        );
    }
}

#[test]
fn a_chosen_option_is_reached_with_arrows_first() {
    let set = super::super::providers::ProviderSet::builtin().unwrap();
    let claude = set.get("claude_code").unwrap();
    let prompt = &claude.launch.as_ref().unwrap().startup_prompts[0];
    // Claude Code 2.1.332 in a folder it does not know: "No, exit" is selected.
    let screen = [
        " Quick safety check: Is this a project you created or one you trust? (Like your own code",
        " Claude Code'll be able to read, edit, and execute files here.",
        " Security guide",
        " ❯ No, exit",
        "   Yes, I trust this folder",
        " Enter to confirm · Esc to cancel",
    ];
    assert_eq!(prompt.keys_for(&screen).unwrap(), ["Down", "Enter"]);
    // Already on it (an older wording): Enter alone.
    let older = [" ❯ 1. Yes, proceed", "   2. No, exit"];
    assert_eq!(prompt.keys_for(&older).unwrap(), ["Enter"]);
    let above = ["   Yes, I trust this folder", " ❯ No, exit"];
    assert_eq!(prompt.keys_for(&above).unwrap(), ["Up", "Enter"]);
    assert!(prompt.keys_for(&[" something else"]).is_err());
}

#[test]
fn and_conditions_look_at_other_regions() {
    let text = "id = \"x\"\n[[rules]]\nid = \"x.done\"\nstatus = \"completed\"\nregion = \"below_input\"\ncontains = [\"? for\"]\n[[rules.and]]\nregion = \"above_input\"\nlines = 5\nregex = ['(?m)^● ']\n";
    let provider = Provider::parse(text, "x.toml").unwrap();
    let conditions = &provider.rules[0].conditions;
    assert_eq!(conditions.len(), 2);
    assert_eq!(
        (conditions[1].region, conditions[1].lines),
        (Region::AboveInput, Some(5))
    );
}

#[test]
fn rules_without_conditions_and_duplicate_ids_are_refused() {
    let empty = "id = \"x\"\n[[rules]]\nid = \"x.a\"\nstatus = \"ready\"\n";
    assert!(
        Provider::parse(empty, "x.toml")
            .unwrap_err()
            .message
            .contains("no condition")
    );
    let duplicate = "id = \"x\"\n[[rules]]\nid = \"a\"\nstatus = \"ready\"\ncontains = [\"$\"]\n[[rules]]\nid = \"a\"\nstatus = \"ready\"\ncontains = [\"#\"]\n";
    let error = Provider::parse(duplicate, "x.toml").unwrap_err();
    assert_eq!(error.line, 7);
}
