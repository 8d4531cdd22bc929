//! Recording one CLI: launches, the main sequence of states, failures, and saving screens.

use super::*;

impl<'a> Recorder<'a> {
    pub(crate) fn new(
        cli: Cli,
        binary: PathBuf,
        out_root: &Path,
        fake: &'a FakeModel,
        clear: bool,
    ) -> Result<Self> {
        let version = cli_version(&binary)?;
        let out = out_root.join(cli.provider()).join(&version);
        if clear && out.exists() {
            std::fs::remove_dir_all(&out).with_context(|| format!("clear {}", out.display()))?;
        }
        std::fs::create_dir_all(&out).with_context(|| format!("create {}", out.display()))?;
        Ok(Recorder {
            cli,
            binary,
            version,
            out,
            fake,
            tmux: Tmux::start()?,
            saved: Vec::new(),
            next_session: 0,
        })
    }

    /// `--extra`: first-run onboarding, questions to the user, file-write and web-fetch
    /// permissions, interrupts, a rejected command, HTTP 429, a long tool run and `/compact`.
    /// A scenario that fails is reported and skipped; the others still run.
    pub(crate) fn record_extra(&mut self) -> Result<()> {
        let mut failed = Vec::new();
        let mut attempt = |name: &str, result: Result<()>| {
            if let Err(error) = result {
                println!("  !! {name} failed: {error:#}");
                failed.push(name.to_string());
            }
        };
        for &size in &[(120, 40), (80, 24)] {
            let suffix = if size == (120, 40) {
                String::new()
            } else {
                format!("-{}x{}", size.0, size.1)
            };
            let small = size != (120, 40);
            if small && matches!(self.cli, Cli::Aider | Cli::OpenCode | Cli::Kilo) {
                continue;
            }
            let only = std::env::var("PANECTL_EXTRA_ONLY").unwrap_or_default();
            let wanted = |name: &str| only.is_empty() || only.split(',').any(|o| o == name);
            if wanted("onboarding") {
                let result = self.onboarding(size, &suffix);
                attempt("onboarding", result);
            }
            if wanted("ask") {
                let result = self.ask_user(size, &suffix);
                attempt("ask", result);
            }
            if wanted("write") {
                let result = self.write_and_fetch(size, &suffix);
                attempt("write", result);
            }
            if small {
                continue;
            }
            if wanted("interrupt") {
                let result = self.interrupts(size, &suffix);
                attempt("interrupt", result);
            }
            if wanted("429") {
                let result = self.http_429(size, &suffix);
                attempt("429", result);
            }
            // Only when picked by name: HTTP 529 (Anthropic's "overloaded") to every try.
            if only.split(',').any(|o| o == "529") {
                let result = self.http_529(size, &suffix);
                attempt("529", result);
            }
            if wanted("long") {
                let result = self.long_tool_and_compact(size, &suffix);
                attempt("long", result);
            }
            if wanted("turns") {
                let result = self.turns(size, &suffix);
                attempt("turns", result);
            }
            // Only when picked by name: Esc (Ctrl-C for Aider) while an approved command runs.
            if only.split(',').any(|o| o == "interrupttool") {
                let result = self.interrupt_tool(size, &suffix);
                attempt("interrupttool", result);
            }
        }
        if !failed.is_empty() {
            println!(
                "  {} {}: failed scenarios: {failed:?}",
                self.cli.name(),
                self.version
            );
        }
        Ok(())
    }

    pub(crate) fn record(&mut self) -> Result<()> {
        for &size in self.cli.sizes() {
            let suffix = if size == (120, 40) {
                String::new()
            } else {
                format!("-{}x{}", size.0, size.1)
            };
            self.main_sequence(size, &suffix)?;
            self.error_401(size, &suffix)?;
            self.http_500(size, &suffix)?;
            for &(start, scenario, marker) in self.cli.startup_dialogs() {
                self.startup_dialog(size, &suffix, start, scenario, marker)?;
            }
        }
        Ok(())
    }

