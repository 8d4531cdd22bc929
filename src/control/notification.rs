//! One-line notifications: the `%` lines tmux sends outside reply blocks.
//!
//! [`parse_notification`] turns one complete line (without its line ending) into a typed
//! [`Notification`]. Every notification tmux 3.2 through 3.7 (and master) can send has a variant;
//! a `%name` this parser does not know becomes [`Notification::Unknown`], so a newer tmux never
//! breaks the stream. A known name with arguments that do not fit its grammar is an error, which
//! the decoder reports with the raw line.

use nom::bytes::complete::{tag, take_till};
use nom::character::complete::{char, u32 as dec_u32, u64 as dec_u64};
use nom::combinator::{all_consuming, opt, rest};
use nom::sequence::preceded;
use nom::{IResult, Parser};

use super::escape::{BadEscape, unescape_output, unescape_output_into, unvis};
use super::layout::{Layout, LayoutError};
use crate::ids::{PaneId, SessionId, WindowId};
use crate::raw::RawBytes;

/// A notification line from tmux, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notification {
    /// `%output %p data`: bytes a pane's program wrote, unescaped.
    Output {
        /// The pane that produced the bytes.
        pane: PaneId,
        /// The bytes, exactly as the program wrote them (not UTF-8 in general).
        data: RawBytes,
    },
    /// `%extended-output %p age ... : data`: output while `pause-after` is set.
    ExtendedOutput {
        /// The pane that produced the bytes.
        pane: PaneId,
        /// Milliseconds the data waited inside tmux before being sent.
        age_ms: u64,
        /// The bytes, unescaped.
        data: RawBytes,
    },
    /// `%pause %p`: tmux stopped sending a pane's output (flow control); queued data was dropped.
    Pause {
        /// The paused pane.
        pane: PaneId,
    },
    /// `%continue %p`: output of a paused pane resumes from now; what happened meanwhile is lost.
    Continue {
        /// The resumed pane.
        pane: PaneId,
    },
    /// `%window-add @w`: a window was linked to this client's session.
    WindowAdd {
        /// The new window.
        window: WindowId,
    },
    /// `%window-close @w`: a window of this client's session closed.
    WindowClose {
        /// The closed window.
        window: WindowId,
    },
    /// `%window-renamed @w name`: a window of this client's session was renamed.
    WindowRenamed {
        /// The renamed window.
        window: WindowId,
        /// The new name, vis-decoded.
        name: RawBytes,
    },
    /// `%window-pane-changed @w %p`: the active pane of a window changed.
    WindowPaneChanged {
        /// The window.
        window: WindowId,
        /// Its new active pane.
        pane: PaneId,
    },
    /// `%unlinked-window-add @w`: a window was created in another session.
    UnlinkedWindowAdd {
        /// The new window.
        window: WindowId,
    },
    /// `%unlinked-window-close @w`: a window not linked to this session closed. tmux up to 3.7
    /// also reports windows of this client's own session this way.
    UnlinkedWindowClose {
        /// The closed window.
        window: WindowId,
    },
    /// `%unlinked-window-renamed @w name`: a window of another session was renamed.
    UnlinkedWindowRenamed {
        /// The renamed window.
        window: WindowId,
        /// The new name, vis-decoded.
        name: RawBytes,
    },
    /// `%session-changed $s name`: this control client is now attached to `$s`.
    SessionChanged {
        /// The session.
        session: SessionId,
        /// Its name, vis-decoded.
        name: RawBytes,
    },
    /// `%session-renamed $s name`: a session was renamed.
    SessionRenamed {
        /// The session.
        session: SessionId,
        /// Its new name, vis-decoded.
        name: RawBytes,
    },
    /// `%sessions-changed`: a session was created or destroyed somewhere on the server.
    SessionsChanged,
    /// `%session-window-changed $s @w`: the current window of a session changed.
    SessionWindowChanged {
        /// The session.
        session: SessionId,
        /// Its new current window.
        window: WindowId,
    },
    /// `%client-session-changed client $s name`: another client switched sessions.
    ClientSessionChanged {
        /// The client's name (a tty path or `client-<pid>`).
        client: RawBytes,
        /// The session it is now on.
        session: SessionId,
        /// The session's name, vis-decoded.
        name: RawBytes,
    },
    /// `%client-detached client`: a client detached.
    ClientDetached {
        /// The client's name.
        client: RawBytes,
    },
    /// `%layout-change @w layout visible flags`: a window's layout (pane sizes) changed.
    LayoutChange {
        /// The window.
        window: WindowId,
        /// The full layout.
        layout: Layout,
        /// The visible layout (differs from `layout` while a pane is zoomed). Absent before 2.2.
        visible_layout: Option<Layout>,
        /// The window flags (`*-#!~MZ`), possibly empty. Absent before 2.2.
        flags: Option<RawBytes>,
    },
    /// `%pane-mode-changed %p`: a pane entered or left copy, view or tree mode.
    PaneModeChanged {
        /// The pane.
        pane: PaneId,
    },
    /// `%paste-buffer-changed name`: a paste buffer was created or changed (3.4+).
    PasteBufferChanged {
        /// The buffer name, raw. It is not escaped by tmux; never echo it into a command unquoted.
        name: RawBytes,
    },
    /// `%paste-buffer-deleted name`: a paste buffer was deleted (3.4+).
    PasteBufferDeleted {
        /// The buffer name, raw.
        name: RawBytes,
    },
    /// `%subscription-changed name $s @w idx %p ... : value`: a `refresh-client -B` format
    /// subscription has a new value.
    SubscriptionChanged {
        /// The subscription's name.
        name: RawBytes,
        /// The session the value belongs to (`None` for `-`).
        session: Option<SessionId>,
        /// The window, for window and pane subscriptions.
        window: Option<WindowId>,
        /// The window index, for window and pane subscriptions.
        window_index: Option<u32>,
        /// The pane, for pane subscriptions.
        pane: Option<PaneId>,
        /// The expanded format, raw (tmux does not escape it).
        value: RawBytes,
    },
    /// `%config-error file:line: message`: an error in the configuration file (3.4+).
    ConfigError {
        /// `file:line: message`, raw.
        message: RawBytes,
    },
    /// `%message text`: a `display-message` aimed at this control client (3.4+).
    Message {
        /// The text as tmux wrote it: vis-encoded, but backslashes are not doubled
        /// (`VIS_NOSLASH`), so decoding it is ambiguous and left to the reader.
        text: RawBytes,
    },
    /// `%exit [reason]`: the control client is ending. This is always the last line.
    Exit {
        /// Why, when tmux says (`too far behind`, `server exited unexpectedly`, ...).
        reason: Option<RawBytes>,
    },
    /// A `%name` line this parser does not know, kept for forward compatibility.
    Unknown {
        /// The name after `%`.
        name: RawBytes,
        /// Everything after the name and its separating space.
        args: RawBytes,
    },
}

