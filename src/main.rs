//! The `panectl` command line. Errors are reported here, once, as one line on stderr.

mod cli;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

/// The subcommand word of the command line (after `-L NAME` / `-S PATH`), if any.
fn subcommand() -> Option<String> {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-L" | "-S" | "--ssh" | "--ssh-command" | "--ssh-keepalive" => {
                args.next();
            }
            _ if arg.starts_with('-') => {}
            _ => return Some(arg),
        }
    }
    None
}

fn main() -> ExitCode {
    let args = cli::duration::rewrite_legacy(std::env::args_os().collect());
    let parsed = cli::Cli::command()
        .try_get_matches_from(args)
        .and_then(|matches| cli::Cli::from_arg_matches(&matches).map(|cli| (cli, matches)));
    let (args, matches) = match parsed {
        Ok(parsed) => parsed,
        // `panectl hook` runs inside agent CLIs: whatever its command line, it must not fail.
        Err(error) if subcommand().as_deref() == Some("hook") => {
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
            eprintln!("panectl: {error:#}");
            cli::exit::of_error(&error)
        }
    }
}
