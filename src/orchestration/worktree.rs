//! Git worktrees for launched agents (`panectl launch --worktree`): made from the launch
//! directory's repository with `git worktree add -b PREFIX/NAME DIR/NAME BASE`, looked at
//! (clean or dirty, ahead and behind their base, missing), and removed with
//! `git worktree remove`, which never deletes the branch.
//!
//! git runs as an argument vector (never through a shell), blocking: callers in the daemon run
//! these on a blocking thread. Names are plain words ([`super::names::is_plain_name`]) and a
//! base never starts with `-`, so nothing here reads as an option.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::inbox::WorktreeRecord;

/// Where worktrees go and how their branches are named (the daemon's `--worktree-dir` and
/// `--worktree-branch-prefix`, or `worktree_dir`/`worktree_branch_prefix` in config.toml's
/// `[daemon]` table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeSettings {
    /// The directory worktrees are made in (relative: to the repository's top directory).
    /// `None`: `<repo>/../<repo name>.worktrees`.
    pub dir: Option<PathBuf>,
    /// The prefix of their branches.
    pub branch_prefix: String,
}

impl Default for WorktreeSettings {
    fn default() -> Self {
        WorktreeSettings {
            dir: None,
            branch_prefix: DEFAULT_BRANCH_PREFIX.into(),
        }
    }
}

/// The default prefix of a worktree's branch.
pub const DEFAULT_BRANCH_PREFIX: &str = "panectl/";

/// Why a worktree could not be made, read or removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorktreeError {
    /// The directory is not in a git repository.
    #[error(
        "{0} is not in a git repository (a worktree is made from the launch directory's repository)"
    )]
    NotARepo(String),
    /// The branch, the directory or the name exists already.
    #[error("{0}")]
    Exists(String),
    /// The request is wrong (a name, a base).
    #[error("{0}")]
    Invalid(String),
    /// Removal refused: uncommitted changes, or commits nowhere else.
    #[error("{0}")]
    Refused(String),
    /// git failed.
    #[error("git {args}: {message}")]
    Git {
        /// Its arguments.
        args: String,
        /// What it said.
        message: String,
    },
}

/// Runs git in `dir`; its trimmed output, or an error with what it said.
fn git(dir: &Path, args: &[&str]) -> Result<String, WorktreeError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| WorktreeError::Git {
            args: args.join(" "),
            message: e.to_string(),
        })?;
    if !output.status.success() {
        return Err(WorktreeError::Git {
            args: args.join(" "),
            message: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// The top directory of the repository `cwd` is in.
pub fn repo_top(cwd: &Path) -> Result<PathBuf, WorktreeError> {
    git(cwd, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|_| WorktreeError::NotARepo(cwd.display().to_string()))
}

/// Makes the worktree `name` from the repository `cwd` is in, on a new branch from `base`
/// (default: the current branch, else `HEAD`'s commit). Its record has no pane yet.
pub fn create(
    settings: &WorktreeSettings,
    cwd: &Path,
    name: &str,
    base: Option<&str>,
) -> Result<WorktreeRecord, WorktreeError> {
    if !super::names::is_plain_name(name) {
        return Err(WorktreeError::Invalid(format!(
            "worktree name {name:?}: use 1-64 letters, digits, '_', '-' or '.'"
        )));
    }
    let repo = repo_top(cwd)?;
    let base = match base {
        Some(base) if base.is_empty() || base.starts_with('-') => {
            return Err(WorktreeError::Invalid(format!(
                "base {base:?} is not a ref"
            )));
        }
        Some(base) => base.to_string(),
        None => match git(&repo, &["symbolic-ref", "--quiet", "--short", "HEAD"]) {
            Ok(branch) => branch,
            Err(_) => git(&repo, &["rev-parse", "HEAD"])?,
        },
    };
    git(
        &repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{base}^{{commit}}"),
        ],
    )
    .map_err(|_| {
        WorktreeError::Invalid(format!(
            "base {base:?} is not a commit of {}",
            repo.display()
        ))
    })?;
    let branch = format!("{}{name}", settings.branch_prefix);
    if git(
        &repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
    )
    .is_ok()
    {
        return Err(WorktreeError::Exists(format!(
            "branch {branch} exists already in {} (choose another worktree name)",
            repo.display()
        )));
    }
    let dir = match &settings.dir {
        Some(dir) => repo.join(dir),
        None => {
            let repo_name = repo
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "repo".into());
            repo.parent()
                .unwrap_or(Path::new("/"))
                .join(format!("{repo_name}.worktrees"))
        }
    };
    let path = dir.join(name);
    if path.exists() {
        return Err(WorktreeError::Exists(format!(
            "{} exists already (choose another worktree name)",
            path.display()
        )));
    }
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| WorktreeError::Invalid(format!("cannot make {}: {e}", dir.display())))?;
    }
    let path_text = path.to_string_lossy().into_owned();
    git(
        &repo,
        &["worktree", "add", "-b", &branch, &path_text, &base],
    )?;
    Ok(WorktreeRecord {
        name: name.to_string(),
        repo: repo.to_string_lossy().into_owned(),
        path: path_text,
        branch,
        base,
        pane: None,
        agent_name: None,
        created_at: crate::inbox::now_ms(),
    })
}

