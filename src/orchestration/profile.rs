//! Launch profiles: a named recipe for `panectl launch --profile NAME` (provider, arguments,
//! environment, model, system prompt, first message, worktree, placement). A profile is a TOML
//! file, `$XDG_CONFIG_HOME/panectl/profiles/NAME.toml` (else `~/.config/panectl/profiles`), or
//! one of the built-in examples (`profiles/*.toml` beside this file); a user file with a
//! built-in's name replaces it.
//!
//! ```toml
//! description = "..."                 # shown by `panectl profiles`
//! provider = "claude_code"            # required: a provider with a [launch] command
//! args = ["--permission-mode", "plan"]# after the provider's command (before the caller's)
//! model = "sonnet"                    # with the provider's [launch] model_flag
//! system_prompt = "..."               # or system_prompt_file = "x.md" (beside the profile)
//! first_message = "..."               # queued in the agent's inbox once it is ready
//! cwd = "/abs/dir"                    # or "~/dir"
//! from_env = ["ANTHROPIC_API_KEY"]    # variables taken from the caller's environment
//! name = "reviewer"                   # the agent's (and window's) name
//! session = "work"                    # the tmux session to open the window in
//! worktree = true                     # or "NAME": launch in a new git worktree
//! base = "main"                       # the worktree's base ref (default HEAD)
//! [env]                               # literal variables
//! RUST_LOG = "info"
//! ```
//!
//! Values of `from_env` are read by the client at launch and sent with the request: they are
//! never in a profile file, the inbox database or a log.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::names::is_plain_name;

/// The built-in profiles: name and text.
pub const BUILTIN: &[(&str, &str)] = &[
    ("explorer", include_str!("profiles/explorer.toml")),
    ("implementer", include_str!("profiles/implementer.toml")),
    ("reviewer", include_str!("profiles/reviewer.toml")),
];

/// Why a profile was refused: the file, the line and column, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct ProfileError {
    /// The file (`<builtin NAME>` for a built-in one).
    pub file: String,
    /// The 1-based line (1 when the error is about the file as a whole).
    pub line: usize,
    /// The 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Where a profile comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Shipped in the binary.
    Builtin,
    /// A file of the user's profiles directory.
    User,
}

/// A profile's worktree policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WorktreePolicy {
    /// `true`: a worktree named after the agent; `false`: none.
    On(bool),
    /// A worktree of this name.
    Named(String),
}

/// The name of the worktree a profile asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorktreeName {
    /// Named after the agent it is made for.
    AfterAgent,
    /// This name.
    Named(String),
}

/// A profile, as read and checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// Its name (the file's stem).
    pub name: String,
    /// Built in or the user's.
    pub source: Source,
    /// Its file, for a user profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The provider.
    pub provider: String,
    /// Arguments after the provider's command.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Literal environment variables.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Variables taken from the caller's environment at launch (names only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from_env: Vec<String>,
    /// The working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The system prompt (read from `system_prompt_file` when given so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The first message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_message: Option<String>,
    /// The agent's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_name: Option<String>,
    /// The session to open the window in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The worktree policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreePolicy>,
    /// The worktree's base ref.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileSpec {
    description: Option<String>,
    provider: Spanned<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<Spanned<String>, String>,
    #[serde(default)]
    from_env: Vec<Spanned<String>>,
    cwd: Option<Spanned<String>>,
    model: Option<Spanned<String>>,
    system_prompt: Option<Spanned<String>>,
    system_prompt_file: Option<Spanned<String>>,
    first_message: Option<String>,
    name: Option<Spanned<String>>,
    session: Option<Spanned<String>>,
    worktree: Option<Spanned<WorktreePolicy>>,
    base: Option<Spanned<String>>,
}

/// The 1-based line and column of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Whether `name` can be an environment variable's name.
pub fn is_env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `~/x` with the home directory.
fn expand_home(path: &str) -> String {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest).to_string_lossy().into_owned(),
        _ => path.to_string(),
    }
}

