//! `panectl completions` and `panectl man`: what is made from the command line's own
//! definition (completion scripts, manual pages). Each command is its `Args` and its `run`.
//! The scripts are clap_complete's dynamic ones: the shell asks the binary at each TAB, which
//! answers from its own definition and, for panes, names and profiles, [`super::complete`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::CommandFactory;

use super::{Cli, Run, ServerArgs};

/// What `panectl completions` is given.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell.
    shell: clap_complete::Shell,
    /// The program the script runs at each TAB (default: this binary's path; a package that
    /// installs the script says `panectl`, found on PATH).
    #[arg(long, value_name = "PROGRAM")]
    command: Option<String>,
}

impl Run for CompletionsArgs {
    fn run(&self, _server: &ServerArgs) -> anyhow::Result<ExitCode> {
        use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
        let shell: &dyn EnvCompleter = match self.shell {
            clap_complete::Shell::Bash => &Bash,
            clap_complete::Shell::Zsh => &Zsh,
            clap_complete::Shell::Fish => &Fish,
            clap_complete::Shell::Elvish => &Elvish,
            clap_complete::Shell::PowerShell => &Powershell,
            other => anyhow::bail!("no completion for {other}"),
        };
        // The script asks this binary for the words at each TAB (`COMPLETE=SHELL panectl --
        // WORDS`): the panes and names of the moment, and always this version's commands.
        let completer = match &self.command {
            Some(command) => command.clone(),
            None => std::env::current_exe()?.display().to_string(),
        };
        let mut script = Vec::new();
        shell.write_registration(COMPLETE_VAR, "panectl", "panectl", &completer, &mut script)?;
        std::io::Write::write_all(&mut std::io::stdout(), &script)?;
        Ok(ExitCode::SUCCESS)
    }
}

/// The environment variable that turns a run of panectl into a completion request (clap's
/// convention: `source <(COMPLETE=bash panectl)`).
pub const COMPLETE_VAR: &str = "COMPLETE";

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
