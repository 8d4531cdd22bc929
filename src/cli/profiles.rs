//! `panectl profiles`: the launch profiles (built in and the user's), one shown, checked, or a
//! CLI Agent Orchestrator (CAO) agent profile imported as one. Profiles are read here, on the
//! client's machine: no daemon is needed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use panectl::orchestration::profile::{self, Profile, ProfileError, Source, WorktreeName};
use panectl::orchestration::profile_import;

use super::client::printable;
use super::table::Table;
use super::{Run, ServerArgs};

/// What `panectl profiles` is given.
#[derive(Debug, clap::Args)]
pub struct ProfilesArgs {
    #[command(subcommand)]
    action: Option<ProfilesAction>,
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
}

/// `profiles show|check|import`: what `panectl profiles` does besides listing.
#[derive(Debug, clap::Subcommand)]
enum ProfilesAction {
    /// Print one profile as it will be used (literal environment values hidden).
    Show {
        /// The profile's name.
        #[arg(add = super::complete::profiles())]
        name: String,
        /// Print it as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check every profile (or one): exit code 2 with each error as FILE:LINE:COLUMN.
    Check {
        /// Only this profile.
        #[arg(add = super::complete::profiles())]
        name: Option<String>,
    },
    /// Convert a CAO agent profile (Markdown with YAML front matter; the body is the system
    /// prompt) into `$XDG_CONFIG_HOME/panectl/profiles/NAME.toml`, and say what could not be
    /// carried over.
    Import {
        /// The CAO profile (`.md`).
        file: PathBuf,
        /// The profile's name (default: the front matter's `name`, else the file's stem).
        #[arg(long)]
        name: Option<String>,
        /// The provider, when the front matter names none panectl knows.
        #[arg(long, value_parser = super::values::ProviderParser::new())]
        provider: Option<String>,
        /// Replace a profile of that name.
        #[arg(long)]
        force: bool,
    },
}

impl Run for ProfilesArgs {
    fn run(&self, _server: &ServerArgs) -> anyhow::Result<ExitCode> {
        match &self.action {
            None => list(self.json),
            Some(ProfilesAction::Show { name, json }) => show(name, *json),
            Some(ProfilesAction::Check { name }) => check(name.as_deref()),
            Some(ProfilesAction::Import {
                file,
                name,
                provider,
                force,
            }) => import(file, name.as_deref(), provider.as_deref(), *force),
        }
    }
}

/// `builtin` or `user`.
fn source_word(source: &Source) -> &'static str {
    match source {
        Source::Builtin => "builtin",
        Source::User => "user",
    }
}

/// `panectl profiles [--json]`: name, source, provider and description of each; files that
/// cannot be read are named on stderr.
fn list(json: bool) -> anyhow::Result<ExitCode> {
    let (profiles, errors) = profile::all(None);
    for error in &errors {
        eprintln!("panectl: {}", printable(&error.to_string()));
    }
    if json {
        let shown: Vec<Profile> = profiles.iter().map(Profile::redacted).collect();
        super::client::print_pretty(&shown)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["NAME", "SOURCE", "PROVIDER", "DESCRIPTION"]);
    for profile in &profiles {
        table.row(vec![
            printable(&profile.name),
            source_word(&profile.source).to_string(),
            printable(&profile.provider),
            printable(profile.description.as_deref().unwrap_or_default()),
        ]);
    }
    table.print()?;
    Ok(ExitCode::SUCCESS)
}

