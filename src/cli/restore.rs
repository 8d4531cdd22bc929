//! `panectl restore`: start again the agents panectl launched (or learned of through their
//! hooks) that no longer run, after tmux or the machine restarted: each in its session,
//! resuming its conversation where the CLI can. The variables launches took from their
//! caller's environment are read from this command's environment.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use panectl::api::routes::Route;
use panectl::api::wire::{RestoreBody, RestoreOutcome, Restored};
use panectl::orchestration::launch_plan::CallerEnv;

use super::client::{block_on, client, print_pretty, printable};
use super::{Run, ServerArgs};

/// What `panectl restore` is given.
#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    /// Say what would be done, and do nothing.
    #[arg(long)]
    dry_run: bool,
    /// How long each agent may take to be ready.
    #[arg(long, value_name = "DURATION", value_parser = super::duration::parse)]
    timeout: Option<std::time::Duration>,
    /// Print the agents and what became of each as JSON.
    #[arg(long)]
    json: bool,
}

impl Run for RestoreArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        restore(server, self)
    }
}

/// `panectl restore [--dry-run] [--json]`: exit code 0 unless an agent could not be started.
fn restore(server: &ServerArgs, args: &RestoreArgs) -> anyhow::Result<ExitCode> {
    let api = client(server)?;
    let path = Route::Restore {}.path();
    let timeout_seconds = args.timeout.map(|t| t.as_secs_f64());
    // First what would be done, for the names of the variables to take from here.
    let plan: Vec<Restored> = block_on(async {
        let body = RestoreBody {
            dry_run: true,
            timeout_seconds,
            ..RestoreBody::default()
        };
        Ok(api.post_json(&path, &body).await?)
    })?;
    let done = if args.dry_run {
        plan
    } else {
        let mut values = BTreeMap::new();
        for name in plan.iter().flat_map(|r| &r.from_env) {
            if let Ok(value) = std::env::var(name) {
                values.insert(name.clone(), value);
            }
        }
        block_on(async {
            let body = RestoreBody {
                dry_run: false,
                caller_env: CallerEnv(values),
                timeout_seconds,
            };
            Ok(api.post_json(&path, &body).await?)
        })?
    };
    let failed = done.iter().any(|r| r.outcome == RestoreOutcome::Failed);
    if args.json {
        print_pretty(&done)?;
    } else {
        let mut out = std::io::stdout().lock();
        if done.is_empty() {
            writeln!(out, "no agent was launched to restore")?;
        }
        for restored in &done {
            writeln!(out, "{}", line(restored))?;
        }
    }
    Ok(if failed {
        ExitCode::from(super::exit::NOT_REACHED)
    } else {
        ExitCode::SUCCESS
    })
}

/// One agent in words: `alpha (claude_code, work): resumed 5f2c... in %4`.
fn line(restored: &Restored) -> String {
    let who = format!(
        "{} ({}, session {})",
        printable(&restored.key),
        printable(&restored.provider),
        printable(&restored.session)
    );
    let pane = restored.pane.as_deref().unwrap_or("-");
    let conversation = restored.conversation.as_deref().unwrap_or_default();
    match restored.outcome {
        RestoreOutcome::Running => format!("{who}: runs in {pane}"),
        RestoreOutcome::WouldResume => {
            format!(
                "{who}: would resume conversation {}",
                printable(conversation)
            )
        }
        RestoreOutcome::WouldStartFresh => format!("{who}: would start fresh"),
        RestoreOutcome::Resumed => format!(
            "{who}: resumed conversation {} in {pane}",
            printable(conversation)
        ),
        RestoreOutcome::StartedFresh => match &restored.error {
            Some(why) => format!("{who}: started fresh in {pane} ({})", printable(why)),
            None => format!("{who}: started fresh in {pane}"),
        },
        RestoreOutcome::Failed => format!(
            "{who}: not restored: {}",
            printable(restored.error.as_deref().unwrap_or_default())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_outcome_reads_as_a_sentence() {
        let mut restored = Restored {
            key: "alpha".into(),
            name: Some("alpha".into()),
            provider: "claude_code".into(),
            session: "work".into(),
            conversation: Some("5f2c".into()),
            outcome: RestoreOutcome::Resumed,
            pane: Some("%4".into()),
            from_env: Vec::new(),
            error: None,
        };
        assert_eq!(
            line(&restored),
            "alpha (claude_code, session work): resumed conversation 5f2c in %4"
        );
        restored.outcome = RestoreOutcome::Failed;
        restored.error = Some("no \x1b[31m".into());
        assert_eq!(
            line(&restored),
            "alpha (claude_code, session work): not restored: no \\x1b[31m"
        );
        restored.outcome = RestoreOutcome::StartedFresh;
        restored.error = Some("not resumed: exit 42".into());
        assert_eq!(
            line(&restored),
            "alpha (claude_code, session work): started fresh in %4 (not resumed: exit 42)"
        );
    }
}
