//! `panectl events`: follow the daemon's events (of one server, or of every one with `--all`).

use std::io::Write;
use std::process::ExitCode;

use panectl::api::client::ApiClient;
use panectl::api::routes::Route;
use serde_json::Value;

use super::client::{block_on, client, printable, printable_error, shown};
use super::{Run, ServerArgs, is_broken_pipe};

/// What `panectl events` is given.
#[derive(Debug, clap::Args)]
pub struct EventsArgs {
    /// Print one JSON object per line (JSON lines, one per event, as they come).
    #[arg(long)]
    json: bool,
    /// The events of every server with a daemon on this machine, each with its server.
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    filter: EventFilter,
}

impl Run for EventsArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        if self.all {
            events_all(self.json, &self.filter)
        } else {
            events(server, self.json, &self.filter)
        }
    }
}

/// Prints one event: its JSON line, or a short human form; with the server it comes from
/// (`events --all`: a `server` field, or a first column).
fn print_event(data: &str, json: bool, server: Option<&str>) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        match server {
            None => writeln!(out, "{data}")?,
            Some(server) => {
                let mut value: Value = serde_json::from_str(data).unwrap_or(Value::Null);
                if let Some(object) = value.as_object_mut() {
                    object.insert("server".into(), Value::String(server.to_string()));
                }
                writeln!(out, "{value}")?;
            }
        }
        return out.flush();
    }
    if let Some(server) = server {
        write!(out, "{} ", printable(server))?;
    }
    let value: Value = serde_json::from_str(data).unwrap_or(Value::Null);
    let mut fields: Vec<String> = Vec::new();
    if let Some(object) = value.as_object() {
        for (key, field) in object {
            if !matches!(key.as_str(), "id" | "time_ms" | "type") {
                let shown = match field {
                    Value::String(s) => printable(s),
                    other => printable(&other.to_string()),
                };
                fields.push(format!("{}={shown}", printable(key)));
            }
        }
    }
    let clock = value["time_ms"].as_u64().map(clock).unwrap_or_default();
    writeln!(
        out,
        "{clock:<13} {:>6} {:<16} {}",
        shown(&value, "id"),
        shown(&value, "type"),
        fields.join(" ")
    )?;
    out.flush()
}

/// The time of day of an event, UTC, to the millisecond (`14:03:27.512Z`).
fn clock(time_ms: u64) -> String {
    let ms = time_ms % 1000;
    let seconds = time_ms / 1000 % 86_400;
    format!(
        "{:02}:{:02}:{:02}.{ms:03}Z",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// Which events `panectl events` follows.
#[derive(Debug, clap::Args)]
pub struct EventFilter {
    /// Only the events about this pane (`%N`).
    #[arg(long, value_name = "PANE")]
    #[arg(add = super::complete::panes())]
    pane: Option<String>,
    /// Only these types, comma-separated (status, message, pane_added, output, ...).
    #[arg(long = "type", value_name = "TYPE", value_delimiter = ',')]
    types: Vec<String>,
    /// Include `output` events (one per burst of a pane's output: many), which are left out
    /// unless asked for here or with `--type`.
    #[arg(long)]
    output: bool,
}

impl EventFilter {
    /// The route with the filter as its query.
    fn path(&self) -> String {
        let mut query = Vec::new();
        if let Some(pane) = &self.pane {
            query.push(("pane", pane.clone()));
        }
        let types: Vec<&str> = if !self.types.is_empty() {
            self.types.iter().map(String::as_str).collect()
        } else if self.output {
            Vec::new()
        } else {
            panectl::events::EventKind::TYPES
                .iter()
                .copied()
                .filter(|t| *t != "output")
                .collect()
        };
        if !types.is_empty() {
            query.push(("type", types.join(",")));
        }
        let query: Vec<(&str, &str)> = query
            .iter()
            .map(|(name, value)| (*name, value.as_str()))
            .collect();
        Route::Events {}.with_query(&query)
    }
}

fn events(server: &ServerArgs, json: bool, filter: &EventFilter) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    block_on(follow_events(&client, &filter.path(), json, None))?;
    Ok(ExitCode::SUCCESS)
}

/// Prints the events of one daemon until its stream ends.
async fn follow_events(
    client: &ApiClient,
    path: &str,
    json: bool,
    server: Option<&str>,
) -> anyhow::Result<()> {
    let mut pending = Vec::new();
    let mut failure = None;
    client
        .stream(path, |chunk| {
            pending.extend_from_slice(chunk);
            while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line);
                if let Some(data) = line.trim_end().strip_prefix("data:")
                    && let Err(error) = print_event(data.trim_start(), json, server)
                {
                    failure = Some(error);
                    return false;
                }
            }
            true
        })
        .await?;
    match failure {
        Some(error) => Err(error.into()),
        None => Ok(()),
    }
}

/// `panectl events --all`: the events of every daemon found at the start, interleaved as they
/// come, each with its server. Ends when every stream has ended.
fn events_all(json: bool, filter: &EventFilter) -> anyhow::Result<ExitCode> {
    let path = filter.path();
    let daemons = super::many::some_daemons()?;
    let results = block_on(async {
        Ok(futures::future::join_all(
            daemons
                .iter()
                .map(|d| follow_events(&d.client, &path, json, Some(&d.label))),
        )
        .await)
    })?;
    let mut code = ExitCode::SUCCESS;
    for (daemon, result) in daemons.iter().zip(results) {
        if let Err(error) = result {
            if is_broken_pipe(&error) {
                return Ok(ExitCode::SUCCESS);
            }
            eprintln!(
                "panectl: {}: {}",
                printable(&daemon.label),
                printable_error(&error)
            );
            code = super::exit::of_error(&error);
        }
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::clock;

    #[test]
    fn event_times_read_as_a_clock() {
        assert_eq!(clock(1_764_684_207_512), "14:03:27.512Z");
        assert_eq!(clock(0), "00:00:00.000Z");
    }
}
