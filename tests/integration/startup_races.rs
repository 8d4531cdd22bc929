//! The daemon's start and its API socket's life: a pane asked for while the daemon is still
//! reading the sessions is found (not a 404), health says `starting` meanwhile; an API socket
//! deleted or replaced is made again (every 2 s, at once on SIGHUP); `daemon stop` stops a daemon
//! whose socket is gone; a second daemon says which one holds the lock and how to reach it.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::{TmuxServer, daemon_test_lock};

/// Sessions (of two panes each) the start-up test's server has: enough that the daemon takes a
/// while to attach to all of them.
const SESSIONS: usize = 12;

/// The API socket under the test's runtime directory, once there is one.
fn api_socket(server: &TmuxServer) -> Option<PathBuf> {
    std::fs::read_dir(server.dir().join("run/panectl"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "sock"))
}

/// Sends a GET on an open connection (answered once, then closed).
fn send_get(stream: &mut UnixStream, path: &str) {
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: panectl\r\nConnection: close\r\n\r\n"
    )
    .expect("send a request");
}

/// Reads an answer sent on `stream`: the HTTP status and the body.
fn read_answer(stream: &mut UnixStream) -> (u16, String) {
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("a read timeout");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read the answer");
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("an HTTP status");
    // Bodies of these routes are small: chunked framing, if any, is left in and ignored.
    (status, body.to_string())
}

