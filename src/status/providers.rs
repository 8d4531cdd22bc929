//! The set of providers: the rule files built into panectl, and the user's own in
//! `$XDG_CONFIG_HOME/panectl/providers/` (a file with a built-in id replaces it), and how a
//! pane's provider is recognised.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::auto_answer::{self, AutoAnswer};
use super::process::ProcessEntry;
use super::rules::{Provider, RuleError, rule_files};

/// The built-in rule files, by name: the providers, then the layer of rules every provider
/// inherits (`common`).
pub const BUILTIN: &[(&str, &str)] = &[
    ("claude_code", include_str!("providers/claude_code.toml")),
    ("codex", include_str!("providers/codex.toml")),
    ("gemini_cli", include_str!("providers/gemini_cli.toml")),
    ("aider", include_str!("providers/aider.toml")),
    ("kiro_cli", include_str!("providers/kiro_cli.toml")),
    ("opencode", include_str!("providers/opencode.toml")),
    ("qwen_code", include_str!("providers/qwen_code.toml")),
    ("pi", include_str!("providers/pi.toml")),
    ("kilo", include_str!("providers/kilo.toml")),
    ("grok_cli", include_str!("providers/grok_cli.toml")),
    ("shell", include_str!("providers/shell.toml")),
    ("generic", include_str!("providers/generic.toml")),
    ("common", include_str!("providers/common.toml")),
];

/// The provider that stands for a plain shell.
pub const SHELL: &str = "shell";

/// Compiled providers, each with the layers' rules inherited. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct ProviderSet {
    providers: Vec<Arc<Provider>>,
    /// The layers (`kind = "layer"`), as read: kept so `explain` and the API can list them.
    layers: Vec<Arc<Provider>>,
    /// Where user overrides were read from.
    pub user_dir: Option<PathBuf>,
    /// The dialogs the user lets panectl answer (`auto_answer.toml` in `user_dir`): none
    /// unless that file exists.
    pub auto_answers: Arc<[AutoAnswer]>,
}

/// `$XDG_CONFIG_HOME/panectl/providers`, else `~/.config/panectl/providers`.
pub fn user_dir() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(config.join("panectl").join("providers"))
}

/// Puts `file` in `files`, in place of the one with its id if there is one.
fn replace_or_push(files: &mut Vec<Provider>, file: Provider) {
    match files.iter_mut().find(|p| p.id == file.id) {
        Some(slot) => *slot = file,
        None => files.push(file),
    }
}

impl ProviderSet {
    /// The built-in providers only.
    pub fn builtin() -> Result<ProviderSet, RuleError> {
        let files = Self::builtin_files()?;
        Ok(Self::assemble(files, None))
    }

    fn builtin_files() -> Result<Vec<Provider>, RuleError> {
        BUILTIN
            .iter()
            .map(|(name, text)| Provider::parse(text, &format!("<builtin {name}>")))
            .collect()
    }

    /// Each fork's base must be a provider that is no fork itself.
    fn check_forks(files: &[Provider]) -> Vec<RuleError> {
        files
            .iter()
            .filter_map(|fork| {
                let base = fork.extends.as_deref()?;
                let found = files
                    .iter()
                    .any(|p| &*p.id == base && !p.is_layer && p.extends.is_none());
                (!found).then(|| RuleError {
                    file: fork.source.clone(),
                    line: 1,
                    message: format!("extends {base:?}: no such provider (or it is a fork itself)"),
                })
            })
            .collect()
    }

    /// Splits rule files into layers and providers and gives every provider the layers' rules.
    fn assemble(files: Vec<Provider>, user_dir: Option<PathBuf>) -> ProviderSet {
        let (layers, providers): (Vec<Provider>, Vec<Provider>) =
            files.into_iter().partition(|file| file.is_layer);
        // Forks read their screens with their base's rules (before the layer is added to both).
        let forks: Vec<Provider> = providers
            .iter()
            .map(|provider| {
                let base = provider.extends.as_deref().and_then(|base| {
                    providers
                        .iter()
                        .find(|p| &*p.id == base && p.extends.is_none())
                });
                base.map_or_else(|| provider.clone(), |base| provider.fork_of(base))
            })
            .collect();
        let providers = forks
            .into_iter()
            .map(|provider| {
                let inherited = layers
                    .iter()
                    .fold(provider, |provider, layer| provider.inherit(layer));
                Arc::new(inherited)
            })
            .collect();
        ProviderSet {
            providers,
            layers: layers.into_iter().map(Arc::new).collect(),
            user_dir,
            auto_answers: Arc::new([]),
        }
    }