impl Notification {
    /// `%output` data, or `%extended-output` data when it has an age.
    pub fn pane_output(pane: PaneId, age_ms: Option<u64>, data: RawBytes) -> Notification {
        match age_ms {
            Some(age_ms) => Notification::ExtendedOutput { pane, age_ms, data },
            None => Notification::Output { pane, data },
        }
    }

    /// The tmux name of the notification, as counted in `panectl replay --json`.
    pub fn name(&self) -> &str {
        match self {
            Notification::Output { .. } => "output",
            Notification::ExtendedOutput { .. } => "extended-output",
            Notification::Pause { .. } => "pause",
            Notification::Continue { .. } => "continue",
            Notification::WindowAdd { .. } => "window-add",
            Notification::WindowClose { .. } => "window-close",
            Notification::WindowRenamed { .. } => "window-renamed",
            Notification::WindowPaneChanged { .. } => "window-pane-changed",
            Notification::UnlinkedWindowAdd { .. } => "unlinked-window-add",
            Notification::UnlinkedWindowClose { .. } => "unlinked-window-close",
            Notification::UnlinkedWindowRenamed { .. } => "unlinked-window-renamed",
            Notification::SessionChanged { .. } => "session-changed",
            Notification::SessionRenamed { .. } => "session-renamed",
            Notification::SessionsChanged => "sessions-changed",
            Notification::SessionWindowChanged { .. } => "session-window-changed",
            Notification::ClientSessionChanged { .. } => "client-session-changed",
            Notification::ClientDetached { .. } => "client-detached",
            Notification::LayoutChange { .. } => "layout-change",
            Notification::PaneModeChanged { .. } => "pane-mode-changed",
            Notification::PasteBufferChanged { .. } => "paste-buffer-changed",
            Notification::PasteBufferDeleted { .. } => "paste-buffer-deleted",
            Notification::SubscriptionChanged { .. } => "subscription-changed",
            Notification::ConfigError { .. } => "config-error",
            Notification::Message { .. } => "message",
            Notification::Exit { .. } => "exit",
            Notification::Unknown { .. } => "unknown",
        }
    }
}

