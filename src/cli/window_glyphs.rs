//! `panectl window-glyphs` (hidden): the tmux format of the window status glyphs, for the
//! tmux plugin.

use std::process::ExitCode;

use super::{Run, ServerArgs};

/// What `panectl window-glyphs` is given.
#[derive(Debug, clap::Args)]
pub struct WindowGlyphsArgs {
    /// Plain shells' panes show glyphs too.
    #[arg(long)]
    shells: bool,
}

impl Run for WindowGlyphsArgs {
    fn run(&self, _server: &ServerArgs) -> anyhow::Result<ExitCode> {
        println!(
            "{}",
            panectl::status::meaning::window_glyphs_format(self.shells)
        );
        Ok(ExitCode::SUCCESS)
    }
}
