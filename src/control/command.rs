//! Rendering tmux commands for the control channel.
//!
//! Every line written to a control client goes through tmux's configuration parser, which treats
//! `;`, `#`, `$`, `~`, `{`, `}`, `%`, quotes and backslashes specially, ends the command at a
//! newline, and detaches the client on an empty line (protocol notes §3.1, §3.4). Many commands
//! then expand `#{...}` formats in their arguments, and `#(...)` in a format runs a shell
//! command (§3.5). This module makes both mistakes impossible to write:
//!
//! * [`quote`] encodes any byte string (except NUL, which tmux cannot carry) as one token that the
//!   parser turns back into exactly those bytes, on one line;
//! * a [`Command`] only accepts free text ([`Arg::Text`]) in positions known not to expand
//!   formats; elsewhere it takes ids, numbers, fixed words and [`Format`]s, which can only be
//!   built from text written into panectl's source code;
//! * a [`Line`] always renders as a non-blank, non-comment, single line ending in `\n`.

use std::fmt;

use super::decoder::{BodyKind, Expected};
use crate::ids::{PaneId, SessionId, WindowId};

/// Why a command could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// tmux's parser cannot carry a NUL byte (`\000` truncates the string).
    #[error("argument contains a NUL byte, which tmux commands cannot carry")]
    Nul,
    /// Free text was given where tmux would expand it as a format.
    #[error("free text refused as argument of {command} {position}: tmux expands formats there")]
    FormatExpanding {
        /// The command.
        command: &'static str,
        /// The flag (or "positional argument") where the text was given.
        position: &'static str,
    },
    /// tmux refuses an empty argument in this position (`set-buffer` with no data).
    #[error("{command} needs a non-empty {what}")]
    Empty {
        /// The command.
        command: &'static str,
        /// What was empty.
        what: &'static str,
    },
    /// A value built by panectl contains characters outside the safe set.
    #[error("value {0:?} holds characters tmux could expand")]
    UnsafeValue(String),
}

/// A format string written into panectl's own source. The only way to put text into a position
/// where tmux expands formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format(&'static str);

impl Format {
    /// Wraps a format string that is part of the program (not derived from any input). A NUL
    /// byte, which tmux cannot carry, is a programming error caught when the constant is built.
    pub const fn new(format: &'static str) -> Format {
        let bytes = format.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            assert!(bytes[i] != 0, "tmux formats cannot contain NUL");
            i += 1;
        }
        Format(format)
    }

    /// The format text.
    pub fn as_str(&self) -> &'static str {
        self.0
    }
}

/// A value panectl computed itself (a status word, a count summary) that contains only
/// characters no tmux version expands: ASCII letters, digits and `_ - . , : = + /` and space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SafeValue(String);

impl SafeValue {
    /// Checks the value and wraps it.
    pub fn new(value: impl Into<String>) -> Result<SafeValue, CommandError> {
        let value = value.into();
        let safe = value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b" _-.,:=+/".contains(&b));
        if safe {
            Ok(SafeValue(value))
        } else {
            Err(CommandError::UnsafeValue(value))
        }
    }

    /// The value.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An object tmux can be told to act on, always addressed by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A pane.
    Pane(PaneId),
    /// A window.
    Window(WindowId),
    /// A session.
    Session(SessionId),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Pane(id) => id.fmt(f),
            Target::Window(id) => id.fmt(f),
            Target::Session(id) => id.fmt(f),
        }
    }
}

impl From<PaneId> for Target {
    fn from(id: PaneId) -> Self {
        Target::Pane(id)
    }
}

impl From<WindowId> for Target {
    fn from(id: WindowId) -> Self {
        Target::Window(id)
    }
}

impl From<SessionId> for Target {
    fn from(id: SessionId) -> Self {
        Target::Session(id)
    }
}