/// Why a notification line could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The arguments of a known notification do not fit its grammar.
    #[error("malformed %{0} line")]
    Malformed(&'static str),
    /// `%output` data with a broken octal escape.
    #[error("malformed %{notification} line: {source}")]
    BadEscape {
        /// Which notification carried the data.
        notification: &'static str,
        /// The escape problem.
        source: BadEscape,
    },
    /// A `%layout-change` with a broken or corrupted layout.
    #[error("malformed %layout-change line: {0}")]
    Layout(#[from] LayoutError),
    /// A line that starts with `%` but has no name.
    #[error("a % line without a notification name")]
    NoName,
}

type Res<'a, T> = IResult<&'a [u8], T>;

fn pane(input: &[u8]) -> Res<'_, PaneId> {
    preceded(char('%'), dec_u32).map(PaneId).parse(input)
}

fn window(input: &[u8]) -> Res<'_, WindowId> {
    preceded(char('@'), dec_u32).map(WindowId).parse(input)
}

fn session(input: &[u8]) -> Res<'_, SessionId> {
    preceded(char('$'), dec_u32).map(SessionId).parse(input)
}

fn word(input: &[u8]) -> Res<'_, &[u8]> {
    take_till(|b| b == b' ').parse(input)
}

/// Runs `parser` over the whole argument text; any failure becomes `Malformed(name)`.
fn args<'a, O>(
    name: &'static str,
    input: &'a [u8],
    parser: impl Parser<&'a [u8], Output = O, Error = nom::error::Error<&'a [u8]>>,
) -> Result<O, LineError> {
    all_consuming(parser)
        .parse(input)
        .map(|(_, out)| out)
        .map_err(|_| LineError::Malformed(name))
}

