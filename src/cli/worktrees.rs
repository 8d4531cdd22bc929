//! `panectl worktrees`: the git worktrees launches made (`launch --worktree`), each with its
//! branch, its agent, and what git says of it now; `panectl worktrees remove NAME` removes one
//! (never its branch).

use std::process::ExitCode;

use panectl::api::routes::Route;
use panectl::api::wire::{WorktreeListing, WorktreeRecord};

use super::client::{block_on, client, print_pretty, printable};
use super::table::Table;
use super::{Run, ServerArgs};

/// What `panectl worktrees` is given.
#[derive(Debug, clap::Args)]
pub struct WorktreesArgs {
    #[command(subcommand)]
    action: Option<WorktreesAction>,
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
}

/// `worktrees remove`: what `panectl worktrees` does besides listing.
#[derive(Debug, clap::Subcommand)]
enum WorktreesAction {
    /// Remove a worktree (`git worktree remove`; one deleted by hand is pruned) and forget it.
    /// Its branch stays. Refused while its agent runs, and, without `--force`, when it has
    /// uncommitted changes or commits on no remote and not on its base.
    Remove {
        /// The worktree's name (as `panectl worktrees` lists it).
        name: String,
        /// Remove it even with uncommitted changes or unsaved commits (the branch keeps the
        /// commits; uncommitted changes are lost).
        #[arg(long)]
        force: bool,
    },
}

impl Run for WorktreesArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        match &self.action {
            None => list(server, self.json),
            Some(WorktreesAction::Remove { name, force }) => remove(server, name, *force),
        }
    }
}

/// `panectl worktrees [--json]`.
fn list(server: &ServerArgs, json: bool) -> anyhow::Result<ExitCode> {
    let api = client(server)?;
    let path = Route::Worktrees {}.path();
    let listed: Vec<WorktreeListing> = block_on(async { Ok(api.get_json(&path).await?) })?;
    if json {
        print_pretty(&listed)?;
        return Ok(ExitCode::SUCCESS);
    }
    if listed.is_empty() {
        println!("no worktree was made by a launch (panectl launch --worktree NAME)");
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&[
        "NAME", "BRANCH", "AGENT", "STATE", "AHEAD", "BEHIND", "PATH",
    ])
    .right_aligned(4)
    .right_aligned(5);
    for listing in &listed {
        table.row(row(listing));
    }
    table.print()?;
    Ok(ExitCode::SUCCESS)
}

/// A worktree as a row of the table.
fn row(listing: &WorktreeListing) -> Vec<String> {
    let record = &listing.record;
    let agent = match (&record.pane, listing.agent_status) {
        (Some(pane), Some(status)) => format!("{pane} {status}"),
        (Some(pane), None) => format!("{pane} closed"),
        (None, _) => "-".into(),
    };
    let state = if listing.state.missing {
        "missing"
    } else {
        match listing.state.dirty {
            Some(true) => "dirty",
            Some(false) => "clean",
            None => "?",
        }
    };
    let count = |n: Option<u64>| n.map_or_else(|| "-".into(), |n| n.to_string());
    vec![
        printable(&record.name),
        printable(&record.branch),
        agent,
        state.into(),
        count(listing.state.ahead),
        count(listing.state.behind),
        printable(&record.path),
    ]
}

/// `panectl worktrees remove NAME [--force]`.
fn remove(server: &ServerArgs, name: &str, force: bool) -> anyhow::Result<ExitCode> {
    let api = client(server)?;
    let path = format!("{}?force={force}", Route::Worktree { name }.path());
    let removed: WorktreeRecord = block_on(async { Ok(api.delete_json(&path).await?) })?;
    println!(
        "removed worktree {} ({}); branch {} kept",
        printable(&removed.name),
        printable(&removed.path),
        printable(&removed.branch)
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use panectl::orchestration::worktree::WorktreeState;
    use panectl::status::Status;

    #[test]
    fn a_row_says_where_the_agent_is_and_what_git_says() {
        let mut listing = WorktreeListing {
            record: WorktreeRecord {
                name: "fix".into(),
                repo: "/r".into(),
                path: "/r.worktrees/fix".into(),
                branch: "panectl/fix".into(),
                base: "main".into(),
                pane: Some("%3".into()),
                agent_name: None,
                created_at: 1,
            },
            state: WorktreeState {
                missing: false,
                dirty: Some(true),
                ahead: Some(2),
                behind: Some(0),
            },
            agent_status: Some(Status::Processing),
        };
        assert_eq!(
            row(&listing),
            [
                "fix",
                "panectl/fix",
                "%3 processing",
                "dirty",
                "2",
                "0",
                "/r.worktrees/fix"
            ]
        );
        listing.agent_status = None;
        listing.state = WorktreeState {
            missing: true,
            dirty: None,
            ahead: None,
            behind: None,
        };
        assert_eq!(
            row(&listing),
            [
                "fix",
                "panectl/fix",
                "%3 closed",
                "missing",
                "-",
                "-",
                "/r.worktrees/fix"
            ]
        );
    }
}
