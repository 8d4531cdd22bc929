//! `panectl socket`: where the API socket (or the TCP listener's token file) of the server is.

use std::process::ExitCode;

use super::{Run, ServerArgs};

/// What `panectl socket` is given.
#[derive(Debug, clap::Args)]
pub struct SocketArgs {
    /// Print the token file's path instead.
    #[arg(long)]
    token: bool,
}

impl Run for SocketArgs {
    fn run(&self, server: &ServerArgs) -> anyhow::Result<ExitCode> {
        let address = server.address()?;
        let found = panectl::daemon::discovery::find_api(&address);
        let path = match (self.token, found.published) {
            (false, _) => found.socket,
            // The token lies next to the socket of a daemon found through tmux.
            (true, true) => found.socket.with_extension("token"),
            (true, false) => panectl::paths::RuntimePaths::for_server(&address).token(),
        };
        println!("{}", path.display());
        Ok(ExitCode::SUCCESS)
    }
}
