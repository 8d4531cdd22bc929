//! The processes running in a pane, as the status rules see them (the host reads them:
//! `os::process` on this machine). Node-based CLIs show up as `node` in
//! `#{pane_current_command}`; their command line says which CLI it is.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
