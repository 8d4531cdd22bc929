//! `panectl hook install PROVIDER` / `hook uninstall PROVIDER`: panectl's hook in the CLI's own
//! configuration (its provider's `[hook_config]`), for agents the user starts themselves. The
//! edits are `panectl::agent_hooks`'s; this reads and writes the file: in place through a
//! symlink, the file's mode kept, a new file 0600 in directories made 0700, all or nothing
//! (a temporary file renamed over it).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use panectl::agent_hooks::{self, Edit};

use super::client::printable;
use super::values::ProviderParser;

/// What `panectl hook` does besides being a hook.
#[derive(Debug, Subcommand)]
pub enum HookAction {
    /// Write panectl's hook into a CLI's own configuration (Claude Code and Gemini CLI
    /// settings, Codex's `notify`), merged with what is there; again does nothing.
    Install(ConfigArgs),
    /// Remove panectl's hook from a CLI's configuration, and nothing else.
    Uninstall(ConfigArgs),
}

/// Which CLI's configuration, and which of its files.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// The provider whose CLI to configure (`claude_code`, `gemini_cli`, `codex`).
    #[arg(value_parser = ProviderParser::new())]
    provider: String,
    /// The user's configuration (`~/.claude/settings.json`...): every session (the default).
    #[arg(long, conflicts_with = "project")]
    user: bool,
    /// The project's configuration (`.claude/settings.local.json`...) under `--dir`.
    #[arg(long)]
    project: bool,
    /// The project's directory (default: the current one).
    #[arg(long, value_name = "DIR", requires = "project")]
    dir: Option<PathBuf>,
    /// Show the change as a diff and write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Runs `hook install` or `hook uninstall`.
pub fn run(action: &HookAction) -> anyhow::Result<ExitCode> {
    let (args, installing) = match action {
        HookAction::Install(args) => (args, true),
        HookAction::Uninstall(args) => (args, false),
    };
    let provider = super::detect::provider_rules(&args.provider)?;
    let Some(config) = &provider.hook_config else {
        eprintln!(
            "panectl: {} has no hooks panectl can install: its status comes from its screen{}",
            provider.id,
            if provider.signals.osc_7501 {
                " and the reports in its output"
            } else {
                ""
            }
        );
        return Ok(ExitCode::from(super::exit::REFUSED));
    };
    let path = if args.project {
        let Some(relative) = &config.project else {
            eprintln!("panectl: {} has no project configuration", provider.id);
            return Ok(ExitCode::from(super::exit::REFUSED));
        };
        let dir = match &args.dir {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().context("the current directory")?,
        };
        dir.join(relative)
    } else {
        expand_home(&config.user)?
    };
    let shown = printable(&path.display().to_string());
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(error).with_context(|| format!("cannot read {shown}")),
    };
    let edited = if installing {
        let events = agent_hooks::hook_events(&provider);
        agent_hooks::install(config, &events, &existing, &program()?)
    } else {
        agent_hooks::uninstall(config, &existing)
    };
    let edit = match edited {
        Ok(edit) => edit,
        Err(error) => {
            eprintln!("panectl: {shown}: {}", printable(&error.to_string()));
            return Ok(ExitCode::from(super::exit::REFUSED));
        }
    };
    if edit.changes.is_empty() {
        let state = if installing { "in" } else { "not in" };
        println!("panectl's hook is {state} {shown} already: nothing to do");
        return Ok(ExitCode::SUCCESS);
    }
    if args.dry_run {
        print_diff(&shown, &existing, &edit)?;
        eprintln!("(dry run: {shown} was not written)");
        return Ok(ExitCode::SUCCESS);
    }
    write_in_place(&path, &edit.text).with_context(|| format!("cannot write {shown}"))?;
    let what = if installing {
        "added to"
    } else {
        "removed from"
    };
    println!(
        "panectl's hook {what} {shown}: {}",
        printable(&edit.changes.join(", "))
    );
    Ok(ExitCode::SUCCESS)
}

/// `~/REST` under `$HOME`.
fn expand_home(path: &str) -> anyhow::Result<PathBuf> {
    match path.strip_prefix("~/") {
        Some(rest) => {
            let home = std::env::var_os("HOME").context("$HOME is not set")?;
            Ok(PathBuf::from(home).join(rest))
        }
        None => Ok(PathBuf::from(path)),
    }
}

/// The program the hook runs: `panectl` when that name on `$PATH` is this binary (the file
/// stays right when it moves with an update), else this binary's path.
fn program() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("where panectl runs from")?;
    let same = |candidate: &Path| {
        std::fs::canonicalize(candidate).ok() == std::fs::canonicalize(&exe).ok()
    };
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| same(&dir.join("panectl"))));
    Ok(if on_path {
        "panectl".to_string()
    } else {
        exe.to_string_lossy().into_owned()
    })
}

fn print_diff(shown: &str, before: &str, edit: &Edit) -> anyhow::Result<()> {
    let diff = similar::TextDiff::from_lines(before, edit.text.as_str());
    let mut out = std::io::stdout().lock();
    write!(
        out,
        "{}",
        diff.unified_diff()
            .context_radius(3)
            .header(&format!("{shown} (now)"), &format!("{shown} (after)"))
    )?;
    Ok(())
}

/// Writes `text` to `path` all at once (a temporary file renamed over it), through a symlink
/// to its target, keeping an existing file's mode; a new file is 0600, and directories made
/// for it 0700.
fn write_in_place(path: &Path, text: &str) -> anyhow::Result<()> {
    let target = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(_) => path.to_path_buf(),
    };
    let dir = target.parent().context("the file has no directory")?;
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mode = std::fs::metadata(&target)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0o600);
    let name = target
        .file_name()
        .context("the file has no name")?
        .to_string_lossy()
        .into_owned();
    let temporary = dir.join(format!(".{name}.panectl-{}", std::process::id()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        file.sync_all()?;
        std::fs::rename(&temporary, &target)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    Ok(written?)
}
