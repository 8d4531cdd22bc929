//! A program the daemon takes for an agent with a dialog (a test provider detects it by its
//! arguments, and the dialog layer every provider inherits reads its menu): for the tests of
//! decisions through notifications, the board and `prefix J`.

use std::time::Duration;

use crate::support::TmuxServer;

/// A provider for the dialog program: found by its arguments, with no rules of its own (the
/// dialog layer every provider inherits reads the menu as `waiting_user_answer`).
pub(crate) const PROVIDER: &str = "id = \"dialog_agent\"\nname = \"Dialog agent\"\n\n[detect]\narguments = [\"dialog_agent.py\"]\n";

/// An agent-like program: it waits for `g`, then draws a dialog (the question read from the
/// file named by its argument, so that no shell ever sees it), and stays after an answer.
pub(crate) const DIALOG_AGENT: &str = r#"
import os, sys, termios, tty
question = open(sys.argv[1], encoding="utf-8").read()
options = ["Yes", "Yes, and don't ask again for this command", "No"]
fd = sys.stdin.fileno()
tty.setraw(fd)
sys.stdout.write("\x1b[H\x1b[2Jdialog agent: g shows the dialog\r\n")
sys.stdout.flush()
while os.read(fd, 1) != b"g":
    pass
at = 0
def draw():
    sys.stdout.write("\x1b[H\x1b[2J " + question + "\r\n")
    for i, label in enumerate(options):
        sys.stdout.write(" %s %d. %s\r\n" % ("\u276f" if i == at else " ", i + 1, label))
    sys.stdout.write("\r\n Esc to cancel")
    sys.stdout.flush()
draw()
while True:
    # Keys that arrive together in one read are taken one by one, as a real TUI does.
    chunk = os.read(fd, 64)
    while chunk:
        if chunk.startswith(b"\x1b[B"):
            at = min(at + 1, len(options) - 1); draw(); chunk = chunk[3:]
        elif chunk.startswith(b"\x1b[A"):
            at = max(at - 1, 0); draw(); chunk = chunk[3:]
        elif chunk.startswith(b"\r"):
            sys.stdout.write("\x1b[H\x1b[2Jchose %d\r\n" % (at + 1)); sys.stdout.flush()
            while True:
                os.read(fd, 16)
        else:
            chunk = chunk[1:]
"#;

/// A tmux server whose `%0` runs the dialog program with `question`, and the rules dir that
/// makes it an agent (both inside the server's private directory).
pub(crate) fn agent_server(question: &str) -> (TmuxServer, String) {
    // 24 rows: the dialog layer reads the last 25; wide, so that no question wraps.
    let server = TmuxServer::start(200, 24);
    let rules = server.dir().join("rules");
    std::fs::create_dir_all(&rules).expect("rules dir");
    std::fs::write(rules.join("dialog_agent.toml"), PROVIDER).expect("write the provider");
    let program = server.dir().join("dialog_agent.py");
    std::fs::write(&program, DIALOG_AGENT).expect("write the program");
    let question_file = server.dir().join("question.txt");
    std::fs::write(&question_file, question).expect("write the question");
    let command = format!(
        "exec python3 {} {}",
        program.display(),
        question_file.display()
    );
    server.tmux(&["respawn-pane", "-k", "-t", "%0", &command]);
    (server, rules.to_string_lossy().into_owned())
}

/// Lets the program draw its dialog, and waits until the daemon sees the agent waiting.
pub(crate) fn show_dialog(server: &TmuxServer) {
    // Once its terminal is raw (a key typed before would be flushed with the line discipline).
    server.wait_for("the program ready", Duration::from_secs(10), || {
        server
            .tmux(&["capture-pane", "-p", "-t", "%0"])
            .contains("g shows the dialog")
    });
    server.tmux(&["send-keys", "-t", "%0", "-l", "g"]);
    server.wait_for("waiting_user_answer", Duration::from_secs(15), || {
        server.panes()[0]["status"] == "waiting_user_answer"
    });
}
