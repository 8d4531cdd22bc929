//! The Debian package as a user installs it: `scripts/build-deb.sh` packs this build's binary,
//! the real `dpkg` installs the package (into a root of the test's own, so the machine's
//! `/usr` is not touched; `.ci/run` also installs it into `/` on the CI machine), and a tmux
//! server whose config runs the installed plugin gets its daemon from the packaged binary, with
//! no `panectl` on its PATH. `dpkg -r` then removes every file it installed.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::plugin::{DetachedDaemons, daemons, wait_until};
use crate::support::{TmuxServer, daemon_test_lock};

fn run(command: &mut Command) -> String {
    let output = command.output().expect("run");
    assert!(output.status.success(), "{command:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `dpkg` acting on the installation under `root` (its own database there).
fn dpkg(root: &Path) -> Command {
    let mut command = Command::new("dpkg");
    command
        .arg(format!("--instdir={}", root.display()))
        .arg(format!(
            "--admindir={}",
            root.join("var/lib/dpkg").display()
        ))
        // tmux is installed on the machine, not in this root's database.
        .arg("--force-depends")
        .arg("--force-not-root");
    command
}

#[test]
fn the_debian_package_installs_a_plugin_that_runs_its_own_binary() {
    let _guard = daemon_test_lock();
    let work = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/build-deb.sh");
    let deb = run(Command::new(&script)
        .arg(env!("CARGO_BIN_EXE_panectl"))
        .arg(work.path().join("out")))
    .trim()
    .to_string();
    assert!(deb.ends_with(".deb"), "{deb}");

    // What the package says of itself, and what it holds.
    let field = |name: &str| run(Command::new("dpkg-deb").args(["-f", &deb, name]));
    assert_eq!(field("Package").trim(), "panectl");
    assert_eq!(field("Version").trim(), env!("CARGO_PKG_VERSION"));
    assert_eq!(field("Depends").trim(), "tmux (>= 3.2)");
    let contents = run(Command::new("dpkg-deb").args(["-c", &deb]));
    for path in [
        "./usr/bin/panectl",
        "./usr/share/tmux-plugins/panectl/panectl.tmux",
        "./usr/share/tmux-plugins/panectl/plugin/keys.sh",
        "./usr/share/man/man1/panectl.1.gz",
        "./usr/share/man/man1/panectl-send.1.gz",
        "./usr/share/bash-completion/completions/panectl",
        "./usr/share/zsh/vendor-completions/_panectl",
        "./usr/share/fish/vendor_completions.d/panectl.fish",
        "./usr/share/doc/panectl/copyright",
    ] {
        assert!(contents.contains(path), "{path} not in\n{contents}");
    }
    // Owned by root whoever built it.
    for line in contents.lines() {
        assert!(line.contains(" root/root "), "{line}");
    }

    let root = work.path().join("root");
    std::fs::create_dir_all(root.join("var/lib/dpkg/info")).unwrap();
    std::fs::create_dir_all(root.join("var/lib/dpkg/updates")).unwrap();
    std::fs::write(root.join("var/lib/dpkg/status"), "").unwrap();
    run(dpkg(&root).args(["-i", &deb]));
    let status = run(dpkg(&root).args(["-s", "panectl"]));
    assert!(status.contains("Status: install ok installed"), "{status}");
    let installed = root.join("usr/bin/panectl");
    let plugin = root.join("usr/share/tmux-plugins/panectl/panectl.tmux");
    assert!(installed.is_file() && plugin.is_file());
    // The completion script runs `panectl` from PATH, not the path it was built at.
    let bash = std::fs::read_to_string(root.join("usr/share/bash-completion/completions/panectl"))
        .unwrap();
    assert!(!bash.contains(env!("CARGO_BIN_EXE_panectl")), "{bash}");

    // A tmux whose config runs the installed plugin, with no panectl on its PATH.
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".tmux.conf");
    std::fs::write(
        &config,
        format!(
            "set -g default-shell /bin/sh\nset -g status-right '#{{panectl_summary}}'\nrun-shell '{}'\n",
            plugin.display()
        ),
    )
    .unwrap();
    let h = home.path().display().to_string();
    let env = [
        ("HOME", h.clone()),
        ("XDG_RUNTIME_DIR", format!("{h}/run")),
        ("XDG_STATE_HOME", format!("{h}/state")),
        ("XDG_CONFIG_HOME", format!("{h}/config")),
        ("PATH", "/usr/bin:/bin".to_string()),
    ];
    let server = TmuxServer::start_configured(&config, &env);
    let socket = server
        .tmux(&["display-message", "-p", "#{socket_path}"])
        .trim()
        .to_string();
    let _daemons = DetachedDaemons(&socket);
    wait_until("the packaged daemon", Duration::from_secs(20), || {
        daemons(&socket).len() == 1
    });
    let used = server.tmux(&["show-options", "-gqv", "@panectl-binary"]);
    assert_eq!(
        used.trim(),
        format!("{} (packaged with the plugin)", installed.display())
    );
    let pid = daemons(&socket)[0];
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    assert_eq!(exe, installed, "the daemon is not the packaged binary");
    // It works: the status line's summary is its.
    assert!(
        server
            .tmux(&["show-options", "-gqv", "status-right"])
            .contains("#{@panectl_summary}")
    );
    wait_until("the daemon's summary", Duration::from_secs(15), || {
        !server
            .tmux(&["show-options", "-sqv", "@panectl_pid"])
            .trim()
            .is_empty()
    });
    server.tmux(&["kill-server"]);
    drop(server);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !daemons(&socket).is_empty() {
        if std::time::Instant::now() > deadline {
            let logs: String = std::fs::read_dir(home.path().join("run/panectl"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .collect();
            panic!("the daemon did not end with its server; its log:\n{logs}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    // Removed: nothing of the package's files is left.
    run(dpkg(&root).args(["-r", "panectl"]));
    assert!(!installed.exists());
    assert!(!plugin.exists());
    assert!(!root.join("usr/share/man/man1/panectl.1.gz").exists());
}
