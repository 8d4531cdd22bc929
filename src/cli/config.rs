//! The config file: `$XDG_CONFIG_HOME/panectl/config.toml` (else
//! `~/.config/panectl/config.toml`, or `--config PATH`). Its `[daemon]` table holds the
//! daemon's flags by their long names (`status_quiet = "30ms"`, `transport = "auto"`,
//! `exit_with_server = true`); a flag given on the command line wins over the file. Its
//! `[notify]` table holds the `--notify-*` flags without their prefix (`webhook = "URL"`,
//! `desktop = false`, `command = "..."`). Any other key is an error that names it and the file.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::duration;

/// Keys the file may not set: they only make sense on a command line.
const COMMAND_LINE_ONLY: [&str; 2] = ["detach", "config"];

/// The default config file.
pub fn default_path() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(config.join("panectl").join("config.toml"))
}

/// The file's `[daemon]` table as flag words of `flags` (the daemon's flags as a command), by
/// argument id.
pub(super) fn file_args(
    flags: &clap::Command,
    path: &Path,
    text: &str,
) -> anyhow::Result<Vec<(String, Vec<OsString>)>> {
    let table: toml::Table =
        toml::from_str(text).with_context(|| format!("cannot read {}", path.display()))?;
    let mut args = Vec::new();
    for (key, value) in &table {
        // The table's keys are flags with this prefix.
        let prefix = match key.as_str() {
            "daemon" => "",
            "notify" => "notify-",
            _ => bail!(
                "unknown key `{key}` in {} (the file has [daemon] and [notify] tables only)",
                path.display()
            ),
        };
        let Some(daemon) = value.as_table() else {
            bail!("`{key}` in {} must be a table ([{key}])", path.display());
        };
        for (key, value) in daemon {
            let long = format!("{prefix}{}", key.replace('_', "-"));
            // A key of a flag once named after its unit (`status_quiet_ms = 30`) keeps its unit.
            let legacy = match value {
                toml::Value::Integer(number) => duration::legacy_key(&long, &number.to_string()),
                toml::Value::Float(number) => duration::legacy_key(&long, &number.to_string()),
                toml::Value::String(text) => duration::legacy_key(&long, text),
                _ => None,
            };
            let long = legacy.as_ref().map_or(long, |(new, _)| (*new).to_string());
            let arg = flags
                .get_arguments()
                .find(|arg| arg.get_long() == Some(long.as_str()))
                .filter(|_| !COMMAND_LINE_ONLY.contains(&long.as_str()));
            let Some(arg) = arg else {
                let table = if prefix.is_empty() {
                    "daemon"
                } else {
                    "notify"
                };
                bail!(
                    "unknown key `{key}` in the [{table}] table of {} (`panectl daemon --help` \
                     lists the flags; a key is a flag without `--`{})",
                    path.display(),
                    if prefix.is_empty() {
                        ""
                    } else {
                        " and `notify-`"
                    }
                );
            };
            let id = arg.get_id().as_str().to_string();
            let takes_value = arg.get_action().takes_values();
            let words = match (value, legacy) {
                (_, Some((_, text))) if takes_value => {
                    vec![OsString::from(format!("--{long}={text}"))]
                }
                (value, _) => match value {
                    toml::Value::Boolean(on) if !takes_value => {
                        if *on {
                            vec![OsString::from(format!("--{long}"))]
                        } else {
                            Vec::new()
                        }
                    }
                    toml::Value::Boolean(on) if takes_value => {
                        vec![OsString::from(format!("--{long}={on}"))]
                    }
                    toml::Value::String(text) if takes_value => {
                        vec![OsString::from(format!("--{long}={text}"))]
                    }
                    toml::Value::Integer(number) if takes_value => {
                        vec![OsString::from(format!("--{long}={number}"))]
                    }
                    toml::Value::Float(number) if takes_value => {
                        vec![OsString::from(format!("--{long}={number}"))]
                    }
                    _ if takes_value => {
                        bail!("`{key}` in {} must be a string or a number", path.display())
                    }
                    _ => bail!("`{key}` in {} must be true or false", path.display()),
                },
            };
            if !words.is_empty() {
                args.push((id, words));
            }
        }
    }
    let all: Vec<OsString> = args.iter().flat_map(|(_, w)| w.clone()).collect();
    if let Err(error) = flags.clone().try_get_matches_from(&all) {
        let text = error.to_string();
        bail!(
            "{}: {}",
            path.display(),
            text.lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
        );
    }
    Ok(args)
}

/// The daemon's settings as flag words of `flags` (the daemon's flags as a command): the flags
/// `given` on the command line over the config file's (the one at `config`, else the default
/// one if it exists).
pub fn daemon_words(
    flags: &clap::Command,
    given: &[(String, Vec<OsString>)],
    config: Option<&Path>,
) -> anyhow::Result<Vec<OsString>> {
    let from_file = match config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the config file {}", path.display()))?;
            file_args(flags, path, &text)?
        }
        None => match default_path() {
            Some(path) => match std::fs::read_to_string(&path) {
                Ok(text) => file_args(flags, &path, &text)?,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
                Err(error) => {
                    return Err(error).with_context(|| {
                        format!("cannot read the config file {}", path.display())
                    });
                }
            },
            None => Vec::new(),
        },
    };
    let mut words: Vec<OsString> = from_file
        .into_iter()
        .filter(|(id, _)| !given.iter().any(|(given, _)| given == id))
        .flat_map(|(_, words)| words)
        .collect();
    words.extend(given.iter().flat_map(|(_, w)| w.iter().cloned()));
    Ok(words)
}