/// Commands and positions where tmux takes arguments literally, so free text may go there.
/// `None` is the positional argument. Everything not listed refuses free text.
const LITERAL_POSITIONS: &[(&str, Option<&str>)] = &[
    ("set-buffer", None),
    ("set-buffer", Some("-b")),
    ("show-buffer", Some("-b")),
    ("delete-buffer", Some("-b")),
    ("paste-buffer", Some("-b")),
    ("send-keys", None),
    // The shell command of a new window, pane or session is handed to `sh -c` as it is.
    ("new-window", None),
    ("new-session", None),
    ("split-window", None),
    // `-e NAME=VALUE` is put into the new process's environment as it is.
    ("new-window", Some("-e")),
    ("new-session", Some("-e")),
    ("split-window", Some("-e")),
];

/// A tmux command with its arguments, checked as it is built.
///
/// Arguments that panectl controls (flags, ids, numbers, [`Format`]s, [`SafeValue`]s) are added
/// with infallible methods; free text only with [`Command::text`] and [`Command::text_option`],
/// which refuse positions where tmux would expand it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    name: &'static str,
    rendered: Vec<u8>,
    reply: BodyKind,
    /// `--` was written: later arguments are positional even if they start with `-`.
    options_ended: bool,
}

impl Command {
    /// Starts a command. `name` is a tmux command name such as `capture-pane`.
    pub fn new(name: &'static str) -> Command {
        debug_assert!(
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
        );
        Command {
            name,
            rendered: name.as_bytes().to_vec(),
            reply: BodyKind::Plain,
            options_ended: false,
        }
    }

    /// Adds a flag without a value, such as `-p`. Flags are fixed words of the program.
    pub fn flag(mut self, flag: &'static str) -> Command {
        debug_assert!(
            flag.starts_with('-') && flag[1..].bytes().all(|b| b.is_ascii_alphanumeric())
        );
        self.rendered.push(b' ');
        self.rendered.extend_from_slice(flag.as_bytes());
        self
    }

    /// Adds `flag TARGET`, such as `-t %3`.
    pub fn target(self, flag: &'static str, target: impl Into<Target>) -> Command {
        let target = target.into().to_string();
        self.flag(flag).push_trusted(target.as_bytes())
    }

    /// Adds `flag $N:{end}`: the last window (highest index) of a session.
    pub fn target_last_window(self, flag: &'static str, session: SessionId) -> Command {
        let target = format!("{session}:{{end}}");
        self.flag(flag).push_trusted(target.as_bytes())
    }

    /// Adds `flag SESSION:INDEX`: the window at `index` of the session (made there by
    /// `new-window` when the index is free).
    pub fn target_window_index(
        self,
        flag: &'static str,
        session: SessionId,
        index: u32,
    ) -> Command {
        let target = format!("{session}:{index}");
        self.flag(flag).push_trusted(target.as_bytes())
    }

    /// Adds `flag =NAME:{end}`: the last window of the session named exactly `name` (a safe
    /// value without `:` or spaces, or the command fails in tmux, naming no other session).
    pub fn target_last_window_named(self, flag: &'static str, name: &SafeValue) -> Command {
        let target = format!("={}:{{end}}", name.as_str());
        self.flag(flag).push_trusted(target.as_bytes())
    }

    /// Adds the value of `set-option` literally (set without `-F`, tmux expands nothing in
    /// it; what a status line makes of the option later is the option's reader's business).
    /// Refused for any other command.
    pub fn option_value(mut self, value: &[u8]) -> Result<Command, CommandError> {
        let expands = self.rendered.windows(3).any(|w| w == b" -F");
        if self.name != "set-option" || self.options_ended || expands {
            return Err(CommandError::FormatExpanding {
                command: self.name,
                position: "option value",
            });
        }
        self.rendered.push(b' ');
        quote_into(value, &mut self.rendered)?;
        Ok(self)
    }

