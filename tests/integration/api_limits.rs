//! The API under hostile clients (issue 15): a flood of half-sent requests on the TCP
//! listener, out-of-range and unknown request fields, and the MCP server's answer to lines that
//! are not JSON.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::inbox::Setup;
use crate::support::{TmuxServer, daemon_test_lock};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Whether the daemon has closed `stream` (end of stream or reset) within `timeout`.
fn closed_within(stream: &mut TcpStream, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    let mut buffer = [0u8; 512];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        stream.set_read_timeout(Some(left)).expect("timeout");
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// A raw GET over TCP with `authorization` as the whole Authorization header value.
fn tcp_get(address: &str, path: &str, authorization: &str) -> String {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: panectl\r\nauthorization: {authorization}\r\n\
         Connection: close\r\n\r\n"
    )
    .expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read");
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_tcp_flood_of_half_sent_requests_is_capped_and_timed_out_and_the_socket_stays_served() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let address = format!("127.0.0.1:{}", free_port());
    let daemon = server.start_daemon(&[
        "--listen",
        &address,
        "--listen-max-connections",
        "8",
        "--api-header-timeout",
        "1s",
    ]);
    let log_lines_before = daemon.log_text().lines().count();

    // More half-sent requests than the cap, and idle connections, all held open by the client.
    let mut flood: Vec<TcpStream> = (0..200)
        .map(|i| {
            let mut stream = TcpStream::connect(&address).expect("connect");
            if i % 2 == 0 {
                stream
                    .write_all(b"GET /v1/health HTTP/1.1\r\nHost: panectl\r\nX-Slow: ")
                    .expect("send half a request");
            }
            stream
        })
        .collect();

    // The owner's Unix socket still answers, promptly.
    let started = Instant::now();
    let health = server.health();
    assert!(health["version"].is_string(), "{health}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the Unix socket took {:?} during the flood",
        started.elapsed()
    );

    // Every flood connection is closed: those over twice the cap at once, the others after the
    // head timeout (1 s), those that waited for a place after it too; without limits they
    // would stay open for as long as the client likes.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut still_open = 0;
    for stream in &mut flood {
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(10));
        if !closed_within(stream, left) {
            still_open += 1;
        }
    }
    assert_eq!(
        still_open, 0,
        "connections left open by the daemon after the head timeout"
    );
    drop(flood);

    // The log says so in a few lines, not one per connection.
    let log = daemon.log_text();
    let added = log.lines().count() - log_lines_before;
    assert!(
        log.contains("over the cap"),
        "no word of the refused connections: {log}"
    );
    assert!(added < 40, "the flood added {added} log lines:\n{log}");

    // The listener serves again once the flood is gone; the scheme is case-insensitive.
    let token_file = std::fs::read_dir(server.dir().join("run/panectl"))
        .expect("runtime dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "token"))
        .expect("the token file");
    let token = std::fs::read_to_string(token_file).expect("token");
    let token = token.trim();
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let status = tcp_get(&address, "/v1/health", &format!("{scheme} {token}"));
        assert!(status.contains(" 200 "), "{scheme}: {status}");
    }
    let status = tcp_get(&address, "/v1/health", &format!("Basic {token}"));
    assert!(status.contains(" 401 "), "{status}");
}

/// The error text of a 400 answer.
fn refused(answer: &(u16, Value)) -> String {
    assert_eq!(answer.0, 400, "{answer:?}");
    answer.1["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error text: {answer:?}"))
        .to_string()
}

