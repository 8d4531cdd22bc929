//! The processes of this machine: who runs, under whom, with which command line.
//!
//! Linux has `/proc`; other Unix systems (macOS, the BSDs) do not, and there the same facts
//! come from `ps -A -o ...`, which POSIX describes. The source is chosen once per process:
//! `/proc` when it is there, else `ps`; `PANECTL_PROCESSES=ps` forces the fallback, which is
//! how the tests run it on Linux.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::sync::OnceLock;

use crate::status::process::ProcessEntry;

/// The variable that picks the source (`proc` or `ps`), for tests and odd systems.
pub const SOURCE_VARIABLE: &str = "PANECTL_PROCESSES";

/// Where facts about processes are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `/proc/PID/...` (Linux).
    Proc,
    /// `ps -A -o ...` (every Unix; the fallback).
    Ps,
}

impl Source {
    /// The source this process uses: `$PANECTL_PROCESSES` if it names one, else `/proc` when
    /// it is mounted, else `ps`.
    pub fn current() -> Source {
        static CHOSEN: OnceLock<Source> = OnceLock::new();
        *CHOSEN.get_or_init(|| match std::env::var(SOURCE_VARIABLE).ok().as_deref() {
            Some("ps") => Source::Ps,
            Some("proc") => Source::Proc,
            _ if std::path::Path::new("/proc/self/stat").exists() => Source::Proc,
            _ => Source::Ps,
        })
    }
}

/// One process as a source reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Its pid.
    pub pid: u32,
    /// Its parent's pid.
    pub parent: u32,
    /// Whether it has ended and waits to be reaped.
    pub zombie: bool,
    /// Its owner's user id.
    pub uid: u32,
    /// Its name (`comm`; with `ps`, the last part of the executable's path).
    pub name: String,
    /// Its arguments. From `ps` they are the command line split at spaces: an argument
    /// holding a space comes out as two.
    pub arguments: Vec<OsString>,
}

