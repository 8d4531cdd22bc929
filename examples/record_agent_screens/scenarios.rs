//! The `--extra` scenarios (choices, questions, permission dialogs) and the first-run flows.

use super::*;

impl Recorder<'_> {
    pub(crate) fn keys(&self, run: &Run, keys: &[&str]) -> Result<()> {
        for key in keys {
            self.tmux.run(&["send-keys", "-t", &run.pane, key])?;
            std::thread::sleep(Duration::from_millis(150));
        }
        Ok(())
    }

    /// A prompt answered first, so that what follows happens in a session that has answered.
    pub(crate) fn warm_up(&self, run: &Run, prompt: &str) -> Result<()> {
        let cli = self.cli;
        self.submit(run, prompt)?;
        self.wait_stable(run, "the warm-up answer", Duration::from_secs(40), |s| {
            cli.idle_ready(s) && s.has_answer("answer.")
        })?;
        Ok(())
    }

    /// Waits for a steady screen that `holds` and saves it.
    pub(crate) fn snap(
        &mut self,
        run: &Run,
        status: &str,
        scenario: &str,
        description: &str,
        limit: Duration,
        holds: impl Fn(&Screen) -> bool,
    ) -> Result<()> {
        self.wait_quiet(run, scenario, limit, Duration::from_millis(1200), &holds)?;
        self.save(run, status, scenario, description, &holds)
    }

    /// The first run with nothing configured: each step's screen, then the keys to go on.
    pub(crate) fn onboarding(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let cli = self.cli;
        let steps = onboarding_steps(cli, &self.version);
        if steps.is_empty() {
            return Ok(());
        }
        let run = self.launch(Start::Fresh, size, suffix)?;
        for step in steps {
            let markers = step.markers;
            let unless = step.unless;
            let holds = move |s: &Screen| {
                markers.iter().all(|m| s.has(m)) && !unless.iter().any(|m| s.has(m))
            };
            let limit = Duration::from_secs(if step.optional { 15 } else { 45 });
            let shown = self.snap(
                &run,
                step.status,
                step.scenario,
                step.description,
                limit,
                holds,
            );
            match shown {
                Err(_) if step.optional => {
                    println!("    ({} did not show; optional)", step.scenario);
                    continue;
                }
                other => other?,
            }
            for key in step.keys {
                if let Some(text) = key.strip_prefix("text:") {
                    self.tmux.run(&["send-keys", "-t", &run.pane, "-l", text])?;
                } else {
                    self.tmux.run(&["send-keys", "-t", &run.pane, key])?;
                }
                std::thread::sleep(Duration::from_millis(400));
            }
        }
        self.end(run);
        Ok(())
    }

    /// The model asks the user a question with choices; then the first choice is taken.
    pub(crate) fn ask_user(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        // Neither has a tool that asks the user.
        if matches!(self.cli, Cli::Aider | Cli::Pi) {
            return Ok(());
        }
        let cli = self.cli;
        let run = self.launch_ready(size, suffix)?;
        let question = ASK_QUESTION;
        self.submit(&run, &format!("ask:{question}|Crimson|Teal"))?;
        // Codex 0.145.0 lists `esc to interrupt` among the question's keys.
        let asking = |s: &Screen| {
            (!cli.working(s) || s.has("enter to submit answer"))
                && !s.has("no tool for")
                // Not the prompt itself, even where a status line shows it wrapped.
                && s.lines().any(|l| l.contains("Teal") && !l.contains("ask:") && !l.contains("|Teal"))
        };
        self.snap(
            &run,
            "waiting_user_answer",
            "ask-user-question",
            &format!(
                "The model called the CLI's ask-the-user tool with the question '{question}' and the choices Crimson and Teal; the CLI shows the question and waits for a choice."
            ),
            Duration::from_secs(40),
            asking,
        )?;
        self.keys(&run, &["Enter"])?;
        // Some CLIs show a review step (submit the answers) after the last question.
        let answered = |s: &Screen| cli.idle_ready(s) && s.has_answer(TOOL_ANSWER);
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let screen = self.tmux.look(&run.pane)?;
            if answered(&screen) {
                break;
            }
            if cli.pending(&screen) {
                std::thread::sleep(Duration::from_millis(1500));
                let again = self.tmux.look(&run.pane)?;
                if cli.pending(&again) && again.text == screen.text {
                    self.keys(&run, &["Enter"])?;
                }
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        self.snap(
            &run,
            "completed",
            "ask-user-answered",
            "The first choice (Crimson) was given to the model's question; the model answered and the CLI is ready for the next prompt.",
            Duration::from_secs(20),
            answered,
        )?;
        self.end(run);
        Ok(())
    }

    /// Writing a file and fetching a web page, each behind a permission dialog.
    pub(crate) fn write_and_fetch(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let cli = self.cli;
        // Codex offers no `apply_patch` for a model it has no metadata for (the fake `gpt-5`);
        // Pi writes without asking.
        if matches!(cli, Cli::Codex | Cli::Pi) {
            return Ok(());
        }
        let run = self.launch_ready(size, suffix)?;
        let name = "notes.txt";
        let file = run.work.join(name);
        // Claude Code and Gemini CLI want a full path; the others take it relative.
        let path = if !matches!(cli, Cli::Claude | Cli::Gemini | Cli::Qwen) {
            name.to_string()
        } else {
            file.to_string_lossy().into_owned()
        };
        self.submit(&run, &format!("write:{path}|hello from the recorder"))?;
        let file_check = file.clone();
        let asking = move |s: &Screen| {
            !cli.working(s) && !s.has("no tool for") && cli.pending(s) && !file_check.exists()
        };
        self.snap(
            &run,
            "waiting_user_answer",
            "write-permission",
            &format!(
                "The model asked to create the file {name} with the CLI's file-writing tool; the CLI asks for permission (the file does not exist yet)."
            ),
            Duration::from_secs(40),
            asking,
        )?;
        for key in cli.approve() {
            self.tmux.run(&["send-keys", "-t", &run.pane, key])?;
        }
        let written = file.clone();
        self.snap(
            &run,
            "completed",
            "write-approved",
            "Permission given (first answer): the file was written and the turn ended; ready for the next prompt.",
            Duration::from_secs(40),
            move |s| cli.idle_ready(s) && written.exists(),
        )?;
        // Claude Code 2.1.332 offers WebFetch only through ToolSearch (deferred), so it is not
        // called directly.
        let fetches = match cli {
            Cli::Claude => self.version != "2.1.332",
            Cli::Gemini | Cli::OpenCode | Cli::Qwen | Cli::Kilo => true,
            Cli::Codex | Cli::Aider | Cli::Pi | Cli::Grok => false,
        };
        if fetches {
            self.submit(&run, "fetch:https://example.com/fake-page")?;
            self.snap(
                &run,
                "waiting_user_answer",
                "fetch-permission",
                "The model asked to fetch https://example.com/fake-page with the CLI's web-fetch tool; the CLI asks for permission.",
                Duration::from_secs(40),
                move |s| !cli.working(s) && !s.has("no tool for") && cli.pending(s),
            )?;
            self.keys(&run, cli.reject())?;
            self.snap(
                &run,
                "completed",
                "fetch-rejected",
                "The web fetch was refused in the permission dialog; the turn ended (a file was written earlier in this session) and the CLI is ready for input: an interrupted or refused turn is a finished turn, not an error.",
                Duration::from_secs(40),
                move |s| cli.idle_ready(s),
            )?;
        }
        self.end(run);
        Ok(())
    }

    /// Esc (Ctrl-C for Aider) while a reply is pending, then a refused shell command.
    pub(crate) fn interrupts(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let cli = self.cli;
        let run = self.launch_ready(size, suffix)?;
        self.warm_up(&run, WARM_UP)?;
        self.submit(&run, "slow:60000 reply:This answer never arrives.")?;
        self.wait_for(&run, "the working state", Duration::from_secs(20), |s| {
            cli.working(s)
        })?;
        std::thread::sleep(Duration::from_millis(1500));
        self.keys(&run, cli.interrupt())?;
        self.snap(
            &run,
            "completed",
            "interrupted",
            &format!(
                "A first prompt was answered; a second one was interrupted with {} while the CLI waited for the model. The interrupted turn is over and the CLI is ready for input (label: completed, since the session has answered before; an interrupt is not an error).",
                cli.interrupt().join(" ")
            ),
            Duration::from_secs(30),
            move |s| cli.idle_ready(s),
        )?;
        if !cli.asks_permission() {
            self.end(run);
            return Ok(());
        }
        self.submit(&run, "tool:touch refused.txt")?;
        self.wait_stable(
            &run,
            "the permission dialog",
            Duration::from_secs(30),
            |s| cli.dialog(s),
        )?;
        self.keys(&run, cli.reject())?;
        self.snap(
            &run,
            "completed",
            "tool-rejected",
            &format!(
                "The model asked to run `touch refused.txt` (a CLI that puts the interrupted prompt back into its input box sent it in front of this one); the command was refused in the permission dialog ({}). The turn is over and the CLI is ready for input (label: completed, like an interrupt, since the session has answered before).",
                cli.reject().join(" ")
            ),
            Duration::from_secs(30),
            move |s| cli.idle_ready(s),
        )?;
        self.end(run);
        Ok(())
    }

    /// Esc (Ctrl-C for Aider) while an approved command runs, after an answered prompt.
    pub(crate) fn interrupt_tool(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let cli = self.cli;
        let run = self.launch_ready(size, suffix)?;
        self.warm_up(&run, WARM_UP)?;
        let file = run.work.join("interrupted-output.txt");
        let interrupted = cli.sleep_then(20, "interrupted-output.txt");
        self.submit(&run, &format!("tool:{interrupted}"))?;
        self.approve_tool(&run)?;
        self.wait_for(
            &run,
            "the approved command running",
            Duration::from_secs(10),
            |s| !cli.dialog(s) && cli.working(s),
        )?;
        std::thread::sleep(Duration::from_secs(3));
        self.keys(&run, cli.interrupt())?;
        self.snap(
            &run,
            "completed",
            "interrupted-tool-run",
            &format!(
                "A first prompt was answered; then the approved command `{interrupted}` was interrupted with {} about 3 s into its run. The interrupted turn is over and the CLI is ready for input (label: completed, since the session has answered before; an interrupt is not an error).",
                cli.interrupt().join(" ")
            ),
            Duration::from_secs(30),
            move |s| cli.idle_ready(s) && !file.exists(),
        )?;
        self.end(run);
        Ok(())
    }

    /// HTTP 429 to every try.
    pub(crate) fn http_429(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let run = self.launch_ready(size, suffix)?;
        self.submit(&run, "fail:429")?;
        self.failure(&run, 429, true)?;
        self.end(run);
        Ok(())
    }

    /// A command that runs for a while, then `/compact` of the conversation.
    pub(crate) fn long_tool_and_compact(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let cli = self.cli;
        let run = self.launch_ready(size, suffix)?;
        self.warm_up(&run, "compactslow:8000 reply:Compaction warm-up answer.")?;
        let file = run.work.join("long-output.txt");
        let long = cli.sleep_then(20, "long-output.txt");
        self.submit(&run, &format!("tool:{long}"))?;
        self.approve_tool(&run)?;
        let started = Instant::now();
        for (frame, at) in [(1, 4), (2, 12)] {
            while started.elapsed() < Duration::from_secs(at) {
                std::thread::sleep(POLL);
            }
            let running = file.clone();
            self.save(
                &run,
                "processing",
                &format!("long-tool-running-{frame}"),
                &format!(
                    "Permission given; the approved command `{long}` has been running for about {at} s (frame {frame} of 2)."
                ),
                move |s| !cli.dialog(s) && cli.working(s) && !running.exists(),
            )?;
        }
        let done = file.clone();
        let answer = (cli != Cli::Aider).then_some(TOOL_ANSWER);
        self.wait_stable(
            &run,
            "the end of the long tool",
            Duration::from_secs(40),
            move |s| done.exists() && cli.idle_ready(s) && answer.is_none_or(|a| s.has_answer(a)),
        )?;
        let Some(command) = cli.compact_command() else {
            self.end(run);
            return Ok(());
        };
        self.type_text(&run, command)?;
        self.press_enter(&run)?;
        self.snap(
            &run,
            "processing",
            "compacting",
            &format!(
                "`{command}` was entered after two answered turns; the CLI is compacting the conversation (the fake model holds the summary back for 8 s)."
            ),
            Duration::from_secs(20),
            move |s| cli.working(s) || s.has_any(&["ompacting", "ompressing"]),
        )?;
        self.snap(
            &run,
            "completed",
            "compacted",
            &format!(
                "`{command}` finished: the conversation was compacted and the CLI is ready for the next prompt."
            ),
            Duration::from_secs(40),
            move |s| cli.idle_ready(s) && !s.has_any(&["ompacting…", "ompressing…"]),
        )?;
        self.end(run);
        Ok(())
    }
}

