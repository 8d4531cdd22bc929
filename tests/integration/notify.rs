//! Notifications that carry a decision, end to end: a program the daemon takes for an agent (a
//! test provider detects it by its arguments) shows a dialog, and the daemon tells the user's
//! webhook (a real HTTP listener in the test), the user's command (its environment written to a
//! file) and the desktop (`notify-send` through a D-Bus session bus of the test's own, to a
//! notification server in python).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::dialog_agent::{agent_server, show_dialog};
use crate::support::{Daemon, TmuxServer, daemon_test_lock};

/// The labels of the dialog's options, in order.
const LABELS: [&str; 3] = ["Yes", "Yes, and don't ask again for this command", "No"];

/// Starts a daemon with the agent's rules and `extra`, and waits until `%0` is the agent.
fn start_daemon(
    server: &TmuxServer,
    rules: &str,
    extra: &[&str],
    env: &[(String, String)],
) -> Daemon {
    let mut args = vec!["--rules-dir", rules];
    args.extend_from_slice(extra);
    let daemon = server.start_daemon_with_env(&args, env);
    server.wait_for_panes(1);
    server.wait_for("the dialog agent detected", Duration::from_secs(15), || {
        server.panes()[0]["provider"] == "dialog_agent"
    });
    daemon
}

/// The daemon's count of notifications given up on.
fn dropped(server: &TmuxServer) -> u64 {
    server.health()["notifications_dropped"]
        .as_u64()
        .expect("notifications_dropped in health")
}

/// What the test's HTTP endpoint does with a request.
#[derive(Debug, Clone, Copy)]
enum Reply {
    /// Answers with this status.
    Status(u16),
    /// Reads the request and never answers (the connection stays open until the end).
    Hang,
}

/// A request the endpoint got.
#[derive(Debug, Clone)]
struct Request {
    head: String,
    body: Vec<u8>,
}

