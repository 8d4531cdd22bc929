//! `panectl close`: asks a pane's agent to exit its own way, then closes the pane.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use panectl::api::routes::Route;
use panectl::api::wire::{CloseBody, CloseHow, Closed};

use super::client::{block_on, client, print_pretty, printable};
use super::{Run, ServerArgs};

/// Close an agent: cancel its pending messages, ask it to exit its own way (its provider's
/// `[close]` text and keys; else C-c, C-d), then close its pane, killing it after `--timeout`.
#[derive(Debug, Args)]
pub struct CloseArgs {
    /// The pane (`%N`, `session:window.pane`, or the agent's name).
    #[arg(add = super::complete::panes())]
    pane: String,
    /// How long the agent has to exit by itself before its pane is killed (default 10s).
    #[arg(long, value_name = "DURATION", value_parser = super::duration::parse_or_zero)]
    timeout: Option<std::time::Duration>,
    /// Then remove the git worktree the agent was launched in (its branch stays). Refused,
    /// with nothing closed, when it has uncommitted changes or commits on no remote and not on
    /// its base, unless `--force`.
    #[arg(long)]
    remove_worktree: bool,
    /// With `--remove-worktree`: remove it even so.
    #[arg(long, requires = "remove_worktree")]
    force: bool,
    /// Print the outcome (`pane`, `how`, `cancelled`, what was sent) as JSON.
    #[arg(long)]
    json: bool,
}

impl Run for CloseArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        let client = client(server)?;
        let path = Route::PaneClose { pane: &self.pane }.path();
        let body = CloseBody {
            timeout_seconds: self.timeout.map(|t| t.as_secs_f64()),
            remove_worktree: self.remove_worktree,
            force: self.force,
        };
        let closed: Closed = block_on(async { Ok(client.post_json(&path, &body).await?) })?;
        if self.json {
            print_pretty(&closed)?;
        } else {
            writeln!(std::io::stdout().lock(), "{}", summary(&closed))?;
        }
        // Closed, but the worktree asked to go is still there: not done.
        Ok(if closed.worktree_error.is_some() {
            ExitCode::from(super::exit::NOT_REACHED)
        } else {
            ExitCode::SUCCESS
        })
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.pane)
    }
}

/// The outcome in words: what was sent (saying so when it was the fallback), how the pane
/// closed and which messages were cancelled.
fn summary(closed: &Closed) -> String {
    let mut sent: Vec<String> = closed.text.iter().map(|t| format!("{t:?}")).collect();
    sent.extend(closed.keys.iter().cloned());
    let sent = printable(&sent.join(" "));
    let how = match closed.how {
        CloseHow::Exited => "it exited",
        CloseHow::Killed => "it did not exit in time and its pane was killed",
    };
    let mut text = if closed.fallback {
        let whose = match &closed.provider {
            Some(provider) => format!("{provider} has no [close] section"),
            None => "no agent recognised".to_string(),
        };
        format!("closed {}: {whose}, sent {sent}; {how}", closed.pane)
    } else {
        format!("closed {}: sent {sent}; {how}", closed.pane)
    };
    if !closed.finished_first.is_empty() {
        let ids: Vec<String> = closed.finished_first.iter().map(i64::to_string).collect();
        text.push_str(&format!(
            "; waited for the delivery of messages {} to finish",
            ids.join(", ")
        ));
    }
    if !closed.cancelled.is_empty() {
        let ids: Vec<String> = closed.cancelled.iter().map(i64::to_string).collect();
        text.push_str(&format!("; cancelled messages {}", ids.join(", ")));
    }
    if let Some(name) = &closed.removed_worktree {
        text.push_str(&format!(
            "; removed worktree {} (its branch stays)",
            printable(name)
        ));
    }
    if let Some(error) = &closed.worktree_error {
        text.push_str(&format!("; the worktree stays: {}", printable(error)));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closed(how: CloseHow, provider: Option<&str>, fallback: bool) -> Closed {
        Closed {
            pane: "%3".into(),
            how,
            provider: provider.map(str::to_string),
            text: (!fallback).then(|| "/exit".to_string()),
            keys: if fallback {
                vec!["C-c".into(), "C-d".into()]
            } else {
                vec!["Enter".into()]
            },
            fallback,
            cancelled: vec![],
            finished_first: vec![],
            removed_worktree: None,
            worktree_error: None,
        }
    }

    #[test]
    fn the_summary_says_what_became_of_the_worktree() {
        let mut removed = closed(CloseHow::Exited, Some("claude_code"), false);
        removed.removed_worktree = Some("fix".into());
        assert!(
            summary(&removed).ends_with("; removed worktree fix (its branch stays)"),
            "{}",
            summary(&removed)
        );
        let mut kept = closed(CloseHow::Exited, Some("claude_code"), false);
        kept.worktree_error = Some("worktree fix has uncommitted changes".into());
        assert!(
            summary(&kept).ends_with("; the worktree stays: worktree fix has uncommitted changes")
        );
    }

    #[test]
    fn the_summary_says_what_was_sent_and_how_it_closed() {
        assert_eq!(
            summary(&closed(CloseHow::Exited, Some("claude_code"), false)),
            "closed %3: sent \"/exit\" Enter; it exited"
        );
        let mut killed = closed(CloseHow::Killed, None, true);
        killed.cancelled = vec![4, 5];
        killed.finished_first = vec![3];
        assert_eq!(
            summary(&killed),
            "closed %3: no agent recognised, sent C-c C-d; it did not exit in time and its pane \
             was killed; waited for the delivery of messages 3 to finish; cancelled messages 4, 5"
        );
        assert!(
            summary(&closed(CloseHow::Exited, Some("mine"), true))
                .contains("mine has no [close] section, sent C-c C-d")
        );
    }

    #[test]
    fn the_timeout_is_a_duration() {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(["panectl", "close", "w", "--timeout", "500ms"]);
        let Ok(crate::cli::Cli {
            command: crate::cli::Command::Close(args),
            ..
        }) = cli
        else {
            panic!("not parsed: {cli:?}");
        };
        assert_eq!(args.timeout, Some(std::time::Duration::from_millis(500)));
        assert!(
            crate::cli::Cli::try_parse_from(["panectl", "close", "w", "--timeout", "soon"])
                .is_err()
        );
    }
}
