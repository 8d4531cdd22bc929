//! Another local user plants files where panectl keeps its own: a database with a queued
//! message, `-wal` files, a symlink for the runtime directory, a fake API socket, a token file.
//! panectl refuses each (naming the path and what to do) and touches nothing behind them. The
//! tests run as root and play the other user with uid 65534.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use panectl::paths::RuntimePaths;

use crate::support::{TmuxServer, daemon_test_lock};

const NOBODY: u32 = 65534;

fn chown_nobody(path: &Path) {
    nix::unistd::chown(
        path,
        Some(nix::unistd::Uid::from_raw(NOBODY)),
        Some(nix::unistd::Gid::from_raw(NOBODY)),
    )
    .expect("chown to nobody (the tests run as root)");
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).expect("stat").mode() & 0o7777
}

/// The daemon's file stem for the server (as the `panectl` the harness runs computes it).
fn stem(server: &TmuxServer) -> String {
    let socket = server
        .dir()
        .join(format!("tmux-{}", nix::unistd::getuid()))
        .join(server.socket_name());
    RuntimePaths::in_dir(PathBuf::new(), &socket)
        .stem()
        .to_string()
}

/// The default inbox database of the harness's environment (`XDG_STATE_HOME`).
fn inbox_path(server: &TmuxServer) -> PathBuf {
    server
        .dir()
        .join("state/panectl")
        .join(stem(server))
        .join("inbox.sqlite")
}

/// The API socket in the harness's runtime directory (`XDG_RUNTIME_DIR`).
fn api_socket(server: &TmuxServer) -> PathBuf {
    server
        .dir()
        .join("run/panectl")
        .join(format!("{}.sock", stem(server)))
}

/// A database with one queued message, as the real inbox would hold it.
fn make_inbox(path: &Path) {
    std::fs::create_dir_all(path.parent().expect("a directory")).expect("mkdir");
    chmod(path.parent().expect("a directory"), 0o700);
    let mut store = panectl::inbox::Store::open(path).expect("a new inbox");
    store
        .enqueue(panectl::inbox::NewMessage {
            pane: "%0".into(),
            agent: "pid:1".into(),
            sender: "cli".into(),
            to_agent: None,
            body: b"touch /tmp/owned-by-nobody".to_vec(),
            now: 0,
            ttl_ms: None,
        })
        .expect("enqueue");
}

/// Runs `panectl daemon` with `configure` applied to its command, expecting it to refuse to
/// start: it must exit (non-zero) within 15 s. Returns its stderr.
fn daemon_refuses(server: &TmuxServer, configure: impl FnOnce(&mut Command)) -> String {
    let mut command = server.panectl();
    command
        .arg("daemon")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    configure(&mut command);
    let mut child = command.spawn().expect("start the daemon");
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            // It started: end it as the harness ends a daemon (SIGTERM, then SIGKILL).
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
            let end = Instant::now() + Duration::from_secs(5);
            while child.try_wait().ok().flatten().is_none() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
            let mut stderr = String::new();
            let _ = child
                .stderr
                .take()
                .map(|mut e| e.read_to_string(&mut stderr));
            panic!("the daemon started instead of refusing:\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read stderr");
    assert!(!status.success(), "the daemon exited 0: {stderr}");
    stderr
}

#[test]
fn a_database_planted_by_another_user_stops_the_daemon() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let path = inbox_path(&server);
    make_inbox(&path);
    chown_nobody(&path);
    let stderr = daemon_refuses(&server, |_| {});
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    assert!(stderr.contains("uid 65534"), "{stderr}");
}

#[test]
fn a_wal_file_of_another_user_stops_the_daemon() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let path = inbox_path(&server);
    make_inbox(&path);
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    std::fs::write(&wal, b"").expect("plant -wal");
    chown_nobody(&wal);
    let stderr = daemon_refuses(&server, |_| {});
    assert!(stderr.contains(&wal.display().to_string()), "{stderr}");
    assert!(stderr.contains("uid 65534"), "{stderr}");
}

#[test]
fn an_empty_or_damaged_database_stops_the_daemon_with_advice() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let path = inbox_path(&server);
    make_inbox(&path);
    let good = std::fs::read(&path).expect("read the inbox");
    // Zero bytes: not a new inbox, since a new one is made only where no file exists.
    std::fs::write(&path, b"").expect("truncate");
    let stderr = daemon_refuses(&server, |_| {});
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    assert!(stderr.contains("empty file"), "{stderr}");
    assert!(stderr.contains("rm "), "{stderr}");
    // A damaged page (the messages table's): SQLite's quick_check finds it at start.
    let page = 4096;
    assert!(good.len() >= 2 * page, "a database of two pages at least");
    let mut damaged = good.clone();
    damaged[page..2 * page].fill(0xa5);
    std::fs::write(&path, &damaged).expect("damage");
    let stderr = daemon_refuses(&server, |_| {});
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
    assert!(stderr.contains("damaged"), "{stderr}");
    assert!(stderr.contains("mv "), "{stderr}");
}

