//! The commands that talk to a running daemon: `ls`, `screen`, `output`, `health`, `events`.

use std::io::Write;
use std::process::ExitCode;

use panectl::api::client::ApiClient;
use panectl::api::routes::Route;
use panectl::api::wire::{
    Explanation, Health, PaneSummary, ProviderBody, ProviderInfo, RuleReport,
    SessionTransportAnswer, SignalReport, TransportBody,
};
use panectl::daemon::discovery;
use panectl::status::Status;
use panectl::status::decision::Decision;
use panectl::status::signal::StatusSource;
use serde::Serialize;
use serde_json::Value;

use super::ServerArgs;
use super::table::Table;

/// A client of the server's daemon: at the caller's own runtime path, else where the server's
/// `@panectl_api` says (a daemon started from another environment).
pub(super) fn client(server: &ServerArgs) -> anyhow::Result<ApiClient> {
    let address = server.address()?;
    let found = discovery::find_api(&address);
    Ok(ApiClient::new(
        found.socket,
        address.to_string(),
        server.start_command(),
    ))
}

pub(super) fn block_on<T>(
    future: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(future)
}

pub(super) fn text(value: &Value, key: &str) -> String {
    match value.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// A field of untrusted text (a pane title, a sender, a reason) for a terminal: control
/// characters (C0, DEL, C1: escape sequences that would clear the screen or set the title) are
/// shown escaped (`\x1b`), everything else as it is.
pub(super) fn printable(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            shown.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else {
            shown.push(c);
        }
    }
    shown
}

/// Text of several lines from elsewhere (a pane's text, an agent's answer, an error that
/// quotes them) for a terminal: the newlines stay, as its structure; every other control
/// character is escaped as [`printable`] does.
pub(super) fn printable_lines(text: &str) -> String {
    text.split('\n')
        .map(printable)
        .collect::<Vec<_>>()
        .join("\n")
}

/// An error as panectl reports it (`{error:#}`, its causes after colons), [`printable_lines`].
pub fn printable_error(error: &anyhow::Error) -> String {
    printable_lines(&format!("{error:#}"))
}

/// [`text`] made [`printable`], for human output.
pub(super) fn shown(value: &Value, key: &str) -> String {
    printable(&text(value, key))
}

/// Any field made [`printable`], for human output.
pub(super) fn show(field: impl std::fmt::Display) -> String {
    printable(&field.to_string())
}

/// An optional field made [`printable`]; empty when absent.
pub(super) fn show_some(field: Option<impl std::fmt::Display>) -> String {
    field.map(show).unwrap_or_default()
}

/// Prints an answer of the daemon as JSON, pretty, with its keys in the order they have always
/// had (sorted: it goes through [`Value`], whose objects are sorted maps).
pub(super) fn print_pretty(value: &impl Serialize) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &serde_json::to_value(value)?)?;
    writeln!(out)?;
    Ok(())
}

/// An answer of the daemon as one line of JSON, its keys sorted (see [`print_pretty`]).
pub(super) fn json_line(value: &impl Serialize) -> anyhow::Result<String> {
    Ok(serde_json::to_value(value)?.to_string())
}

pub fn ls(server: &ServerArgs, json: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let panes = block_on(async { Ok(client.panes().await?) })?;
    if json {
        print_pretty(&panes)?;
        return Ok(ExitCode::SUCCESS);
    }
    let listed: Vec<(Option<&str>, &PaneSummary)> = panes.iter().map(|p| (None, p)).collect();
    print_panes(&listed)?;
    Ok(ExitCode::SUCCESS)
}

/// The pane table, with a SERVER column first when the rows carry their server, in the order
/// tmux shows panes: by server, session, window, pane.
pub(super) fn print_panes(panes: &[(Option<&str>, &PaneSummary)]) -> anyhow::Result<()> {
    let with_server = panes.iter().any(|(server, _)| server.is_some());
    let mut sorted: Vec<&(Option<&str>, &PaneSummary)> = panes.iter().collect();
    sorted.sort_by(|(sa, a), (sb, b)| {
        (sa, a.session.as_bytes(), a.window_index, a.index, a.pane).cmp(&(
            sb,
            b.session.as_bytes(),
            b.window_index,
            b.index,
            b.pane,
        ))
    });
    let mut headers = vec![
        "PANE", "SESSION", "WINDOW", "NAME", "STATUS", "PROVIDER", "SIZE", "COMMAND", "TITLE",
    ];
    if with_server {
        headers.insert(0, "SERVER");
    }
    let mut table = Table::new(&headers).status_column(headers.len() - 5);
    for (server, p) in sorted {
        let mut row = Vec::with_capacity(headers.len());
        if with_server {
            row.push(printable(server.unwrap_or_default()));
        }
        row.extend([
            show(p.pane),
            show(&p.session),
            format!("{}:{}", p.window_index, show(&p.window)),
            dash(show_some(p.name.as_ref())),
            show(p.status),
            dash(show_some(p.provider.as_ref())),
            format!("{}x{}", p.width, p.height),
            show(&p.command),
            show(&p.title),
        ]);
        table.row(row);
    }
    table.print()?;
    Ok(())
}