/// Decodes one `%` line (without its line ending) into a notification.
pub fn parse_notification(line: &[u8]) -> Result<Notification, LineError> {
    if let Some(output) = split_output(line) {
        return output.and_then(EscapedOutput::into_notification);
    }
    let body = line.strip_prefix(b"%").ok_or(LineError::NoName)?;
    let (name, tail) = match memchr::memchr(b' ', body) {
        Some(space) => (&body[..space], Some(&body[space + 1..])),
        None => (body, None),
    };
    if name.is_empty() {
        return Err(LineError::NoName);
    }
    // Notifications with no arguments take none; all others need the separating space.
    let argument = |label: &'static str| tail.ok_or(LineError::Malformed(label));
    let notification = match name {
        b"output" => {
            let (pane, data) = args(
                "output",
                argument("output")?,
                (pane, char(' '), rest).map(|(p, _, d)| (p, d)),
            )?;
            Notification::Output {
                pane,
                data: output_data("output", data)?,
            }
        }
        b"extended-output" => {
            split_extended_output(argument("extended-output")?)?.into_notification()?
        }
        b"pause" => Notification::Pause {
            pane: args("pause", argument("pause")?, pane)?,
        },
        b"continue" => Notification::Continue {
            pane: args("continue", argument("continue")?, pane)?,
        },
        b"window-add" => Notification::WindowAdd {
            window: args("window-add", argument("window-add")?, window)?,
        },
        b"window-close" => Notification::WindowClose {
            window: args("window-close", argument("window-close")?, window)?,
        },
        b"unlinked-window-add" => Notification::UnlinkedWindowAdd {
            window: args(
                "unlinked-window-add",
                argument("unlinked-window-add")?,
                window,
            )?,
        },
        b"unlinked-window-close" => Notification::UnlinkedWindowClose {
            window: args(
                "unlinked-window-close",
                argument("unlinked-window-close")?,
                window,
            )?,
        },
        b"window-renamed" => {
            let (window, name) =
                id_and_name("window-renamed", argument("window-renamed")?, window)?;
            Notification::WindowRenamed { window, name }
        }
        b"unlinked-window-renamed" => {
            let (window, name) = id_and_name(
                "unlinked-window-renamed",
                argument("unlinked-window-renamed")?,
                window,
            )?;
            Notification::UnlinkedWindowRenamed { window, name }
        }
        b"window-pane-changed" => {
            let (window, _, pane) = args(
                "window-pane-changed",
                argument("window-pane-changed")?,
                (window, char(' '), pane),
            )?;
            Notification::WindowPaneChanged { window, pane }
        }
        b"session-changed" => {
            let (session, name) =
                id_and_name("session-changed", argument("session-changed")?, session)?;
            Notification::SessionChanged { session, name }
        }
        b"session-renamed" => {
            let (session, name) =
                id_and_name("session-renamed", argument("session-renamed")?, session)?;
            Notification::SessionRenamed { session, name }
        }
        b"sessions-changed" => match tail {
            None => Notification::SessionsChanged,
            Some(_) => return Err(LineError::Malformed("sessions-changed")),
        },
        b"session-window-changed" => {
            let (session, _, window) = args(
                "session-window-changed",
                argument("session-window-changed")?,
                (session, char(' '), window),
            )?;
            Notification::SessionWindowChanged { session, window }
        }
        b"client-session-changed" => {
            let (client, _, session, name) = args(
                "client-session-changed",
                argument("client-session-changed")?,
                (word, char(' '), session, opt(preceded(char(' '), rest))),
            )?;
            if client.is_empty() {
                return Err(LineError::Malformed("client-session-changed"));
            }
            Notification::ClientSessionChanged {
                client: client.into(),
                session,
                name: RawBytes(unvis(name.unwrap_or_default())),
            }
        }
        b"client-detached" => Notification::ClientDetached {
            client: non_empty("client-detached", tail)?,
        },
        b"layout-change" => parse_layout_change(argument("layout-change")?)?,
        b"pane-mode-changed" => Notification::PaneModeChanged {
            pane: args("pane-mode-changed", argument("pane-mode-changed")?, pane)?,
        },
        b"paste-buffer-changed" => Notification::PasteBufferChanged {
            name: non_empty("paste-buffer-changed", tail)?,
        },
        b"paste-buffer-deleted" => Notification::PasteBufferDeleted {
            name: non_empty("paste-buffer-deleted", tail)?,
        },
        b"subscription-changed" => parse_subscription(argument("subscription-changed")?)?,
        b"config-error" => Notification::ConfigError {
            message: non_empty("config-error", tail)?,
        },
        b"message" => Notification::Message {
            text: tail.unwrap_or_default().into(),
        },
        b"exit" => Notification::Exit {
            reason: tail.filter(|r| !r.is_empty()).map(RawBytes::from),
        },
        _ => Notification::Unknown {
            name: name.into(),
            args: tail.unwrap_or_default().into(),
        },
    };
    Ok(notification)
}

/// A `%output` or `%extended-output` line split into its fields, its data still escaped: what
/// the decoder needs to unescape the data into a buffer it reuses (see
/// [`crate::control::decoder::Sink`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EscapedOutput<'a> {
    /// The pane that produced the bytes.
    pub pane: PaneId,
    /// For `%extended-output`, how long the data waited in tmux, in milliseconds.
    pub age_ms: Option<u64>,
    /// The data as tmux escaped it.
    pub escaped: &'a [u8],
}

impl EscapedOutput<'_> {
    /// The notification's name, for errors.
    pub fn name(&self) -> &'static str {
        match self.age_ms {
            Some(_) => "extended-output",
            None => "output",
        }
    }

    /// Unescapes the data, appending it to `out` (left as it was on error).
    pub fn unescape_into(&self, out: &mut Vec<u8>) -> Result<(), LineError> {
        unescape_output_into(self.escaped, out).map_err(|source| LineError::BadEscape {
            notification: self.name(),
            source,
        })
    }

    fn into_notification(self) -> Result<Notification, LineError> {
        let mut data = Vec::new();
        self.unescape_into(&mut data)?;
        Ok(Notification::pane_output(
            self.pane,
            self.age_ms,
            RawBytes(data),
        ))
    }
}

