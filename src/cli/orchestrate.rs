//! `input`, `key` and `wait`: act on a pane through the daemon, for scripts and orchestrators.

use std::process::ExitCode;

use panectl::api::client::encode_segment;
use serde_json::{Value, json};

use super::ServerArgs;
use super::client::{block_on, client, text};

/// `panectl input PANE TEXT [--no-enter]`.
pub fn input(server: &ServerArgs, pane: &str, text: &str, enter: bool) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = format!("/v1/panes/{}/input", encode_segment(pane));
    let body = json!({ "text": text, "enter": enter });
    block_on(async { Ok(client.post_empty(&path, &body).await?) })?;
    Ok(ExitCode::SUCCESS)
}

/// `panectl key PANE KEY...`.
pub fn key(server: &ServerArgs, pane: &str, keys: &[String]) -> anyhow::Result<ExitCode> {
    let client = client(server)?;
    let path = format!("/v1/panes/{}/keys", encode_segment(pane));
    let body = json!({ "keys": keys });
    block_on(async { Ok(client.post_empty(&path, &body).await?) })?;
    Ok(ExitCode::SUCCESS)
}

/// `panectl wait PANE --until S,S [--timeout SECONDS]`: exit code 0 when a status was reached
/// (its name printed), 1 on timeout, 2 on any error.
pub fn wait(
    server: &ServerArgs,
    pane: &str,
    until: &[String],
    timeout: Option<f64>,
) -> anyhow::Result<ExitCode> {
    let result = (|| -> anyhow::Result<Value> {
        let client = client(server)?;
        let path = format!("/v1/panes/{}/wait", encode_segment(pane));
        let mut body = json!({ "until": until });
        if let Some(timeout) = timeout {
            body["timeout_seconds"] = json!(timeout);
        }
        block_on(async { Ok(client.post_json(&path, &body).await?) })
    })();
    match result {
        Ok(answer) if answer["reached"] == true => {
            println!("{}", text(&answer, "status"));
            Ok(ExitCode::SUCCESS)
        }
        Ok(answer) => {
            eprintln!(
                "panectl: timed out after {:.1} s; {} is {}",
                answer["waited_seconds"].as_f64().unwrap_or_default(),
                text(&answer, "pane"),
                text(&answer, "status")
            );
            Ok(ExitCode::from(1))
        }
        Err(error) => {
            eprintln!("panectl: {error:#}");
            Ok(ExitCode::from(2))
        }
    }
}
