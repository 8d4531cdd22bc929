use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use super::fake::FakeHost;
use super::*;
use crate::address::ServerAddress;
use crate::paths::RuntimePaths;

/// A tmux server of the test's own (its own socket, no config, `TMUX` unset), killed on drop.
struct Server {
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("host-test");
        let status = std::process::Command::new("tmux")
            .args(["-f", "/dev/null", "-S"])
            .arg(&socket)
            .args(["new-session", "-d", "-x", "80", "-y", "24", "sh"])
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        Server { socket, _dir: dir }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .env_remove("TMUX")
            .output();
    }
}

#[test]
fn a_running_server_is_alive_and_a_missing_one_is_not() {
    let server = Server::start();
    assert!(LocalHost.server_alive(&server.socket));
    assert!(!LocalHost.server_alive(&server.socket.with_file_name("missing")));
    let address = ServerAddress::from_socket(&server.socket);
    assert!(address.is_alive());
    drop(server);
    assert!(!address.is_alive());
}

#[tokio::test]
async fn the_tmux_command_reaches_the_server() {
    let server = Server::start();
    let output = ServerAddress::from_socket(&server.socket)
        .command(&["display-message", "-p", "#{socket_path}"])
        .stdout(Stdio::piped())
        .output()
        .await
        .unwrap();
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        server.socket.display().to_string()
    );
    let output = LocalHost
        .tmux_command(&server.socket, &["display-message", "-p", "#{socket_path}"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        server.socket.display().to_string()
    );
}

#[test]
fn the_tree_of_a_child_process_holds_it() {
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let me = std::process::id();
    let child_pid = child.id();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let has_child = |found: &[ProcessEntry]| {
        found
            .iter()
            .any(|p| p.pid == child_pid && p.command_line == "sleep 30")
    };
    let mut found = LocalHost.process_tree(me, 64);
    while !has_child(&found) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
        found = LocalHost.process_tree(me, 64);
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(found[0].pid, me);
    assert!(has_child(&found), "{found:?}");
}

#[test]
fn directories_are_told_from_files_and_missing_paths() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    assert!(LocalHost.is_dir(dir.path()));
    assert!(!LocalHost.is_dir(&file));
    assert!(!LocalHost.is_dir(&dir.path().join("missing")));
}

#[test]
fn fifos_are_made_here_and_refused_by_a_host_without_pipes() {
    let dir = tempfile::tempdir().unwrap();
    let pipes = dir.path().join("pipes");
    let fifo = LocalHost.make_fifo(&pipes, crate::ids::PaneId(3)).unwrap();
    assert!(fifo.path().starts_with(&pipes));
    let refused = FakeHost::default()
        .make_fifo(&pipes, crate::ids::PaneId(3))
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the pipe transport is not available on host fake"
    );
}

#[test]
fn the_runtime_stem_is_the_hosts() {
    let socket = Path::new("/tmp/tmux-1/default");
    assert_eq!(
        LocalHost.runtime_stem(socket),
        RuntimePaths::in_dir(PathBuf::from("/d"), socket).stem()
    );
    let fake = Arc::new(FakeHost::default());
    let address = ServerAddress::from_socket(socket).with_host(fake.clone());
    assert_eq!(RuntimePaths::for_server(&address).stem(), "fake-stem");
    assert!(!address.is_alive());
    assert_eq!(fake.asked(), ["stem", "alive"]);
    // The same socket on another host is another server.
    assert_ne!(address, ServerAddress::from_socket(socket));
}