/// Splits the lines that carry pane output, which are nearly every line of a busy stream,
/// without the general machinery: `%output %N data` and `%extended-output %N age ... : data`.
/// `None` for any other line, and for an odd `%output` line, left to the full parser.
pub fn split_output(line: &[u8]) -> Option<Result<EscapedOutput<'_>, LineError>> {
    if let Some(rest) = line.strip_prefix(b"%output %") {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let escaped = rest.get(digits..)?.strip_prefix(b" ")?;
        let pane = PaneId(crate::ids::parse_u32(&rest[..digits])?);
        return Some(Ok(EscapedOutput {
            pane,
            age_ms: None,
            escaped,
        }));
    }
    let rest = line.strip_prefix(b"%extended-output ")?;
    Some(split_extended_output(rest))
}

fn output_data(notification: &'static str, escaped: &[u8]) -> Result<RawBytes, LineError> {
    unescape_output(escaped)
        .map(RawBytes)
        .map_err(|source| LineError::BadEscape {
            notification,
            source,
        })
}

fn non_empty(label: &'static str, rest: Option<&[u8]>) -> Result<RawBytes, LineError> {
    match rest {
        Some(text) if !text.is_empty() => Ok(text.into()),
        _ => Err(LineError::Malformed(label)),
    }
}

/// `ID name`: an id, a space, then a vis-encoded name running to the end of the line. The name
/// may be empty and may contain spaces.
fn id_and_name<'a, T>(
    label: &'static str,
    input: &'a [u8],
    id: fn(&'a [u8]) -> Res<'a, T>,
) -> Result<(T, RawBytes), LineError> {
    let (id, name) = args(label, input, (id, opt(preceded(char(' '), rest))))?;
    Ok((id, RawBytes(unvis(name.unwrap_or_default()))))
}

/// `%p age [reserved ...] : data`.
fn split_extended_output(input: &[u8]) -> Result<EscapedOutput<'_>, LineError> {
    const LABEL: &str = "extended-output";
    let (after, (pane, _, age_ms)) = (pane, char(' '), dec_u64)
        .parse(input)
        .map_err(|_| LineError::Malformed(LABEL))?;
    // Reserved fields run up to a lone ":" field; the data follows its separating space.
    let mut rest = after;
    loop {
        rest = rest.strip_prefix(b" ").ok_or(LineError::Malformed(LABEL))?;
        let field_end = memchr::memchr(b' ', rest).unwrap_or(rest.len());
        if &rest[..field_end] == b":" {
            return Ok(EscapedOutput {
                pane,
                age_ms: Some(age_ms),
                escaped: rest.get(field_end + 1..).unwrap_or_default(),
            });
        }
        rest = &rest[field_end..];
    }
}

/// `@w layout [visible flags]`; `flags` may be empty, which leaves a trailing space.
fn parse_layout_change(input: &[u8]) -> Result<Notification, LineError> {
    const LABEL: &str = "layout-change";
    let (window, _, layout, extra) = args(
        LABEL,
        input,
        (
            window,
            char(' '),
            word,
            opt((preceded(char(' '), word), opt(preceded(char(' '), rest)))),
        ),
    )?;
    let layout = Layout::parse(layout)?;
    let (visible_layout, flags) = match extra {
        Some((visible, flags)) => (
            Some(Layout::parse(visible)?),
            Some(RawBytes::from(flags.unwrap_or_default())),
        ),
        None => (None, None),
    };
    Ok(Notification::LayoutChange {
        window,
        layout,
        visible_layout,
        flags,
    })
}