#[test]
fn health_reports_the_inbox_and_damage_found_while_running() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let _daemon = server.start_daemon(&[]);
    let health = server.health();
    assert_eq!(health["inbox"], "ok", "{health:#}");
    // Another writer damages the schema: the messages table's root page is past the end.
    // The schema version is raised so that the daemon's connection reads the schema again.
    let connection = rusqlite::Connection::open(inbox_path(&server)).expect("open the inbox");
    let version: i64 = connection
        .query_row("PRAGMA schema_version", [], |r| r.get(0))
        .expect("schema version");
    connection
        .execute_batch(&format!(
            "PRAGMA writable_schema = ON;
             UPDATE sqlite_master SET rootpage = 9999 WHERE name = 'messages';
             PRAGMA schema_version = {};
             PRAGMA writable_schema = OFF;",
            version + 1
        ))
        .expect("damage the schema");
    drop(connection);
    server.wait_for(
        "health to report the damage",
        Duration::from_secs(15),
        || {
            let health = server.health();
            health["inbox"]
                .as_str()
                .is_some_and(|i| i.starts_with("damaged"))
                && health["status"] == "degraded"
        },
    );
}

#[test]
fn a_runtime_directory_that_is_a_symlink_is_refused_and_its_target_left_alone() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    // No XDG_RUNTIME_DIR: the fallback ${TMUX_TMPDIR}/panectl-UID, planted as a symlink to a
    // stand-in for /tmp.
    let target = server.dir().join("shared-tmp");
    std::fs::create_dir(&target).expect("mkdir");
    chmod(&target, 0o1777);
    let link = server
        .dir()
        .join(format!("panectl-{}", nix::unistd::getuid()));
    std::os::unix::fs::symlink(&target, &link).expect("plant the symlink");
    let stderr = daemon_refuses(&server, |c| {
        c.env_remove("XDG_RUNTIME_DIR");
    });
    assert!(stderr.contains(&link.display().to_string()), "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(mode(&target), 0o1777, "the symlink's target was changed");
    assert_eq!(std::fs::read_dir(&target).expect("ls").count(), 0);
}

#[test]
fn a_runtime_directory_open_to_others_or_of_another_user_is_refused() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let dir = server.dir().join("run/panectl");
    std::fs::create_dir_all(&dir).expect("mkdir");
    chmod(&dir, 0o755);
    let stderr = daemon_refuses(&server, |_| {});
    assert!(stderr.contains(&dir.display().to_string()), "{stderr}");
    assert!(stderr.contains("chmod 700"), "{stderr}");
    assert_eq!(mode(&dir), 0o755, "refused, not changed");
    chmod(&dir, 0o700);
    chown_nobody(&dir);
    let stderr = daemon_refuses(&server, |_| {});
    assert!(stderr.contains("uid 65534"), "{stderr}");
}

/// Counts the bytes every connection to a listener sends, until the listener is dropped.
fn record_bytes(listener: std::os::unix::net::UnixListener) -> std::sync::mpsc::Receiver<usize> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buffer = [0u8; 4096];
            let mut total = 0;
            while let Ok(n) = stream.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                total += n;
            }
            if sender.send(total).is_err() {
                return;
            }
        }
    });
    receiver
}

#[test]
fn send_refuses_a_socket_of_another_user_and_writes_nothing() {
    let server = TmuxServer::start(80, 24);
    let socket = api_socket(&server);
    std::fs::create_dir_all(socket.parent().expect("dir")).expect("mkdir");
    chmod(socket.parent().expect("dir"), 0o700);
    let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind the fake");
    chown_nobody(&socket);
    let received = record_bytes(listener);
    let output = server
        .panectl()
        .args(["send", "%0", "the secret"])
        .output()
        .expect("run panectl send");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "send exited 0: {stderr}");
    assert!(stderr.contains("uid 65534"), "{stderr}");
    let written: usize = received.try_iter().sum();
    assert_eq!(written, 0, "bytes were sent to the fake socket");
}

