use super::*;

fn host(destination: &str, socket: &str) -> SshHost {
    let mut options = SshOptions::new(destination, Some("ssh -F /dev/null"));
    options.alive_interval = 2;
    SshHost::new(options, Path::new("/run/x/panectl"), Path::new(socket)).expect("a host")
}

fn words(command: &Command) -> Vec<String> {
    command
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn destinations_that_ssh_would_misread_are_refused() {
    for bad in ["", "-oProxyCommand=x", "two words"] {
        let options = SshOptions::new(bad, None);
        assert!(
            SshHost::new(options, Path::new("/r"), Path::new("default")).is_err(),
            "{bad:?}"
        );
    }
}

#[test]
fn the_stem_names_destination_and_socket_apart() {
    let a = stem("devbox", Path::new("default"));
    assert!(a.starts_with("ssh-devbox-default-"), "{a}");
    assert_ne!(a, stem("devbox", Path::new("work")));
    assert_ne!(a, stem("user@devbox", Path::new("default")));
    assert_ne!(a, stem("devbox", Path::new("/tmp/tmux-1/default")));
    let odd = stem("me@host.example:22;rm", Path::new("/x/we ird"));
    assert!(
        odd.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
        "{odd}"
    );
    assert_eq!(
        host("devbox", "default").runtime_stem(Path::new("default")),
        a
    );
}

#[test]
fn tmux_words_are_quoted_and_the_socket_is_a_label_or_a_path() {
    let by_label = host("devbox", "work");
    let command = by_label.tmux_command(
        Path::new("work"),
        &["display-message", "-p", "#{pane_id}; x"],
    );
    let args = words(&command);
    assert_eq!(args[0], "-c");
    assert_eq!(args[1], "ssh -F /dev/null \"$@\"");
    assert!(args.contains(&"ControlMaster=no".to_string()), "{args:?}");
    assert!(
        args.contains(&"ServerAliveInterval=2".to_string()),
        "{args:?}"
    );
    let dest = args
        .iter()
        .position(|a| a == "devbox")
        .expect("destination");
    assert_eq!(args[dest - 1], "--");
    assert_eq!(
        args[dest + 1],
        "tmux -u -L work display-message -p '#{pane_id}; x'"
    );
    let by_path = host("devbox", "/tmp/s");
    let args = words(&by_path.tmux_command(Path::new("/tmp/s"), &["ls"]));
    assert_eq!(
        args.last().map(String::as_str),
        Some("tmux -u -S /tmp/s ls")
    );
}

#[test]
fn the_master_and_its_exit_use_the_same_control_path() {
    let host = host("devbox", "default");
    let master = words(&host.link_command().expect("a link"));
    let exit = words(&host.link_exit_command().expect("an exit"));
    let path = format!("ControlPath=\"{}\"", host.control_path().display());
    assert!(
        master.contains(&path) && exit.contains(&path),
        "{master:?} {exit:?}"
    );
    assert!(master.contains(&"ControlMaster=yes".to_string()));
    assert_eq!(
        master.last().map(String::as_str),
        Some("sh -c 'while read -r line; do :; done'")
    );
    assert!(exit.windows(2).any(|w| w == ["-O", "exit"]));
    // Asking for the link makes the host wait for it: nothing connects on its own meanwhile.
    assert!(!host.reachable());
    assert!(!host.server_alive(Path::new("default")));
    host.set_link(true, None);
    assert!(host.reachable());
}

#[test]
fn a_control_path_with_percent_signs_is_escaped_for_ssh() {
    let options = SshOptions::new("devbox", None);
    let host = SshHost::new(options, Path::new("/run/100%"), Path::new("default")).expect("host");
    let master = words(&host.link_command().expect("a link"));
    assert!(
        master
            .iter()
            .any(|a| a.starts_with("ControlPath=\"/run/100%%/")),
        "{master:?}"
    );
}

#[test]
fn probe_output_says_what_the_host_has() {
    let info = RemoteInfo::parse("tmux 3.3a\npython3: yes\n");
    assert_eq!(info.tmux.as_deref(), Some("3.3a"));
    assert!(info.python3);
    assert!(info.needs_gate());
    let fixed = RemoteInfo::parse("tmux 3.8\n");
    assert!(!fixed.python3);
    assert!(!fixed.needs_gate());
    let none = RemoteInfo::parse("no tmux\n");
    assert_eq!(none.tmux, None);
    assert!(none.needs_gate());
}

#[test]
fn process_listings_make_trees() {
    let listing = parse_ps(
        b"    1     0 /sbin/init\n  100     1 -bash\n  200   100 node /usr/bin/claude --flag\n  \
          300   200 /bin/sh -c x\n  400     1 other\nnot a line\n",
    );
    assert_eq!(listing.len(), 5);
    let tree = tree_of(&listing, 100, 10);
    let names: Vec<&str> = tree.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["bash", "node", "sh"]);
    assert_eq!(tree[1].command_line, "node /usr/bin/claude --flag");
    assert_eq!(tree_of(&listing, 100, 2).len(), 2);
    assert!(tree_of(&listing, 999, 10).is_empty());
}