/// The first-run screens of each CLI, as far as they go offline.
pub(crate) fn onboarding_steps(cli: Cli, version: &str) -> Vec<OnboardingStep> {
    let step = |markers, status, scenario, description, keys| OnboardingStep {
        markers,
        unless: &[],
        status,
        scenario,
        description,
        keys,
        optional: false,
    };
    pub(crate) const WAIT: &str = "waiting_user_answer";
    match cli {
        // Without `hasSeenAutoDefaultNudge`, 2.1.332 offers auto mode at start-up. (A first
        // run with no configuration at all checks api.anthropic.com and exits offline.)
        Cli::Claude if version != "2.1.219" => vec![step(
            &["Make auto mode your default permission mode?"],
            WAIT,
            "startup-auto-mode-offer",
            "Launched with onboarding done but the auto-mode offer not yet seen: Claude Code asks whether to make auto mode the default permission mode (Yes / No, keep manual mode) and waits for the answer.",
            &[],
        )],
        Cli::Claude => Vec::new(),
        Cli::Codex => {
            let mut steps = vec![step(
                &["Sign in with ChatGPT", "Press enter to continue"],
                WAIT,
                "onboarding-sign-in-menu",
                "First run with no configuration and no credentials: Codex's welcome screen asks how to sign in (a numbered menu) and waits for a choice.",
                &["Down", "Down", "Enter"],
            )];
            if version != "0.145.0" {
                steps.push(step(
                    &["Sign in another way", "Use an OpenAI API key"],
                    WAIT,
                    "onboarding-sign-in-another-way",
                    "First run: 'Sign in another way' was chosen; Codex shows the second menu (OpenAI API key, Amazon Bedrock) and waits for a choice.",
                    &["Enter"],
                ));
            }
            steps.push(step(
                &["Press enter to save", "Paste or type your API key"],
                WAIT,
                "onboarding-api-key-entry",
                "First run: the API-key sign-in was chosen; Codex shows an empty API-key entry box ('Press enter to save') and waits for the key.",
                &["text:sk-typed-but-not-saved"],
            ));
            steps.push(step(
                &["Press enter to save", "sk-typed-but-not-saved"],
                WAIT,
                "onboarding-api-key-typed",
                "First run: an API key is typed into Codex's entry box but Enter was not pressed; Codex still waits for the user.",
                &[],
            ));
            steps
        }
        Cli::Gemini => vec![
            step(
                &["How would you like to authenticate"],
                WAIT,
                "onboarding-auth-method",
                "First run with no settings and no API key (the folder is trusted): Gemini CLI asks how to authenticate (Sign in with Google / Use Gemini API Key / Vertex AI) and waits for a choice.",
                &["Down", "Enter"],
            ),
            step(
                &["Enter Gemini API Key"],
                WAIT,
                "onboarding-api-key-entry",
                "First run: 'Use Gemini API Key' was chosen; Gemini CLI shows an empty API-key entry box and waits for the key.",
                &[],
            ),
        ],
        Cli::Aider => vec![
            OnboardingStep {
                optional: true,
                ..step(
                    &["Allow collection of anonymous analytics"],
                    WAIT,
                    "onboarding-analytics-question",
                    "First run with no model, no API key and no analytics choice: Aider asks whether to allow anonymous analytics, (Y)es/(N)o, and waits for the answer.",
                    &["n", "Enter"],
                )
            },
            step(
                &["Login to OpenRouter or create a free account?"],
                WAIT,
                "onboarding-openrouter-login",
                "First run with no model and no API key: Aider offers to log in to OpenRouter, (Y)es/(N)o [Yes], and waits for the answer.",
                &[],
            ),
        ],
        Cli::Qwen | Cli::Pi | Cli::Kilo | Cli::Grok => Vec::new(),
        Cli::OpenCode => vec![step(
            &["ctrl+p commands"],
            "idle",
            "fresh-start-unconfigured",
            "First run with no configuration at all: OpenCode starts with its default provider (OpenCode Zen) and a tip to run /connect; the prompt is ready and nothing was asked.",
            &[],
        )],
    }
}
