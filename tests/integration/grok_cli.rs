//! A real Grok CLI (npm `@vibe-kit/grok-cli`, against the fake model server's OpenAI Chat
//! Completions through `GROK_BASE_URL`) under the daemon: recognised from its processes, its
//! statuses through a turn that a queued message starts, its answer read back with `last`, its
//! confirmation menu answered through `panectl answer` (its selection read from the
//! background), an error, and closed with its own `exit`.

use crate::agent_clis::binary;
use crate::agent_session::AgentSession;
use crate::fake_model::FakeModel;
use crate::hook_install::send_line;
use crate::support::daemon_test_lock;

#[test]
fn grok_clis_statuses_answer_dialog_and_close_follow_a_real_session() {
    let _guard = daemon_test_lock();
    let model = FakeModel::start();
    let home = tempfile::tempdir().expect("home");
    let work = tempfile::tempdir().expect("work");
    // `CI` unset: under CI its terminal UI (Ink) draws no input box, only the banner.
    let command = format!(
        "exec env -u CI HOME='{}' GROK_API_KEY=sk-panectl-test GROK_BASE_URL='{}/v1' \
         GROK_MODEL=gpt-fake '{}'",
        home.path().display(),
        model.url(),
        binary("grok").display()
    );
    let agent = AgentSession::start("grok_cli", &work.path().to_string_lossy(), &command);
    let server = &agent.server;

    agent.queued_turn("slow:2000 reply:Grok answered the queued message.");
    assert_eq!(
        server.panectl_ok(&["last", "%0"]).trim(),
        "Grok answered the queued message."
    );

    // Its confirmation menu is a decision although no pointer marks the selected option (its
    // background does); `--yes` picks "Yes" and the command runs.
    let waiting = agent.allow_with_answer(&work.path().join("allowed"), "Yes");
    assert_eq!(
        waiting["decision"]["options"][0]["pointed"], true,
        "{waiting:#}"
    );

    // An error the model answers is the status until the next turn.
    send_line(server, "fail:400");
    agent.wait_status(&["error"]);

    // `close` asks it to leave its own way.
    agent.close_with("exit");
}