/// Connects to the socket at `path` as soon as it accepts connections (polled every
/// millisecond, so the daemon has had no time to do more than bind it).
fn connect_early(server: &TmuxServer, daemon: &crate::support::Daemon) -> UnixStream {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(socket) = api_socket(server)
            && let Ok(stream) = UnixStream::connect(&socket)
        {
            return stream;
        }
        assert!(
            Instant::now() < deadline,
            "the API socket did not appear: {}",
            daemon.log_text()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_pane_asked_for_while_the_daemon_starts_is_found_and_health_says_starting() {
    let _serial = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    // Every session with two panes, made in one tmux command.
    let mut args: Vec<&str> = vec!["split-window", "-d", "-t", "$0"];
    for _ in 1..SESSIONS {
        args.extend([";", "new-session", "-d", "sh", ";", "split-window", "-d"]);
    }
    server.tmux(&args);
    let panes: Vec<String> = server
        .tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(panes.len(), SESSIONS * 2, "{panes:?}");
    let last = panes.last().expect("a pane").clone();

    let daemon = server.spawn_daemon_with_env(&[], &[]);
    // The first connection asks for a pane of the last session, the second for health, the
    // third for a pane that does not exist: all sent as soon as the socket answers.
    let mut pane = connect_early(&server, &daemon);
    let socket = api_socket(&server).expect("the API socket");
    let mut health = UnixStream::connect(&socket).expect("connect");
    let mut unknown = UnixStream::connect(&socket).expect("connect");
    let asked = Instant::now();
    send_get(
        &mut pane,
        &format!("/v1/panes/{}", last.replace('%', "%25")),
    );
    send_get(&mut health, "/v1/health");
    send_get(&mut unknown, "/v1/panes/%2599999");

    let (status, body) = read_answer(&mut health);
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(r#""status":"starting""#),
        "health right after the socket appeared is not `starting`: {body}"
    );
    let (status, body) = read_answer(&mut pane);
    assert_eq!(
        status,
        200,
        "pane {last} asked for during the start: {body}\n{}",
        daemon.log_text()
    );
    assert!(body.contains(&format!(r#""pane":"{last}""#)), "{body}");
    // A pane no session has is still a 404, once every session's panes are known (or the
    // bounded wait has ended).
    let (status, body) = read_answer(&mut unknown);
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("no pane named"), "{body}");
    assert!(
        asked.elapsed() < Duration::from_secs(20),
        "the answers took {:?}",
        asked.elapsed()
    );

    let log = daemon.log_text();
    let at = |what: &str| {
        log.lines()
            .find(|l| l.contains(what))
            .and_then(|l| l.split_whitespace().next())
            .map(str::to_string)
    };
    eprintln!(
        "started {:?}, every session synced {:?}",
        at("panectl daemon started"),
        at("every session's panes are known")
    );
    // Health says `ok` once every session is synced, and the CLI finds every pane.
    server.wait_for("health ok", Duration::from_secs(20), || {
        server.health()["status"] == "ok"
    });
    let screen = server
        .panectl()
        .args(["screen", &panes[0]])
        .output()
        .expect("run panectl");
    assert!(
        screen.status.success(),
        "{}",
        String::from_utf8_lossy(&screen.stderr)
    );
}

/// Whether `panectl ls` reaches the daemon.
fn cli_reaches(server: &TmuxServer) -> bool {
    server
        .panectl()
        .args(["ls", "--json"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn wait_for_socket(server: &TmuxServer, socket: &Path, what: &str) {
    server.wait_for(what, Duration::from_secs(10), || {
        std::fs::symlink_metadata(socket).is_ok_and(|m| {
            use std::os::unix::fs::FileTypeExt;
            m.file_type().is_socket()
        }) && cli_reaches(server)
    });
}

fn hang_up(pid: u32) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGHUP,
    )
    .expect("signal the daemon");
}

#[test]
fn a_deleted_or_replaced_api_socket_is_made_again_and_sighup_does_it_at_once() {
    let _serial = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let daemon = server.start_daemon(&[]);
    let socket = api_socket(&server).expect("the API socket");
    assert!(cli_reaches(&server));

    // Deleted: within a few seconds the CLI reaches the daemon again.
    std::fs::remove_file(&socket).expect("delete the socket");
    wait_for_socket(&server, &socket, "the deleted socket to be made again");

    // Replaced by a plain file: the same.
    std::fs::remove_file(&socket).expect("delete the socket");
    std::fs::write(&socket, b"not a socket").expect("a plain file");
    wait_for_socket(&server, &socket, "the replaced socket to be made again");

    // The whole runtime directory deleted (lock included): made again, lock retaken.
    let runtime = socket
        .parent()
        .expect("the runtime directory")
        .to_path_buf();
    std::fs::remove_dir_all(&runtime).expect("delete the runtime directory");
    wait_for_socket(&server, &socket, "the runtime directory to be made again");
    let lock = std::fs::read_dir(&runtime)
        .expect("the runtime directory")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "lock"))
        .expect("the lock file is made again");
    assert!(
        std::fs::read_to_string(&lock)
            .unwrap_or_default()
            .starts_with(&format!("{}\n", daemon.pid())),
        "the new lock does not name the daemon"
    );

    // SIGHUP after a deletion: made again, logged as the signal's doing.
    std::fs::remove_file(&socket).expect("delete the socket");
    hang_up(daemon.pid());
    wait_for_socket(&server, &socket, "SIGHUP to make the socket again");
    server.wait_for("the SIGHUP in the log", Duration::from_secs(5), || {
        daemon
            .log_text()
            .contains("SIGHUP: checking the API socket")
    });
    // SIGUSR1, tmux's "make your socket again", does the same and does not end the daemon
    // (its default action would, leaving its files).
    std::fs::remove_file(&socket).expect("delete the socket");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(daemon.pid() as i32),
        nix::sys::signal::Signal::SIGUSR1,
    )
    .expect("signal the daemon");
    wait_for_socket(&server, &socket, "SIGUSR1 to make the socket again");
    server.wait_for("the SIGUSR1 in the log", Duration::from_secs(5), || {
        daemon
            .log_text()
            .contains("SIGUSR1: checking the API socket")
    });
    // The daemon lives on.
    assert!(cli_reaches(&server));
}

#[test]
fn a_second_daemon_names_the_holder_and_daemon_stop_works_without_the_socket() {
    let _serial = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let mut daemon = server.start_daemon(&[]);
    let socket = api_socket(&server).expect("the API socket");
    std::fs::remove_file(&socket).expect("delete the socket");

    // A second daemon is refused, and told which pid holds the lock and how to reach it.
    let output = server
        .panectl()
        .args(["daemon"])
        .output()
        .expect("run panectl");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{said}");
    let pid = daemon.pid();
    assert!(
        said.contains(&format!("pid {pid}")) && said.contains(&format!("kill -HUP {pid}")),
        "{said}"
    );

    // With the tmux server gone (its options with it) and the socket deleted, `daemon stop`
    // still finds the daemon, through its lock, and stops it.
    server.tmux(&["kill-server"]);
    server.wait_for_exit(Duration::from_secs(10));
    let _ = std::fs::remove_file(&socket);
    let output = server
        .panectl()
        .args(["daemon", "stop"])
        .output()
        .expect("run panectl");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{said}");
    assert!(said.contains(&format!("(pid {pid})")), "{said}");
    assert!(
        daemon.wait_exit(Duration::from_secs(10)),
        "the daemon still runs after `daemon stop`: {said}"
    );
}