    /// The built-in providers with the user's files from `dir` on top (a file with a built-in
    /// id, provider or layer, replaces it). Every broken file is reported; nothing is loaded if
    /// one is broken (the caller keeps what it had).
    pub fn load(dir: Option<&Path>) -> Result<ProviderSet, Vec<RuleError>> {
        let mut files = Self::builtin_files().map_err(|e| vec![e])?;
        let Some(dir) = dir else {
            return Ok(Self::assemble(files, None));
        };
        let mut errors = Vec::new();
        // `auto_answer.toml` is not a provider: the dialogs the user lets panectl answer.
        let providers = rule_files(dir)
            .into_iter()
            .filter(|p| p.file_name().is_none_or(|n| n != auto_answer::FILE));
        for file in providers {
            match Provider::load(&file) {
                Ok(provider) => replace_or_push(&mut files, provider),
                Err(error) => errors.push(error),
            }
        }
        let auto_file = dir.join(auto_answer::FILE);
        let auto_answers = match std::fs::read_to_string(&auto_file) {
            Ok(text) => auto_answer::parse(&text, &auto_file.display().to_string())
                .map_err(|error| errors.push(error))
                .unwrap_or_default(),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => {
                errors.push(RuleError {
                    file: auto_file.display().to_string(),
                    line: 1,
                    message: format!("cannot read it: {error}"),
                });
                Vec::new()
            }
        };
        errors.extend(Self::check_forks(&files));
        if errors.is_empty() {
            let mut set = Self::assemble(files, Some(dir.to_path_buf()));
            set.auto_answers = auto_answers.into();
            Ok(set)
        } else {
            Err(errors)
        }
    }

    /// The layers every provider inherits.
    pub fn layers(&self) -> impl Iterator<Item = &Arc<Provider>> {
        self.layers.iter()
    }

    /// A provider by id.
    pub fn get(&self, id: &str) -> Option<&Arc<Provider>> {
        self.providers.iter().find(|p| &*p.id == id)
    }

    /// Every provider id, comma-separated: what an error about an unknown one lists.
    pub fn ids(&self) -> String {
        let ids: Vec<&str> = self.providers.iter().map(|p| &*p.id).collect();
        ids.join(", ")
    }

