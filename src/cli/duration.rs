//! One syntax for every length of time on the command line and in the config file: `500ms`,
//! `30s`, `5m`, `2h`, `1d`, or a bare number of seconds (`1.5` too).
//!
//! The daemon's tuning flags were once named after their unit (`--watchdog-ms 2000`); those
//! names still work, with their old unit, through [`rewrite_legacy`] (command lines, a
//! `daemon restart` of a daemon started by an older binary) and [`legacy_key`] (config files).

use std::ffi::OsString;
use std::time::Duration;

/// Reads a duration, which must be positive.
pub fn parse(text: &str) -> Result<Duration, String> {
    let duration = parse_or_zero(text)?;
    if duration.is_zero() {
        return Err(format!("{text:?}: a duration must be positive"));
    }
    Ok(duration)
}

/// Reads a duration that may be zero (a setting that zero turns off).
pub fn parse_or_zero(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (500ms, 30s, 5m, 2h, 1d, or seconds)"))?;
    let scale = match unit {
        "ms" => 0.001,
        "" | "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => {
            return Err(format!(
                "unknown unit {unit:?} in {text:?} (ms, s, m, h or d)"
            ));
        }
    };
    Duration::try_from_secs_f64(number * scale).map_err(|_| format!("{text:?} is too long"))
}

/// Reads a duration of whole seconds, at least one (for settings in the unit of the program
/// they go to: ssh's keepalive interval).
pub fn parse_whole_seconds(text: &str) -> Result<u32, String> {
    match whole_seconds(parse(text)?, text)? {
        0 => Err(format!("{text:?}: at least one second")),
        seconds => Ok(seconds),
    }
}

/// Reads a duration of whole seconds that may be zero (tmux's `pause-after`).
pub fn parse_whole_seconds_or_zero(text: &str) -> Result<u32, String> {
    whole_seconds(parse_or_zero(text)?, text)
}

fn whole_seconds(duration: Duration, text: &str) -> Result<u32, String> {
    if duration.subsec_nanos() != 0 {
        return Err(format!("{text:?}: whole seconds only"));
    }
    u32::try_from(duration.as_secs()).map_err(|_| format!("{text:?} is too long"))
}

/// The daemon flags once named after their unit: old long name, new long name, the unit a bare
/// number had.
const LEGACY: [(&str, &str, &str); 8] = [
    ("watchdog-ms", "watchdog", "ms"),
    ("auto-window-s", "auto-window", "s"),
    ("auto-recover-ms", "auto-recover", "ms"),
    ("command-timeout-ms", "command-timeout", "ms"),
    ("status-quiet-ms", "status-quiet", "ms"),
    ("status-max-wait-ms", "status-max-wait", "ms"),
    ("submit-delay-ms", "submit-delay", "ms"),
    ("api-header-timeout-ms", "api-header-timeout", "ms"),
];

/// A value given to an old flag, in the new syntax: a bare number gets the old unit.
fn with_unit(value: &str, unit: &str) -> String {
    if !value.is_empty() && value.chars().all(|c| c.is_ascii_digit() || c == '.') {
        format!("{value}{unit}")
    } else {
        value.to_string()
    }
}

/// A config file key of an old flag (`status_quiet_ms`, `status-quiet-ms`): the new long name
/// and the value in the new syntax.
pub fn legacy_key(long: &str, value: &str) -> Option<(&'static str, String)> {
    LEGACY
        .iter()
        .find(|(old, _, _)| *old == long)
        .map(|(_, new, unit)| (*new, with_unit(value, unit)))
}

/// Rewrites old daemon flags in `args` (a whole command line, program name first) to their new
/// names and syntax. Only the words of `panectl daemon` before a `--` are touched: any other
/// command's words (a message that reads `--watchdog-ms`) stay as they are.
pub fn rewrite_legacy(args: Vec<OsString>) -> Vec<OsString> {
    if super::subcommand(&args).as_deref() != Some("daemon") {
        return args;
    }
    let mut out = Vec::with_capacity(args.len());
    let mut words = args.into_iter();
    while let Some(arg) = words.next() {
        let Some(text) = arg.to_str() else {
            out.push(arg);
            continue;
        };
        if text == "--" {
            out.push(arg);
            out.extend(words);
            break;
        }
        let Some(flag) = text.strip_prefix("--") else {
            out.push(arg);
            continue;
        };
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (flag, None),
        };
        let Some((_, new, unit)) = LEGACY.iter().find(|(old, _, _)| *old == name) else {
            out.push(arg);
            continue;
        };
        match inline {
            Some(value) => out.push(OsString::from(format!(
                "--{new}={}",
                with_unit(&value, unit)
            ))),
            None => {
                out.push(OsString::from(format!("--{new}")));
                if let Some(value) = words.next() {
                    match value.to_str() {
                        Some(value) => out.push(OsString::from(with_unit(value, unit))),
                        None => out.push(value),
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_and_bare_seconds() {
        assert_eq!(parse("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("1.5m"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse("1d"), Ok(Duration::from_secs(86400)));
        assert_eq!(parse(" 30s "), Ok(Duration::from_secs(30)));
        assert_eq!(parse_or_zero("0"), Ok(Duration::ZERO));
    }

    #[test]
    fn bad_durations_say_what_is_wrong() {
        assert!(parse("5 parsecs").unwrap_err().contains("unknown unit"));
        assert!(parse("0s").unwrap_err().contains("positive"));
        assert!(parse("").unwrap_err().contains("not a duration"));
        assert!(parse("-5s").unwrap_err().contains("not a duration"));
        assert!(parse("1e400").is_err());
        assert!(
            parse("99999999999999999999d")
                .unwrap_err()
                .contains("too long")
        );
        assert_eq!(parse_whole_seconds("5"), Ok(5));
        assert_eq!(parse_whole_seconds("2m"), Ok(120));
        assert!(
            parse_whole_seconds("500ms")
                .unwrap_err()
                .contains("whole seconds")
        );
        assert_eq!(parse_whole_seconds_or_zero("0"), Ok(0));
    }

    fn words(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn old_daemon_flags_keep_their_unit() {
        assert_eq!(
            rewrite_legacy(words(
                "panectl -L work daemon --watchdog-ms 2000 --auto-window-s=60 --status-quiet-ms 1s"
            )),
            words("panectl -L work daemon --watchdog 2000ms --auto-window=60s --status-quiet 1s")
        );
        // Other commands, and words after `--`, are left alone.
        let send = words("panectl send %1 --watchdog-ms");
        assert_eq!(rewrite_legacy(send.clone()), send);
        let after = words("panectl daemon -- --watchdog-ms 5");
        assert_eq!(rewrite_legacy(after.clone()), after);
        // A socket named `daemon` is not the command.
        let named = words("panectl -L daemon send %1 --submit-delay-ms");
        assert_eq!(rewrite_legacy(named.clone()), named);
        assert_eq!(
            legacy_key("submit-delay-ms", "400"),
            Some(("submit-delay", "400ms".to_string()))
        );
        assert_eq!(legacy_key("submit-delay", "400"), None);
    }
}