#[test]
fn send_refuses_a_listener_running_as_another_user_and_writes_nothing() {
    let python = Path::new("/usr/bin/python3");
    assert!(python.exists(), "the test needs /usr/bin/python3");
    let server = TmuxServer::start(80, 24);
    // The other user's listener binds in a directory of its own, then the socket is moved
    // (by root) into the runtime directory and given to root: its file looks right, only
    // SO_PEERCRED tells.
    let theirs = tempfile::Builder::new()
        .prefix("panectl-nobody-")
        .tempdir()
        .expect("tempdir");
    chmod(theirs.path(), 0o777);
    let fake = theirs.path().join("fake.sock");
    let count = theirs.path().join("count");
    let script = "import socket, sys\n\
        s = socket.socket(socket.AF_UNIX)\n\
        s.bind(sys.argv[1]); s.listen(8); s.settimeout(20)\n\
        total = 0\n\
        try:\n\
        \x20   while True:\n\
        \x20       c, _ = s.accept(); c.settimeout(2)\n\
        \x20       try:\n\
        \x20           while True:\n\
        \x20               d = c.recv(4096)\n\
        \x20               if not d: break\n\
        \x20               total += len(d)\n\
        \x20       except OSError: pass\n\
        \x20       open(sys.argv[2], 'w').write(str(total)); c.close()\n\
        except OSError: pass\n";
    let mut fake_listener = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(python)
        .args(["-c", script])
        .arg(&fake)
        .arg(&count)
        .stdin(Stdio::null())
        .spawn()
        .expect("start the fake listener");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !fake.exists() {
        assert!(Instant::now() < deadline, "the fake listener did not bind");
        std::thread::sleep(Duration::from_millis(20));
    }
    let socket = api_socket(&server);
    std::fs::create_dir_all(socket.parent().expect("dir")).expect("mkdir");
    chmod(socket.parent().expect("dir"), 0o700);
    std::fs::rename(&fake, &socket).expect("move the fake socket");
    nix::unistd::chown(&socket, Some(nix::unistd::getuid()), None).expect("chown");
    let output = server
        .panectl()
        .args(["send", "%0", "the secret"])
        .output()
        .expect("run panectl send");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    // Let the listener record what it got.
    std::thread::sleep(Duration::from_millis(500));
    let _ = fake_listener.kill();
    let _ = fake_listener.wait();
    assert!(!output.status.success(), "send exited 0: {stderr}");
    assert!(stderr.contains("runs as uid 65534"), "{stderr}");
    let written = std::fs::read_to_string(&count).unwrap_or_else(|_| "0".into());
    assert_eq!(written.trim(), "0", "bytes were sent to the fake listener");
}

#[test]
fn a_token_file_of_another_user_is_refused() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let token = server.dir().join("planted.token");
    std::fs::write(&token, "0123456789abcdef0123456789abcdef\n").expect("write");
    chmod(&token, 0o600);
    chown_nobody(&token);
    let stderr = daemon_refuses(&server, |c| {
        c.args(["--listen", "127.0.0.1:0", "--token-file"])
            .arg(&token);
    });
    assert!(stderr.contains(&token.display().to_string()), "{stderr}");
    assert!(stderr.contains("uid 65534"), "{stderr}");
}

#[test]
fn files_the_daemon_makes_are_private() {
    let _lock = daemon_test_lock();
    let server = TmuxServer::start(80, 24);
    let token = server
        .dir()
        .join("run/panectl")
        .join(format!("{}.token", stem(&server)));
    let mut daemon = server.start_daemon(&["--listen", "127.0.0.1:0"]);
    server.wait_for_panes(1);
    let inbox = inbox_path(&server);
    // Beside the socket: the instance lock, the control clients' pids, the status counts.
    let runtime = |extension: &str| {
        server
            .dir()
            .join("run/panectl")
            .join(format!("{}.{extension}", stem(&server)))
    };
    server.wait_for("the runtime files", Duration::from_secs(10), || {
        ["lock", "clients", "counts"]
            .iter()
            .all(|e| runtime(e).exists())
    });
    let mut files = vec![inbox.clone(), token];
    files.extend(["lock", "clients", "counts"].map(runtime));
    for suffix in ["-wal", "-shm"] {
        let side = PathBuf::from(format!("{}{suffix}", inbox.display()));
        if side.exists() {
            files.push(side);
        }
    }
    for file in &files {
        assert_eq!(mode(file), 0o600, "{}", file.display());
    }
    for dir in [
        server.dir().join("run/panectl"),
        inbox.parent().expect("dir").to_path_buf(),
    ] {
        assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    }
    assert!(daemon.stop(Duration::from_secs(10)));
    // The harness's log file too.
    let logs: Vec<PathBuf> = std::fs::read_dir(server.dir())
        .expect("ls")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    assert!(!logs.is_empty());
    for log in logs {
        assert_eq!(mode(&log), 0o600, "{}", log.display());
    }
}
