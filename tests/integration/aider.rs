//! A real Aider (PyPI `aider-chat`, against the fake model server's OpenAI Chat Completions)
//! under the daemon: recognised from its processes, its statuses through a turn that a queued
//! message starts, its `Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]:` questions read
//! as decisions (the command it asks about in the question) and answered through `panectl
//! answer` with `--no` and `--yes`, and closed with its own `/exit`. Which option took effect is
//! what the command did: the file it makes exists only after a yes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::agent_clis::binary;
use crate::agent_session::AgentSession;
use crate::fake_model::FakeModel;
use crate::support::daemon_test_lock;

/// A home where Aider starts offline (LiteLLM's model table from its own package, no
/// analytics question), and a work directory.
struct AiderHome {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

/// LiteLLM's bundled model table in Aider's virtual environment.
fn litellm_model_table(aider: &Path) -> PathBuf {
    let lib = aider
        .parent()
        .and_then(Path::parent)
        .expect("aider's virtual environment")
        .join("lib");
    std::fs::read_dir(&lib)
        .expect("the environment's lib")
        .flatten()
        .map(|entry| {
            entry
                .path()
                .join("site-packages/litellm/model_prices_and_context_window_backup.json")
        })
        .find(|table| table.exists())
        .expect("LiteLLM's model table")
}

impl AiderHome {
    fn new() -> AiderHome {
        let home = tempfile::tempdir().expect("home");
        let work = tempfile::tempdir().expect("work");
        let caches = home.path().join(".aider/caches");
        std::fs::create_dir_all(&caches).expect("mkdir .aider/caches");
        std::fs::copy(
            litellm_model_table(&binary("aider")),
            caches.join("model_prices_and_context_window.json"),
        )
        .expect("copy the model table");
        std::fs::write(
            home.path().join(".aider/analytics.json"),
            r#"{"uuid": "00000000-0000-4000-8000-000000000000", "permanently_disable": true, "asked_opt_in": true}"#,
        )
        .expect("analytics.json");
        AiderHome { home, work }
    }

    fn work(&self) -> &Path {
        self.work.path()
    }

    /// The shell command that runs Aider against `model_url`, without git.
    fn command(&self, model_url: &str) -> String {
        format!(
            "exec env HOME='{}' LITELLM_LOCAL_MODEL_COST_MAP=True OPENAI_API_KEY=sk-panectl-test \
             '{}' --model openai/gpt-4o --openai-api-base '{model_url}/v1' --no-check-update \
             --no-show-release-notes --no-git",
            self.home.path().display(),
            binary("aider").display()
        )
    }
}

#[test]
fn aiders_statuses_and_letter_prompts_answered_by_option_follow_a_real_session() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let aider = AiderHome::new();
    let work = aider.work().to_string_lossy().into_owned();
    let agent = AgentSession::start("aider", &work, &aider.command(&model.url()));

    agent.queued_turn("slow:2000 reply:Aider answered the queued message.");

    // Its question about the command is a decision: the command over `Run shell command?`,
    // options by letter, `[Yes]` the default. `--no` presses `n` and Enter: nothing runs.
    let refused = aider.work().join("refused");
    let waiting = agent.answer_dialog(&refused, &["--no"], "No");
    let decision = &waiting["decision"];
    let labels: Vec<&str> = (decision["options"].as_array().unwrap().iter())
        .map(|o| o["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["Yes", "No", "Don't ask again"], "{waiting:#}");
    assert_eq!(decision["options"][0]["pointed"], true, "{waiting:#}");
    assert_eq!(
        decision["options"][1]["keys"],
        serde_json::json!(["n", "Enter"])
    );
    let question = decision["question"].as_str().unwrap();
    assert!(
        question.ends_with("Run shell command?") && question.contains("touch"),
        "{waiting:#}"
    );
    agent.wait_status(&["completed"]);
    std::thread::sleep(Duration::from_secs(1));
    assert!(!refused.exists(), "a refused command ran");

    // `--yes` presses `y` and Enter: the command runs.
    agent.allow_with_answer(&aider.work().join("allowed"), "Yes");

    // `close` asks it to leave its own way.
    agent.close_with("/exit");
}