impl ProcessInfo {
    fn entry(&self) -> ProcessEntry {
        ProcessEntry {
            pid: self.pid,
            name: self.name.clone(),
            command_line: self
                .arguments
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// Every process, read once.
#[derive(Debug, Default)]
pub struct Snapshot {
    processes: HashMap<u32, ProcessInfo>,
    children: HashMap<u32, Vec<u32>>,
}

impl Snapshot {
    /// Reads every process from `source` (empty where it cannot be read).
    pub fn read(source: Source) -> Snapshot {
        let processes = match source {
            Source::Proc => proc::all(),
            Source::Ps => ps::all(),
        };
        Snapshot::of(processes)
    }

    fn of(list: Vec<ProcessInfo>) -> Snapshot {
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        for process in &list {
            children
                .entry(process.parent)
                .or_default()
                .push(process.pid);
        }
        for kids in children.values_mut() {
            kids.sort_unstable();
        }
        Snapshot {
            processes: list.into_iter().map(|p| (p.pid, p)).collect(),
            children,
        }
    }

    /// One process, if it runs.
    pub fn get(&self, pid: u32) -> Option<&ProcessInfo> {
        self.processes.get(&pid)
    }

    /// The direct children of `pid`.
    pub fn children(&self, pid: u32) -> Vec<u32> {
        self.children.get(&pid).cloned().unwrap_or_default()
    }

    /// `pid` and its descendants, breadth first, at most `limit`.
    pub fn tree(&self, pid: u32, limit: usize) -> Vec<ProcessEntry> {
        descendants(pid, limit, &self.children, |next| {
            self.processes.get(&next).map(ProcessInfo::entry)
        })
    }

    /// `pid` and its ancestors up to (not including) pid 1 or 0, nearest first, at most
    /// `limit`. Empty if `pid` does not run.
    pub fn ancestry(&self, pid: u32, limit: usize) -> Vec<u32> {
        ancestors(pid, limit, |next| {
            self.processes.get(&next).map(|p| p.parent)
        })
    }
}

/// `pid` and its descendants in `children`, breadth first, at most `limit`, each as `entry`
/// reads it (a process gone meanwhile is left out).
fn descendants(
    pid: u32,
    limit: usize,
    children: &HashMap<u32, Vec<u32>>,
    entry: impl Fn(u32) -> Option<ProcessEntry>,
) -> Vec<ProcessEntry> {
    let mut out = Vec::new();
    let mut queue = VecDeque::from([pid]);
    while let Some(next) = queue.pop_front() {
        if out.len() >= limit {
            break;
        }
        if let Some(found) = entry(next) {
            out.push(found);
        }
        if let Some(kids) = children.get(&next) {
            queue.extend(kids.iter().copied());
        }
    }
    out
}

/// `pid` and its ancestors through `parent`, nearest first, up to (not including) pid 1 or 0,
/// at most `limit`, stopping at a process that does not run.
fn ancestors(pid: u32, limit: usize, parent: impl Fn(u32) -> Option<u32>) -> Vec<u32> {
    let mut chain = Vec::new();
    let mut next = pid;
    while next > 1 && chain.len() < limit && !chain.contains(&next) {
        let Some(up) = parent(next) else {
            break;
        };
        chain.push(next);
        next = up;
    }
    chain
}

/// `pid` and its descendants (breadth first, at most `limit`): the processes of a pane.
pub fn tree(pid: u32, limit: usize) -> Vec<ProcessEntry> {
    match Source::current() {
        // One walk of /proc for the parents, then only the tree's own files.
        Source::Proc => proc::tree(pid, limit),
        Source::Ps => Snapshot::read(Source::Ps).tree(pid, limit),
    }
}

/// `pid` and its ancestors, nearest first (see [`Snapshot::ancestry`]): who a process is, for
/// trusting what it says.
pub fn ancestry(pid: u32, limit: usize) -> Vec<u32> {
    match Source::current() {
        Source::Proc => proc::ancestry(pid, limit),
        Source::Ps => Snapshot::read(Source::Ps).ancestry(pid, limit),
    }
}

/// One process's facts, if it runs (and the source can say).
pub fn info(pid: u32) -> Option<ProcessInfo> {
    match Source::current() {
        Source::Proc => proc::info(pid),
        Source::Ps => ps::one(pid),
    }
}

/// Whether a process with this pid runs (and is not a zombie waiting to be reaped).
pub fn alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    if raw <= 0 || nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None).is_err() {
        return false;
    }
    // A zombie still takes signals; its state says it has ended.
    let zombie = match Source::current() {
        Source::Proc => proc::zombie(pid),
        Source::Ps => ps::zombie(pid),
    };
    zombie != Some(true)
}

/// A process's environment, where the system lets another process read it (`/proc`): the
/// `ps` fallback cannot, and says `None`.
pub fn environment(pid: u32) -> Option<Vec<OsString>> {
    match Source::current() {
        Source::Proc => proc::words(pid, "environ"),
        Source::Ps => None,
    }
}

/// Reading `/proc` (Linux).
mod proc {
    use super::*;

    /// The NUL-separated words of a /proc file.
    pub(super) fn words(pid: u32, file: &str) -> Option<Vec<OsString>> {
        use std::os::unix::ffi::OsStringExt;
        let bytes = std::fs::read(format!("/proc/{pid}/{file}")).ok()?;
        Some(
            bytes
                .split(|&b| b == 0)
                .filter(|w| !w.is_empty())
                .map(|w| OsString::from_vec(w.to_vec()))
                .collect(),
        )
    }

    /// "pid (comm) state ppid ... " fields after comm, which may contain anything.
    fn stat(pid: u32) -> Option<(char, u32)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (_, rest) = stat.rsplit_once(')')?;
        let mut fields = rest.split_whitespace();
        let state = fields.next()?.chars().next()?;
        let parent = fields.next()?.parse().ok()?;
        Some((state, parent))
    }

