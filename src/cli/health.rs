//! `panectl health`: the daemon's health.

use std::io::Write;
use std::process::ExitCode;

use panectl::api::routes::Route;
use panectl::api::wire::Health;

use super::client::{block_on, client, printable};
use super::{Run, ServerArgs};

/// What `panectl health` is given.
#[derive(Debug, clap::Args)]
pub struct HealthArgs {
    /// Print the health as one JSON document.
    #[arg(long)]
    json: bool,
}

impl Run for HealthArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        health(server, self.json)
    }
}

/// `panectl health`: exit code 0 when the daemon is `ok`, 1 when `degraded`.
fn health(server: &ServerArgs, json: bool) -> anyhow::Result<ExitCode> {
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