impl Request {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "the webhook's body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// A real HTTP/1.1 listener on 127.0.0.1: it records every request and replies as told (the
/// last reply repeats); its thread ends, and every connection closes, on drop.
struct Endpoint {
    port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Endpoint {
    fn start(replies: &[Reply]) -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the endpoint");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let port = listener.local_addr().expect("its address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let replies = replies.to_vec();
        let thread = {
            let (requests, stop) = (requests.clone(), stop.clone());
            std::thread::spawn(move || serve(&listener, &replies, &requests, &stop))
        };
        Endpoint {
            port,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook/decisions", self.port)
    }

    fn requests(&self) -> Vec<Request> {
        self.requests.lock().expect("requests").clone()
    }

    fn count(&self) -> usize {
        self.requests.lock().expect("requests").len()
    }

    /// Waits until `count` requests came; panics after `timeout`.
    fn wait_for(&self, server: &TmuxServer, count: usize, timeout: Duration) -> Vec<Request> {
        server.wait_for(&format!("{count} webhook request(s)"), timeout, || {
            self.count() >= count
        });
        self.requests()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The endpoint's loop: accepts, reads each request whole, records it, then replies.
fn serve(
    listener: &TcpListener,
    replies: &[Reply],
    requests: &Mutex<Vec<Request>>,
    stop: &AtomicBool,
) {
    let mut held: Vec<TcpStream> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let mut stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
            Err(e) => panic!("the endpoint cannot accept: {e}"),
        };
        stream.set_nonblocking(false).expect("blocking stream");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("read timeout");
        let Some(request) = read_request(&mut stream) else {
            continue;
        };
        let reply = {
            let mut all = requests.lock().expect("requests");
            all.push(request);
            replies
                .get(all.len() - 1)
                .or(replies.last())
                .copied()
                .unwrap_or(Reply::Status(200))
        };
        match reply {
            Reply::Status(code) => {
                let _ = write!(
                    stream,
                    "HTTP/1.1 {code} Test\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                );
            }
            Reply::Hang => held.push(stream),
        }
    }
}

/// One request: its head up to the blank line, and a body of its `Content-Length`.
fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let n = stream.read(&mut chunk).ok().filter(|n| *n > 0)?;
        bytes.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = bytes[end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).ok().filter(|n| *n > 0)?;
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Request { head, body })
}

/// The labels of a JSON array of options.
fn labels(options: &Value) -> Vec<String> {
    options
        .as_array()
        .unwrap_or_else(|| panic!("options are an array: {options}"))
        .iter()
        .map(|o| o["label"].as_str().expect("a label").to_string())
        .collect()
}

#[test]
fn the_webhook_gets_one_post_with_the_pane_the_question_and_the_options() {
    let _guard = daemon_test_lock();
    let endpoint = Endpoint::start(&[Reply::Status(200)]);
    let (server, rules) = agent_server("Run `make clean`?");
    let _daemon = start_daemon(&server, &rules, &[], &[]);
    // The server's option, as the plugin's users set it.
    server.tmux(&[
        "set-option",
        "-g",
        "@panectl-notify-webhook",
        &endpoint.url(),
    ]);
    show_dialog(&server);
    let requests = endpoint.wait_for(&server, 1, Duration::from_secs(15));
    let request = &requests[0];
    assert!(
        request
            .head
            .starts_with("POST /hook/decisions HTTP/1.1\r\n"),
        "{}",
        request.head
    );
    assert!(
        request
            .head
            .to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{}",
        request.head
    );
    let notice = request.json();
    assert_eq!(notice["event"], "waiting", "{notice}");
    assert_eq!(notice["pane"], "%0");
    assert_eq!(notice["provider"], "dialog_agent");
    assert_eq!(notice["status"], "waiting_user_answer");
    assert_eq!(
        notice["decision"]["question"], "Run `make clean`?",
        "{notice}"
    );
    assert_eq!(labels(&notice["decision"]["options"]), LABELS);
    assert_eq!(notice["decision"]["options"][0]["pointed"], true);
    let fingerprint = notice["decision"]["fingerprint"]
        .as_str()
        .expect("a fingerprint");
    let explained: Value =
        serde_json::from_str(&server.panectl_ok(&["explain", "%0", "--json"])).expect("explain");
    assert_eq!(explained["decision"]["fingerprint"], fingerprint);
    // One dialog, one notification: nothing more comes while it stays.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(endpoint.count(), 1, "{:?}", endpoint.requests());
    assert_eq!(dropped(&server), 0);
}

#[test]
fn a_failing_webhook_is_tried_three_times_and_delivered_then_left_alone() {
    let _guard = daemon_test_lock();
    let endpoint = Endpoint::start(&[Reply::Status(500), Reply::Status(500), Reply::Status(200)]);
    let (server, rules) = agent_server("Run `make clean`?");
    let url = endpoint.url();
    let _daemon = start_daemon(&server, &rules, &["--notify-webhook", &url], &[]);
    show_dialog(&server);
    // Backoffs of 1 s then 2 s between the tries.
    let requests = endpoint.wait_for(&server, 3, Duration::from_secs(20));
    let bodies: Vec<Value> = requests.iter().map(Request::json).collect();
    assert!(
        bodies.iter().all(|b| *b == bodies[0]),
        "the same notice each try"
    );
    // Delivered on the third: no fourth try, nothing dropped.
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(endpoint.count(), 3, "{:?}", endpoint.requests());
    assert_eq!(dropped(&server), 0);
}

#[test]
fn a_refusing_webhook_is_tried_once_and_the_drop_counted() {
    let _guard = daemon_test_lock();
    let endpoint = Endpoint::start(&[Reply::Status(404)]);
    let (server, rules) = agent_server("Run `make clean`?");
    let url = endpoint.url();
    let _daemon = start_daemon(&server, &rules, &["--notify-webhook", &url], &[]);
    show_dialog(&server);
    endpoint.wait_for(&server, 1, Duration::from_secs(15));
    server.wait_for("the drop counted", Duration::from_secs(10), || {
        dropped(&server) == 1
    });
    // Longer than the first backoff and then some: no second try.
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(endpoint.count(), 1, "{:?}", endpoint.requests());
}

/// Runs `panectl ARGS` and says how long it took; panics if it failed.
fn timed(server: &TmuxServer, args: &[&str]) -> (Duration, String) {
    let start = Instant::now();
    let output = server.panectl().args(args).output().expect("run panectl");
    let took = start.elapsed();
    assert!(
        output.status.success() || args.first() == Some(&"health"),
        "panectl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    (took, String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn a_hanging_webhook_holds_nothing_up_and_is_counted_as_dropped() {
    let _guard = daemon_test_lock();
    let endpoint = Endpoint::start(&[Reply::Hang]);
    let (server, rules) = agent_server("Run `make clean`?");
    // The config file's [notify] table this time.
    let config = server.dir().join("config/panectl");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[notify]\nwebhook = \"{}\"\nwebhook_timeout = \"1s\"\n",
            endpoint.url()
        ),
    )
    .expect("write config.toml");
    let _daemon = start_daemon(&server, &rules, &[], &[]);
    assert_eq!(dropped(&server), 0);
    show_dialog(&server);
    endpoint.wait_for(&server, 1, Duration::from_secs(15));
    // While the endpoint holds its connection, the daemon answers and follows tmux.
    let bound = Duration::from_secs(2);
    for args in [
        &["ls", "--json"][..],
        &["health", "--json"],
        &["explain", "%0", "--json"],
    ] {
        let (took, out) = timed(&server, args);
        assert!(took < bound, "panectl {args:?} took {took:?}: {out}");
    }
    server.tmux(&["new-window", "-d", "sh"]);
    let start = Instant::now();
    server.wait_for_panes(2);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    // Three tries of 1 s, with backoffs of 1 s and 2 s: then given up, logged and counted.
    server.wait_for("the drop counted", Duration::from_secs(30), || {
        dropped(&server) == 1
    });
    assert_eq!(endpoint.count(), 3, "{:?}", endpoint.requests());
    let log = server.daemon_logs();
    assert!(
        log.contains("the webhook failed every try"),
        "{}",
        server.daemon_log_tail(40)
    );
}

