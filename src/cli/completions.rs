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
        let command = Cli::command();
        let values = short_option_values(&command);
        match &self.dir {
            Some(dir) => {
                let failed = |e: std::io::Error| {
                    anyhow::anyhow!("cannot write the manual pages into {}: {e}", dir.display())
                };
                clap_mangen::generate_to(command, dir).map_err(failed)?;
                for entry in std::fs::read_dir(dir).map_err(failed)?.flatten() {
                    let path = entry.path();
                    if path.extension().is_some_and(|e| e == "1") {
                        let page = std::fs::read_to_string(&path).map_err(failed)?;
                        std::fs::write(&path, with_values(&page, &values)).map_err(failed)?;
                    }
                }
            }
            None => {
                let mut page = Vec::new();
                clap_mangen::Man::new(command).render(&mut page)?;
                let page = with_values(&String::from_utf8_lossy(&page), &values);
                std::io::Write::write_all(&mut std::io::stdout(), page.as_bytes())?;
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// The options with a short name only and a value (`-L NAME`, `-S PATH`), as
/// `(short, value name)`.
fn short_option_values(command: &clap::Command) -> Vec<(char, String)> {
    command
        .get_arguments()
        .filter(|a| a.get_long().is_none() && a.get_action().takes_values())
        .filter_map(|a| {
            let value = a.get_value_names()?.first()?.to_string();
            Some((a.get_short()?, value))
        })
        .collect()
}

/// A page whose synopsis shows each short-only option's value: clap_mangen writes such an
/// option as `[-L ]`, with neither its value nor anything after the space.
fn with_values(page: &str, values: &[(char, String)]) -> String {
    let mut page = page.to_string();
    for (short, value) in values {
        page = page.replace(
            &format!("[\\fB\\-{short} \\fR]"),
            &format!("[\\fB\\-{short}\\fR \\fI{value}\\fR]"),
        );
    }
    page
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_synopsis_names_the_values_of_short_options() {
        let page = r"\fBpanectl\fR [\fB\-L \fR] [\fB\-S \fR] [\fB\-\-ssh\fR]";
        let fixed = super::with_values(page, &[('L', "NAME".into()), ('S', "PATH".into())]);
        assert_eq!(
            fixed,
            r"\fBpanectl\fR [\fB\-L\fR \fINAME\fR] [\fB\-S\fR \fIPATH\fR] [\fB\-\-ssh\fR]"
        );
        let values = super::short_option_values(&<super::Cli as clap::CommandFactory>::command());
        assert!(values.contains(&('L', "NAME".into())), "{values:?}");
        assert!(values.contains(&('S', "PATH".into())), "{values:?}");
    }
}