impl Profile {
    /// Reads a profile from `text`. `file` names it in errors; `dir` is where a
    /// `system_prompt_file` is looked for (none for a built-in profile).
    pub fn parse(
        name: &str,
        text: &str,
        source: Source,
        file: &str,
        dir: Option<&Path>,
    ) -> Result<Profile, ProfileError> {
        let error = |offset: usize, message: String| {
            let (line, column) = line_column(text, offset);
            ProfileError {
                file: file.to_string(),
                line,
                column,
                message,
            }
        };
        if !is_plain_name(name) {
            return Err(error(
                0,
                format!("profile name {name:?}: use 1-64 letters, digits, '_', '-' or '.'"),
            ));
        }
        let spec: ProfileSpec = toml::from_str(text).map_err(|e| {
            error(
                e.span().map_or(0, |s| s.start),
                e.message().trim().to_string(),
            )
        })?;
        if spec.provider.get_ref().trim().is_empty() {
            return Err(error(
                spec.provider.span().start,
                "provider is empty".into(),
            ));
        }
        for key in spec.env.keys() {
            if !is_env_name(key.get_ref()) {
                return Err(error(
                    key.span().start,
                    format!("environment variable name {:?} is not valid", key.get_ref()),
                ));
            }
        }
        for key in &spec.from_env {
            if !is_env_name(key.get_ref()) {
                return Err(error(
                    key.span().start,
                    format!("from_env: {:?} is not a variable name", key.get_ref()),
                ));
            }
            if spec.env.keys().any(|k| k.get_ref() == key.get_ref()) {
                return Err(error(
                    key.span().start,
                    format!("{:?} is both in [env] and in from_env", key.get_ref()),
                ));
            }
        }
        let cwd = match &spec.cwd {
            Some(cwd) => {
                let expanded = expand_home(cwd.get_ref());
                if !expanded.starts_with('/') {
                    return Err(error(
                        cwd.span().start,
                        "cwd must be an absolute path (or start with ~/)".into(),
                    ));
                }
                Some(expanded)
            }
            None => None,
        };
        for (what, value) in [("name", &spec.name), ("session", &spec.session)] {
            if let Some(value) = value
                && !is_plain_name(value.get_ref())
            {
                return Err(error(
                    value.span().start,
                    format!(
                        "{what} {:?}: use 1-64 letters, digits, '_', '-' or '.'",
                        value.get_ref()
                    ),
                ));
            }
        }
        if let Some(model) = &spec.model
            && model.get_ref().trim().is_empty()
        {
            return Err(error(model.span().start, "model is empty".into()));
        }
        if let Some(worktree) = &spec.worktree
            && let WorktreePolicy::Named(name) = worktree.get_ref()
            && !is_plain_name(name)
        {
            return Err(error(
                worktree.span().start,
                format!("worktree name {name:?}: use 1-64 letters, digits, '_', '-' or '.'"),
            ));
        }
        if let Some(base) = &spec.base
            && (base.get_ref().is_empty() || base.get_ref().starts_with('-'))
        {
            return Err(error(base.span().start, "base is not a ref".into()));
        }
        let system_prompt = match (&spec.system_prompt, &spec.system_prompt_file) {
            (Some(_), Some(path)) => {
                return Err(error(
                    path.span().start,
                    "give system_prompt or system_prompt_file, not both".into(),
                ));
            }
            (Some(text), None) => Some(text.get_ref().clone()),
            (None, Some(path)) => {
                let Some(dir) = dir else {
                    return Err(error(
                        path.span().start,
                        "a built-in profile cannot read a file".into(),
                    ));
                };
                let full = dir.join(expand_home(path.get_ref()));
                let read = std::fs::read_to_string(&full).map_err(|e| {
                    error(
                        path.span().start,
                        format!("cannot read {}: {e}", full.display()),
                    )
                })?;
                Some(read)
            }
            (None, None) => None,
        };
        Ok(Profile {
            name: name.to_string(),
            source,
            file: dir.map(|_| file.to_string()),
            description: spec.description,
            provider: spec.provider.into_inner().trim().to_string(),
            args: spec.args,
            env: spec
                .env
                .into_iter()
                .map(|(k, v)| (k.into_inner(), v))
                .collect(),
            from_env: spec.from_env.into_iter().map(Spanned::into_inner).collect(),
            cwd,
            model: spec.model.map(Spanned::into_inner),
            system_prompt: system_prompt
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty()),
            first_message: spec.first_message,
            agent_name: spec.name.map(Spanned::into_inner),
            session: spec.session.map(Spanned::into_inner),
            worktree: spec.worktree.map(Spanned::into_inner),
            base: spec.base.map(Spanned::into_inner),
        })
    }

    /// Reads the profile file at `path` (its name is the file's stem).
    pub fn load(path: &Path) -> Result<Profile, ProfileError> {
        let file = path.display().to_string();
        let whole = |message: String| ProfileError {
            file: file.clone(),
            line: 1,
            column: 1,
            message,
        };
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(path).map_err(|e| whole(format!("cannot read: {e}")))?;
        Profile::parse(&name, &text, Source::User, &file, path.parent())
    }

    /// The worktree this profile asks for, if any.
    pub fn worktree_name(&self) -> Option<WorktreeName> {
        match &self.worktree {
            None | Some(WorktreePolicy::On(false)) => None,
            Some(WorktreePolicy::On(true)) => Some(WorktreeName::AfterAgent),
            Some(WorktreePolicy::Named(name)) => Some(WorktreeName::Named(name.clone())),
        }
    }

    /// The profile as `panectl profiles show` prints it: literal environment values are
    /// replaced by `<set>` (the names are shown, never the values).
    pub fn redacted(&self) -> Profile {
        let mut shown = self.clone();
        for value in shown.env.values_mut() {
            *value = "<set>".into();
        }
        shown
    }
}