/// What a worktree looks like now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WorktreeState {
    /// Its directory is gone (deleted by hand).
    pub missing: bool,
    /// It has uncommitted changes or untracked files (`git status --porcelain`); absent when
    /// missing or unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty: Option<bool>,
    /// Commits on its branch not on its base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ahead: Option<u64>,
    /// Commits on its base not on its branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind: Option<u64>,
}

/// Looks at a worktree with git.
pub fn state(record: &WorktreeRecord) -> WorktreeState {
    let path = Path::new(&record.path);
    if !path.is_dir() {
        return WorktreeState {
            missing: true,
            dirty: None,
            ahead: None,
            behind: None,
        };
    }
    let dirty = git(path, &["status", "--porcelain"])
        .ok()
        .map(|s| !s.is_empty());
    let counts = git(
        path,
        &[
            "rev-list",
            "--left-right",
            "--count",
            &format!("{}...HEAD", record.base),
        ],
    )
    .ok();
    let mut numbers = counts
        .as_deref()
        .unwrap_or_default()
        .split_whitespace()
        .map(|n| n.parse::<u64>().ok());
    let behind = numbers.next().flatten();
    let ahead = numbers.next().flatten();
    WorktreeState {
        missing: false,
        dirty,
        ahead,
        behind,
    }
}

/// Removes a worktree's directory with `git worktree remove` (a directory deleted by hand is
/// pruned). Unless `force`, a worktree with uncommitted changes, or with commits on no remote
/// and not on its base, is refused. The branch is never deleted.
pub fn remove(record: &WorktreeRecord, force: bool) -> Result<(), WorktreeError> {
    let repo = Path::new(&record.repo);
    let path = Path::new(&record.path);
    if !path.is_dir() {
        git(repo, &["worktree", "prune"])?;
        return Ok(());
    }
    if !force {
        check_removable(record)?;
    }
    let mut args = vec!["worktree", "remove"];
    if force {
        args.push("--force");
    }
    args.push(&record.path);
    git(repo, &args)?;
    Ok(())
}

