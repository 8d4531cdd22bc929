//! The private tmux server each CLI runs in, and the processes it leaves.

use super::*;

impl Tmux {
    pub(crate) fn start() -> Result<Tmux> {
        let dir = tempfile::Builder::new()
            .prefix("panectl-rec-tmux-")
            .tempdir()
            .context("temporary directory for tmux")?;
        let socket = format!("panectl-rec-{}", std::process::id());
        let tmux = Tmux {
            socket,
            dir,
            pane_pids: Vec::new(),
        };
        // The server stays up without sessions; panes get a common terminal type, and a pane
        // whose program exits keeps its last screen for the error report.
        tmux.run(&[
            "start-server",
            ";",
            "set",
            "-s",
            "exit-empty",
            "off",
            ";",
            "set",
            "-g",
            "default-terminal",
            "tmux-256color",
            ";",
            "set",
            "-g",
            "remain-on-exit",
            "on",
            ";",
            "set",
            "-g",
            "history-limit",
            "10000",
        ])?;
        Ok(tmux)
    }

    /// A `tmux` command for this server. Its environment is cleared, so the panes start from
    /// a known environment (the server's global one) and never see the caller's API keys.
    pub(crate) fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TMUX_TMPDIR", self.dir.path())
            .env("LANG", "C.UTF-8")
            .env("LC_ALL", "C.UTF-8")
            .env("COLORTERM", "truecolor")
            .env("TERM", "xterm-256color")
            .stdin(Stdio::null());
        command
    }

    pub(crate) fn run(&self, args: &[&str]) -> Result<String> {
        let output = self.command().args(args).output().context("run tmux")?;
        if !output.status.success() {
            bail!(
                "tmux {args:?} failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Starts `argv` in a new session of the given size; returns its pane id.
    pub(crate) fn launch(
        &mut self,
        name: &str,
        size: (u16, u16),
        cwd: &Path,
        env: &[(String, String)],
        argv: &[String],
    ) -> Result<String> {
        let (width, height) = (size.0.to_string(), size.1.to_string());
        let cwd = cwd.to_string_lossy();
        let mut args: Vec<&str> = vec![
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_id} #{pane_pid}",
            "-s",
            name,
            "-x",
            &width,
            "-y",
            &height,
            "-c",
            &cwd,
        ];
        let assignments: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for assignment in &assignments {
            args.push("-e");
            args.push(assignment);
        }
        args.extend(argv.iter().map(String::as_str));
        let output = self.run(&args)?;
        let mut fields = output.split_whitespace();
        let pane = fields
            .next()
            .context("new-session printed no pane")?
            .to_string();
        if let Some(pid) = fields.next().and_then(|p| p.parse().ok()) {
            self.pane_pids.push(pid);
        }
        Ok(pane)
    }

    /// Kills a session and every process its pane started.
    pub(crate) fn kill_session(&self, name: &str) {
        let pids: Vec<i32> = self
            .run(&["list-panes", "-s", "-t", name, "-F", "#{pane_pid}"])
            .map(|out| out.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default();
        let _ = self.run(&["kill-session", "-t", name]);
        for pid in pids {
            kill_processes(pid);
        }
    }

    pub(crate) fn look(&self, pane: &str) -> Result<Screen> {
        let info = self.run(&[
            "display-message",
            "-p",
            "-t",
            pane,
            "#{pane_width} #{pane_height} #{alternate_on} #{cursor_x} #{cursor_y} #{pane_title}",
        ])?;
        let info = info.strip_suffix('\n').unwrap_or(&info);
        let mut fields = info.splitn(6, ' ');
        let mut number = || -> Result<u16> {
            fields
                .next()
                .and_then(|f| f.parse().ok())
                .ok_or_else(|| anyhow!("bad display-message output {info:?}"))
        };
        let (width, height, alternate, x, y) =
            (number()?, number()?, number()?, number()?, number()?);
        let title = fields.next().unwrap_or("").to_string();
        let text = self.run(&["capture-pane", "-p", "-t", pane])?;
        Ok(Screen {
            text,
            title,
            width,
            height,
            alternate: alternate == 1,
            cursor: (x, y),
        })
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let server_pid: Option<i32> = self
            .run(&["display-message", "-p", "#{pid}"])
            .ok()
            .and_then(|p| p.trim().parse().ok());
        let _ = self.run(&["kill-server"]);
        for &pid in &self.pane_pids {
            kill_processes(pid);
        }
        if let Some(pid) = server_pid {
            kill_processes(pid);
        }
    }
}

/// The session id and parent of every process, from /proc.
pub(crate) fn processes() -> Vec<(i32, i32, i32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let pid: i32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // "pid (comm) state ppid pgrp session ...": the command may hold spaces.
            let rest = &stat[stat.rfind(')')? + 2..];
            let fields: Vec<&str> = rest.split(' ').collect();
            Some((
                pid,
                fields.get(1)?.parse().ok()?,
                fields.get(3)?.parse().ok()?,
            ))
        })
        .collect()
}

/// Ends a process, its descendants and its session's members: SIGTERM, then SIGKILL.
pub(crate) fn kill_processes(root: i32) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let family = || -> Vec<i32> {
        let all = processes();
        let mut found: BTreeSet<i32> = BTreeSet::new();
        if all.iter().any(|&(pid, _, _)| pid == root) {
            found.insert(root);
        }
        found.extend(all.iter().filter(|p| p.2 == root).map(|p| p.0));
        loop {
            let more: Vec<i32> = all
                .iter()
                .filter(|p| found.contains(&p.1) && !found.contains(&p.0))
                .map(|p| p.0)
                .collect();
            if more.is_empty() {
                break;
            }
            found.extend(more);
        }
        found.into_iter().collect()
    };
    for pid in family() {
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if family().is_empty() {
            return;
        }
        std::thread::sleep(POLL);
    }
    for pid in family() {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

/// Removes escape sequences, to compare a `-e` capture with the plain one.
pub(crate) fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('\x40'..='\x7e').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' || (c == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

pub(crate) fn same_lines(a: &str, b: &str) -> bool {
    let trimmed = |t: &str| -> Vec<String> {
        let mut lines: Vec<String> = t.lines().map(|l| l.trim_end().to_string()).collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        lines
    };
    trimmed(a) == trimmed(b)
}