    /// Adds `flag NUMBER`, such as `-S -2000`.
    pub fn number(mut self, flag: &'static str, value: i64) -> Command {
        self = self.flag(flag);
        self.rendered.push(b' ');
        self.rendered
            .extend_from_slice(value.to_string().as_bytes());
        self
    }

    /// Adds a format of ours as a positional argument.
    pub fn format(self, format: Format) -> Command {
        self.push_trusted(format.as_str().as_bytes())
    }

    /// Adds `flag FORMAT`, such as `-F '#{pane_id}'`.
    pub fn format_option(self, flag: &'static str, format: Format) -> Command {
        self.flag(flag).push_trusted(format.as_str().as_bytes())
    }

    /// Adds the name of a user option of panectl's (`@panectl_...`, fixed in the program).
    pub fn option_name(self, name: &'static str) -> Command {
        debug_assert!(
            name.starts_with('@')
                && name[1..]
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'-')
        );
        self.push_trusted(name.as_bytes())
    }

    /// Adds a safe value of ours as a positional argument.
    pub fn safe(self, value: &SafeValue) -> Command {
        self.push_trusted(value.as_str().as_bytes())
    }

    /// Adds free text as a positional argument, preceded by `--` so that text starting with `-`
    /// is not taken for a flag. Refused where tmux expands formats.
    pub fn text(mut self, text: &[u8]) -> Result<Command, CommandError> {
        self.check_literal(None)?;
        if !self.options_ended {
            self.rendered.extend_from_slice(b" --");
            self.options_ended = true;
        }
        self.rendered.push(b' ');
        quote_into(text, &mut self.rendered)?;
        Ok(self)
    }

    /// Adds `flag TEXT` with free text. Refused where tmux expands formats.
    pub fn text_option(mut self, flag: &'static str, text: &[u8]) -> Result<Command, CommandError> {
        self.check_literal(Some(flag))?;
        self = self.flag(flag);
        self.rendered.push(b' ');
        quote_into(text, &mut self.rendered)?;
        Ok(self)
    }

    /// Marks the reply as one that carries notifications inside its block on tmux up to 3.7
    /// (`refresh-client -A`, `display-message` without `-p`).
    pub fn replies_with_notifications(mut self) -> Command {
        self.reply = BodyKind::Notifications;
        self
    }

    /// The command name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// How the decoder should read the reply.
    pub fn reply_kind(&self) -> BodyKind {
        self.reply
    }

    /// The command as tmux will parse it, without a line ending.
    pub fn as_bytes(&self) -> &[u8] {
        &self.rendered
    }

    /// Appends text of the program's own making. Such text never holds NUL ([`Format::new`]
    /// checks formats, [`SafeValue`] and ids cannot), so quoting cannot fail.
    fn push_trusted(mut self, bytes: &[u8]) -> Command {
        self.rendered.push(b' ');
        if quote_into(bytes, &mut self.rendered).is_err() {
            self.rendered.extend_from_slice(b"''");
        }
        self
    }

    fn check_literal(&self, position: Option<&'static str>) -> Result<(), CommandError> {
        if LITERAL_POSITIONS.contains(&(self.name, position)) {
            Ok(())
        } else {
            Err(CommandError::FormatExpanding {
                command: self.name,
                position: position.unwrap_or("positional argument"),
            })
        }
    }
}

/// One line for the control channel: one or more commands run back to back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    commands: Vec<Command>,
}

impl Line {
    /// `send-keys` for each key in order, one line so tmux takes them together; `None` for no
    /// keys.
    pub fn keys(pane: PaneId, keys: &[String]) -> Option<Line> {
        let (first, rest) = keys.split_first()?;
        Some(
            rest.iter()
                .fold(Line::new(commands::send_key(pane, first)), |line, key| {
                    line.then(commands::send_key(pane, key))
                }),
        )
    }

    /// A line with one command.
    pub fn new(command: Command) -> Line {
        Line {
            commands: vec![command],
        }
    }

