//! tmux commands the key-binding commands (`jump`, `board`, `send --buffer/--notify`) run
//! themselves: switching a client, showing a message, reading a paste buffer. Each is a `tmux`
//! child process aimed at the daemon's server (`ServerAddress::command`), never a shell, and
//! no text from a user or an agent goes into an argument tmux expands as a format.

use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use panectl::tmux::ServerAddress;

use super::client::block_on;

/// Runs `tmux ARGS` on the server; its stdout, exactly. An error carries tmux's stderr.
pub(super) fn run(address: &ServerAddress, args: &[&str]) -> anyhow::Result<Vec<u8>> {
    let described = args.first().copied().unwrap_or_default().to_string();
    let output = block_on(async {
        let output = address
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output();
        tokio::time::timeout(Duration::from_secs(10), output)
            .await
            .map_err(|_| anyhow::anyhow!("tmux {described} did not finish within 10 seconds"))?
            .context("cannot run tmux")
    })?;
    if !output.status.success() {
        bail!(
            "tmux {described}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(output.stdout)
}

/// An attached tmux client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TmuxClient {
    /// Its name (`#{client_name}`, the tty for a terminal).
    pub name: String,
    /// The pane it shows.
    pub pane: String,
}

/// The client to act on: the one named, else the one tmux itself would pick, else the one
/// used last; `None` when none is attached. Control-mode clients (the daemon's among them) are
/// never picked.
pub(super) fn find_client(
    address: &ServerAddress,
    name: Option<&str>,
) -> anyhow::Result<Option<TmuxClient>> {
    let format = "#{client_name}\t#{pane_id}\t#{client_control_mode}\t#{client_activity}";
    let listed = run(address, &["list-clients", "-F", format])?;
    let mut clients: Vec<(TmuxClient, u64)> = String::from_utf8_lossy(&listed)
        .lines()
        .filter_map(|line| match line.split('\t').collect::<Vec<_>>()[..] {
            [name, pane, "0", activity] => Some((
                TmuxClient {
                    name: name.to_string(),
                    pane: pane.to_string(),
                },
                activity.parse().unwrap_or(0),
            )),
            _ => None,
        })
        .collect();
    if let Some(name) = name {
        return match clients.into_iter().find(|(client, _)| client.name == name) {
            Some((client, _)) => Ok(Some(client)),
            None => bail!("no tmux client is named {name:?}"),
        };
    }
    let picked = run(address, &["display-message", "-p", "#{client_name}"])?;
    let picked = String::from_utf8_lossy(&picked).trim().to_string();
    clients.sort_by_key(|(client, activity)| (client.name == picked, *activity));
    Ok(clients.pop().map(|(client, _)| client))
}

/// Switches a client to a pane: its session, window and pane.
pub(super) fn switch_to(address: &ServerAddress, client: &str, pane: &str) -> anyhow::Result<()> {
    run(address, &["switch-client", "-c", client, "-t", pane])?;
    Ok(())
}

/// Switches the client named (default: the one [`find_client`] picks) to a pane.
pub(super) fn switch_client(
    address: &ServerAddress,
    client: Option<&str>,
    pane: &str,
) -> anyhow::Result<()> {
    match find_client(address, client)? {
        Some(found) => switch_to(address, &found.name, pane),
        None => bail!("no tmux client is attached to switch to {pane}"),
    }
}

/// Shows `text` on a client's status line, as plain text.
pub(super) fn display(address: &ServerAddress, client: &str, text: &str) -> anyhow::Result<()> {
    display_for(address, client, text, None)
}

/// Shows `text` on a client's status line, as plain text, for `shown_for` (default: the
/// server's `display-time`), for a message too long to read in the default 750 ms.
pub(super) fn display_for(
    address: &ServerAddress,
    client: &str,
    text: &str,
    shown_for: Option<Duration>,
) -> anyhow::Result<()> {
    let shown = format_literal(text);
    let milliseconds = shown_for.map(|d| d.as_millis().to_string());
    let mut args = vec!["display-message", "-c", client];
    if let Some(milliseconds) = &milliseconds {
        args.extend(["-d", milliseconds]);
    }
    // `--` so that a message starting with `-` is not read as a flag.
    args.extend(["--", &shown]);
    if run(address, &args).is_err() {
        // tmux 3.2 parses display-message's -c as a flag without a value (fixed in 3.3):
        // there the message goes to the client tmux picks (the one used last).
        run(address, &["display-message", "--", &shown])?;
    }
    Ok(())
}

/// Shows `text` on the status line of the client named (default: the one [`find_client`]
/// picks); on stderr when no client is attached.
pub(super) fn notify(
    address: &ServerAddress,
    client: Option<&str>,
    text: &str,
) -> anyhow::Result<()> {
    match find_client(address, client)? {
        Some(found) => display(address, &found.name, text),
        None => {
            eprintln!("{text}");
            Ok(())
        }
    }
}

/// Longest message shown on a status line.
const MAX_MESSAGE: usize = 300;

/// Text that `display-message` shows as it is: its argument is a format (`#{...}`, `#(...)`,
/// `#[...]` and `##` mean something, in the expansion and again when the status line draws
/// it) and then goes through strftime (`%`). tmux 3.3 has no flag to turn that off, so `#`
/// becomes the look-alike `♯`, `%` is doubled, and control characters become spaces.
pub(super) fn format_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().take(MAX_MESSAGE) {
        match c {
            '#' => out.push('♯'),
            '%' => out.push_str("%%"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The bytes of paste buffer `name`, exactly. A missing or empty buffer is an error.
pub(super) fn read_buffer(address: &ServerAddress, name: &str) -> anyhow::Result<Vec<u8>> {
    let bytes = run(address, &["show-buffer", "-b", name]).map_err(|error| {
        if error.to_string().contains("no buffer") {
            anyhow::anyhow!("tmux paste buffer {name:?} is missing")
        } else {
            error.context(format!("cannot read tmux paste buffer {name:?}"))
        }
    })?;
    if bytes.is_empty() {
        bail!("tmux paste buffer {name:?} is empty");
    }
    Ok(bytes)
}

/// Deletes paste buffer `name`.
pub(super) fn delete_buffer(address: &ServerAddress, name: &str) -> anyhow::Result<()> {
    run(address, &["delete-buffer", "-b", name])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_time_escapes_cannot_reach_tmux() {
        assert_eq!(
            format_literal("#{pane_id} #(id) #[fg=red] ## 100% %Y"),
            "♯{pane_id} ♯(id) ♯[fg=red] ♯♯ 100%% %%Y"
        );
        assert_eq!(format_literal("a\nb\tc\x1b[0m"), "a b c [0m");
        assert_eq!(format_literal(&"x".repeat(1000)).len(), MAX_MESSAGE);
    }
}