    /// Every provider.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Provider>> {
        self.providers.iter()
    }

    /// The provider of the processes in a pane: an agent CLI anywhere in the tree first (its
    /// name, or its command line for CLIs run by an interpreter), else the shell.
    pub fn detect_by_process(
        &self,
        command: &str,
        processes: &[ProcessEntry],
    ) -> Option<&Arc<Provider>> {
        let agents = self.providers.iter().filter(|p| &*p.id != SHELL);
        for provider in agents {
            let by_name = provider
                .detect
                .commands
                .iter()
                .any(|c| c == command || processes.iter().any(|p| &p.name == c));
            let by_arguments = provider.detect.arguments.iter().any(|a| {
                processes
                    .iter()
                    .any(|p| p.command_line.contains(a.as_str()))
            });
            if by_name || by_arguments {
                return Some(provider);
            }
        }
        // A shell owns the pane when it is the pane's first process, whatever runs in it now.
        let root = processes
            .first()
            .map(|p| p.name.as_str())
            .unwrap_or(command);
        self.get(SHELL).filter(|shell| {
            shell
                .detect
                .commands
                .iter()
                .any(|c| c == command || c == root)
        })
    }

    /// The provider whose banner is on the screen.
    pub fn detect_by_banner(&self, rows: &[String]) -> Option<&Arc<Provider>> {
        self.providers.iter().find(|provider| {
            !provider.detect.banner.is_empty()
                && provider
                    .detect
                    .banner
                    .iter()
                    .any(|banner| rows.iter().any(|row| row.contains(banner.as_str())))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_rule_file_compiles() {
        let set = ProviderSet::builtin().unwrap();
        let ids: Vec<&str> = set.iter().map(|p| &*p.id).collect();
        // The one list: every file of BUILTIN but the layers, in its order, each named as
        // its id.
        let listed: Vec<&str> = BUILTIN
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| *name != "common")
            .collect();
        assert_eq!(ids, listed);
        for provider in set.iter() {
            assert!(!provider.rules.is_empty(), "{} has no rules", provider.id);
            for rule in &provider.rules {
                // A fork's rules are its base's, under the base's ids.
                let own = provider.extends.as_deref().unwrap_or(&provider.id);
                let owner = rule.layer.as_deref().unwrap_or(own);
                assert!(
                    rule.id.starts_with(&format!("{owner}.")),
                    "rule {} of {}",
                    rule.id,
                    provider.id
                );
                // The provider's own rules were written from screens of a version.
                assert!(
                    rule.layer.is_some() || rule.seen_on.is_some(),
                    "rule {} says no version",
                    rule.id
                );
            }
        }
        let layers: Vec<&str> = set.layers().map(|l| &*l.id).collect();
        assert_eq!(layers, ["common"]);
        // Every agent inherits the whole layer; the shell only its dialog rules.
        let inherited = |id: &str| {
            set.get(id)
                .unwrap()
                .rules
                .iter()
                .filter(|r| r.layer.is_some())
                .count()
        };
        let layer_rules = set.layers().next().unwrap().rules.len();
        assert_eq!(inherited("codex"), layer_rules);
        assert_eq!(inherited("shell"), layer_rules - 2);
    }

    /// Claude Code's spinner tip names a key ("Press Enter to queue messages while Claude
    /// works"): above the input box it is no dialog (issue 31, item 10).
    #[test]
    fn a_spinner_tip_naming_a_key_is_no_dialog() {
        let set = ProviderSet::builtin().unwrap();
        let claude = set.get("claude_code").unwrap();
        // Read at run time: the published crate holds no fixtures (only its build needs to).
        let recorded = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/screens/claude_code/2.1.332/processing--slow-reply-2.txt"),
        )
        .expect("the recorded screen");
        let mut rows: Vec<&str> = recorded.lines().collect();
        let spinner = rows
            .iter()
            .position(|r| r.starts_with("* "))
            .expect("the spinner row");
        rows.insert(
            spinner + 1,
            "  ⎿  Tip: Press Enter to queue messages while Claude works",
        );
        let view = super::super::view::ScreenView::from_text(&rows.join("\n"), "", "claude");
        let detection = super::super::engine::evaluate(claude, &view);
        assert_eq!(
            detection.verdict,
            Some(crate::status::rules::Verdict::Processing),
            "{:?}",
            detection.rule
        );
        // The same words in a dialog's footer still make one.
        let dialog = "────────────\n Pick one\n ❯ 1. This\n   2. That\n Press enter to confirm";
        let view = super::super::view::ScreenView::from_text(dialog, "", "claude");
        let codex = set.get("codex").unwrap();
        assert_eq!(
            super::super::engine::evaluate(codex, &view).verdict,
            Some(crate::status::rules::Verdict::WaitingUserAnswer)
        );
    }

    #[test]
    fn a_fork_reads_its_screens_with_its_bases_rules() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("forked.toml"),
            "id = \"forked\"\nname = \"Forked\"\nextends = \"opencode\"\n[detect]\ncommands = [\"forked\"]\n[launch]\ncommand = [\"forked\"]\n",
        )
        .unwrap();
        let set = ProviderSet::load(Some(dir.path())).unwrap();
        let (fork, base) = (set.get("forked").unwrap(), set.get("opencode").unwrap());
        let ids = |p: &Provider| p.rules.iter().map(|r| r.id.to_string()).collect::<Vec<_>>();
        assert_eq!(ids(fork), ids(base));
        assert!(ids(fork).iter().any(|id| id == "opencode.permission"));
        assert_eq!(fork.rule_line.as_str(), base.rule_line.as_str());
        assert_eq!((fork.name.as_str(), &*fork.id), ("Forked", "forked"));
        assert_eq!(fork.launch.as_ref().unwrap().command, ["forked"]);
        assert_eq!(
            set.detect_by_process("forked", &[]).map(|p| &*p.id),
            Some("forked")
        );

        // A fork has no rules of its own, and its base must be a provider.
        let own = "id = \"f\"\nextends = \"opencode\"\n[[rules]]\nid = \"x\"\nstatus = \"ready\"\ncontains = [\">\"]\n";
        let refused = Provider::parse(own, "f.toml").unwrap_err();
        assert!(refused.message.contains("extends"), "{refused}");
        std::fs::write(
            dir.path().join("forked.toml"),
            "id = \"forked\"\nextends = \"nothing\"\n",
        )
        .unwrap();
        let errors = ProviderSet::load(Some(dir.path())).unwrap_err();
        assert!(errors[0].message.contains("no such provider"), "{errors:?}");
    }

    #[test]
    fn user_files_replace_and_extend_the_builtins() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("claude_code.toml"),
            "id = \"claude_code\"\n[[rules]]\nid = \"mine\"\nstatus = \"ready\"\ncontains = [\"$\"]\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("newcli.toml"),
            "id = \"newcli\"\n[detect]\ncommands = [\"newcli\"]\n[[rules]]\nid = \"n\"\nstatus = \"ready\"\ncontains = [\">\"]\n",
        )
        .unwrap();
        let set = ProviderSet::load(Some(dir.path())).unwrap();
        let own = |set: &ProviderSet, id: &str| -> Vec<String> {
            let provider = set.get(id).unwrap();
            let rules = provider.rules.iter().filter(|r| r.layer.is_none());
            rules.map(|r| r.id.to_string()).collect()
        };
        assert_eq!(own(&set, "claude_code"), ["mine"]);
        assert!(set.get("newcli").is_some());
        assert_eq!(
            set.detect_by_process("newcli", &[]).map(|p| &*p.id),
            Some("newcli")
        );

        // A user's layer with the built-in layer's id replaces it for every provider.
        std::fs::write(
            dir.path().join("common.toml"),
            "id = \"common\"\nkind = \"layer\"\n[[rules]]\nid = \"common.mine\"\nstatus = \"waiting_user_answer\"\npriority = 90\ncontains = [\"Pick one:\"]\n",
        )
        .unwrap();
        let set = ProviderSet::load(Some(dir.path())).unwrap();
        let inherited: Vec<&str> = set
            .get("codex")
            .unwrap()
            .rules
            .iter()
            .filter(|r| r.layer.is_some())
            .map(|r| &*r.id)
            .collect();
        assert_eq!(inherited, ["common.mine"]);
        assert!(set.get("common").is_none(), "a layer is no provider");

        std::fs::write(dir.path().join("broken.toml"), "id = \"b\"\n[[rules]\n").unwrap();
        let errors = ProviderSet::load(Some(dir.path())).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].file.ends_with("broken.toml") && errors[0].line == 2,
            "{}",
            errors[0]
        );
    }

    #[test]
    fn providers_are_recognised_by_process_and_banner() {
        let set = ProviderSet::builtin().unwrap();
        let node = |line: &str| ProcessEntry {
            pid: 2,
            name: "node".into(),
            command_line: line.into(),
        };
        assert_eq!(
            set.detect_by_process("claude", &[]).map(|p| &*p.id),
            Some("claude_code")
        );
        let gemini = [node(
            "node /usr/lib/node_modules/@google/gemini-cli/dist/index.js",
        )];
        assert_eq!(
            set.detect_by_process("node", &gemini).map(|p| &*p.id),
            Some("gemini_cli")
        );
        assert_eq!(
            set.detect_by_process("bash", &[]).map(|p| &*p.id),
            Some("shell")
        );
        assert_eq!(set.detect_by_process("vim", &[]).map(|p| &*p.id), None);
        let rows = vec!["  >_ OpenAI Codex (v0.171.0)".to_string()];
        assert_eq!(set.detect_by_banner(&rows).map(|p| &*p.id), Some("codex"));
    }
}