/// An empty cell as `-`, so that every row has a word in every column (`awk` reads it).
fn dash(cell: String) -> String {
    if cell.is_empty() { "-".into() } else { cell }
}

pub fn screen(server: &ServerArgs, pane: &str, ansi: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let query: &[(&str, &str)] = if ansi { &[("format", "ansi")] } else { &[] };
    let path = Route::PaneScreen { pane }.with_query(query);
    let answer = block_on(async { Ok(client.get(&path).await?) })?;
    let mut out = std::io::stdout().lock();
    // `--ansi` asks for the screen's own codes; the text alone never holds a control
    // character, and escaping makes sure of it.
    if ansi {
        out.write_all(&answer.body)?;
    } else {
        out.write_all(printable_lines(&String::from_utf8_lossy(&answer.body)).as_bytes())?;
    }
    if !answer.body.ends_with(b"\n") {
        out.write_all(b"\n")?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn output(server: &ServerArgs, pane: &str, from: Option<u64>) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let from = from.map(|from| from.to_string());
    let query: Vec<(&str, &str)> = from.iter().map(|from| ("from", from.as_str())).collect();
    let path = Route::PaneOutput { pane }.with_query(&query);
    let answer = block_on(async { Ok(client.get(&path).await?) })?;
    if let Some(missed) = answer.header("x-panectl-missed") {
        eprintln!("panectl: bytes {missed} have left the daemon's buffer");
    }
    if let Some(gaps) = answer.header("x-panectl-gaps") {
        // Read loosely: a header of a newer daemon must not fail the output it comes with.
        let gaps: Vec<Value> = serde_json::from_str(gaps).unwrap_or_default();
        for gap in gaps {
            eprintln!(
                "panectl: gap before byte {} ({})",
                text(&gap, "seq"),
                text(&gap, "reason")
            );
        }
    }
    if let Some(next) = answer.header("x-panectl-next") {
        eprintln!("panectl: next sequence number {next}");
    }
    std::io::stdout().lock().write_all(&answer.body)?;
    Ok(ExitCode::SUCCESS)
}

/// `panectl health`: exit code 0 when the daemon is `ok`, 1 when `degraded`.
pub fn health(server: &ServerArgs, json: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let health: Health = block_on(async { Ok(client.get_json(&Route::Health {}.path()).await?) })?;
    let code = if health.status == "ok" {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &health)?;
        writeln!(out)?;
        return Ok(code);
    }
    writeln!(out, "status        {}", health.status)?;
    for reason in &health.reasons {
        writeln!(out, "              - {reason}")?;
    }
    writeln!(
        out,
        "daemon        panectl {}, pid {}, up {} s",
        health.version, health.pid, health.uptime_seconds
    )?;
    if let Some(log) = &health.log_file {
        writeln!(out, "log           {log}")?;
    }
    writeln!(
        out,
        "tmux          {} at {}",
        health.tmux_version, health.tmux_socket
    )?;
    writeln!(out, "api           {}", health.api_socket)?;
    if !health.inbox.is_empty() {
        writeln!(out, "inbox         {}", printable(&health.inbox))?;
    }
    writeln!(
        out,
        "sessions      {} ({} attached)",
        health.sessions, health.attached
    )?;
    writeln!(out, "panes         {}", health.panes)?;
    writeln!(out, "output        {} bytes", health.output_bytes)?;
    if health.pipe_panes > 0 {
        writeln!(
            out,
            "pipes         {} panes, {} bytes",
            health.pipe_panes, health.pipe_bytes
        )?;
    }
    writeln!(out, "resyncs       {}", health.resyncs)?;
    writeln!(out, "pauses        {}", health.pauses)?;
    writeln!(out, "divergences   {}", health.divergences)?;
    if health.early_answers > 0 {
        writeln!(out, "early answers {}", health.early_answers)?;
    }
    writeln!(out, "reconnects    {}", health.reconnects)?;
    writeln!(out, "parse errors  {}", health.parse_errors)?;
    writeln!(out, "timeouts      {}", health.timeouts)?;
    writeln!(out, "processes     {} started", health.processes_started)?;
    Ok(code)
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
    pub(super) fn path(&self) -> String {
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

pub fn events(server: &ServerArgs, json: bool, filter: &EventFilter) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    block_on(follow_events(&client, &filter.path(), json, None))?;
    Ok(ExitCode::SUCCESS)
}

/// Prints the events of one daemon until its stream ends.
pub(super) async fn follow_events(
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

pub fn status(server: &ServerArgs, pane: &str, json: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let summary = block_on(async { Ok(client.pane(pane).await?) })?;
    if json {
        print_pretty(&summary)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", summary.status);
    Ok(ExitCode::SUCCESS)
}

fn or_none(value: String) -> String {
    if value.is_empty() {
        "none".into()
    } else {
        value
    }
}

/// What `explain` shows for people: a pane's [`Explanation`] from the daemon, or a screen
/// file's from `panectl detect --explain`.
pub struct Shown<'a> {
    /// The pane, or the file.
    pub subject: String,
    /// The status.
    pub status: Status,
    /// The provider whose rules apply.
    pub provider: Option<&'a str>,
    /// The rule behind the status.
    pub rule: Option<&'a str>,
    /// Where the status came from (a pane's only).
    pub source: Option<StatusSource>,
    /// The agent's own report in force, with the screen's own status and how long ago that
    /// changed (a pane's only).
    pub signal: Option<(&'a SignalReport, Status, f64)>,
    /// Every rule on the screen.
    pub rules: &'a [RuleReport],
    /// The dialog's question and options, when it waits for an answer.
    pub decision: Option<&'a Decision>,
}

impl<'a> Shown<'a> {
    /// A pane's explanation from the daemon.
    pub fn pane(explanation: &'a Explanation) -> Shown<'a> {
        Shown {
            subject: explanation.pane.to_string(),
            status: explanation.status,
            provider: explanation.provider.as_deref(),
            rule: explanation.rule.as_deref(),
            source: Some(explanation.source),
            signal: explanation.signal.as_ref().map(|signal| {
                (
                    signal,
                    explanation.screen_status,
                    explanation.screen_changed_seconds,
                )
            }),
            rules: &explanation.rules,
            decision: explanation.decision.as_ref(),
        }
    }
}

/// A dialog's question and options for people: the question indented, then each option with
/// its number, a pointer on the pointed one, and the keys that pick it.
pub fn write_decision(out: &mut impl Write, decision: &Decision) -> std::io::Result<()> {
    writeln!(out, "   decision {}:", decision.fingerprint)?;
    for line in decision.question.lines() {
        writeln!(out, "     {}", printable(line))?;
    }
    for choice in &decision.options {
        writeln!(
            out,
            "   {} {}. {}   [{}]",
            if choice.pointed { ">" } else { " " },
            choice.number,
            printable(&choice.label),
            choice.keys.join(" "),
        )?;
    }
    Ok(())
}

/// Prints an explanation (from the daemon or from a file) for people.
pub fn print_explanation(explanation: &Shown<'_>) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let source = match explanation.source {
        None => String::new(),
        Some(source) => format!(", source {source}"),
    };
    writeln!(
        out,
        "{}: {} (provider {}, rule {}{source})",
        printable(&explanation.subject),
        explanation.status,
        or_none(show_some(explanation.provider)),
        or_none(show_some(explanation.rule)),
    )?;
    if let Some((signal, screen_status, screen_changed_seconds)) = explanation.signal {
        writeln!(
            out,
            "   signal: {} {} -> {}, {:.1}s ago; screen says {} (changed {:.1}s ago)",
            signal.source,
            printable(&signal.detail),
            signal.status,
            signal.age_seconds,
            screen_status,
            screen_changed_seconds,
        )?;
    }
    if let Some(decision) = explanation.decision {
        write_decision(&mut out, decision)?;
    }
    // Every rule: `=>` the one that decided, `+` others that matched.
    let mut table = Table::new(&["", "PRIORITY", "RULE", "VERDICT", "WHY"])
        .right_aligned(1)
        .status_column(3);
    for rule in explanation.rules {
        let mark = if rule.decisive {
            "=>"
        } else if rule.matched {
            "+"
        } else {
            ""
        };
        let mut why = if rule.matched {
            "matches".to_string()
        } else {
            printable(&rule.reason)
        };
        if let Some(layer) = &rule.layer {
            why.push_str(&format!("  [inherited from {layer}]"));
        }
        table.row(vec![
            mark.to_string(),
            rule.priority.to_string(),
            printable(&rule.rule),
            rule.verdict.as_str().to_string(),
            why,
        ]);
    }
    if !explanation.rules.is_empty() {
        out.write_all(table.render(super::table::colour_wanted()).as_bytes())?;
    }
    Ok(())
}

pub fn explain(server: &ServerArgs, pane: &str, json: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = Route::PaneExplain { pane }.path();
    let explanation: Explanation = block_on(async { Ok(client.get_json(&path).await?) })?;
    if json {
        print_pretty(&explanation)?;
    } else {
        print_explanation(&Shown::pane(&explanation))?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn last(server: &ServerArgs, pane: &str, json: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = Route::PaneLastResponse { pane }.path();
    let answer = block_on(async { Ok(client.get(&path).await?) })?;
    if json {
        print_pretty(&serde_json::json!({
            "pane": pane,
            "answer": String::from_utf8_lossy(&answer.body),
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(printable_lines(&String::from_utf8_lossy(&answer.body)).as_bytes())?;
    out.write_all(b"\n")?;
    Ok(ExitCode::SUCCESS)
}

pub fn set_provider(
    server: &ServerArgs,
    pane: &str,
    provider: &str,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = Route::PaneProvider { pane }.path();
    let body = ProviderBody {
        provider: (provider != "auto").then(|| provider.to_string()),
    };
    let pane: PaneSummary = block_on(async { Ok(client.post_json(&path, &body).await?) })?;
    if json {
        print_pretty(&pane)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{}: provider {} ({}), status {}",
        pane.pane,
        or_none(show_some(pane.provider.as_ref())),
        or_none(show_some(pane.provider_source.map(|s| s.as_str()))),
        pane.status
    );
    Ok(ExitCode::SUCCESS)
}

pub fn transport(
    server: &ServerArgs,
    pane: &str,
    transport: Option<panectl::pipe::Transport>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let pane: PaneSummary = block_on(async {
        Ok(match transport {
            Some(transport) => {
                let path = Route::PaneTransport { pane }.path();
                client
                    .post_json(&path, &TransportBody { transport })
                    .await?
            }
            None => client.pane(pane).await?,
        })
    })?;
    if json {
        print_pretty(&pane)?;
    } else {
        println!("{}: {}", pane.pane, pane.transport.as_str());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn session_transport(
    server: &ServerArgs,
    session: &str,
    transport: panectl::pipe::Transport,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = Route::SessionTransport { session }.path();
    let body = TransportBody { transport };
    let answer: SessionTransportAnswer =
        block_on(async { Ok(client.post_json(&path, &body).await?) })?;
    if json {
        print_pretty(&answer)?;
    } else {
        for pane in &answer.panes {
            println!("{}: {}", pane.pane, pane.transport.as_str());
        }
    }
    for pane in &answer.failed {
        eprintln!(
            "panectl: {} stays where it was: {}",
            pane.pane,
            printable(&pane.error)
        );
    }
    Ok(if answer.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

pub fn providers(server: &ServerArgs, json: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let providers: Vec<ProviderInfo> =
        block_on(async { Ok(client.get_json(&Route::Providers {}.path()).await?) })?;
    if json {
        print_pretty(&providers)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["ID", "NAME", "RULES", "SOURCE"]).right_aligned(2);
    for provider in &providers {
        table.row(vec![
            printable(&provider.id),
            printable(&provider.name),
            provider.rules.to_string(),
            printable(&provider.source),
        ]);
    }
    table.print()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::{clock, printable, printable_error, printable_lines};

    #[test]
    fn event_times_read_as_a_clock() {
        assert_eq!(clock(1_764_684_207_512), "14:03:27.512Z");
        assert_eq!(clock(0), "00:00:00.000Z");
    }

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(
            printable("a\u{1b}]0;pwned\u{7}\u{1b}[2J\tb\u{9b}c\u{7f}"),
            "a\\x1b]0;pwned\\x07\\x1b[2J\\x09b\\x9bc\\x7f"
        );
        assert_eq!(printable("✳ Claude Code 漢字"), "✳ Claude Code 漢字");
    }

    #[test]
    fn lines_keep_their_newlines_and_nothing_else_of_control() {
        assert_eq!(
            printable_lines("answer:\n\u{1b}]52;c;cHduZWQ=\u{7}\n\u{1b}[2J\u{9b}31m\r\n"),
            "answer:\n\\x1b]52;c;cHduZWQ=\\x07\n\\x1b[2J\\x9b31m\\x0d\n"
        );
        let error = anyhow::anyhow!("tmux said \u{1b}]0;title\u{7}").context("cannot run");
        assert_eq!(
            printable_error(&error),
            "cannot run: tmux said \\x1b]0;title\\x07"
        );
    }
}
