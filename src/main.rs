//! The `panectl` command line. Errors are reported here, once, as one line on stderr.

mod cli;

use std::process::ExitCode;

use clap::Parser;

/// The subcommand word of the command line (after `-L NAME` / `-S PATH`), if any.
fn subcommand() -> Option<String> {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-L" | "-S" => {
                args.next();
            }
            _ if arg.starts_with('-') => {}
            _ => return Some(arg),
        }
    }
    None
}

fn main() -> ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        // `panectl hook` runs inside agent CLIs: whatever its command line, it must not fail.
        Err(error) if subcommand().as_deref() == Some("hook") => {
            let text = error.to_string();
            eprintln!("panectl hook: {}", text.lines().next().unwrap_or_default());
            return ExitCode::SUCCESS;
        }
        Err(error) => error.exit(),
    };
    match cli::run(args) {
        Ok(code) => code,
        Err(error) => {
            if cli::is_broken_pipe(&error) {
                return ExitCode::SUCCESS;
            }
            eprintln!("panectl: {error:#}");
            ExitCode::FAILURE
        }
    }
}