/// The user's profiles directory: `$XDG_CONFIG_HOME/panectl/profiles`, else
/// `~/.config/panectl/profiles`.
pub fn user_dir() -> Option<PathBuf> {
    crate::status::providers::user_dir()
        .and_then(|providers| providers.parent().map(|p| p.join("profiles")))
}

/// The profile files of `dir`, sorted (none when it does not exist).
fn user_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Every profile of `dir` (the user's directory when `None`) and the built-in ones (a user
/// file with a built-in's name replaces it), sorted by name, with the files refused.
pub fn all(dir: Option<&Path>) -> (Vec<Profile>, Vec<ProfileError>) {
    let mut profiles = Vec::new();
    let mut errors = Vec::new();
    for (name, text) in BUILTIN {
        match Profile::parse(
            name,
            text,
            Source::Builtin,
            &format!("<builtin {name}>"),
            None,
        ) {
            Ok(profile) => profiles.push(profile),
            Err(error) => errors.push(error),
        }
    }
    let dir = dir.map(Path::to_path_buf).or_else(user_dir);
    for path in dir.as_deref().map(user_files).unwrap_or_default() {
        match Profile::load(&path) {
            Ok(profile) => {
                profiles.retain(|p: &Profile| p.name != profile.name);
                profiles.push(profile);
            }
            Err(error) => errors.push(error),
        }
    }
    profiles.sort_by(|a, b| a.name.cmp(&b.name));
    (profiles, errors)
}

/// The profile named `name`: the user's file if there is one, else the built-in one.
pub fn find(dir: Option<&Path>, name: &str) -> Result<Profile, ProfileError> {
    let missing = |message: String| ProfileError {
        file: format!("<profile {name}>"),
        line: 1,
        column: 1,
        message,
    };
    if !is_plain_name(name) {
        return Err(missing(format!("{name:?} is not a profile name")));
    }
    let dir = dir.map(Path::to_path_buf).or_else(user_dir);
    if let Some(dir) = &dir {
        let path = dir.join(format!("{name}.toml"));
        if path.exists() {
            return Profile::load(&path);
        }
    }
    match BUILTIN.iter().find(|(n, _)| *n == name) {
        Some((name, text)) => Profile::parse(
            name,
            text,
            Source::Builtin,
            &format!("<builtin {name}>"),
            None,
        ),
        None => Err(missing(format!(
            "no profile {name:?} (built in: {}; yours go in {})",
            BUILTIN
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", "),
            dir.map_or("$XDG_CONFIG_HOME/panectl/profiles".into(), |d| d
                .display()
                .to_string())
        ))),
    }
}

/// A variable a profile takes from the caller's environment that is not set there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("profile {profile} takes {variable} from your environment, and it is not set")]
pub struct UnsetVariable {
    /// The profile.
    pub profile: String,
    /// The variable.
    pub variable: String,
}