    /// Appends a command to run right after the previous one, with no pane output read in
    /// between (tmux runs the items of one line back to back). If a command fails, tmux skips
    /// the rest of the line.
    pub fn then(mut self, command: Command) -> Line {
        self.commands.push(command);
        self
    }

    /// The commands, in order.
    pub fn commands(&self) -> &[Command] {
        &self.commands
    }

    /// What to announce to the decoder once the line is written, with tags handed out from
    /// `next_tag` onwards.
    pub fn expected(&self, first_tag: u64) -> Vec<Expected> {
        self.commands
            .iter()
            .zip(first_tag..)
            .map(|(command, tag)| Expected {
                tag,
                body: command.reply,
            })
            .collect()
    }

    /// The bytes to write: commands joined by ` ; `, ending with `\n`. Never blank, never a
    /// comment, never more than one line.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, command) in self.commands.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(b" ; ");
            }
            out.extend_from_slice(&command.rendered);
        }
        out.push(b'\n');
        out
    }
}

impl From<Command> for Line {
    fn from(command: Command) -> Line {
        Line::new(command)
    }
}

/// Quotes bytes as one tmux token that parses back to exactly those bytes.
///
/// Printable bytes (0x20 to 0xfe) go inside single quotes, where tmux processes nothing. A
/// single quote becomes `\'` outside the quotes, and control bytes, DEL and 0xff (which tmux's
/// lexer would take for end of input) become `\ooo` outside the quotes, so the line stays one
/// line and CR survives a tty. A `~` or `#` is never outside quotes, so no home expansion or
/// comment can start. NUL cannot be carried and is refused.
pub fn quote(bytes: &[u8]) -> Result<Vec<u8>, CommandError> {
    let mut out = Vec::with_capacity(bytes.len() + 2);
    quote_into(bytes, &mut out)?;
    Ok(out)
}

fn quote_into(bytes: &[u8], out: &mut Vec<u8>) -> Result<(), CommandError> {
    if bytes.contains(&0) {
        return Err(CommandError::Nul);
    }
    if bytes.is_empty() {
        out.extend_from_slice(b"''");
        return Ok(());
    }
    let mut quoted = false;
    for &b in bytes {
        let literal = (0x20..0x7f).contains(&b) && b != b'\'' || (0x80..0xff).contains(&b);
        if literal {
            if !quoted {
                out.push(b'\'');
                quoted = true;
            }
            out.push(b);
            continue;
        }
        if quoted {
            out.push(b'\'');
            quoted = false;
        }
        if b == b'\'' {
            out.extend_from_slice(b"\\'");
        } else {
            out.extend_from_slice(&[
                b'\\',
                b'0' + (b >> 6),
                b'0' + ((b >> 3) & 7),
                b'0' + (b & 7),
            ]);
        }
    }
    if quoted {
        out.push(b'\'');
    }
    Ok(())
}

/// The commands panectl sends, built so their arguments are always safe.
pub mod commands {
    use super::*;

    /// `set-buffer -b NAME -- DATA`: stores bytes in a paste buffer (no expansion anywhere).
    pub fn set_buffer(name: &[u8], data: &[u8]) -> Result<Command, CommandError> {
        if data.is_empty() {
            return Err(CommandError::Empty {
                command: "set-buffer",
                what: "data",
            });
        }
        Command::new("set-buffer")
            .text_option("-b", name)?
            .text(data)
    }

    /// `set-buffer -a -b NAME -- DATA`: appends bytes to a paste buffer, so that long text
    /// goes in lines of bounded length.
    pub fn append_buffer(name: &[u8], data: &[u8]) -> Result<Command, CommandError> {
        if data.is_empty() {
            return Err(CommandError::Empty {
                command: "set-buffer",
                what: "data",
            });
        }
        Command::new("set-buffer")
            .flag("-a")
            .text_option("-b", name)?
            .text(data)
    }

