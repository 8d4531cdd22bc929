//! `panectl wait`: wait until a pane's status is one of some statuses.

use std::process::ExitCode;

use panectl::api::routes::Route;
use panectl::api::wire::{WaitAnswer, WaitBody};
use panectl::status::Status;

use super::client::{block_on, client, print_pretty, printable_error};
use super::{Run, ServerArgs};

/// What `panectl wait` is given.
#[derive(Debug, clap::Args)]
pub struct WaitArgs {
    /// The pane.
    #[arg(add = super::complete::panes())]
    pane: String,
    /// The statuses, comma-separated (idle, completed, waiting_user_answer, ...).
    #[arg(long, value_delimiter = ',', required = true)]
    until: Vec<Status>,
    /// Give up after this long.
    #[arg(long, value_name = "DURATION", value_parser = super::duration::parse)]
    timeout: Option<std::time::Duration>,
    /// Print the answer (`reached`, `status`, `waited_seconds`) as one JSON document,
    /// reached or not.
    #[arg(long)]
    json: bool,
}

impl Run for WaitArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        wait(server, &self.pane, &self.until, self.timeout, self.json)
    }

    fn pane_mut(&mut self) -> Option<&mut String> {
        Some(&mut self.pane)
    }
}

/// `panectl wait PANE --until S,S [--timeout DURATION]`: exit code 0 when a status was reached
/// (its name printed), else as every command ([`super::exit`]).
fn wait(
    server: &ServerArgs,
    pane: &str,
    until: &[Status],
    timeout: Option<std::time::Duration>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let result = (|| -> anyhow::Result<WaitAnswer> {
        let client = client(server)?;
        let path = Route::PaneWait { pane }.path();
        let body = WaitBody {
            until: until
                .iter()
                .map(|status| status.as_str().to_string())
                .collect(),
            timeout_seconds: timeout.map(|t| t.as_secs_f64()),
        };
        block_on(async { Ok(client.post_json(&path, &body).await?) })
    })();
    match result {
        Ok(answer) if json => {
            print_pretty(&answer)?;
            Ok(if answer.reached {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(super::exit::NOT_REACHED)
            })
        }
        Ok(answer) if answer.reached => {
            println!("{}", answer.status);
            Ok(ExitCode::SUCCESS)
        }
        Ok(answer) => {
            eprintln!(
                "panectl: timed out after {:.1} s; {} is {}",
                answer.waited_seconds, answer.pane, answer.status
            );
            Ok(ExitCode::from(super::exit::NOT_REACHED))
        }
        Err(error) => {
            eprintln!("panectl: {}", printable_error(&error));
            Ok(super::exit::of_error(&error))
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use panectl::status::Status;

    use crate::cli::{Cli, Command};

    #[test]
    fn a_status_list_parses_into_statuses() {
        let cli = Cli::try_parse_from(["panectl", "wait", "%3", "--until", "idle,completed"]);
        let Ok(Cli {
            command: Command::Wait(args),
            ..
        }) = cli
        else {
            panic!("not parsed: {cli:?}");
        };
        assert_eq!(args.until, [Status::Idle, Status::Completed]);
    }

    #[test]
    fn an_unknown_status_is_a_usage_error_naming_the_statuses() {
        let error = Cli::try_parse_from(["panectl", "wait", "%3", "--until", "idle,bogus"])
            .err()
            .map(|error| (error.kind(), error.to_string()));
        let Some((kind, text)) = error else {
            panic!("bogus was taken");
        };
        assert_eq!(kind, clap::error::ErrorKind::InvalidValue);
        assert!(text.contains("bogus"), "{text}");
        for status in Status::ALL {
            assert!(text.contains(status.as_str()), "{status}: {text}");
        }
    }

    #[test]
    fn states_are_checked_by_clap_too() {
        for args in [
            ["panectl", "inbox", "--state", "sent"],
            ["panectl", "assignments", "--state", "done"],
        ] {
            let error = Cli::try_parse_from(args).err().map(|error| error.kind());
            assert_eq!(
                error,
                Some(clap::error::ErrorKind::InvalidValue),
                "{args:?}"
            );
        }
        assert!(Cli::try_parse_from(["panectl", "inbox", "--state", "uncertain"]).is_ok());
        assert!(Cli::try_parse_from(["panectl", "assignments", "--state", "answered"]).is_ok());
    }
}