/// Refuses a worktree whose removal would lose work: uncommitted changes or untracked files,
/// or commits on no remote and not on its base. A directory deleted by hand has nothing to
/// lose.
pub fn check_removable(record: &WorktreeRecord) -> Result<(), WorktreeError> {
    let path = Path::new(&record.path);
    if !path.is_dir() {
        return Ok(());
    }
    if !git(path, &["status", "--porcelain"])?.is_empty() {
        return Err(WorktreeError::Refused(format!(
            "worktree {} has uncommitted changes (commit them, or remove with --force)",
            record.name
        )));
    }
    let unsaved = git(
        path,
        &[
            "rev-list",
            "--count",
            "HEAD",
            "--not",
            &record.base,
            "--remotes",
        ],
    )?;
    if unsaved != "0" {
        return Err(WorktreeError::Refused(format!(
            "worktree {} has {unsaved} commit(s) on {} that are on no remote and not on {} \
             (the branch would keep them, but push or merge them first, or remove with --force)",
            record.name, record.branch, record.base
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("proj");
        std::fs::create_dir(&repo).unwrap();
        for args in [
            &["init", "-q", "-b", "main"][..],
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "one",
            ],
        ] {
            git(&repo, args).unwrap();
        }
        (dir, std::fs::canonicalize(repo).unwrap())
    }

    #[test]
    fn a_worktree_is_made_looked_at_and_removed_keeping_its_branch() {
        let (_dir, repo) = repo();
        let settings = WorktreeSettings::default();
        let made = create(&settings, &repo, "w1", None).unwrap();
        assert_eq!(made.branch, "panectl/w1");
        assert_eq!(made.base, "main");
        assert_eq!(
            Path::new(&made.path),
            repo.parent().unwrap().join("proj.worktrees/w1")
        );
        let clean = state(&made);
        assert_eq!(
            (clean.dirty, clean.ahead, clean.behind),
            (Some(false), Some(0), Some(0))
        );
        // The same name again: the branch exists.
        let again = create(&settings, &repo, "w1", None).unwrap_err();
        assert!(matches!(again, WorktreeError::Exists(_)), "{again}");
        std::fs::write(Path::new(&made.path).join("f"), "x").unwrap();
        assert_eq!(state(&made).dirty, Some(true));
        let refused = remove(&made, false).unwrap_err();
        assert!(refused.to_string().contains("uncommitted"), "{refused}");
        git(Path::new(&made.path), &["add", "f"]).unwrap();
        git(
            Path::new(&made.path),
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "-m",
                "two",
            ],
        )
        .unwrap();
        assert_eq!(state(&made).ahead, Some(1));
        let refused = remove(&made, false).unwrap_err();
        assert!(refused.to_string().contains("on no remote"), "{refused}");
        remove(&made, true).unwrap();
        assert!(!Path::new(&made.path).exists());
        git(&repo, &["rev-parse", "--verify", "refs/heads/panectl/w1"]).unwrap();
    }

    #[test]
    fn refusals_name_what_is_wrong() {
        let (dir, repo) = repo();
        let plain = dir.path().join("plain");
        std::fs::create_dir(&plain).unwrap();
        let settings = WorktreeSettings {
            dir: Some(".panectl/worktrees".into()),
            branch_prefix: "agents/".into(),
        };
        let error = create(&settings, &plain, "w", None).unwrap_err();
        assert_eq!(error, WorktreeError::NotARepo(plain.display().to_string()));
        assert!(error.to_string().contains(&plain.display().to_string()));
        assert!(matches!(
            create(&settings, &repo, "w", Some("--evil")),
            Err(WorktreeError::Invalid(_))
        ));
        assert!(matches!(
            create(&settings, &repo, "w", Some("nosuch")),
            Err(WorktreeError::Invalid(_))
        ));
        assert!(matches!(
            create(&settings, &repo, "a b", None),
            Err(WorktreeError::Invalid(_))
        ));
        let made = create(&settings, &repo, "w", Some("main")).unwrap();
        assert_eq!(made.branch, "agents/w");
        assert_eq!(Path::new(&made.path), repo.join(".panectl/worktrees/w"));
        // Deleted by hand: missing, and removing it prunes git's record of it.
        std::fs::remove_dir_all(&made.path).unwrap();
        assert!(state(&made).missing);
        remove(&made, false).unwrap();
        assert!(
            !git(&repo, &["worktree", "list"])
                .unwrap()
                .contains("worktrees/w")
        );
    }
}