    /// `paste-buffer -d -p -r -b NAME -t PANE`: pastes a buffer into a pane and deletes it;
    /// bracketed if the program asked for it (`-p`), line feeds kept as they are (`-r`).
    pub fn paste_buffer(name: &[u8], pane: PaneId) -> Result<Command, CommandError> {
        Ok(Command::new("paste-buffer")
            .flag("-d")
            .flag("-p")
            .flag("-r")
            .text_option("-b", name)?
            .target("-t", pane))
    }

    /// `pipe-pane -O -t PANE 'exec cat > FIFO'`: copies the pane's output (only) into a file,
    /// for the pipe transport. The shell command is a position where tmux expands formats, so
    /// the path is single-quoted for `sh` and every `#` in the whole command is doubled: tmux
    /// hands `sh` exactly the command panectl made, whatever the path holds.
    pub fn pipe_pane_to(pane: PaneId, fifo: &[u8]) -> Result<Command, CommandError> {
        if fifo.is_empty() || fifo.contains(&0) {
            return Err(CommandError::Empty {
                command: "pipe-pane",
                what: "FIFO path",
            });
        }
        let mut shell = b"exec cat > '".to_vec();
        for &b in fifo {
            if b == b'\'' {
                shell.extend_from_slice(b"'\\''");
            } else {
                shell.push(b);
            }
        }
        shell.push(b'\'');
        let mut escaped = Vec::with_capacity(shell.len());
        for b in shell {
            if b == b'#' {
                escaped.push(b'#');
            }
            escaped.push(b);
        }
        Ok(Command::new("pipe-pane")
            .flag("-O")
            .target("-t", pane)
            .push_trusted(&escaped))
    }

    /// `pipe-pane -t PANE`: stops a pane's pipe (with no command, tmux only closes it).
    pub fn pipe_pane_stop(pane: PaneId) -> Command {
        Command::new("pipe-pane").target("-t", pane)
    }

    /// `send-keys -t PANE KEY`: one key by its tmux name, such as `Enter` (names come from the
    /// program or from rule files that check them; quoted like any argument).
    pub fn send_key(pane: PaneId, key: &str) -> Command {
        Command::new("send-keys")
            .target("-t", pane)
            .push_trusted(key.as_bytes())
    }

    /// `send-keys -t PANE -l -- TEXT`: types text as keys, literally (no key names, nothing
    /// expanded).
    pub fn send_literal(pane: PaneId, text: &[u8]) -> Result<Command, CommandError> {
        if text.is_empty() {
            return Err(CommandError::Empty {
                command: "send-keys",
                what: "text",
            });
        }
        Command::new("send-keys")
            .target("-t", pane)
            .flag("-l")
            .text(text)
    }

    /// Whether `key` is a tmux key name panectl sends on a user's behalf: a letter, digit or
    /// punctuation key, or a named key (`Enter`, `Escape`, `F5`, `Up`...), with any of the
    /// `C-`, `M-`, `S-` modifiers.
    pub fn is_key_name(key: &str) -> bool {
        const NAMED: &[&str] = &[
            "Enter", "Escape", "Tab", "BTab", "BSpace", "Space", "Up", "Down", "Left", "Right",
            "Home", "End", "PageUp", "PageDown", "PPage", "NPage", "IC", "DC", "Insert", "Delete",
        ];
        let mut rest = key;
        while let Some(stripped) = ["C-", "M-", "S-"].iter().find_map(|m| rest.strip_prefix(m)) {
            rest = stripped;
        }
        let function = rest
            .strip_prefix('F')
            .and_then(|n| n.parse::<u8>().ok())
            .is_some_and(|n| (1..=20).contains(&n));
        let single = rest.len() == 1 && rest.bytes().all(|b| b.is_ascii_graphic());
        NAMED.contains(&rest) || function || single
    }

