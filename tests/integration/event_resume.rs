//! `GET /v1/events` resumed with `Last-Event-ID` and filtered with `?pane=&type=`, over the real
//! API socket with a hand-written HTTP client (what any orchestrator's SSE client sends), and
//! `panectl events` with `--pane`, `--type` and its clock column.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use serde_json::Value;

use crate::support::{TmuxServer, daemon_test_lock};

/// One SSE stream: its events as (SSE id, JSON data).
struct Stream {
    reader: BufReader<UnixStream>,
}

impl Stream {
    fn open(server: &TmuxServer, path: &str, last_event_id: Option<&str>) -> Stream {
        let socket = server.panectl_ok(&["socket"]);
        let mut stream = UnixStream::connect(socket.trim()).expect("connect to the API socket");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("a read timeout");
        let resume = last_event_id
            .map(|id| format!("Last-Event-ID: {id}\r\n"))
            .unwrap_or_default();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: panectl\r\nAccept: text/event-stream\r\n{resume}\r\n"
        )
        .expect("send the request");
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).expect("the status line");
        assert!(status.contains(" 200 "), "{status}");
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).expect("a header");
            if header.trim().is_empty() {
                break;
            }
        }
        Stream { reader }
    }

    /// The next event: its SSE id (if any) and data.
    fn next(&mut self) -> (Option<String>, Value) {
        let mut id = None;
        loop {
            let mut line = String::new();
            let read = self
                .reader
                .read_line(&mut line)
                .expect("an event within 10 s");
            assert!(read > 0, "the stream ended");
            // Chunked framing lines are neither `id:` nor `data:`; they are skipped.
            let line = line.trim_end();
            if let Some(value) = line.strip_prefix("id:") {
                id = Some(value.trim().to_string());
            } else if let Some(data) = line.strip_prefix("data:") {
                return (id, serde_json::from_str(data.trim()).expect("JSON data"));
            }
        }
    }
}

fn title(server: &TmuxServer, pane: &str, title: &str) {
    server.tmux(&["select-pane", "-t", pane, "-T", title]);
}

/// Sets a title and waits until the daemon has it (titles that change faster than the daemon
/// looks are seen once, as the last one).
fn title_seen(server: &TmuxServer, pane: &str, name: &str) {
    title(server, pane, name);
    server.wait_for(
        &format!("{pane} titled {name}"),
        Duration::from_secs(10),
        || {
            server
                .panes()
                .iter()
                .any(|p| p["pane"] == pane && p["title"] == name)
        },
    );
}

#[test]
fn a_client_resumes_where_it_left_and_filters_what_it_reads() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    server.tmux(&["split-window", "-t", "%0"]);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(2);
    let only_titles = "/v1/events?type=pane_renamed&pane=%250";

    // A first connection sees t1..t3 of %0, and nothing of %1 (filtered out).
    let mut first = Stream::open(&server, only_titles, None);
    let (_, subscribed) = first.next();
    assert_eq!(subscribed["type"], "subscribed");
    let epoch = subscribed["epoch"].as_u64().expect("the epoch");
    title(&server, "%1", "other-pane");
    let mut last = String::new();
    for name in ["t1", "t2", "t3"] {
        title(&server, "%0", name);
        let (id, event) = first.next();
        assert_eq!(event["title"], name, "{event}");
        assert_eq!(event["pane"], "%0");
        last = id.expect("an SSE id");
        assert!(last.starts_with(&format!("{epoch}-")), "{last}");
    }
    drop(first);

    // Away, t4 and t5 happen; back, the client gets them, then live ones, nothing twice.
    title_seen(&server, "%0", "t4");
    title_seen(&server, "%0", "t5");
    let mut back = Stream::open(&server, only_titles, Some(&last));
    assert_eq!(back.next().1["type"], "subscribed");
    title(&server, "%0", "t6");
    let titles: Vec<Value> = (0..3).map(|_| back.next().1["title"].clone()).collect();
    assert_eq!(titles, ["t4", "t5", "t6"]);

    // An id of another daemon's life: told so (how many were missed is unknown), then live.
    let mut foreign = Stream::open(&server, only_titles, Some("1-3"));
    assert_eq!(foreign.next().1["type"], "subscribed");
    let (_, lagged) = foreign.next();
    assert_eq!(lagged["type"], "lagged");
    assert!(lagged["missed"].is_null(), "{lagged}");
    title(&server, "%0", "t7");
    assert_eq!(foreign.next().1["title"], "t7");

    // An unknown type: 400, naming the valid ones; the CLI says the same, exit code 2.
    let output = server
        .panectl()
        .args(["events", "--type", "bogus"])
        .output()
        .expect("run panectl events");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("unknown event type") && said.contains("pane_renamed"),
        "{said}"
    );
}

#[test]
fn panectl_events_filters_and_shows_the_time() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    server.tmux(&["split-window", "-t", "%0"]);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(2);
    let mut child = server
        .panectl()
        .args(["events", "--pane", "%1"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run panectl events");
    let stdout = child.stdout.take().expect("stdout");
    let (lines, received) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    // The subscription line first; then the events of %1 only, output ticks left out.
    let first = received
        .recv_timeout(Duration::from_secs(10))
        .expect("the subscription");
    assert!(first.contains("subscribed"), "{first}");
    title(&server, "%0", "not-this-one");
    server.tmux(&["send-keys", "-t", "%1", "echo printed", "Enter"]);
    title(&server, "%1", "this-one");
    let mut seen = Vec::new();
    while let Ok(line) = received.recv_timeout(Duration::from_secs(3)) {
        let done = line.contains("this-one");
        seen.push(line);
        if done {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = reader.join();
    let renamed = seen
        .iter()
        .find(|l| l.contains("pane_renamed"))
        .unwrap_or_else(|| panic!("{seen:?}"));
    assert!(renamed.contains("title=this-one"), "{renamed}");
    // `HH:MM:SS.mmmZ` first.
    let clock: Vec<char> = renamed.chars().take(13).collect();
    assert!(
        clock[2] == ':' && clock[5] == ':' && clock[8] == '.' && clock[12] == 'Z',
        "{renamed}"
    );
    assert!(
        !seen
            .iter()
            .any(|l| l.contains("not-this-one") || l.contains(" output ")),
        "{seen:?}"
    );
}