    pub(super) fn info(pid: u32) -> Option<ProcessInfo> {
        use std::os::unix::fs::MetadataExt;
        let (state, parent) = stat(pid)?;
        let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        let uid = std::fs::metadata(format!("/proc/{pid}")).ok()?.uid();
        Some(ProcessInfo {
            pid,
            parent,
            zombie: state == 'Z',
            uid,
            name: name.trim_end().to_string(),
            arguments: words(pid, "cmdline").unwrap_or_default(),
        })
    }

    fn pids() -> Vec<u32> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
            .collect()
    }

    pub(super) fn all() -> Vec<ProcessInfo> {
        pids().into_iter().filter_map(info).collect()
    }

    /// Children by parent, from the stat files only.
    fn children() -> HashMap<u32, Vec<u32>> {
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        for pid in pids() {
            if let Some((_, parent)) = stat(pid) {
                children.entry(parent).or_default().push(pid);
            }
        }
        children
    }

    pub(super) fn tree(pid: u32, limit: usize) -> Vec<ProcessEntry> {
        descendants(pid, limit, &children(), |next| {
            info(next).map(|p| p.entry())
        })
    }

    pub(super) fn ancestry(pid: u32, limit: usize) -> Vec<u32> {
        ancestors(pid, limit, |next| stat(next).map(|(_, parent)| parent))
    }

    /// Whether the process is a zombie, if it runs.
    pub(super) fn zombie(pid: u32) -> Option<bool> {
        stat(pid).map(|(state, _)| state == 'Z')
    }
}

/// Asking `ps` (every Unix).
mod ps {
    use super::*;