    /// Fresh start, a slow answer, a tool that needs permission, a second prompt, HTTP 400.
    pub(crate) fn main_sequence(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let cli = self.cli;
        let run = self.launch_ready(size, suffix)?;
        self.save(
            &run,
            "idle",
            "fresh-start",
            "Just launched, ready for input; nothing asked yet.",
            |s| cli.ready(s),
        )?;

        let prompt = format!("slow:{SLOW_MS} reply:{SLOW_ANSWER}");
        self.submit(&run, &prompt)?;
        let submitted = Instant::now();
        let mut previous: Option<Screen> = None;
        for frame in 1..=3 {
            let since = Instant::now();
            let first = frame == 1;
            let before = previous.clone();
            let screen =
                self.wait_for(&run, "the working state", Duration::from_secs(20), |s| {
                    cli.working(s)
                        && (first
                            || (since.elapsed() >= Duration::from_millis(1200)
                                && before.as_ref().is_none_or(|b| b.text != s.text)))
                })?;
            previous = Some(screen);
            self.save(
                &run,
                "processing",
                &format!("slow-reply-{frame}"),
                &format!(
                    "Working on a prompt whose answer the fake model holds back for {} s (frame {frame} of 3, {:.1} s after Enter).",
                    SLOW_MS / 1000,
                    submitted.elapsed().as_secs_f64()
                ),
                |s| cli.working(s),
            )?;
        }
        self.wait_stable(&run, "the slow answer", Duration::from_secs(30), |s| {
            cli.ready(s) && s.has_answer(SLOW_ANSWER)
        })?;
        self.save(
            &run,
            "completed",
            "slow-reply",
            "The held-back answer arrived; ready for the next prompt.",
            |s| cli.ready(s),
        )?;

        let tool_command = self.cli.sleep_then(3, TOOL_FILE);
        self.submit(&run, &format!("tool:{tool_command}"))?;
        if cli.asks_permission() {
            self.wait_stable(
                &run,
                "the tool permission dialog",
                Duration::from_secs(30),
                |s| cli.dialog(s),
            )?;
            self.save(
                &run,
                "waiting_user_answer",
                "tool-permission",
                &format!("The model asked to run `{tool_command}`; the CLI asks for permission."),
                |s| cli.dialog(s),
            )?;
        }
        self.approve_tool(&run)?;
        let file = run.work.join(TOOL_FILE);
        self.wait_for(
            &run,
            "the approved command running",
            Duration::from_secs(10),
            |s| !cli.dialog(s) && cli.working(s) && !file.exists(),
        )?;
        self.save(
            &run,
            "processing",
            "tool-running",
            if cli.asks_permission() {
                "Permission given (first answer); the approved command is running (it sleeps 3 s)."
            } else {
                "The model asked to run a command (this CLI does not ask for permission); it is running (it sleeps 3 s)."
            },
            |s| !cli.dialog(s) && cli.working(s) && !file.exists(),
        )?;
        // Aider does not send a silent command's result back to the model, so no answer follows.
        let answer = (cli != Cli::Aider).then_some(TOOL_ANSWER);
        self.wait_stable(
            &run,
            "the end of the tool's turn",
            Duration::from_secs(30),
            |s| file.exists() && cli.ready(s) && answer.is_none_or(|a| s.has_answer(a)),
        )?;
        self.save(
            &run,
            "completed",
            "tool-approved",
            "The approved command ran and the turn ended; ready for the next prompt.",
            |s| cli.ready(s),
        )?;

        self.submit(&run, &format!("reply:{SECOND_ANSWER}"))?;
        self.wait_stable(&run, "the second answer", Duration::from_secs(30), |s| {
            cli.ready(s) && s.has_answer(SECOND_ANSWER)
        })?;
        self.save(
            &run,
            "completed",
            "second-prompt",
            "A second prompt was answered; ready for the next prompt.",
            |s| cli.ready(s),
        )?;

        // Last in this session: Claude Code keeps a failed prompt in the conversation and sends
        // it again with the next one.
        self.submit(&run, "fail:400")?;
        self.wait_stable(&run, "the HTTP 400 error", Duration::from_secs(60), |s| {
            cli.ready(s) && cli.errored(s)
        })?;
        self.save(
            &run,
            "error",
            "http-400",
            "The fake model answered HTTP 400 to the prompt; the CLI shows the error and is ready for input again.",
            |s| cli.ready(s) && cli.errored(s),
        )?;
        self.end(run);
        Ok(())
    }

