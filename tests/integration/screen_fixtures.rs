//! The screens recorded from real agent CLIs (`fixtures/screens/`, `fixtures/incoming/`,
//! `fixtures/holdout/`; see `fixtures/screens/README.md`): every one
//! must be classified as the status it was recorded in, by the built-in rules, from its plain
//! and its ANSI capture alike.

use std::path::{Path, PathBuf};

use panectl::status::providers::ProviderSet;
use panectl::status::{Status, classify, engine, view_of_capture};

fn fixture_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("fixtures/screens").flatten() {
        let path = entry.path();
        if path.is_dir() {
            fixture_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

/// Where recorded screens are: `fixtures/screens/` (the first recordings),
/// `fixtures/incoming/` (flows and versions recorded later, the part the rules were written from)
/// and `fixtures/holdout/` (recorded with them and set aside: the rules were scored on it, never
/// written from it; see its README).
const FIXTURE_ROOTS: &[&str] = &["fixtures/screens", "fixtures/incoming", "fixtures/holdout"];

/// Every recorded screen's `.json`, sorted.
fn recorded_screens() -> Vec<PathBuf> {
    let mut metas = Vec::new();
    for root in FIXTURE_ROOTS {
        fixture_files(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join(root),
            &mut metas,
        );
    }
    metas.sort();
    metas
}

#[test]
fn every_recorded_screen_is_classified_as_recorded() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let metas = recorded_screens();
    let set = ProviderSet::builtin().unwrap();
    let mut failures = Vec::new();
    let mut per_provider = std::collections::BTreeMap::<String, usize>::new();
    for meta_path in &metas {
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(meta_path).unwrap()).expect("fixture metadata");
        let provider_id = meta["provider"].as_str().expect("provider");
        let expected =
            Status::parse(meta["status"].as_str().expect("status")).expect("a status word");
        let title = meta["title"].as_str().unwrap_or_default();
        let provider = set
            .get(provider_id)
            .unwrap_or_else(|| panic!("no rules for {provider_id}"));
        for extension in ["txt", "ansi"] {
            let capture = meta_path.with_extension(extension);
            let bytes = std::fs::read(&capture)
                .unwrap_or_else(|_| panic!("{} is missing", capture.display()));
            // The pane's foreground command, where the recording says (a shell's rules read it).
            let command = meta["command"].as_str().unwrap_or_default();
            let view = view_of_capture(&bytes, title, command);
            let (status, detection) = classify(provider, &view);
            *per_provider.entry(provider_id.to_string()).or_default() += 1;
            // A retry says how it retries, where the CLI shows it (Gemini CLI shows only its
            // and Qwen Code show only their spinner); nothing else reads as a retry.
            let scenario = meta["scenario"].as_str().unwrap_or_default();
            let retrying = scenario.contains("-retrying-")
                && !matches!(provider_id, "gemini_cli" | "qwen_code");
            let detail = detection
                .detail
                .as_deref()
                .unwrap_or_default()
                .to_lowercase();
            if retrying != (detail.contains("retrying") || detail.contains("reconnecting")) {
                failures.push(format!(
                    "{}: a retry is {retrying}, the detail is {:?}",
                    capture.strip_prefix(&root).unwrap_or(&capture).display(),
                    detection.detail
                ));
            }
            if status != expected {
                let reasons: Vec<String> = engine::explain(provider, &view)
                    .iter()
                    .map(|r| {
                        format!(
                            "    {} {}: {}",
                            r.priority,
                            r.rule,
                            if r.matched { "matches" } else { &r.reason }
                        )
                    })
                    .collect();
                failures.push(format!(
                    "{}: expected {expected}, got {status} (rule {:?})\n{}",
                    capture.strip_prefix(&root).unwrap_or(&capture).display(),
                    detection.rule,
                    reasons.join("\n")
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of the recorded screens are misclassified:\n{}",
        failures.len(),
        failures.join("\n")
    );
    for provider in ["claude_code", "codex", "gemini_cli"] {
        assert!(
            per_provider.get(provider).copied().unwrap_or(0) >= 10,
            "too few {provider} screens: {per_provider:?}"
        );
    }
}

/// The dialog layer (`providers/common.toml`) on its own, without a rule of the CLI's: it must
/// say `waiting_user_answer` for every recorded screen that waits for the user, and for no
/// other. This is what catches a dialog of a CLI version nobody wrote a rule for.
#[test]
fn the_dialog_layer_alone_tells_every_recorded_dialog_from_every_other_screen() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let metas = recorded_screens();
    let set = ProviderSet::builtin().unwrap();
    let (mut dialogs, mut others, mut failures) = (0, 0, Vec::new());
    for meta_path in &metas {
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(meta_path).unwrap()).expect("fixture metadata");
        let provider_id = meta["provider"].as_str().expect("provider");
        let waits = meta["status"] == "waiting_user_answer";
        let mut layer_only = (**set.get(provider_id).expect("provider")).clone();
        layer_only.rules.retain(|rule| rule.layer.is_some());
        assert!(
            !layer_only.rules.is_empty(),
            "{provider_id} inherits no layer rule"
        );
        let capture = meta_path.with_extension("txt");
        let view = view_of_capture(&std::fs::read(&capture).unwrap(), "", "");
        let (status, detection) = classify(&layer_only, &view);
        if waits {
            dialogs += 1;
        } else {
            others += 1;
        }
        if (status == Status::WaitingUserAnswer) != waits {
            failures.push(format!(
                "{}: recorded {}, the layer alone says {status} (rule {:?})",
                capture.strip_prefix(&root).unwrap_or(&capture).display(),
                meta["status"],
                detection.rule
            ));
        }
    }
    assert!(
        dialogs >= 10 && others >= 50,
        "{dialogs} dialogs, {others} others"
    );
    assert!(
        failures.is_empty(),
        "the dialog layer is wrong on {} of {} screens:\n{}",
        failures.len(),
        dialogs + others,
        failures.join("\n")
    );
}

/// Every built-in provider has a recorded screen of each status its own rules claim (a `ready`
/// rule: an `idle` or a `completed` one), or says in its rule file why it has none
/// (`unrecorded`), which docs/status.md repeats; and docs/status.md names every built-in
/// provider. Adding a provider is a rule file plus recordings, and nothing ships unrecorded
/// unnoticed.
#[test]
fn every_builtin_provider_has_recordings_of_what_its_rules_claim() {
    use panectl::status::rules::Verdict;
    let set = ProviderSet::builtin().unwrap();
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/status.md"))
            .expect("docs/status.md");
    let mut recorded =
        std::collections::BTreeMap::<String, std::collections::BTreeSet<String>>::new();
    for meta_path in recorded_screens() {
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&meta_path).unwrap()).expect("metadata");
        recorded
            .entry(meta["provider"].as_str().unwrap_or_default().to_string())
            .or_default()
            .insert(meta["status"].as_str().unwrap_or_default().to_string());
    }
    let mut problems = Vec::new();
    for provider in set.iter() {
        let id = provider.id.to_string();
        if !docs.contains(&format!("`{id}`")) {
            problems.push(format!("docs/status.md does not name `{id}`"));
        }
        let have = recorded.get(&id).cloned().unwrap_or_default();
        let mut missing = std::collections::BTreeSet::new();
        for rule in provider.rules.iter().filter(|r| r.layer.is_none()) {
            let wanted: &[&str] = match rule.verdict {
                Verdict::Ready => &["idle", "completed"],
                other => &[other.as_str()],
            };
            if !wanted.iter().any(|status| have.contains(*status)) {
                missing.insert(wanted.join(" or "));
            }
        }
        match (&provider.unrecorded, missing.is_empty()) {
            (None, true) => {}
            (None, false) => problems.push(format!(
                "{id}: its rules claim {missing:?} but no screen of it is recorded (record it, \
                 or say why not with `unrecorded` in its rule file)"
            )),
            (Some(_), _) if !have.is_empty() => problems.push(format!(
                "{id}: says it is unrecorded, yet screens of it are recorded"
            )),
            (Some(_), _) => {
                let said = docs
                    .lines()
                    .any(|l| l.contains(&format!("`{id}`")) && l.contains("not recorded"));
                if !said {
                    problems.push(format!(
                        "{id} is unrecorded: docs/status.md must say so on a line naming `{id}` \
                         (\"not recorded\")"
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
