//! The processes running in a pane, read from `/proc` (Linux). Node-based CLIs show up as
//! `node` in `#{pane_current_command}`; their command line says which CLI it is.

use std::collections::HashMap;

/// A process in a pane's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessEntry {
    /// Its pid.
    pub pid: u32,
    /// Its name (`comm`).
    pub name: String,
    /// Its arguments joined with spaces.
    pub command_line: String,
}

impl ProcessEntry {
    /// Whether tmux would name this process `command` in `#{pane_current_command}`: tmux
    /// takes the first word of the command line (without a login shell's `-`, as a file's
    /// name); `comm` is the name the kernel gives it.
    pub fn is_named(&self, command: &str) -> bool {
        let first = self
            .command_line
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .trim_start_matches('-');
        let first = first.rsplit('/').next().unwrap_or(first);
        self.name == command || (!first.is_empty() && first == command)
    }
}

fn entry(pid: u32) -> Option<ProcessEntry> {
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    let command_line = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| {
            bytes
                .split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    Some(ProcessEntry {
        pid,
        name: name.trim_end().to_string(),
        command_line,
    })
}

/// The parent of `pid` from `/proc/PID/stat`, if it runs.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ...": comm may contain anything, so split after the last ')'.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(1))
        .and_then(|p| p.parse::<u32>().ok())
}

/// `pid` and its ancestors up to (not including) pid 1 or 0, nearest first, at most `limit`:
/// who a process is, for trusting what it says (a hook's sender is believed for a pane only
/// when the pane's agent is among them). Empty if `pid` does not run.
pub fn ancestry(pid: u32, limit: usize) -> Vec<u32> {
    let mut chain = Vec::new();
    let mut next = Some(pid);
    while let Some(pid) = next {
        if pid <= 1 || chain.len() >= limit || chain.contains(&pid) {
            break;
        }
        let parent = parent_of(pid);
        if parent.is_none() && chain.is_empty() {
            return chain;
        }
        chain.push(pid);
        next = parent;
    }
    chain
}

/// Every process's children, by parent pid, from `/proc` (empty where there is none): the one
/// walk of `/proc` that process trees are made from.
pub fn children_by_parent() -> HashMap<u32, Vec<u32>> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return children;
    };
    for entry in entries.flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(parent) = parent_of(child) {
            children.entry(parent).or_default().push(child);
        }
    }
    children
}

/// `pid` and its descendants (breadth first, at most `limit`). Empty if `/proc` is not there.
pub fn tree(pid: u32, limit: usize) -> Vec<ProcessEntry> {
    let children = children_by_parent();
    let mut out = Vec::new();
    let mut queue = std::collections::VecDeque::from([pid]);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_of_a_child_process_holds_its_command_line() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let me = std::process::id();
        // The child's command line appears once its exec is done: right after spawn, /proc
        // can show its new name with an empty command line.
        let has_sleep = |found: &[ProcessEntry]| {
            found
                .iter()
                .any(|p| p.name == "sleep" && p.command_line == "sleep 30")
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut found = tree(me, 64);
        while !has_sleep(&found) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
            found = tree(me, 64);
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found[0].pid, me);
        assert!(has_sleep(&found), "{found:?}");
    }

    #[test]
    fn a_process_is_named_as_tmux_names_it() {
        let process = |name: &str, command_line: &str| ProcessEntry {
            pid: 7,
            name: name.to_string(),
            command_line: command_line.to_string(),
        };
        // A script run through its interpreter: the kernel names it after the script, tmux
        // after the interpreter.
        let script = process("wrapped", "/bin/sh /usr/local/bin/wrapped -x");
        assert!(script.is_named("wrapped"));
        assert!(script.is_named("sh"));
        assert!(!script.is_named("python3"));
        assert!(process("bash", "-bash").is_named("bash"));
        assert!(!process("bash", "").is_named(""));
    }

    #[test]
    fn a_childs_ancestry_passes_through_its_parent() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let chain = ancestry(child.id(), 64);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(chain.first(), Some(&child.id()));
        assert_eq!(chain.get(1), Some(&std::process::id()));
        assert!(ancestry(u32::MAX - 1, 64).is_empty());
        assert_eq!(ancestry(std::process::id(), 1), vec![std::process::id()]);
    }
}
