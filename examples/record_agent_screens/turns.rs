//! `PANECTL_EXTRA_ONLY=turns`: whole turns whose first mark leaves the screen, and prompts echoed in
//! the transcript near a working, queued or interrupted turn (what a detector that reads dialogs
//! in transcript rows, or a turn from its answer marker alone, gets wrong).

use std::time::Duration;

use anyhow::Result;

use super::{Cli, Recorder, Run, Screen, WARM_UP};

/// Codex 0.110's start-up offer of a newer model ("Choose how you'd like Codex to proceed").
pub(super) fn model_upgrade(cli: Cli, s: &Screen) -> bool {
    cli == Cli::Codex && s.has("Choose how you'd like Codex to proceed")
}

/// The last line of the long answer (its first lines scroll off the screen).
const LONG_END: &str = "End of the long answer.";

impl Recorder<'_> {
    /// Saves the start-up model offer once per pane size, then keeps the model the set-up names
    /// (the offer's second option) and waits for the prompt.
    pub(super) fn model_upgrade(&mut self, run: &Run) -> Result<()> {
        let cli = self.cli;
        let name = format!("waiting_user_answer--startup-model-upgrade{}", run.suffix);
        if !self.saved.contains(&name) {
            self.save(
                run,
                "waiting_user_answer",
                "startup-model-upgrade",
                "A fresh start of a CLI whose set-up names an older model: it offers a newer one in a numbered menu (`› 1. Try new model` / `2. Use existing model`) before its prompt, and waits for the choice.",
                |s| model_upgrade(cli, s),
            )?;
        }
        self.keys(run, &["Down", "Enter"])?;
        self.wait_stable(
            run,
            "the prompt after the model offer",
            Duration::from_secs(30),
            |s| cli.ready(s) && !model_upgrade(cli, s),
        )?;
        Ok(())
    }

    /// HTTP 529 to every try: the retries, then the error when the CLI gives up.
    pub(super) fn http_529(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let run = self.launch_ready(size, suffix)?;
        self.submit(&run, "fail:529")?;
        self.failure(&run, 529, true)?;
        self.end(run);
        Ok(())
    }

    /// A long answer, two short ones, a turn that works while the prompts before it stay in the
    /// transcript, a prompt queued behind it, and the interrupt that ends it.
    pub(super) fn turns(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let cli = self.cli;
        let run = self.launch_ready(size, suffix)?;
        self.warm_up(&run, WARM_UP)?;
        let lines = size.1 as usize * 2;
        self.submit(&run, &format!("lines:{lines} reply:{LONG_END}"))?;
        self.snap(
            &run,
            "completed",
            "long-answer",
            &format!(
                "A first prompt was answered; then the model answered with {lines} numbered paragraphs and `{LONG_END}`, longer than the pane, so the answer's first row (and its marker) scrolled off the screen. The turn is over and the CLI is ready for input (label: completed)."
            ),
            Duration::from_secs(60),
            move |s| cli.idle_ready(s) && s.has_answer(LONG_END),
        )?;
        for answer in ["First short answer.", "Second short answer."] {
            self.submit(&run, &format!("reply:{answer}"))?;
            self.wait_stable(&run, answer, Duration::from_secs(40), |s| {
                cli.idle_ready(s) && s.has_answer(answer)
            })?;
        }
        self.submit(&run, "slow:60000 reply:This answer never arrives.")?;
        self.wait_for(&run, "the working state", Duration::from_secs(20), |s| {
            cli.working(s)
        })?;
        std::thread::sleep(Duration::from_millis(1500));
        self.snap(
            &run,
            "processing",
            "echoed-prompts-working",
            "Four prompts were answered (one of them long), their echoes stay in the transcript; a fifth waits for the model. The CLI is working (label: processing); the echoed prompts above are transcript, not a menu.",
            Duration::from_secs(20),
            move |s| cli.working(s),
        )?;
        if !matches!(cli, Cli::Aider) {
            // Codex 0.171 sends a prompt entered while it works at once (ending the turn); Tab
            // queues it.
            if cli == Cli::Codex {
                self.type_text(&run, "reply:Queued answer.")?;
                self.keys(&run, &["Tab"])?;
            } else {
                self.submit(&run, "reply:Queued answer.")?;
            }
            self.snap(
                &run,
                "processing",
                "queued-prompt",
                "While the fifth prompt waits for the model, a sixth (`reply:Queued answer.`) was typed and Enter pressed (Codex: Tab): the CLI queues it or holds it in its input. The turn still runs (label: processing).",
                Duration::from_secs(20),
                move |s| cli.working(s),
            )?;
        }
        self.keys(&run, cli.interrupt())?;
        self.snap(
            &run,
            "completed",
            "echoed-prompts-interrupted",
            &format!(
                "After four answered prompts, the fifth was interrupted with {} while the CLI waited for the model (a sixth had been queued behind it: the CLI may have put it back into its input or sent it). The CLI is ready for input (label: completed); the echoed prompts near the interrupt notice are transcript, not a menu.",
                cli.interrupt().join(" ")
            ),
            Duration::from_secs(40),
            move |s: &Screen| cli.idle_ready(s),
        )?;
        self.end(run);
        Ok(())
    }
}