    /// `show-buffer -b NAME`: the buffer's content, vis-encoded, in the reply body.
    pub fn show_buffer(name: &[u8]) -> Result<Command, CommandError> {
        Command::new("show-buffer").text_option("-b", name)
    }

    /// `delete-buffer -b NAME`.
    pub fn delete_buffer(name: &[u8]) -> Result<Command, CommandError> {
        Command::new("delete-buffer").text_option("-b", name)
    }

    /// `display-message -p [-t TARGET] FORMAT`: expands a format of ours into the reply.
    pub fn display_print(format: Format, target: Option<Target>) -> Command {
        let command = Command::new("display-message").flag("-p");
        match target {
            Some(target) => command.target("-t", target),
            None => command,
        }
        .format(format)
    }

    /// `run-shell -b -t PANE "printf '\\a' > #{q:pane_tty}"`: rings the bell in a pane the way
    /// a program in it would, run by the tmux server on its own machine (the terminal's path
    /// is expanded there and never read here: for a server on another host, no local file is
    /// named by what that server says).
    pub fn ring_bell(pane: PaneId) -> Command {
        Command::new("run-shell")
            .flag("-b")
            .target("-t", Target::Pane(pane))
            .format(Format::new("printf '\\a' > #{q:pane_tty}"))
    }

    /// `refresh-client -A '%p:STATE'`: pauses, continues or switches a pane's output.
    pub fn pane_output(pane: PaneId, state: PaneOutput) -> Command {
        let value = format!("{pane}:{}", state.as_str());
        // `%` may not start a bare token, so the value is quoted like everything else.
        Command::new("refresh-client")
            .flag("-A")
            .push_trusted(value.as_bytes())
            .replies_with_notifications()
    }

    /// `refresh-client -f pause-after=SECONDS` (tmux 3.2+): tmux pauses a pane whose output
    /// waited that long for this client, instead of disconnecting the client as too far behind.
    pub fn pause_after(seconds: u32) -> Command {
        let value = format!("pause-after={seconds}");
        Command::new("refresh-client")
            .flag("-f")
            .push_trusted(value.as_bytes())
    }

    /// The states of `refresh-client -A`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum PaneOutput {
        /// Send output.
        On,
        /// Send no output.
        Off,
        /// Pause (tmux reports `%pause`).
        Pause,
        /// Resume a paused pane (tmux reports `%continue`).
        Continue,
    }

    impl PaneOutput {
        fn as_str(self) -> &'static str {
            match self {
                PaneOutput::On => "on",
                PaneOutput::Off => "off",
                PaneOutput::Pause => "pause",
                PaneOutput::Continue => "continue",
            }
        }
    }
}

#[cfg(test)]
mod pipe_tests {
    use super::*;