    /// Runs `ps` with `args`; its output, or nothing if it cannot run.
    fn run(args: &[&str]) -> Option<String> {
        let output = std::process::Command::new("ps")
            .args(args)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        // `ps -p PID` of no process exits 1 with the header-less empty output.
        Some(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// The facts of `pid ppid stat uid comm` rows, and the `pid args` rows, joined by pid.
    pub(super) fn parse(facts: &str, command_lines: &str) -> Vec<ProcessInfo> {
        let arguments: HashMap<u32, Vec<OsString>> = command_lines
            .lines()
            .filter_map(|line| {
                let line = line.trim_start();
                let (pid, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
                Some((
                    pid.parse().ok()?,
                    rest.split_whitespace().map(OsString::from).collect(),
                ))
            })
            .collect();
        facts
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let pid: u32 = fields.next()?.parse().ok()?;
                let parent = fields.next()?.parse().ok()?;
                let state = fields.next()?;
                let uid = fields.next()?.parse().ok()?;
                // The name is the rest (it may hold spaces); macOS prints the executable's
                // path.
                let name = fields.collect::<Vec<_>>().join(" ");
                let name = name.rsplit('/').next().unwrap_or_default().to_string();
                Some(ProcessInfo {
                    pid,
                    parent,
                    zombie: state.starts_with('Z'),
                    uid,
                    name,
                    arguments: arguments.get(&pid).cloned().unwrap_or_default(),
                })
            })
            .collect()
    }

    pub(super) fn all() -> Vec<ProcessInfo> {
        let (Some(facts), Some(lines)) = (
            run(&["-A", "-o", "pid=,ppid=,stat=,uid=,comm="]),
            run(&["-A", "-o", "pid=,args="]),
        ) else {
            return Vec::new();
        };
        parse(&facts, &lines)
    }

    /// Whether the process is a zombie, if it runs: one `ps` for its state alone (liveness is
    /// polled while a daemon stops).
    pub(super) fn zombie(pid: u32) -> Option<bool> {
        let state = run(&["-p", &pid.to_string(), "-o", "stat="])?;
        let state = state.trim();
        (!state.is_empty()).then(|| state.starts_with('Z'))
    }

    pub(super) fn one(pid: u32) -> Option<ProcessInfo> {
        let pid_text = pid.to_string();
        let facts = run(&["-p", &pid_text, "-o", "pid=,ppid=,stat=,uid=,comm="])?;
        let lines = run(&["-p", &pid_text, "-o", "pid=,args="])?;
        parse(&facts, &lines).into_iter().find(|p| p.pid == pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child that runs until dropped.
    struct Sleeper(std::process::Child);

    impl Sleeper {
        fn start() -> Sleeper {
            let child = std::process::Command::new("sleep")
                .arg("30")
                .spawn()
                .expect("sleep");
            let sleeper = Sleeper(child);
            // Its command line appears once its exec is done.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while proc::info(sleeper.pid()).is_none_or(|p| p.arguments.len() != 2)
                && std::time::Instant::now() < deadline
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            sleeper
        }

        fn pid(&self) -> u32 {
            self.0.id()
        }
    }

    impl Drop for Sleeper {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    #[test]
    fn both_sources_see_the_same_tree_and_ancestry() {
        let child = Sleeper::start();
        let me = std::process::id();
        for source in [Source::Proc, Source::Ps] {
            let snapshot = Snapshot::read(source);
            let tree = snapshot.tree(me, 64);
            assert_eq!(tree[0].pid, me, "{source:?}");
            let sleep = tree
                .iter()
                .find(|p| p.pid == child.pid())
                .unwrap_or_else(|| panic!("{source:?}: no child in {tree:?}"));
            assert_eq!(sleep.name, "sleep", "{source:?}");
            assert_eq!(sleep.command_line, "sleep 30", "{source:?}");
            assert_eq!(
                snapshot.ancestry(child.pid(), 64)[..2],
                [child.pid(), me],
                "{source:?}"
            );
            let info = snapshot.get(child.pid()).expect("the child");
            assert_eq!(info.uid, nix::unistd::getuid().as_raw(), "{source:?}");
            assert!(!info.zombie, "{source:?}");
        }
        // The ways the daemon takes (the source this test process uses) agree.
        assert!(tree(me, 64).iter().any(|p| p.pid == child.pid()));
        assert_eq!(ancestry(child.pid(), 2), vec![child.pid(), me]);
        assert_eq!(ps::one(child.pid()), proc::info(child.pid()));
    }

    #[test]
    fn a_zombie_is_not_alive_in_either_source() {
        let mut child = std::process::Command::new("true").spawn().expect("true");
        let pid = child.id();
        // Not reaped yet: a zombie once it has ended.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while proc::info(pid).is_none_or(|p| !p.zombie) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(proc::info(pid).is_some_and(|p| p.zombie));
        assert!(ps::one(pid).is_some_and(|p| p.zombie));
        assert_eq!(proc::zombie(pid), Some(true));
        assert_eq!(ps::zombie(pid), Some(true));
        assert_eq!(ps::zombie(std::process::id()), Some(false));
        assert!(!alive(pid));
        let _ = child.wait();
        assert!(!alive(pid));
        assert!(ps::one(pid).is_none());
        assert_eq!(ps::zombie(pid), None);
        assert_eq!(proc::zombie(pid), None);
        assert!(!alive(u32::MAX));
        assert!(!alive(0));
        assert!(alive(std::process::id()));
    }

    #[test]
    fn ps_output_is_parsed_whatever_its_padding_and_names() {
        let facts = "    1     0 Ss       0 init\n  420     1 S     1000 /usr/bin/tmux: server\n  \
                     421   420 Z     1000 sh\nnot a row\n";
        let lines = "    1 /sbin/init splash\n  420 tmux -L work -C attach\n  421 \n";
        let parsed = ps::parse(facts, lines);
        assert_eq!(parsed.len(), 3);
        assert_eq!(parsed[1].name, "tmux: server");
        assert_eq!(parsed[1].arguments, ["tmux", "-L", "work", "-C", "attach"]);
        assert_eq!(parsed[1].uid, 1000);
        assert!(parsed[2].zombie);
        assert!(parsed[2].arguments.is_empty());
        let snapshot = Snapshot::of(parsed);
        assert_eq!(snapshot.ancestry(421, 8), [421, 420]);
        assert_eq!(
            snapshot
                .tree(420, 8)
                .iter()
                .map(|p| p.pid)
                .collect::<Vec<_>>(),
            [420, 421]
        );
        assert_eq!(snapshot.tree(420, 1).len(), 1);
    }
}