/// `panectl profiles show NAME [--json]`.
fn show(name: &str, json: bool) -> anyhow::Result<ExitCode> {
    let found = profile::find(None, name)?.redacted();
    if json {
        super::client::print_pretty(&found)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = std::io::stdout().lock();
    let mut line = |key: &str, value: &str| writeln!(out, "{key:<14} {}", printable(value));
    line("name", &found.name)?;
    line("source", source_word(&found.source))?;
    if let Some(file) = &found.file {
        line("file", file)?;
    }
    line("provider", &found.provider)?;
    for (key, value) in [
        ("description", &found.description),
        ("model", &found.model),
        ("cwd", &found.cwd),
        ("agent name", &found.agent_name),
        ("session", &found.session),
        ("base", &found.base),
    ] {
        if let Some(value) = value {
            line(key, value)?;
        }
    }
    if !found.args.is_empty() {
        line("args", &format!("{:?}", found.args))?;
    }
    for (key, value) in &found.env {
        line("env", &format!("{key}={value}"))?;
    }
    for key in &found.from_env {
        line("from env", key)?;
    }
    match found.worktree_name() {
        Some(WorktreeName::Named(name)) => line("worktree", &name)?,
        Some(WorktreeName::AfterAgent) => line("worktree", "(named after the agent)")?,
        None => {}
    }
    if let Some(prompt) = &found.first_message {
        line("first message", prompt)?;
    }
    if let Some(prompt) = &found.system_prompt {
        writeln!(out, "system prompt:")?;
        for row in prompt.lines() {
            writeln!(out, "  {}", printable(row))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The providers a profile may name: the built-in ones and the user's rule files (by file
/// stem; the daemon may use another rules directory, and says so at launch).
fn known_providers() -> Vec<String> {
    let mut ids: Vec<String> = super::values::builtin_ids()
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Some(dir) = panectl::status::providers::user_dir()
        && let Ok(entries) = std::fs::read_dir(dir)
    {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "toml")
                && let Some(stem) = path.file_stem()
            {
                ids.push(stem.to_string_lossy().into_owned());
            }
        }
    }
    ids
}

/// An error for a profile whose provider is unknown, at the `provider` key's line.
fn unknown_provider(found: &Profile, known: &[String]) -> Option<ProfileError> {
    if known.contains(&found.provider) {
        return None;
    }
    let (file, text) = match (&found.source, &found.file) {
        (Source::User, Some(file)) => (file.clone(), std::fs::read_to_string(file).ok()),
        _ => (
            format!("<builtin {}>", found.name),
            profile::BUILTIN
                .iter()
                .find(|(n, _)| *n == found.name)
                .map(|(_, t)| t.to_string()),
        ),
    };
    let (line, column) = text
        .as_deref()
        .and_then(|text| {
            text.lines().enumerate().find_map(|(i, row)| {
                let key = row.trim_start();
                let equals = row.find('=')?;
                let value = row[equals + 1..].len() - row[equals + 1..].trim_start().len();
                // The value's first character, 1-based, as the parser's errors count.
                key.starts_with("provider")
                    .then_some((i + 1, row[..equals + 1 + value].chars().count() + 1))
            })
        })
        .unwrap_or((1, 1));
    Some(ProfileError {
        file,
        line,
        column,
        message: format!(
            "unknown provider {:?} ({})",
            found.provider,
            known.join(", ")
        ),
    })
}

/// `panectl profiles check [NAME]`: every error, exit code 2 when there is one.
fn check(name: Option<&str>) -> anyhow::Result<ExitCode> {
    let known = known_providers();
    let (profiles, mut errors) = match name {
        Some(name) => match profile::find(None, name) {
            Ok(found) => (vec![found], Vec::new()),
            Err(error) => (Vec::new(), vec![error]),
        },
        None => profile::all(None),
    };
    errors.extend(profiles.iter().filter_map(|p| unknown_provider(p, &known)));
    for error in &errors {
        eprintln!("{}", printable(&error.to_string()));
    }
    if errors.is_empty() {
        println!(
            "{} profile{} ok",
            profiles.len(),
            if profiles.len() == 1 { "" } else { "s" }
        );
        return Ok(ExitCode::SUCCESS);
    }
    Ok(ExitCode::from(super::exit::REFUSED))
}

/// Writes `text` to `path` with mode 0600, its directory made with mode 0700.
fn write_private(path: &Path, text: &str, replace: bool) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("cannot make {}", dir.display()))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).mode(0o600);
    if replace {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let mut file = options.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            anyhow::anyhow!("{} exists already (--force replaces it)", path.display())
        } else {
            anyhow::anyhow!("cannot write {}: {e}", path.display())
        }
    })?;
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    Ok(())
}

/// `panectl profiles import FILE.md [--name N] [--provider P] [--force]`.
fn import(
    file: &Path,
    name: Option<&str>,
    provider: Option<&str>,
    force: bool,
) -> anyhow::Result<ExitCode> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut imported = profile_import::import_cao(&text, &stem, provider)
        .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    if let Some(name) = name {
        imported.name = name.to_string();
    }
    let dir = profile::user_dir()
        .ok_or_else(|| anyhow::anyhow!("no profiles directory (set HOME or XDG_CONFIG_HOME)"))?;
    let path = dir.join(format!("{}.toml", imported.name));
    // Checked as a profile before it is written: the name and what the conversion made.
    Profile::parse(
        &imported.name,
        &imported.toml,
        Source::User,
        &path.display().to_string(),
        Some(&dir),
    )
    .map_err(|e| anyhow::anyhow!("the converted profile is not valid: {e}"))?;
    write_private(&path, &imported.toml, force)?;
    println!("{}", path.display());
    for dropped in &imported.dropped {
        eprintln!("not carried over: {}", printable(dropped));
    }
    Ok(ExitCode::SUCCESS)
}