    /// Lets the command the model asked to run go: waits for the permission dialog and gives
    /// the first answer, where the CLI asks at all.
    pub(crate) fn approve_tool(&self, run: &Run) -> Result<()> {
        let cli = self.cli;
        if !cli.asks_permission() {
            return Ok(());
        }
        self.wait_stable(run, "the permission dialog", Duration::from_secs(30), |s| {
            cli.dialog(s)
        })?;
        for key in cli.approve() {
            self.tmux.run(&["send-keys", "-t", &run.pane, key])?;
        }
        Ok(())
    }

    /// A typed prompt not yet sent, then HTTP 401, in a fresh session.
    pub(crate) fn error_401(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let run = self.launch_ready(size, suffix)?;
        self.type_text(&run, "fail:401")?;
        self.wait_stable(&run, "the typed prompt", Duration::from_secs(10), |s| {
            s.has("fail:401")
        })?;
        self.save(
            &run,
            "idle",
            "prompt-typed",
            "Just launched; a prompt is typed into the input but Enter was not pressed.",
            |s| s.has("fail:401"),
        )?;
        self.failure(&run, 401, false)?;
        self.end(run);
        Ok(())
    }

    /// HTTP 500 to every try, in a fresh session.
    pub(crate) fn http_500(&mut self, size: (u16, u16), suffix: &str) -> Result<()> {
        let run = self.launch_ready(size, suffix)?;
        self.submit(&run, "fail:500")?;
        self.failure(&run, 500, true)?;
        self.end(run);
        Ok(())
    }

    /// After `fail:CODE` was sent (`sent` false: only typed, Enter still to press): records
    /// the retries while the CLI retries, and the error it shows when it gives up (if it gives
    /// up within its time limit).
    pub(crate) fn failure(&mut self, run: &Run, code: u16, sent: bool) -> Result<()> {
        let cli = self.cli;
        let fake = self.fake;
        // Requests on the conversation's endpoint (Gemini CLI also asks a routing classifier).
        let path = cli.conversation_path();
        let sent_count = || fake.log().iter().filter(|l| l.path.contains(path)).count();
        let before = sent_count();
        if !sent {
            self.press_enter(run)?;
        }
        let tries = || sent_count() - before;
        let failed = |s: &Screen| cli.ready(s) && cli.errored(s);
        let retrying =
            |s: &Screen, wanted: usize| cli.working(s) && cli.retry_shown(s) && tries() >= wanted;
        let first = self.wait_for(
            run,
            &format!("the HTTP {code} error or a retry"),
            Duration::from_secs(60),
            |s| failed(s) || retrying(s, 2),
        )?;
        let mut scenario = format!("http-{code}");
        let retried = !failed(&first);
        if retried {
            let mut previous: Option<Screen> = None;
            for frame in 1..=2 {
                let since = Instant::now();
                let shown =
                    self.wait_for(run, "the CLI retrying", Duration::from_secs(90), |s| {
                        retrying(s, frame + 1)
                            && since.elapsed() >= Duration::from_millis(700)
                            && previous.as_ref().is_none_or(|p| p.text != s.text)
                    })?;
                previous = Some(shown);
                self.save(
                    run,
                    "processing",
                    &format!("http-{code}-retrying-{frame}"),
                    &format!(
                        "The fake model answers HTTP {code} to every try; the CLI is retrying (frame {frame} of 2)."
                    ),
                    |s| cli.working(s) && cli.retry_shown(s),
                )?;
            }
            let Some(limit) = cli.gives_up_after() else {
                println!(
                    "    ({} retries HTTP {code} too long to wait for the end)",
                    cli.name()
                );
                return Ok(());
            };
            self.wait_stable(
                run,
                &format!("the CLI giving up after HTTP {code}"),
                limit,
                failed,
            )?;
            scenario.push_str("-gave-up");
        }
        let description = if retried {
            format!(
                "The fake model answered HTTP {code} to every try; the CLI retried, gave up, shows the error and is ready for input again."
            )
        } else {
            format!(
                "The fake model answered HTTP {code}; the CLI shows the error and is ready for input again."
            )
        };
        self.save(run, "error", &scenario, &description, failed)
    }

