//! The API's optional TCP listener (bearer token, loopback only unless allowed) and its
//! OpenAPI document, against a real daemon.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

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
