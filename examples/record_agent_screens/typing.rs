//! Typing into the CLI's pane as a person does: text, then Enter in a separate write, checked
//! on the screen.

use super::*;

impl Recorder<'_> {
    /// Types text into the pane and waits until it shows.
    pub(crate) fn type_text(&self, run: &Run, text: &str) -> Result<()> {
        self.tmux.run(&["send-keys", "-t", &run.pane, "-l", text])?;
        self.wait_for(
            run,
            &format!("the typed text {text:?}"),
            Duration::from_secs(10),
            // Also when the input wraps it over several lines (a long prompt at 80 columns).
            |s| s.has(text) || flat(&s.text).contains(&flat(text)),
        )?;
        Ok(())
    }

    /// Types a prompt and presses Enter in a separate write.
    pub(crate) fn submit(&self, run: &Run, text: &str) -> Result<()> {
        self.type_text(run, text)?;
        self.press_enter(run)
    }

    /// Presses Enter once the typed input has settled, and again if the screen does not react
    /// (Gemini CLI sometimes drops an Enter that follows typed text closely).
    pub(crate) fn press_enter(&self, run: &Run) -> Result<()> {
        let typed = self.wait_quiet(
            run,
            "the typed input to settle",
            Duration::from_secs(10),
            Duration::from_millis(300),
            |_| true,
        )?;
        for _ in 0..3 {
            self.tmux.run(&["send-keys", "-t", &run.pane, "Enter"])?;
            let reacted = self.wait_for(run, "a reaction to Enter", Duration::from_secs(3), |s| {
                s.text != typed.text
            });
            if reacted.is_ok() {
                return Ok(());
            }
            println!("    (the screen did not react to Enter; pressing it again)");
        }
        bail!(
            "{} ({}): Enter had no effect\n{}",
            self.cli.name(),
            run.session,
            typed.dump()
        )
    }
}