    pub(crate) fn startup_dialog(
        &mut self,
        size: (u16, u16),
        suffix: &str,
        start: Start,
        scenario: &str,
        marker: &str,
    ) -> Result<()> {
        let run = self.launch(start, size, suffix)?;
        self.wait_stable(
            &run,
            &format!("the start-up dialog ({marker})"),
            Duration::from_secs(60),
            |s| s.has(marker),
        )?;
        let what = match start {
            Start::Untrusted => {
                "the work directory is not marked as trusted: the CLI asks whether to trust it"
            }
            Start::UnapprovedKey => {
                "the API key in the environment was not approved before: the CLI asks whether to use it"
            }
            Start::NoGit => "the work directory is no git repository: the CLI offers to create one",
            Start::Ready | Start::Fresh => "",
        };
        self.save(
            &run,
            "waiting_user_answer",
            scenario,
            &format!("Just launched; {what}."),
            |s| s.has(marker),
        )?;
        self.end(run);
        Ok(())
    }

    /// Starts the CLI in a fresh, ready set-up and waits for its prompt.
    pub(crate) fn launch_ready(&mut self, size: (u16, u16), suffix: &str) -> Result<Run> {
        let cli = self.cli;
        let run = self.launch(Start::Ready, size, suffix)?;
        let shown = self.wait_stable(
            &run,
            "the prompt after start-up",
            Duration::from_secs(60),
            |s| cli.ready(s) || turns::model_upgrade(cli, s),
        )?;
        if turns::model_upgrade(cli, &shown) {
            self.model_upgrade(&run)?;
        }
        Ok(run)
    }

    /// Prepares a temporary HOME and work directory and starts the CLI in a new session.
    pub(crate) fn launch(&mut self, start: Start, size: (u16, u16), suffix: &str) -> Result<Run> {
        let root = tempfile::Builder::new()
            .prefix(&format!("panectl-rec-{}-", self.cli.name()))
            .tempdir()
            .context("temporary directory")?;
        let home = root.path().join("home");
        let work = root.path().join("work");
        std::fs::create_dir_all(&home)?;
        std::fs::create_dir_all(&work)?;
        let (env, argv) = self.setup(start, &home, &work)?;
        let session = format!("{}-{}", self.cli.name(), self.next_session);
        self.next_session += 1;
        let pane = self.tmux.launch(&session, size, &work, &env, &argv)?;
        println!(
            "  {session}: {:?} {}x{} in pane {pane}",
            start, size.0, size.1
        );
        Ok(Run {
            session,
            pane,
            work,
            suffix: suffix.to_string(),
            _root: root,
        })
    }

    pub(crate) fn end(&self, run: Run) {
        self.tmux.kill_session(&run.session);
    }

