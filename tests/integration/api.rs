//! The API's optional TCP listener (bearer token, loopback only unless allowed), and its
//! OpenAPI document checked against the live answers of a real daemon.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::{Value, json};

use crate::openapi_check::{Answer, Document, first_event, request};
use crate::support::{TmuxServer, daemon_test_lock};

/// A raw HTTP/1.1 GET over TCP; returns the status line and the body.
fn get(address: &str, path: &str, token: Option<&str>) -> (String, String) {
    let mut stream = std::net::TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: panectl\r\n{auth}Connection: close\r\n\r\n"
    )
    .expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
    (
        head.lines().next().unwrap_or_default().to_string(),
        body.to_string(),
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

#[test]
fn the_tcp_listener_needs_the_token_and_a_loopback_address() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let address = format!("127.0.0.1:{}", free_port());
    let mut daemon = server.start_daemon(&["--listen", &address]);
    server.wait_for_panes(1);
    let token_file = std::fs::read_dir(server.dir().join("run/panectl"))
        .expect("runtime dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "token"))
        .expect("the token file");
    // `panectl socket` names the files the daemon uses.
    let printed = server.panectl_ok(&["socket", "--token"]);
    assert_eq!(printed.trim(), token_file.to_string_lossy());
    let socket = server.panectl_ok(&["socket"]);
    assert!(std::path::Path::new(socket.trim()).exists(), "{socket}");
    assert_eq!(server.health()["api_socket"], socket.trim());
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let token = std::fs::read_to_string(&token_file).unwrap();
    let token = token.trim();

    let (status, body) = get(&address, "/v1/health", None);
    assert!(status.contains(" 401 "), "{status} {body}");
    assert!(body.contains("bearer token"), "{body}");
    let wrong = format!("{}x", &token[..token.len() - 1]);
    assert!(
        get(&address, "/v1/health", Some(&wrong))
            .0
            .contains(" 401 ")
    );
    let (status, body) = get(&address, "/v1/health", Some(token));
    assert!(status.contains(" 200 "), "{status}");
    let health: serde_json::Value = serde_json::from_str(&body).expect("health JSON");
    assert_eq!(health["status"], "ok");

    // The OpenAPI document is served too, and names the routes.
    let (status, body) = get(&address, "/v1/openapi.json", Some(token));
    assert!(status.contains(" 200 "), "{status}");
    let document: serde_json::Value = serde_json::from_str(&body).expect("OpenAPI JSON");
    assert!(
        document["paths"]["/v1/handoff"]["post"].is_object(),
        "{body}"
    );

    // A restart keeps the token.
    assert!(daemon.stop(Duration::from_secs(10)));
    let daemon = server.start_daemon(&["--listen", &address]);
    assert!(get(&address, "/v1/health", Some(token)).0.contains(" 200 "));
    drop(daemon);

    // Not loopback: refused unless allowed.
    let remote = server
        .panectl()
        .args(["daemon", "--listen", "0.0.0.0:1"])
        .output()
        .unwrap();
    assert!(!remote.status.success());
    let stderr = String::from_utf8_lossy(&remote.stderr);
    assert!(stderr.contains("--allow-remote"), "{stderr}");
}

/// The daemon's API socket.
fn api_socket(server: &TmuxServer) -> std::path::PathBuf {
    std::fs::read_dir(server.dir().join("run/panectl"))
        .expect("runtime dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "sock"))
        .expect("the API socket")
}

/// Calls routes of a live daemon and checks each answer against the document it serves.
struct Checker {
    socket: std::path::PathBuf,
    document: Document,
    checked: std::collections::BTreeSet<(String, String, u16)>,
}

impl Checker {
    /// `METHOD path` (a route `template` filled in); checks the answer's status is documented
    /// for the route and its JSON body fits the schema; returns the answer.
    fn call(&mut self, method: &str, template: &str, path: &str, body: Option<Value>) -> Answer {
        let answer = request(&self.socket, &method.to_uppercase(), path, body.as_ref());
        self.check(method, template, &answer);
        answer
    }

    fn check(&mut self, method: &str, template: &str, answer: &Answer) {
        let response = self.document.response(method, template, answer.status);
        if answer.body.is_empty() && answer.status == 204 {
            assert!(
                response.get("content").is_none(),
                "{method} {template}: 204 with content"
            );
        } else if answer.content_type() == "application/json" {
            self.document
                .check_json(method, template, answer.status, &answer.json());
        } else {
            // Text and bytes: the media type must be the documented one.
            self.document
                .answer_schema(method, template, answer.status, answer.content_type());
        }
        self.checked
            .insert((method.to_string(), template.to_string(), answer.status));
    }
}

#[test]
fn live_answers_fit_the_openapi_document() {
    let _guard = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&[]);
    let panes = server.wait_for_panes(1);
    let pane = panes[0]["pane"].as_str().expect("a pane id").to_string();
    let session = panes[0]["session_id"]
        .as_str()
        .expect("a session id")
        .to_string();
    let socket = api_socket(&server);
    let served = request(&socket, "GET", "/v1/openapi.json", None);
    assert_eq!(served.status, 200);
    assert_eq!(served.content_type(), "application/json");
    // What the daemon serves is the document the code generates.
    assert_eq!(served.body, panectl::api::openapi::document().as_bytes());
    let mut api = Checker {
        socket,
        document: Document::new(served.json()),
        checked: Default::default(),
    };
    let p = pane.replace('%', "%25");
    let pane_path = |rest: &str| format!("/v1/panes/{p}{rest}");

    api.call("get", "/v1/health", "/v1/health", None);
    api.call("get", "/v1/openapi.json", "/v1/openapi.json", None);
    api.call("get", "/v1/panes", "/v1/panes", None);
    api.call("get", "/v1/panes/{pane}", &pane_path(""), None);
    assert_eq!(
        api.call("get", "/v1/panes/{pane}", "/v1/panes/%25999", None)
            .status,
        404
    );
    assert_eq!(
        api.call("get", "/v1/panes/{pane}", "/v1/panes/nowhere", None)
            .status,
        404
    );
    api.call("get", "/v1/providers", "/v1/providers", None);
    api.call(
        "get",
        "/v1/panes/{pane}/explain",
        &pane_path("/explain"),
        None,
    );
    api.call(
        "get",
        "/v1/panes/{pane}/last-response",
        &pane_path("/last-response"),
        None,
    );

    // The screen and the output: text and bytes, with the documented headers.
    for query in ["", "?format=ansi"] {
        let screen = api.call(
            "get",
            "/v1/panes/{pane}/screen",
            &pane_path(&format!("/screen{query}")),
            None,
        );
        assert_eq!(screen.status, 200);
        let always = [
            "x-panectl-pane",
            "x-panectl-size",
            "x-panectl-cursor",
            "x-panectl-alternate-screen",
            "x-panectl-output-seq",
            "x-panectl-sync",
        ];
        api.document
            .check_headers("get", "/v1/panes/{pane}/screen", &screen, &always);
        assert_eq!(screen.header("x-panectl-pane"), Some(pane.as_str()));
    }
    let bad = api.call(
        "get",
        "/v1/panes/{pane}/screen",
        &pane_path("/screen?format=html"),
        None,
    );
    assert_eq!(bad.status, 400);
    let output = api.call(
        "get",
        "/v1/panes/{pane}/output",
        &pane_path("/output?limit=64"),
        None,
    );
    assert_eq!(output.status, 200);
    api.document.check_headers(
        "get",
        "/v1/panes/{pane}/output",
        &output,
        &["x-panectl-from", "x-panectl-next"],
    );
    let bad = api.call(
        "get",
        "/v1/panes/{pane}/output",
        &pane_path("/output?from=abc"),
        None,
    );
    assert_eq!(bad.status, 400);

    // Providers and transports.
    let unknown = api.call(
        "post",
        "/v1/panes/{pane}/provider",
        &pane_path("/provider"),
        Some(json!({"provider": "nobody"})),
    );
    assert_eq!(unknown.status, 400);
    let set = api.call(
        "post",
        "/v1/panes/{pane}/provider",
        &pane_path("/provider"),
        Some(json!({"provider": "shell"})),
    );
    assert_eq!(set.status, 200, "{}", String::from_utf8_lossy(&set.body));
    assert_eq!(set.json()["provider_source"], "assigned");
    let unset = api.call(
        "post",
        "/v1/panes/{pane}/provider",
        &pane_path("/provider"),
        Some(json!({"provider": null})),
    );
    assert_eq!(unset.status, 200);
    let typo = api.call(
        "post",
        "/v1/panes/{pane}/provider",
        &pane_path("/provider"),
        Some(json!({"provder": "x"})),
    );
    assert_eq!(typo.status, 400);
    let moved = api.call(
        "post",
        "/v1/panes/{pane}/transport",
        &pane_path("/transport"),
        Some(json!({"transport": "control"})),
    );
    assert_eq!(moved.status, 200);
    let s = session.replace('$', "%24");
    let all = api.call(
        "post",
        "/v1/sessions/{session}/transport",
        &format!("/v1/sessions/{s}/transport"),
        Some(json!({"transport": "control"})),
    );
    assert_eq!(all.status, 200, "{}", String::from_utf8_lossy(&all.body));
    let nowhere = api.call(
        "post",
        "/v1/sessions/{session}/transport",
        "/v1/sessions/nowhere/transport",
        Some(json!({"transport": "control"})),
    );
    assert_eq!(nowhere.status, 404);
    let hook = api.call(
        "post",
        "/v1/panes/{pane}/hook",
        &pane_path("/hook"),
        Some(json!({"event": "Stop", "pid": 1})),
    );
    assert_eq!(hook.status, 200, "{}", String::from_utf8_lossy(&hook.body));
    assert_eq!(hook.json()["applied"], false);

    // Messages: refused for a shell unless allowed, then queued, read, listed, cancelled.
    let refused = api.call(
        "post",
        "/v1/panes/{pane}/messages",
        &pane_path("/messages"),
        Some(json!({"body": ": hello"})),
    );
    assert_eq!(refused.status, 409);
    let both = api.call(
        "post",
        "/v1/panes/{pane}/messages",
        &pane_path("/messages"),
        Some(json!({"body": "a", "body_hex": "61"})),
    );
    assert_eq!(both.status, 400);
    let queued = api.call(
        "post",
        "/v1/panes/{pane}/messages",
        &pane_path("/messages"),
        Some(json!({"body": ": hello", "allow_shell": true, "ttl_seconds": 60})),
    );
    assert_eq!(
        queued.status,
        201,
        "{}",
        String::from_utf8_lossy(&queued.body)
    );
    let id = queued.json()["id"].as_i64().expect("an id");
    api.call("get", "/v1/messages", "/v1/messages", None);
    api.call(
        "get",
        "/v1/messages",
        &format!("/v1/messages?pane={p}&state=pending"),
        None,
    );
    assert_eq!(
        api.call("get", "/v1/messages", "/v1/messages?state=lost", None)
            .status,
        400
    );
    assert_eq!(
        api.call(
            "get",
            "/v1/messages/{id}",
            &format!("/v1/messages/{id}"),
            None
        )
        .status,
        200
    );
    assert_eq!(
        api.call("get", "/v1/messages/{id}", "/v1/messages/999999", None)
            .status,
        404
    );
    assert_eq!(
        api.call("get", "/v1/messages/{id}", "/v1/messages/abc", None)
            .status,
        400
    );
    // Pending, it is cancelled; delivered meanwhile, it is past cancelling: both documented.
    let cancelled = api.call(
        "post",
        "/v1/messages/{id}/cancel",
        &format!("/v1/messages/{id}/cancel"),
        None,
    );
    assert!([200, 409].contains(&cancelled.status));
    let again = api.call(
        "post",
        "/v1/messages/{id}/cancel",
        &format!("/v1/messages/{id}/cancel"),
        None,
    );
    assert_eq!(again.status, 409);

    // Decisions: none waits; an answer without a choice is refused, one without a dialog
    // presses nothing.
    assert_eq!(
        api.call("get", "/v1/decisions", "/v1/decisions", None)
            .status,
        200
    );
    assert_eq!(
        api.call(
            "post",
            "/v1/panes/{pane}/decision",
            &pane_path("/decision"),
            Some(json!({}))
        )
        .status,
        400
    );
    let answered = api.call(
        "post",
        "/v1/panes/{pane}/decision",
        &pane_path("/decision"),
        Some(json!({"yes": true})),
    );
    assert_eq!(answered.status, 200);

    // Keys, input and wait: their refusals, and a wait that answers at once.
    assert_eq!(
        api.call(
            "post",
            "/v1/panes/{pane}/keys",
            &pane_path("/keys"),
            Some(json!({"keys": []}))
        )
        .status,
        400
    );
    assert_eq!(
        api.call(
            "post",
            "/v1/panes/{pane}/keys",
            &pane_path("/keys"),
            Some(json!({"keys": ["NoSuchKey"]}))
        )
        .status,
        400
    );
    assert_eq!(
        api.call(
            "post",
            "/v1/panes/{pane}/keys",
            &pane_path("/keys"),
            Some(json!({"keys": ["End"]}))
        )
        .status,
        204
    );
    assert_eq!(
        api.call(
            "post",
            "/v1/panes/{pane}/input",
            &pane_path("/input"),
            Some(json!({"text": "", "enter": false, "allow_shell": true}))
        )
        .status,
        400
    );
    assert_eq!(
        api.call(
            "post",
            "/v1/panes/{pane}/input",
            &pane_path("/input"),
            Some(json!({"text": "x"}))
        )
        .status,
        409
    );
    assert_eq!(
        api.call(
            "post",
            "/v1/panes/{pane}/input",
            &pane_path("/input"),
            Some(json!({"txt": "x"}))
        )
        .status,
        400
    );
    let waited = api.call(
        "post",
        "/v1/panes/{pane}/wait",
        &pane_path("/wait"),
        Some(json!({"until": ["idle"], "timeout_seconds": 0})),
    );
    assert_eq!(waited.status, 200);
    assert_eq!(
        api.call(
            "post",
            "/v1/panes/{pane}/wait",
            &pane_path("/wait"),
            Some(json!({"until": ["bored"]}))
        )
        .status,
        400
    );

    // Close: a bad timeout, a pane that is not there, and a program that exits on Ctrl-C.
    assert_eq!(
        api.call(
            "post",
            "/v1/panes/{pane}/close",
            &pane_path("/close"),
            Some(json!({"timeout_seconds": -1}))
        )
        .status,
        400
    );
    assert_eq!(
        api.call(
            "post",
            "/v1/panes/{pane}/close",
            "/v1/panes/%25999/close",
            Some(json!({}))
        )
        .status,
        404
    );
    let sleeper = server
        .tmux(&[
            "split-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "exec sleep 600",
        ])
        .trim()
        .to_string();
    server.wait_for(
        "the daemon to list the sleeper",
        Duration::from_secs(10),
        || server.panes().iter().any(|p| p["pane"] == sleeper.as_str()),
    );
    let closed = api.call(
        "post",
        "/v1/panes/{pane}/close",
        &format!("/v1/panes/{}/close", sleeper.replace('%', "%25")),
        Some(json!({"timeout_seconds": 5})),
    );
    assert_eq!(closed.status, 200);
    // (Ctrl-C reaches `sleep`, or, sent before it runs, the kill does: either way it closed.)
    assert!(
        ["exited", "killed"].contains(&closed.json()["how"].as_str().unwrap_or_default()),
        "{:?}",
        closed.json()
    );

    // Orchestration refusals, and assignments.
    assert_eq!(
        api.call(
            "post",
            "/v1/agents",
            "/v1/agents",
            Some(json!({"provider": "nobody"}))
        )
        .status,
        400
    );
    assert_eq!(
        api.call(
            "post",
            "/v1/handoff",
            "/v1/handoff",
            Some(json!({"message": "hi"}))
        )
        .status,
        400
    );
    assert_eq!(
        api.call(
            "post",
            "/v1/assign",
            "/v1/assign",
            Some(json!({"pane": pane, "message": "hi"}))
        )
        .status,
        400
    );
    api.call("get", "/v1/assignments", "/v1/assignments", None);
    assert_eq!(
        api.call("get", "/v1/assignments", "/v1/assignments?state=lost", None)
            .status,
        400
    );
    assert_eq!(
        api.call(
            "get",
            "/v1/assignments/{id}",
            "/v1/assignments/424242",
            None
        )
        .status,
        404
    );

    // Restore: nothing launched, nothing to do; an unknown field is refused.
    let restored = api.call(
        "post",
        "/v1/restore",
        "/v1/restore",
        Some(json!({"dry_run": true})),
    );
    assert_eq!(restored.status, 200);
    assert_eq!(restored.json(), json!([]));
    assert_eq!(
        api.call(
            "post",
            "/v1/restore",
            "/v1/restore",
            Some(json!({"dry_run": true, "everything": 1}))
        )
        .status,
        400
    );

    // Worktrees: none made; removing one never recorded is a 404, an unreadable query a 400.
    let worktrees = api.call("get", "/v1/worktrees", "/v1/worktrees", None);
    assert_eq!(worktrees.status, 200);
    assert_eq!(worktrees.json(), json!([]));
    assert_eq!(
        api.call(
            "delete",
            "/v1/worktrees/{name}",
            "/v1/worktrees/never-made",
            None
        )
        .status,
        404
    );
    assert_eq!(
        api.call(
            "delete",
            "/v1/worktrees/{name}",
            "/v1/worktrees/never-made?force=perhaps",
            None
        )
        .status,
        400
    );

    // The event stream: its first data line is an `Event`; an unknown type is refused.
    let (stream, first) = first_event(&api.socket, "/v1/events");
    assert_eq!(stream.status, 200);
    assert_eq!(stream.content_type(), "text/event-stream");
    api.check("get", "/v1/events", &stream);
    assert_eq!(first["type"], "subscribed");
    if let Err(errors) = api
        .document
        .validate(api.document.component("Event"), &first)
    {
        panic!("the first event does not fit `Event`: {errors:?}\n{first}");
    }
    let (_, resumed) = first_event(&api.socket, "/v1/events?last_event_id=1-1&type=status");
    assert!(resumed["type"] == "subscribed" || resumed["type"] == "lagged");
    api.document
        .validate(api.document.component("Event"), &resumed)
        .expect("a resumed stream's first event fits `Event`");
    assert_eq!(
        api.call("get", "/v1/events", "/v1/events?type=weather", None)
            .status,
        400
    );

    // Every route was called at least once.
    let called: std::collections::BTreeSet<(String, String)> = api
        .checked
        .iter()
        .map(|(m, t, _)| (m.clone(), t.clone()))
        .collect();
    for (template, item) in api.document.json()["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("a path item").keys() {
            assert!(
                called.contains(&(method.clone(), template.clone())),
                "{method} {template} was not called"
            );
        }
    }
}
