//! What the commands share: the client of the server's daemon, and how answers are printed
//! (untrusted text made printable, JSON pretty or as lines).

use std::io::Write;

use panectl::api::client::ApiClient;
use panectl::daemon::discovery;
use serde::Serialize;
use serde_json::Value;

use super::ServerArgs;

/// A client of the server's daemon: at the caller's own runtime path, else where the server's
/// `@panectl_api` says (a daemon started from another environment).
pub(super) fn client(server: &ServerArgs) -> anyhow::Result<ApiClient> {
    let address = server.address()?;
    let found = discovery::find_api(&address);
    Ok(ApiClient::new(
        found.socket,
        address.to_string(),
        server.start_advice(&address),
    ))
}

/// Runs a future to its end on a runtime of its own (the commands are synchronous).
pub(super) fn block_on<T>(
    future: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(future)
}

/// A field of a JSON object as text: a string as it is, null or absent as empty.
pub(super) fn text(value: &Value, key: &str) -> String {
    match value.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// A field of untrusted text (a pane title, a sender, a reason) for a terminal: control
/// characters (C0, DEL, C1: escape sequences that would clear the screen or set the title) are
/// shown escaped (`\x1b`), everything else as it is.
pub(super) fn printable(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            shown.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else {
            shown.push(c);
        }
    }
    shown
}

/// Text of several lines from elsewhere (a pane's text, an agent's answer, an error that
/// quotes them) for a terminal: the newlines stay, as its structure; every other control
/// character is escaped as [`printable`] does.
pub(super) fn printable_lines(text: &str) -> String {
    text.split('\n')
        .map(printable)
        .collect::<Vec<_>>()
        .join("\n")
}

/// An error as panectl reports it (`{error:#}`, its causes after colons), [`printable_lines`].
pub fn printable_error(error: &anyhow::Error) -> String {
    printable_lines(&format!("{error:#}"))
}

/// [`text`] made [`printable`], for human output.
pub(super) fn shown(value: &Value, key: &str) -> String {
    printable(&text(value, key))
}

/// Any field made [`printable`], for human output.
pub(super) fn show(field: impl std::fmt::Display) -> String {
    printable(&field.to_string())
}

/// An optional field made [`printable`]; empty when absent.
pub(super) fn show_some(field: Option<impl std::fmt::Display>) -> String {
    field.map(show).unwrap_or_default()
}

/// Prints an answer of the daemon as JSON, pretty, with its keys in the order they have always
/// had (sorted: it goes through [`Value`], whose objects are sorted maps).
pub(super) fn print_pretty(value: &impl Serialize) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &serde_json::to_value(value)?)?;
    writeln!(out)?;
    Ok(())
}

/// An answer of the daemon as one line of JSON, its keys sorted (see [`print_pretty`]).
pub(super) fn json_line(value: &impl Serialize) -> anyhow::Result<String> {
    Ok(serde_json::to_value(value)?.to_string())
}

/// An empty field as `none`.
pub(super) fn or_none(value: String) -> String {
    if value.is_empty() {
        "none".into()
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::{printable, printable_error, printable_lines};

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(
            printable("a\u{1b}]0;pwned\u{7}\u{1b}[2J\tb\u{9b}c\u{7f}"),
            "a\\x1b]0;pwned\\x07\\x1b[2J\\x09b\\x9bc\\x7f"
        );
        assert_eq!(printable("✳ Claude Code 漢字"), "✳ Claude Code 漢字");
    }

    #[test]
    fn lines_keep_their_newlines_and_nothing_else_of_control() {
        assert_eq!(
            printable_lines("answer:\n\u{1b}]52;c;cHduZWQ=\u{7}\n\u{1b}[2J\u{9b}31m\r\n"),
            "answer:\n\\x1b]52;c;cHduZWQ=\\x07\n\\x1b[2J\\x9b31m\\x0d\n"
        );
        let error = anyhow::anyhow!("tmux said \u{1b}]0;title\u{7}").context("cannot run");
        assert_eq!(
            printable_error(&error),
            "cannot run: tmux said \\x1b]0;title\\x07"
        );
    }
}