    #[test]
    fn pipe_commands_escape_formats_and_quotes_in_the_path() {
        let command = commands::pipe_pane_to(PaneId(3), b"/tmp/a'b#{pane_id}/x.fifo").unwrap();
        let text = String::from_utf8(command.as_bytes().to_vec()).unwrap();
        assert!(text.starts_with("pipe-pane -O -t '%3' "), "{text}");
        assert!(text.contains("##{pane_id}"), "{text}");
        assert!(!text.replace("##{", "").contains("#{"), "{text}");
        assert!(commands::pipe_pane_to(PaneId(3), b"").is_err());
        assert_eq!(
            commands::pipe_pane_stop(PaneId(3)).as_bytes(),
            b"pipe-pane -t '%3'"
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn key_names_are_checked() {
        use super::commands::is_key_name;
        for good in [
            "Enter", "C-c", "M-Enter", "C-M-x", "F5", "Up", "y", "1", "?",
        ] {
            assert!(is_key_name(good), "{good}");
        }
        for bad in [
            "",
            "C-",
            "Enterr",
            "F0",
            "F21",
            "ab",
            "é",
            "#{pane_id}",
            "Enter;",
            " ",
        ] {
            assert!(!is_key_name(bad), "{bad}");
        }
    }

    use super::commands::*;
    use super::*;

    fn line(command: Command) -> String {
        String::from_utf8(Line::new(command).to_bytes()).unwrap()
    }

    #[test]
    fn quoting_keeps_every_special_character_inside_quotes() {
        assert_eq!(quote(b"plain").unwrap(), b"'plain'");
        assert_eq!(quote(b"").unwrap(), b"''");
        assert_eq!(quote(b"it's").unwrap(), b"'it'\\''s'");
        assert_eq!(
            quote(b"#{pane_id} ; $HOME ~/x \\ \"q\"").unwrap(),
            b"'#{pane_id} ; $HOME ~/x \\ \"q\"'"
        );
        assert_eq!(
            quote(b"a\nb\r\x1b\x7f\xff\xc3\xa9").unwrap(),
            b"'a'\\012'b'\\015\\033\\177\\377'\xc3\xa9'"
        );
        assert_eq!(quote(b"a\0b"), Err(CommandError::Nul));
    }

    #[test]
    fn quoted_tokens_never_break_the_line() {
        let all: Vec<u8> = (1..=255).collect();
        let quoted = quote(&all).unwrap();
        assert!(!quoted.contains(&b'\n') && !quoted.contains(&b'\r'));
        assert!(quoted.iter().all(|&b| b >= 0x20 && b != 0x7f && b != 0xff));
    }

    #[test]
    fn free_text_is_refused_where_formats_expand() {
        let refused = Command::new("rename-window").text(b"#(echo pwned)");
        assert_eq!(
            refused,
            Err(CommandError::FormatExpanding {
                command: "rename-window",
                position: "positional argument"
            })
        );
        assert!(Command::new("display-message").text(b"x").is_err());
        assert!(Command::new("select-pane").text_option("-T", b"x").is_err());
        assert!(Command::new("set-option").text(b"x").is_err());
        assert!(Command::new("new-window").text_option("-n", b"x").is_err());
        // Formats written in the program are the way to put text there.
        let format = Command::new("display-message").format(Format::new("#{version}"));
        assert_eq!(format.as_bytes(), b"display-message '#{version}'");
    }

    #[test]
    fn safe_values_exclude_expansion_characters() {
        assert!(SafeValue::new("idle:3 processing:1").is_ok());
        for bad in ["#{x}", "a;b", "$HOME", "~", "%d", "'", "\n"] {
            assert!(SafeValue::new(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn rendered_commands() {
        assert_eq!(
            line(set_buffer(b"t", b"-n x").unwrap()),
            "set-buffer -b 't' -- '-n x'\n"
        );
        assert_eq!(line(show_buffer(b"t").unwrap()), "show-buffer -b 't'\n");
        assert_eq!(
            line(pane_output(PaneId(7), PaneOutput::Continue)),
            "refresh-client -A '%7:continue'\n"
        );
        assert_eq!(
            line(display_print(
                Format::new("#{version}"),
                Some(Target::Pane(PaneId(1)))
            )),
            "display-message -p -t '%1' '#{version}'\n"
        );
        assert_eq!(
            set_buffer(b"t", b""),
            Err(CommandError::Empty {
                command: "set-buffer",
                what: "data"
            })
        );
    }

    #[test]
    fn lines_join_commands_and_announce_their_replies() {
        let line = Line::new(pane_output(PaneId(1), PaneOutput::Continue)).then(
            Command::new("capture-pane")
                .flag("-p")
                .target("-t", PaneId(1)),
        );
        assert_eq!(
            line.to_bytes(),
            b"refresh-client -A '%1:continue' ; capture-pane -p -t '%1'\n"
        );
        assert_eq!(
            line.expected(10),
            vec![
                Expected {
                    tag: 10,
                    body: BodyKind::Notifications
                },
                Expected {
                    tag: 11,
                    body: BodyKind::Plain
                }
            ]
        );
    }
}
