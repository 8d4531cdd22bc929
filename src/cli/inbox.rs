//! The inbox commands: `send` queues a message, `inbox` lists messages, `inbox cancel` cancels
//! a pending one. All go through the daemon, which owns the inbox database.

use std::io::{Read, Write};
use std::process::ExitCode;

use anyhow::Context;
use panectl::api::client::encode_segment;
use serde_json::{Value, json};

use super::ServerArgs;
use super::client::{block_on, client, text};

/// Reads a duration: `500ms`, `30s`, `5m`, `2h`, `1d`, or a plain number of seconds.
pub fn parse_duration(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (e.g. 90s, 5m, 2h)"))?;
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
    if number <= 0.0 {
        return Err(format!("{text:?}: a duration must be positive"));
    }
    Ok(number * scale)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `panectl send PANE [--from X] [--ttl D] (MESSAGE | -)`: prints the message id.
pub fn send(
    server: &ServerArgs,
    pane: &str,
    from: Option<&str>,
    ttl_seconds: Option<f64>,
    message: &str,
) -> anyhow::Result<ExitCode> {
    let body = if message == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("cannot read the message from stdin")?;
        bytes
    } else {
        message.as_bytes().to_vec()
    };
    let mut request = json!({ "body_hex": hex(&body) });
    if let Some(from) = from {
        request["from"] = json!(from);
    }
    if let Some(ttl) = ttl_seconds {
        request["ttl_seconds"] = json!(ttl);
    }
    let client = client(server)?;
    let path = format!("/v1/panes/{}/messages", encode_segment(pane));
    let stored: Value = block_on(async { Ok(client.post_json(&path, &request).await?) })?;
    println!("{}", text(&stored, "id"));
    Ok(ExitCode::SUCCESS)
}

/// `panectl inbox [--pane P] [--state S] [--json]`.
pub fn list(
    server: &ServerArgs,
    pane: Option<&str>,
    state: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mut query = Vec::new();
    if let Some(pane) = pane {
        query.push(format!("pane={}", encode_segment(pane)));
    }
    if let Some(state) = state {
        query.push(format!("state={}", encode_segment(state)));
    }
    let path = if query.is_empty() {
        "/v1/messages".to_string()
    } else {
        format!("/v1/messages?{}", query.join("&"))
    };
    let client = client(server)?;
    let messages: Value = block_on(async { Ok(client.get_json(&path).await?) })?;
    let mut out = std::io::stdout().lock();
    for message in messages.as_array().into_iter().flatten() {
        if json {
            writeln!(out, "{message}")?;
            continue;
        }
        let body = text(message, "body");
        let first: String = body
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(50)
            .collect();
        let state = match text(message, "reason") {
            reason if reason.is_empty() => text(message, "state"),
            reason => format!("{} ({reason})", text(message, "state")),
        };
        writeln!(
            out,
            "{:>6}  {:<5} {:<12} from {:<10} {first:?}",
            text(message, "id"),
            text(message, "pane"),
            state,
            text(message, "sender"),
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `panectl inbox cancel ID`.
pub fn cancel(server: &ServerArgs, id: i64) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = format!("/v1/messages/{id}/cancel");
    let message: Value = block_on(async { Ok(client.post_json(&path, &json!({})).await?) })?;
    println!("{}: {}", text(&message, "id"), text(&message, "state"));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_with_units() {
        assert_eq!(parse_duration("90"), Ok(90.0));
        assert_eq!(parse_duration("1.5m"), Ok(90.0));
        assert_eq!(parse_duration("250ms"), Ok(0.25));
        assert_eq!(parse_duration("2h"), Ok(7200.0));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("").is_err());
    }
}