/// The values of a profile's `from_env` variables from this process's environment (the
/// caller's, for the CLI and MCP): an error names the first one not set.
pub fn caller_env(profile: &Profile) -> Result<BTreeMap<String, String>, UnsetVariable> {
    let mut values = BTreeMap::new();
    for name in &profile.from_env {
        let value = std::env::var(name).map_err(|_| UnsetVariable {
            profile: profile.name.clone(),
            variable: name.clone(),
        })?;
        values.insert(name.clone(), value);
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Profile, ProfileError> {
        Profile::parse("p", text, Source::User, "p.toml", None)
    }

    #[test]
    fn builtin_profiles_are_valid_and_name_real_providers() {
        let providers = crate::status::providers::ProviderSet::builtin().unwrap();
        for (name, text) in BUILTIN {
            let profile =
                Profile::parse(name, text, Source::Builtin, name, None).unwrap_or_else(|e| {
                    panic!("{e}");
                });
            let provider = providers.get(&profile.provider).expect("a known provider");
            assert!(provider.launch.is_some(), "{name}");
            assert!(profile.system_prompt.is_some(), "{name}");
        }
    }

    #[test]
    fn a_full_profile_is_read() {
        let profile = parse(
            "provider = \"claude_code\"\nargs = [\"--x\"]\nmodel = \"sonnet\"\n\
             system_prompt = \"  be brief \"\nfirst_message = \"hi\"\ncwd = \"/tmp\"\n\
             from_env = [\"TOKEN\"]\nname = \"rev\"\nsession = \"s\"\nworktree = \"w\"\n\
             base = \"main\"\n[env]\nA = \"1\"\n",
        )
        .unwrap();
        assert_eq!(profile.provider, "claude_code");
        assert_eq!(profile.system_prompt.as_deref(), Some("be brief"));
        assert_eq!(
            profile.worktree_name(),
            Some(WorktreeName::Named("w".to_string()))
        );
        assert_eq!(profile.env["A"], "1");
        assert_eq!(profile.redacted().env["A"], "<set>");
        assert_eq!(profile.from_env, ["TOKEN"]);
        let on = parse("provider = \"codex\"\nworktree = true\n").unwrap();
        assert_eq!(on.worktree_name(), Some(WorktreeName::AfterAgent));
        let off = parse("provider = \"codex\"\nworktree = false\n").unwrap();
        assert_eq!(off.worktree_name(), None);
    }

    #[test]
    fn errors_name_the_file_line_and_column() {
        let cases = [
            (
                "provider = \"x\"\nmodle = \"y\"\n",
                2,
                1,
                "unknown field `modle`",
            ),
            (
                "provider = \"x\"\n[env]\n  \"1A\" = \"v\"\n",
                3,
                3,
                "not valid",
            ),
            (
                "provider = \"x\"\nfrom_env = [\"OK\", \"B-C\"]\n",
                2,
                19,
                "not a variable",
            ),
            ("provider = \"x\"\ncwd = \"rel\"\n", 2, 7, "absolute"),
            ("provider = \"x\"\nname = \"#{x}\"\n", 2, 8, "name"),
            (
                "provider = \"x\"\nworktree = \"a b\"\n",
                2,
                12,
                "worktree name",
            ),
            (
                "provider = \"x\"\nsystem_prompt = \"a\"\nsystem_prompt_file = \"b\"\n",
                3,
                22,
                "not both",
            ),
            ("args = []\n", 1, 1, "missing field `provider`"),
            ("provider = \"x\"\nargs = \"one\"\n", 2, 8, "invalid type"),
        ];
        for (text, line, column, message) in cases {
            let error = parse(text).unwrap_err();
            assert_eq!(error.file, "p.toml");
            assert_eq!(
                (error.line, error.column),
                (line, column),
                "{text:?}: {error}"
            );
            assert!(error.message.contains(message), "{text:?}: {error}");
            assert!(
                error
                    .to_string()
                    .starts_with(&format!("p.toml:{line}:{column}: "))
            );
        }
    }

    #[test]
    fn user_files_replace_builtins_and_read_prompt_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("brief.md"), "# Brief\nReview it.\n").unwrap();
        std::fs::write(
            dir.path().join("reviewer.toml"),
            "provider = \"codex\"\nsystem_prompt_file = \"brief.md\"\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("broken.toml"), "provider = \n").unwrap();
        let (profiles, errors) = all(Some(dir.path()));
        let reviewer = profiles.iter().find(|p| p.name == "reviewer").unwrap();
        assert_eq!(reviewer.source, Source::User);
        assert_eq!(reviewer.provider, "codex");
        assert_eq!(
            reviewer.system_prompt.as_deref(),
            Some("# Brief\nReview it.")
        );
        assert!(profiles.iter().any(|p| p.name == "implementer"));
        assert_eq!(errors.len(), 1);
        assert!(errors[0].file.ends_with("broken.toml"), "{:?}", errors[0]);
        assert_eq!(errors[0].line, 1);
        assert_eq!(
            find(Some(dir.path()), "reviewer").unwrap().provider,
            "codex"
        );
        assert_eq!(
            find(Some(dir.path()), "implementer").unwrap().source,
            Source::Builtin
        );
        assert!(
            find(Some(dir.path()), "nope")
                .unwrap_err()
                .message
                .contains("no profile")
        );
    }

    #[test]
    fn caller_env_names_a_missing_variable() {
        let profile =
            parse("provider = \"x\"\nfrom_env = [\"PANECTL_TEST_SURELY_UNSET\"]\n").unwrap();
        let error = caller_env(&profile).unwrap_err();
        assert_eq!(error.variable, "PANECTL_TEST_SURELY_UNSET");
        assert!(
            error.to_string().contains("PANECTL_TEST_SURELY_UNSET"),
            "{error}"
        );
        let none = parse("provider = \"x\"\n").unwrap();
        assert!(caller_env(&none).unwrap().is_empty());
    }
}
