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
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may contain anything, so split after the last ')'.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(parent) = parent {
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
}
