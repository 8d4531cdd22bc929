//! `panectl mcp`: the MCP server of [`panectl::mcp`] on stdin/stdout. Logs go to stderr only,
//! since stdout carries the protocol.

use std::process::ExitCode;
use std::time::Duration;

use panectl::mcp::{PanectlMcp, serve_stdio};

use super::ServerArgs;
use super::client::client;

/// What `panectl mcp` is given: nothing.
#[derive(Debug, clap::Args)]
pub struct McpArgs {}

impl super::Run for McpArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        serve(server)
    }
}

/// `panectl mcp`: serves until the client closes stdin.
fn serve(server: &ServerArgs) -> anyhow::Result<ExitCode> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PANECTL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // A second subscriber (there is none) would only be refused; nothing to report then.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .try_init();
    // The daemon need not run yet: every tool call finds it afresh and says so if it is missing.
    let client = client(server)?.with_kind(panectl::orchestration::shell_guard::MCP_CLIENT);
    // Only a pane of the server it serves (one of another server would be misread there).
    let caller = server.own_pane();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let served = runtime.block_on(serve_stdio(PanectlMcp::new(client, caller)));
    // A read of stdin left on the blocking pool must not hold the exit.
    runtime.shutdown_timeout(Duration::from_millis(100));
    served?;
    Ok(ExitCode::SUCCESS)
}