/// Runs tmux against the server at `socket`, ignoring any `$TMUX`.
fn tmux_at(socket: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .args(["-f", "/dev/null"])
        .args(args)
        .env_remove("TMUX")
        .output()
        .expect("run tmux")
}

/// Starts the gate attaching a control client to `session` of the server at `socket`, with
/// its stdin and stdout piped (they stand for the ssh channel).
fn gate(socket: &std::path::Path, session: &str, stderr: Stdio) -> std::process::Child {
    Command::new("python3")
        .arg("-c")
        .arg(GATE)
        .arg("-S")
        .arg(socket)
        .args(["-C", "attach-session", "-E", "-t", session])
        .env_remove("TMUX")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("run the gate")
}

/// The Python gate attaches a real control client to a real tmux server on this machine,
/// in both socket forms, and the client speaks control mode through it.
#[test]
fn the_python_gate_attaches_a_control_client() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let socket = dir.path().join("s");
    let tmux = |args: &[&str]| tmux_at(&socket, args);
    assert!(
        tmux(&["new-session", "-d", "-s", "gated", "sh"])
            .status
            .success()
    );
    let mut child = gate(&socket, "gated", Stdio::piped());
    {
        use std::io::Write;
        let stdin = child.stdin.as_mut().expect("stdin");
        stdin
            .write_all(b"display-message -p 'gate-#{session_name}'\n")
            .expect("write a command");
    }
    // Let the command be answered before detaching.
    std::thread::sleep(Duration::from_millis(500));
    drop(child.stdin.take());
    let output = child
        .wait_with_output()
        .expect("the gate ends with its client");
    let _ = tmux(&["kill-server"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("gate-gated"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("%begin"), "{stdout}");
    // Its private socket directory is gone.
    let leftovers = std::fs::read_dir(std::env::temp_dir())
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("panectl-attach-")
                })
                .filter(|e| e.path().join("c.s").exists())
                .count()
        })
        .unwrap_or(0);
    assert_eq!(leftovers, 0);
}

/// A connection that drops leaves the gate's ssh channel closed while its tmux client is still
/// attached, with output it can no longer deliver: tmux never lets such a client go (and
/// `kill-server` then never finishes), so the gate ends it.
#[test]
fn the_gate_ends_its_client_when_the_channel_closes() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let socket = dir.path().join("s");
    let tmux = |args: &[&str]| tmux_at(&socket, args);
    // A pane that keeps writing, so the client always has output on its way.
    assert!(
        tmux(&["new-session", "-d", "-s", "busy", "yes panectl"])
            .status
            .success()
    );
    let server_pid = String::from_utf8_lossy(&tmux(&["display-message", "-p", "#{pid}"]).stdout)
        .trim()
        .parse::<i32>()
        .expect("the server's pid");
    let mut child = gate(&socket, "busy", Stdio::null());
    let clients = || {
        String::from_utf8_lossy(&tmux(&["list-clients", "-F", "#{client_control_mode}"]).stdout)
            .lines()
            .count()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while clients() == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let attached = clients();
    // The far end of the channel goes (stdin stays open: no orderly detach).
    drop(child.stdout.take());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut ended = None;
    while ended.is_none() && std::time::Instant::now() < deadline {
        ended = child.try_wait().ok().flatten();
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = clients();
    let _ = tmux(&["kill-server"]);
    // Whatever happened, the server goes (it is this test's).
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(server_pid),
        nix::sys::signal::Signal::SIGKILL,
    );
    if ended.is_none() {
        let _ = child.kill();
    }
    let _ = child.wait();
    assert_eq!(attached, 1, "the gated client attached");
    assert!(
        ended.is_some(),
        "the gate did not end after its channel closed"
    );
    assert_eq!(left, 0, "the server still has the client");
}