#[test]
fn request_fields_are_range_checked_and_unknown_ones_refused() {
    let _guard = daemon_test_lock();
    let setup = Setup::start(0.2);
    let _daemon = setup.daemon();
    setup.wait_status(&["idle"], Duration::from_secs(10));
    let server = &setup.server;

    // A timeout too large for a duration: a 400 naming the field, not a dropped connection.
    for huge in [1e19, 1e300] {
        let answer = server.api_post_status(
            "/v1/panes/%250/wait",
            &json!({"until": ["completed"], "timeout_seconds": huge}),
        );
        let error = refused(&answer);
        assert!(
            error.contains("timeout_seconds") && error.contains("up to"),
            "{error}"
        );
    }
    let answer = server.api_post_status(
        "/v1/panes/%250/messages",
        &json!({"body": "x", "ttl_seconds": 1e300}),
    );
    assert!(refused(&answer).contains("ttl_seconds"), "{answer:?}");

    // A launch refused for its timeout leaves no window behind.
    let windows = || server.tmux(&["list-windows", "-a"]).lines().count();
    let before = windows();
    for bad in [-1.0, 0.0, 1e19] {
        let answer = server.api_post_status(
            "/v1/agents",
            &json!({"provider": "fake_agent", "timeout_seconds": bad}),
        );
        assert!(refused(&answer).contains("timeout_seconds"), "{answer:?}");
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(windows(), before, "a refused launch left a window");

    // tmux would rename the session `a_b`: refused, with the reason.
    let answer = server.api_post_status(
        "/v1/agents",
        &json!({"provider": "fake_agent", "new_session": true, "session": "a.b", "no_wait": true}),
    );
    assert!(refused(&answer).contains("'.' into '_'"), "{answer:?}");
    let sessions = server.tmux(&["list-sessions", "-F", "#{session_name}"]);
    assert!(!sessions.contains("a_b"), "{sessions}");

    // Unknown fields are named.
    let answer = server.api_post_status(
        "/v1/panes/%250/messages",
        &json!({"body": "x", "tll_seconds": 5}),
    );
    assert!(refused(&answer).contains("tll_seconds"), "{answer:?}");
    let answer = server.api_post_status(
        "/v1/handoff",
        &json!({"launch": {"provider": "fake_agent", "cwdir": "/"}, "message": "x"}),
    );
    assert!(refused(&answer).contains("cwdir"), "{answer:?}");

    // body_hex: hex digits only (a sign is not one).
    for bad in ["+f+f", "6x", "abc"] {
        let answer = server.api_post_status("/v1/panes/%250/messages", &json!({"body_hex": bad}));
        assert!(refused(&answer).contains("body_hex"), "{bad}: {answer:?}");
    }
    assert!(setup.messages().is_empty(), "{:?}", setup.messages());
}

#[cfg(feature = "mcp")]
#[test]
fn the_mcp_server_answers_lines_that_are_not_json_with_a_parse_error() {
    use std::io::BufRead;
    use std::process::Stdio;

    let server = TmuxServer::start(80, 24);
    let mut mcp = server
        .panectl()
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start panectl mcp");
    let mut input = mcp.stdin.take().expect("stdin");
    let (lines, received) = std::sync::mpsc::channel::<String>();
    let stdout = mcp.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let next = || -> Value {
        let line = received
            .recv_timeout(Duration::from_secs(30))
            .expect("an answer from panectl mcp");
        serde_json::from_str(&line).expect("a JSON answer")
    };

    input.write_all(b"this is not json\n").expect("send");
    let answer = next();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(answer["id"].is_null(), "{answer}");

    let mut long = vec![b'"'];
    long.resize(17 << 20, b'a');
    long.extend(b"\"\n");
    input.write_all(&long).expect("send");
    let answer = next();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");

    // And it still serves.
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}}
    });
    input
        .write_all(format!("{initialize}\n").as_bytes())
        .expect("send");
    let answer = next();
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");

    drop(input);
    let deadline = Instant::now() + Duration::from_secs(10);
    while mcp.try_wait().expect("wait").is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if mcp.try_wait().expect("wait").is_none() {
        let _ = mcp.kill();
        let _ = mcp.wait();
        panic!("panectl mcp did not end with its input");
    }
    reader.join().expect("reader");
}

/// Raises this process's limit on open files to its hard limit (the test holds ~1,500).
fn more_files() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((_, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    }
}

/// The first line a raw HTTP request on the Unix socket gets back (empty on a reset or a
/// close without an answer).
fn unix_status_line(socket: &std::path::Path, request: &[u8]) -> String {
    let Ok(mut stream) = std::os::unix::net::UnixStream::connect(socket) else {
        return String::from("(connect failed)");
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    if stream.write_all(request).is_err() {
        return String::new();
    }
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while !answer.windows(2).any(|w| w == b"\r\n") {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
        }
    }
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Idle event streams cannot lock the owner out (issue: trust only what comes from where it
/// should, item 7): 512 SSE clients that never read leave room for `health`, and 1,000
/// concurrent POSTs on top of them each get an HTTP answer (200/4xx, or 503), none a reset.
#[test]
fn idle_event_streams_leave_room_for_short_requests_and_nothing_is_reset() {
    let _guard = daemon_test_lock();
    more_files();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&[]);
    let socket = std::path::PathBuf::from(
        server.health()["api_socket"]
            .as_str()
            .expect("api_socket")
            .to_string(),
    );
    // A stream for a pane that is not there is a 404, not a subscription to nothing.
    let missing = unix_status_line(
        &socket,
        b"GET /v1/events?pane=%25999 HTTP/1.1\r\nHost: panectl\r\nConnection: close\r\n\r\n",
    );
    assert!(missing.contains(" 404 "), "{missing}");
    let streams: Vec<std::os::unix::net::UnixStream> = (0..512)
        .filter_map(|_| {
            let mut stream = std::os::unix::net::UnixStream::connect(&socket).ok()?;
            stream
                .write_all(b"GET /v1/events HTTP/1.1\r\nHost: panectl\r\n\r\n")
                .ok()?;
            Some(stream)
        })
        .collect();
    assert_eq!(streams.len(), 512);
    std::thread::sleep(Duration::from_millis(500));
    let health = server
        .panectl()
        .args(["health", "--json"])
        .output()
        .expect("panectl health");
    assert!(
        health.status.success(),
        "health failed behind idle streams: {}",
        String::from_utf8_lossy(&health.stderr)
    );
    let body = br#"{"text":"x"}"#;
    let request = format!(
        "POST /v1/panes/%25999/input HTTP/1.1\r\nHost: panectl\r\nContent-Type: \
         application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        body.len(),
        String::from_utf8_lossy(body)
    );
    let workers: Vec<_> = (0..1000)
        .map(|_| {
            let socket = socket.clone();
            let request = request.clone();
            std::thread::spawn(move || unix_status_line(&socket, request.as_bytes()))
        })
        .collect();
    let lines: Vec<String> = workers
        .into_iter()
        .map(|w| w.join().unwrap_or_default())
        .collect();
    let unanswered: Vec<&String> = lines
        .iter()
        .filter(|l| !l.starts_with("HTTP/1.1 "))
        .collect();
    assert!(
        unanswered.is_empty(),
        "{} of 1000 got no HTTP answer: {:?}",
        unanswered.len(),
        unanswered.iter().take(5).collect::<Vec<_>>()
    );
    assert!(
        lines.iter().any(|l| l.contains(" 404 ")),
        "{:?}",
        &lines[..5]
    );
    drop(streams);
}