/// The environment `env -0` wrote: `NAME=VALUE` records ended by NUL.
fn read_env(file: &Path) -> std::collections::BTreeMap<String, String> {
    let bytes = std::fs::read(file).expect("read the environment");
    String::from_utf8(bytes)
        .expect("UTF-8 environment")
        .split('\0')
        .filter_map(|r| r.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn the_notify_command_gets_the_decision_in_its_environment_and_no_shell_sees_it() {
    use std::os::unix::fs::PermissionsExt;
    let _guard = daemon_test_lock();
    let out = tempfile::Builder::new()
        .prefix("panectl-notify-")
        .tempdir()
        .expect("tempdir");
    std::fs::set_permissions(out.path(), std::fs::Permissions::from_mode(0o700))
        .expect("chmod 0700");
    let pwned = out.path().join("pwned");
    let question = format!(
        "Run `touch {0}`? $(touch {0}) it's \"fine\"; touch {0}",
        pwned.display()
    );
    let (server, rules) = agent_server(&question);
    let _daemon = start_daemon(&server, &rules, &[], &[]);
    let env_file = out.path().join("env");
    let command = format!(
        "env -0 > '{0}.part' && mv '{0}.part' '{0}'",
        env_file.display()
    );
    server.tmux(&["set-option", "-g", "@panectl-notify-command", &command]);
    show_dialog(&server);
    server.wait_for("the command's environment", Duration::from_secs(15), || {
        env_file.exists()
    });
    let env = read_env(&env_file);
    assert_eq!(env["PANECTL_EVENT"], "waiting");
    assert_eq!(env["PANECTL_PANE"], "%0");
    assert_eq!(env["PANECTL_PROVIDER"], "dialog_agent");
    assert_eq!(env["PANECTL_STATUS"], "waiting_user_answer");
    assert_eq!(env["PANECTL_QUESTION"], question, "verbatim");
    let options: Value = serde_json::from_str(&env["PANECTL_OPTIONS"]).expect("JSON options");
    assert_eq!(labels(&options), LABELS);
    assert_eq!(
        env["PANECTL_DECISION"].len(),
        16,
        "{:?}",
        env["PANECTL_DECISION"]
    );
    assert!(!pwned.exists(), "the question was run as a command");
}

/// A child process of the test, killed (by its pid) and reaped on drop.
struct Started(Child);

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A `python3` on `PATH` that has the D-Bus and GLib bindings (a pyenv's may not, where the
/// system's does).
fn python_with_dbus() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("python3"))
        .filter(|p| p.is_file())
        .find(|python| {
            Command::new(python)
                .args(["-c", "import dbus, dbus.mainloop.glib, gi.repository.GLib"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .expect(
            "no python3 with the dbus and gi modules: apt-get install python3-dbus python3-gi \
             (.ci/run does)",
        )
}

/// Fails, naming the package, when `program` is not on `PATH`.
fn require(program: &str, package: &str) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|dir| dir.join(program).is_file()),
        "{program} is not installed: apt-get install {package} (.ci/run does)"
    );
}

#[test]
fn a_desktop_notification_reaches_the_session_bus_found_in_the_runtime_dir() {
    let _guard = daemon_test_lock();
    require("dbus-daemon", "dbus");
    require("notify-send", "libnotify-bin");
    let python = python_with_dbus();
    let (server, rules) = agent_server("Run `make clean`?");
    // The bus where systemd puts the user's: $XDG_RUNTIME_DIR/bus (the daemon's runtime dir is
    // the server's private `run`), and no DBUS_SESSION_BUS_ADDRESS.
    let run = server.dir().join("run");
    std::fs::create_dir_all(&run).expect("runtime dir");
    let socket = run.join("bus");
    let address = format!("unix:path={}", socket.display());
    let _bus = Started(
        Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile"])
            .arg(format!("--address={address}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dbus-daemon"),
    );
    server.wait_for("the session bus", Duration::from_secs(10), || {
        socket.exists()
    });
    let shown = server.dir().join("notifications.jsonl");
    let ready = server.dir().join("notification-server.ready");
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/programs/notification_server.py");
    let _notifications = Started(
        Command::new(&python)
            .arg(&script)
            .arg(&shown)
            .arg(&ready)
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the notification server"),
    );
    server.wait_for("the notification server", Duration::from_secs(10), || {
        ready.exists()
    });
    let _daemon = start_daemon(&server, &rules, &["--notify-desktop", "true"], &[]);
    show_dialog(&server);
    let mut records: Vec<Value> = Vec::new();
    server.wait_for("a desktop notification", Duration::from_secs(15), || {
        records = std::fs::read_to_string(&shown)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        !records.is_empty()
    });
    let record = &records[0];
    assert_eq!(record["app_name"], "panectl", "{record}");
    assert_eq!(
        record["summary"], "panectl: dialog_agent in %0 waits for you",
        "{record}"
    );
    assert_eq!(
        record["body"],
        format!(
            "Run `make clean`?\n1. {}\n2. {}\n3. {}",
            LABELS[0], LABELS[1], LABELS[2]
        ),
        "{record}"
    );
    assert_eq!(record["urgency"], 2, "critical: {record}");
    assert_eq!(dropped(&server), 0);
}
