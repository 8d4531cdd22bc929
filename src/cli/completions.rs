//! `panectl completions` and `panectl man`: what is made from the command line's own
//! definition (completion scripts, manual pages). Each command is its `Args` and its `run`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::CommandFactory;

use super::{Cli, Run, ServerArgs};

/// What `panectl completions` is given.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell.
    shell: clap_complete::Shell,
}

impl Run for CompletionsArgs {
    fn run(&self, _server: &ServerArgs) -> anyhow::Result<ExitCode> {
        let mut command = Cli::command();
        // Into memory first: the generator panics on a write error (a closed pipe).
        let mut script = Vec::new();
        clap_complete::generate(self.shell, &mut command, "panectl", &mut script);
        std::io::Write::write_all(&mut std::io::stdout(), &script)?;
        Ok(ExitCode::SUCCESS)
    }
}

/// What `panectl man` is given.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write the pages into this directory.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

impl Run for ManArgs {
    fn run(&self, _server: &ServerArgs) -> anyhow::Result<ExitCode> {
        match &self.dir {
            Some(dir) => {
                clap_mangen::generate_to(Cli::command(), dir).map_err(|e| {
                    anyhow::anyhow!("cannot write the manual pages into {}: {e}", dir.display())
                })?;
            }
            None => {
                let mut page = Vec::new();
                clap_mangen::Man::new(Cli::command()).render(&mut page)?;
                std::io::Write::write_all(&mut std::io::stdout(), &page)?;
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}
