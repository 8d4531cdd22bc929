//! The `panectl` command line. Errors are reported here, once, as one line on stderr.

mod cli;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

fn main() -> ExitCode {
    // A completion request from the shell (`COMPLETE=bash panectl -- WORDS`): answered, then
    // the process exits; nothing is written before it.
    clap_complete::CompleteEnv::with_factory(cli::Cli::command)
        .var(cli::COMPLETE_VAR)
        .complete();
    let args = cli::duration::rewrite_legacy(std::env::args_os().collect());
    let command = cli::subcommand(&args);
    let parsed = cli::Cli::command()
        .try_get_matches_from(args)
        .and_then(|matches| cli::Cli::from_arg_matches(&matches).map(|cli| (cli, matches)));
    let (args, matches) = match parsed {
        Ok(parsed) => parsed,
        // `panectl hook` runs inside agent CLIs: whatever its command line, it must not fail.
        Err(error) if command.as_deref() == Some("hook") => {
            let text = error.to_string();
            eprintln!("panectl hook: {}", text.lines().next().unwrap_or_default());
            return ExitCode::SUCCESS;
        }
        Err(error) => error.exit(),
    };
    match cli::run(args, &matches) {
        Ok(code) => code,
        Err(error) => {
            if cli::is_broken_pipe(&error) {
                return ExitCode::SUCCESS;
            }
            eprintln!("panectl: {}", cli::printable_error(&error));
            cli::exit::of_error(&error)
        }
    }
}
