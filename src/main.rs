//! The `panectl` command line. Errors are reported here, once, as one line on stderr.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
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