/// `name $s @w|- idx|- %p|- [reserved ...] : value`.
fn parse_subscription(input: &[u8]) -> Result<Notification, LineError> {
    const LABEL: &str = "subscription-changed";
    fn or_dash<'a, T>(
        parser: impl Parser<&'a [u8], Output = T, Error = nom::error::Error<&'a [u8]>>,
    ) -> impl Parser<&'a [u8], Output = Option<T>, Error = nom::error::Error<&'a [u8]>> {
        nom::branch::alt((tag(&b"-"[..]).map(|_| None), parser.map(Some)))
    }
    let (after, (name, _, session, _, window, _, window_index, _, pane)) = (
        word,
        char(' '),
        or_dash(session),
        char(' '),
        or_dash(window),
        char(' '),
        or_dash(dec_u32),
        char(' '),
        or_dash(pane),
    )
        .parse(input)
        .map_err(|_| LineError::Malformed(LABEL))?;
    if name.is_empty() {
        return Err(LineError::Malformed(LABEL));
    }
    // The value is raw and may contain " : " itself, so split at the first lone ":" field.
    let mut rest = after;
    loop {
        rest = rest.strip_prefix(b" ").ok_or(LineError::Malformed(LABEL))?;
        let field_end = memchr::memchr(b' ', rest).unwrap_or(rest.len());
        if &rest[..field_end] == b":" {
            let value = rest.get(field_end + 1..).unwrap_or_default();
            return Ok(Notification::SubscriptionChanged {
                name: name.into(),
                session,
                window,
                window_index,
                pane,
                value: value.into(),
            });
        }
        rest = &rest[field_end..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[u8]) -> Notification {
        parse_notification(line).unwrap_or_else(|e| panic!("{}: {e}", crate::raw::escape(line)))
    }

    #[test]
    fn output_is_unescaped_to_bytes() {
        assert_eq!(
            parse(b"%output %1 \\033[1m\\033[7m%\\033[27m\\033[1m\\033[0m    \\015 \\015"),
            Notification::Output {
                pane: PaneId(1),
                data: RawBytes(b"\x1b[1m\x1b[7m%\x1b[27m\x1b[1m\x1b[0m    \r \r".to_vec()),
            }
        );
        // An empty payload is legal.
        assert_eq!(
            parse(b"%output %3 "),
            Notification::Output {
                pane: PaneId(3),
                data: RawBytes::default()
            }
        );
    }

    #[test]
    fn extended_output_skips_reserved_fields() {
        assert_eq!(
            parse(b"%extended-output %0 0 : echo hi\\015\\012"),
            Notification::ExtendedOutput {
                pane: PaneId(0),
                age_ms: 0,
                data: RawBytes(b"echo hi\r\n".to_vec()),
            }
        );
        assert_eq!(
            parse(b"%extended-output %2 17 future fields : : x"),
            Notification::ExtendedOutput {
                pane: PaneId(2),
                age_ms: 17,
                data: RawBytes(b": x".to_vec()),
            }
        );
        // wezterm's test line lacks "age :" and must be rejected, not misread.
        assert!(parse_notification(b"%extended-output %1 \\033[1m").is_err());
    }

    #[test]
    fn names_are_vis_decoded_and_may_hold_spaces() {
        assert_eq!(
            parse(br#"%window-renamed @0 \$HOME \${x} $1 a\\b "q" "#),
            Notification::WindowRenamed {
                window: WindowId(0),
                name: RawBytes::from(r#"$HOME ${x} $1 a\b "q" "#),
            }
        );
        assert_eq!(
            parse(b"%session-renamed $0 a_b_c d"),
            Notification::SessionRenamed {
                session: SessionId(0),
                name: "a_b_c d".into()
            }
        );
        assert_eq!(
            parse(b"%unlinked-window-renamed @41 test"),
            Notification::UnlinkedWindowRenamed {
                window: WindowId(41),
                name: "test".into()
            }
        );
        assert_eq!(
            parse(b"%client-session-changed /dev/pts/5 $1 home"),
            Notification::ClientSessionChanged {
                client: "/dev/pts/5".into(),
                session: SessionId(1),
                name: "home".into()
            }
        );
    }

    #[test]
    fn layout_change_with_and_without_flags() {
        let Notification::LayoutChange {
            window,
            layout,
            visible_layout,
            flags,
        } = parse(
            b"%layout-change @0 8205,80x24,0,0{40x24,0,0,0,39x24,41,0,1} b25d,80x24,0,0,0 *Z",
        )
        else {
            panic!("not a layout change");
        };
        assert_eq!(window, WindowId(0));
        assert_eq!(layout.panes().len(), 2);
        assert_eq!(visible_layout.unwrap().panes().len(), 1);
        assert_eq!(flags.unwrap(), "*Z");

        // Empty flags leave a trailing space (observed).
        let Notification::LayoutChange { flags, .. } =
            parse(b"%layout-change @1 cafd,120x29,0,0,0 cafd,120x29,0,0,0 ")
        else {
            panic!("not a layout change");
        };
        assert_eq!(flags.unwrap(), "");

        // tmux before 2.2 sent the layout alone.
        let Notification::LayoutChange {
            flags,
            visible_layout,
            ..
        } = parse(b"%layout-change @1 b25d,80x24,0,0,0")
        else {
            panic!("not a layout change");
        };
        assert_eq!((flags, visible_layout), (None, None));

        assert!(matches!(
            parse_notification(b"%layout-change @1 0000,80x24,0,0,0 0000,80x24,0,0,0 *"),
            Err(LineError::Layout(LayoutError::Checksum { .. }))
        ));
    }

    #[test]
    fn subscription_values_are_raw_and_may_contain_separators() {
        assert_eq!(
            parse(b"%subscription-changed sub2 $0 @0 0 %0 : sh"),
            Notification::SubscriptionChanged {
                name: "sub2".into(),
                session: Some(SessionId(0)),
                window: Some(WindowId(0)),
                window_index: Some(0),
                pane: Some(PaneId(0)),
                value: "sh".into(),
            }
        );
        assert_eq!(
            parse(b"%subscription-changed sub1 $0 - - - : main:0 : x"),
            Notification::SubscriptionChanged {
                name: "sub1".into(),
                session: Some(SessionId(0)),
                window: None,
                window_index: None,
                pane: None,
                value: "main:0 : x".into(),
            }
        );
        assert!(
            parse_notification(b"%subscription-changed something we don't handle so far").is_err()
        );
    }

    #[test]
    fn simple_notifications() {
        let cases: Vec<(&[u8], Notification)> = vec![
            (b"%sessions-changed", Notification::SessionsChanged),
            (b"%pause %3", Notification::Pause { pane: PaneId(3) }),
            (b"%continue %2", Notification::Continue { pane: PaneId(2) }),
            (
                b"%window-add @1",
                Notification::WindowAdd {
                    window: WindowId(1),
                },
            ),
            (
                b"%window-close @38",
                Notification::WindowClose {
                    window: WindowId(38),
                },
            ),
            (
                b"%unlinked-window-add @40",
                Notification::UnlinkedWindowAdd {
                    window: WindowId(40),
                },
            ),
            (
                b"%unlinked-window-close @39",
                Notification::UnlinkedWindowClose {
                    window: WindowId(39),
                },
            ),
            (
                b"%window-pane-changed @1 %4",
                Notification::WindowPaneChanged {
                    window: WindowId(1),
                    pane: PaneId(4),
                },
            ),
            (
                b"%session-window-changed $1 @2",
                Notification::SessionWindowChanged {
                    session: SessionId(1),
                    window: WindowId(2),
                },
            ),
            (
                b"%pane-mode-changed %0",
                Notification::PaneModeChanged { pane: PaneId(0) },
            ),
            (
                b"%client-detached /dev/pts/10",
                Notification::ClientDetached {
                    client: "/dev/pts/10".into(),
                },
            ),
            (
                b"%paste-buffer-changed just something",
                Notification::PasteBufferChanged {
                    name: "just something".into(),
                },
            ),
            (
                b"%paste-buffer-deleted buffer0",
                Notification::PasteBufferDeleted {
                    name: "buffer0".into(),
                },
            ),
            (
                b"%config-error /home/joe/.tmux.conf:1: unknown command: dadsafafasdf",
                Notification::ConfigError {
                    message: "/home/joe/.tmux.conf:1: unknown command: dadsafafasdf".into(),
                },
            ),
            (
                b"%message message text",
                Notification::Message {
                    text: "message text".into(),
                },
            ),
            (b"%exit", Notification::Exit { reason: None }),
            (
                b"%exit too far behind",
                Notification::Exit {
                    reason: Some("too far behind".into()),
                },
            ),
            (
                b"%session-changed $1 1",
                Notification::SessionChanged {
                    session: SessionId(1),
                    name: "1".into(),
                },
            ),
            (
                b"%noop something",
                Notification::Unknown {
                    name: "noop".into(),
                    args: "something".into(),
                },
            ),
        ];
        for (line, expected) in cases {
            assert_eq!(parse(line), expected, "{}", crate::raw::escape(line));
        }
    }

    #[test]
    fn malformed_known_lines_are_errors() {
        for line in [
            &b"%output"[..],
            b"%output %x data",
            b"%output %1",
            b"%output %1 bad\\9",
            b"%pause 3",
            b"%pause %3 extra",
            b"%window-add",
            b"%window-add @",
            b"%window-pane-changed @1",
            b"%sessions-changed now",
            b"%session-changed 1 name",
            b"%client-detached",
            b"%config-error",
            b"%",
            b"% x",
        ] {
            assert!(
                parse_notification(line).is_err(),
                "{} accepted",
                crate::raw::escape(line)
            );
        }
    }
}