    /// The files and environment that make the CLI start offline, against the fake model.
    pub(crate) fn setup(
        &self,
        start: Start,
        home: &Path,
        work: &Path,
    ) -> Result<(Environment, Vec<String>)> {
        let url = self.fake.url();
        let work_str = work.to_string_lossy().to_string();
        let write = |path: PathBuf, text: String| -> Result<()> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, text).with_context(|| format!("write {}", path.display()))
        };
        let binary = self.binary.to_string_lossy().to_string();
        let var = |k: &str, v: &str| (k.to_string(), v.to_string());
        let mut env = vec![var("HOME", &home.to_string_lossy())];
        let mut argv = vec![binary];
        match self.cli {
            Cli::Claude => {
                let approved = if start == Start::UnapprovedKey {
                    serde_json::json!([])
                } else {
                    serde_json::json!([API_KEY, &API_KEY[API_KEY.len() - 20..]])
                };
                let mut project = serde_json::json!({"allowedTools": []});
                if start != Start::Untrusted {
                    project["hasTrustDialogAccepted"] = true.into();
                }
                let nudged = start != Start::Fresh;
                let config = serde_json::json!({
                    "hasCompletedOnboarding": true, "theme": "dark", "hasSeenAutoDefaultNudge": nudged,
                    "hasResetAutoModeOptInForDefaultOffer": nudged,
                    "customApiKeyResponses": {"approved": approved, "rejected": []},
                    "projects": {work_str.clone(): project},
                });
                write(
                    home.join(".claude.json"),
                    serde_json::to_string_pretty(&config)?,
                )?;
                env.push(var("ANTHROPIC_API_KEY", API_KEY));
                write(
                    home.join(".claude/settings.json"),
                    r#"{"permissions":{"defaultMode":"default"}}"#.into(),
                )?;
                env.extend([
                    var("ANTHROPIC_BASE_URL", &url),
                    var("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                    var("DISABLE_AUTOUPDATER", "1"),
                ]);
            }
            Cli::Codex => {
                let mut config = format!(
                    "model = \"gpt-5\"\nmodel_provider = \"fake\"\napproval_policy = \"on-request\"\nsandbox_mode = \"read-only\"\ncheck_for_update_on_startup = false\n\n\
                     [model_providers.fake]\nname = \"fake\"\nbase_url = \"{url}/v1\"\nenv_key = \"FAKE_KEY\"\nwire_api = \"responses\"\n"
                );
                if start == Start::Untrusted {
                    // Codex asks about trust only in a version-controlled folder.
                    let status = Command::new("git")
                        .args(["init", "-q"])
                        .current_dir(work)
                        .status()
                        .context("run git init")?;
                    if !status.success() {
                        bail!("git init failed in {}", work.display());
                    }
                } else {
                    config.push_str(&format!(
                        "\n[projects.\"{work_str}\"]\ntrust_level = \"trusted\"\n"
                    ));
                }
                if start != Start::Fresh {
                    // Codex answers `request_user_input` with "request_user_input is unavailable
                    // in Default mode" unless this (under-development) feature is on.
                    config.insert_str(0, "suppress_unstable_features_warning = true\n");
                    config.push_str("\n[features]\ndefault_mode_request_user_input = true\n");
                }
                if start == Start::Fresh {
                    // Nothing but the update check off (an older version would offer to update).
                    config = "check_for_update_on_startup = false\n".into();
                }
                write(home.join(".codex/config.toml"), config)?;
                env.push(var("FAKE_KEY", API_KEY));
                // Older versions have no daemon and no such option.
                let help = Command::new(&self.binary)
                    .arg("--help")
                    .stdin(Stdio::null())
                    .output()
                    .context("run codex --help")?;
                if String::from_utf8_lossy(&help.stdout).contains("--no-daemon") {
                    argv.push("--no-daemon".into());
                }
            }
            Cli::Gemini => {
                // Without `enableAutoUpdate: false` an older version installs the newest one
                // globally with npm at start-up.
                let settings = if start == Start::Fresh {
                    r#"{"general": {"enableAutoUpdate": false}}"#
                } else {
                    r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"enableAutoUpdate": false}}"#
                };
                write(home.join(".gemini/settings.json"), settings.into())?;
                if start != Start::Untrusted {
                    write(
                        home.join(".gemini/trustedFolders.json"),
                        serde_json::json!({work_str.clone(): "TRUST_FOLDER"}).to_string(),
                    )?;
                }
                if start != Start::Fresh {
                    env.push(var("GEMINI_API_KEY", API_KEY));
                }
                env.push(var("GOOGLE_GEMINI_BASE_URL", &url));
            }
            Cli::Aider => {
                // Aider fetches LiteLLM's model table from the network unless its cache holds
                // a fresh copy; the one LiteLLM ships is as good offline.
                let table = litellm_model_table(&self.binary)?;
                std::fs::create_dir_all(home.join(".aider/caches"))?;
                std::fs::copy(
                    &table,
                    home.join(".aider/caches/model_prices_and_context_window.json"),
                )
                .context("copy LiteLLM's model table")?;
                if start != Start::Fresh {
                    write(
                    home.join(".aider/analytics.json"),
                    r#"{"uuid": "00000000-0000-4000-8000-000000000000", "permanently_disable": true, "asked_opt_in": true}"#
                        .into(),
                )?;
                }
                env.push(var("LITELLM_LOCAL_MODEL_COST_MAP", "True"));
                if start == Start::Fresh {
                    argv.extend(["--no-check-update", "--no-show-release-notes"].map(String::from));
                } else {
                    env.push(var("OPENAI_API_KEY", API_KEY));
                    argv.extend(
                        [
                            "--model",
                            "openai/gpt-4o",
                            "--openai-api-base",
                            &format!("{url}/v1"),
                            "--no-check-update",
                            "--no-show-release-notes",
                        ]
                        .map(String::from),
                    );
                }
                if start != Start::NoGit {
                    argv.push("--no-git".into());
                }
            }
            Cli::Qwen => {
                // Qwen Code (a fork of Gemini CLI) speaks OpenAI's Chat Completions to any
                // compatible server named in its environment.
                // Tools ask before they run (the default is `auto`, a model that decides); no
                // feedback dialog after a turn, which would come at random.
                let mut settings = serde_json::json!({
                    "general": {"enableAutoUpdate": false},
                    "tools": {"approvalMode": "default"},
                    "ui": {"enableUserFeedback": false},
                });
                if start != Start::Fresh {
                    settings["security"] = serde_json::json!({"auth": {"selectedType": "openai"}});
                    settings["model"] = serde_json::json!({"name": "gpt-fake"});
                }
                if start == Start::Untrusted {
                    settings["security"]["folderTrust"] = serde_json::json!({"enabled": true});
                }
                write(
                    home.join(".qwen/settings.json"),
                    serde_json::to_string_pretty(&settings)?,
                )?;
                if start != Start::Untrusted {
                    write(
                        home.join(".qwen/trustedFolders.json"),
                        serde_json::json!({work_str.clone(): "TRUST_FOLDER"}).to_string(),
                    )?;
                }
                if start != Start::Fresh {
                    env.extend([
                        var("OPENAI_API_KEY", API_KEY),
                        var("OPENAI_BASE_URL", &format!("{url}/v1")),
                        var("OPENAI_MODEL", "gpt-fake"),
                    ]);
                }
            }
            Cli::Grok => {
                // Grok CLI takes any OpenAI-compatible server from its environment.
                if start != Start::Fresh {
                    env.extend([
                        var("GROK_API_KEY", API_KEY),
                        var("GROK_BASE_URL", &format!("{url}/v1")),
                        var("GROK_MODEL", "gpt-fake"),
                    ]);
                }
            }
            Cli::Pi => {
                // Pi takes OpenAI-compatible servers from ~/.pi/agent/models.json; without one
                // (a fresh start) it has no model to use. `PI_OFFLINE` keeps its start-up off
                // the network (update check, telemetry, fd and ripgrep downloads).
                if start != Start::Fresh {
                    write(
                        home.join(".pi/agent/models.json"),
                        serde_json::to_string_pretty(&serde_json::json!({"providers": {"fake": {
                            "baseUrl": format!("{url}/v1"),
                            "api": "openai-completions",
                            "apiKey": API_KEY,
                            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
                            "models": [{"id": "gpt-fake"}],
                        }}}))?,
                    )?;
                    write(
                        home.join(".pi/agent/settings.json"),
                        serde_json::json!({
                            "defaultProvider": "fake", "defaultModel": "gpt-fake",
                            "enableInstallTelemetry": false,
                        })
                        .to_string(),
                    )?;
                }
                env.push(var("PI_OFFLINE", "1"));
            }
            Cli::OpenCode | Cli::Kilo => {
                let config = serde_json::json!({
                    "$schema": "https://opencode.ai/config.json",
                    "autoupdate": false,
                    "share": "disabled",
                    "model": "fake/gpt-fake",
                    "permission": {"bash": "ask", "edit": "ask", "webfetch": "ask"},
                    "provider": {"fake": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "Fake",
                        "options": {"baseURL": format!("{url}/v1"), "apiKey": API_KEY},
                        "models": {"gpt-fake": {"name": "GPT Fake"}},
                    }},
                });
                // Kilo CLI, a fork of OpenCode, reads the same configuration from its own file.
                let file = match self.cli {
                    Cli::Kilo => ".config/kilo/kilo.json",
                    _ => ".config/opencode/opencode.json",
                };
                if start != Start::Fresh {
                    write(home.join(file), serde_json::to_string_pretty(&config)?)?;
                }
                env.extend([
                    var("KILO_DISABLE_AUTOUPDATE", "1"),
                    var("KILO_DISABLE_MODELS_FETCH", "1"),
                    var("KILO_DISABLE_LSP_DOWNLOAD", "1"),
                    var("OPENCODE_DISABLE_AUTOUPDATE", "1"),
                    var("OPENCODE_DISABLE_MODELS_FETCH", "1"),
                    var("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
                    // It installs its plugin package with npm at start-up; keep that offline.
                    var("npm_config_offline", "true"),
                ]);
            }
        }
        Ok((env, argv))
    }

    /// Polls the pane until `done` holds; fails with the screen after `limit`.
    pub(crate) fn wait_for(
        &self,
        run: &Run,
        what: &str,
        limit: Duration,
        mut done: impl FnMut(&Screen) -> bool,
    ) -> Result<Screen> {
        let deadline = Instant::now() + limit;
        loop {
            let screen = self.tmux.look(&run.pane)?;
            if done(&screen) {
                return Ok(screen);
            }
            if Instant::now() >= deadline {
                let log: Vec<String> = self
                    .fake
                    .log()
                    .iter()
                    .rev()
                    .take(8)
                    .map(|l| {
                        format!(
                            "  {} {:?}",
                            l.path,
                            l.prompt.chars().take(80).collect::<String>()
                        )
                    })
                    .collect();
                bail!(
                    "{} ({}): {what} did not show within {:?}\n{}\nlatest requests to the fake model (newest first):\n{}",
                    self.cli.name(),
                    run.session,
                    limit,
                    screen.dump(),
                    log.join("\n")
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Like `wait_for`, and then until the screen stays the same for 800 ms while `done` holds.
    pub(crate) fn wait_stable(
        &self,
        run: &Run,
        what: &str,
        limit: Duration,
        done: impl Fn(&Screen) -> bool,
    ) -> Result<Screen> {
        self.wait_quiet(run, what, limit, Duration::from_millis(800), done)
    }

    /// Like `wait_for`, and then until the screen stays the same for `quiet` while `done` holds
    /// (or `done` has held for four times that long on a screen that keeps changing).
    pub(crate) fn wait_quiet(
        &self,
        run: &Run,
        what: &str,
        limit: Duration,
        quiet: Duration,
        done: impl Fn(&Screen) -> bool,
    ) -> Result<Screen> {
        // A screen that keeps animating (a blinking marker, a clock) is taken once the state has
        // held for a while.
        let animated = quiet * 4;
        let mut held: Option<Instant> = None;
        let mut since: Option<(Screen, Instant)> = None;
        self.wait_for(run, what, limit, |s| {
            if !done(s) {
                held = None;
                since = None;
                return false;
            }
            let held_for = held.get_or_insert_with(Instant::now).elapsed();
            match &since {
                Some((last, at)) if last == s => at.elapsed() >= quiet || held_for >= animated,
                _ => {
                    since = Some((s.clone(), Instant::now()));
                    held_for >= animated
                }
            }
        })
    }

    /// Saves the pane as `<status>--<scenario><suffix>`: a plain and an escaped capture that
    /// agree with each other, taken while `holds` is true, and the metadata.
    pub(crate) fn save(
        &mut self,
        run: &Run,
        status: &str,
        scenario: &str,
        description: &str,
        holds: impl Fn(&Screen) -> bool,
    ) -> Result<()> {
        let scenario = format!("{scenario}{}", run.suffix);
        let deadline = Instant::now() + Duration::from_secs(5);
        let (screen, ansi) = loop {
            let screen = self.tmux.look(&run.pane)?;
            let ansi = self
                .tmux
                .run(&["capture-pane", "-p", "-e", "-t", &run.pane])?;
            let again = self.tmux.look(&run.pane)?;
            let agree = screen == again && same_lines(&strip_escapes(&ansi), &screen.text);
            if agree && holds(&screen) {
                break (screen, ansi);
            }
            if Instant::now() >= deadline {
                bail!(
                    "{} ({}): could not take a steady {status}--{scenario} screen (state held: {}, captures agreed: {agree})\n{}",
                    self.cli.name(),
                    run.session,
                    holds(&screen),
                    screen.dump()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut description = description.to_string();
        for note in notes(self.cli, &screen) {
            description.push(' ');
            description.push_str(&note);
        }
        let meta = Meta {
            provider: self.cli.provider(),
            cli_version: &self.version,
            status,
            scenario: &scenario,
            title: &screen.title,
            width: screen.width,
            height: screen.height,
            alternate_screen: screen.alternate,
            cursor: [screen.cursor.0, screen.cursor.1],
            description,
        };
        let base = self.out.join(format!("{status}--{scenario}"));
        let with = |ext: &str| base.with_extension(ext);
        std::fs::write(with("txt"), &screen.text)?;
        std::fs::write(with("ansi"), &ansi)?;
        std::fs::write(with("json"), serde_json::to_string_pretty(&meta)? + "\n")?;
        println!("    saved {status}--{scenario}");
        self.saved.push(format!("{status}--{scenario}"));
        Ok(())
    }
}
