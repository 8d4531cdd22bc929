//! Which program a pane runs, when tmux's answer and the processes read after it disagree.

use super::*;
use crate::session::programs::{MIN_INTERVAL, RECHECKS};

/// A process as `/proc` shows it.
fn process(pid: u32, name: &str, command_line: &str) -> ProcessEntry {
    ProcessEntry {
        pid,
        name: name.to_string(),
        command_line: command_line.to_string(),
    }
}

/// A `list-panes` row of `%0` whose process is `pid` and whose program tmux names `command`.
fn row_running(pid: u32, command: &str) -> String {
    format!("%0\t@0\t0\t80\t24\t1\t0\t0\t{pid}\t{command}\t\t\t")
}

/// What a question about `%0`'s program answers.
fn program_answer(pid: u32, command: &str) -> Body {
    ok(&[&format!("0\t0\t{pid}\t{command}\t\t\t")])
}

fn provider(h: &Harness) -> Option<String> {
    h.core
        .agents
        .get(PaneId(0))
        .and_then(|agent| agent.provider())
        .map(|p| p.id.to_string())
}

fn set_tree(h: &Harness, tree: Vec<ProcessEntry>) {
    *h.host.tree.lock().expect("the tree") = tree;
}

/// A core attached to a session whose `%0` runs `pid`, tmux naming its program `command`,
/// while the host shows the processes of `tree`; `%0` is seeded.
fn attached(tree: Vec<ProcessEntry>, pid: u32, command: &str) -> Harness {
    let mut h = Harness::new(ConnectionConfig::default());
    let (start, _) = split_at(&transcript("shell-utf8"), "%output");
    h.feed(&start);
    set_tree(&h, tree);
    h.attach(&[&row_running(pid, command)]);
    h.seed(PaneId(0), (80, 24), &["$"], (2, 0));
    h
}

/// Lets the core wake at `at` and returns whether it asked about `%0`'s program.
fn asks_at(h: &mut Harness, at: Instant) -> bool {
    h.now = at;
    h.core.wake(at);
    h.collect();
    h.skip_until(|p| matches!(p, Purpose::ProgramCheck(_)));
    matches!(
        h.outstanding.front(),
        Some((Purpose::ProgramCheck(PaneId(0)), _))
    )
}

#[test]
fn a_program_read_in_the_middle_of_its_wrappers_exec_is_looked_at_again() {
    // tmux named the pane's program `python3` while a shim of that name ran, and the daemon
    // read the processes while the shim's bash ran: a shell, then.
    let tree = vec![process(
        4242,
        "bash",
        "bash /opt/pyenv/libexec/pyenv exec python3 -c pass",
    )];
    let mut h = attached(tree, 4242, "python3");
    assert_eq!(provider(&h).as_deref(), Some("shell"));
    // The same pid has exec'd the interpreter, and tmux names it `python3` again: the pane is
    // asked about once more, and its answer is looked at though the command is the same.
    set_tree(
        &h,
        vec![process(4242, "python3", "/opt/python/bin/python3 -c pass")],
    );
    let due = h.core.next_wakeup(h.now).expect("a question due");
    assert!(due <= h.now + MIN_INTERVAL);
    assert!(asks_at(&mut h, due));
    h.answer(vec![program_answer(4242, "python3")]);
    assert_eq!(provider(&h), None, "no program of a provider");
    // They agree now: nothing more is asked.
    let later = h.now + MIN_INTERVAL * 3;
    assert!(!asks_at(&mut h, later));
}

#[test]
fn a_shell_running_a_program_it_names_is_not_asked_about_again() {
    let tree = vec![
        process(10, "bash", "-bash"),
        process(11, "vim", "vim notes"),
    ];
    let mut h = attached(tree, 10, "vim");
    assert_eq!(provider(&h).as_deref(), Some("shell"));
    let later = h.now + MIN_INTERVAL * 3;
    assert!(!asks_at(&mut h, later));
}

#[test]
fn processes_that_never_agree_are_asked_about_a_bounded_number_of_times() {
    let tree = vec![process(10, "bash", "bash")];
    let mut h = attached(tree, 10, "renamed");
    let mut asked = 0;
    let mut at = h.now;
    while asks_at(&mut h, at + MIN_INTERVAL) {
        h.answer(vec![program_answer(10, "renamed")]);
        at = h.now;
        asked += 1;
        assert!(asked <= RECHECKS, "asked without end");
    }
    assert_eq!(asked, RECHECKS);
    assert_eq!(provider(&h).as_deref(), Some("shell"));
}
