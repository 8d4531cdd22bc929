//! The queries panectl sends to tmux and the parsing of their replies. Pure: formats and
//! parsers here, the sending in [`super::connection`].
//!
//! Fields are separated by TAB, which tmux cannot put in names or titles (names are
//! vis-encoded, titles must be valid UTF-8 without C0), and free-form fields come last.

use crate::control::Reply;
use crate::control::command::{Command, Format, Line, SafeValue, Target, commands};
use crate::control::escape::unvis;
use crate::ids::{PaneId, SessionId, WindowId};
use crate::raw::RawBytes;
use crate::screen::Snapshot;

/// A reply that does not have the shape its query asks for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unexpected reply to {query}: {detail}")]
pub struct QueryError {
    /// Which query.
    pub query: &'static str,
    /// What was wrong.
    pub detail: String,
}

fn error(query: &'static str, detail: impl Into<String>) -> QueryError {
    QueryError {
        query,
        detail: detail.into(),
    }
}

/// A session as `list-sessions` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// Its id.
    pub id: SessionId,
    /// Its name, vis-decoded.
    pub name: RawBytes,
}

const SESSIONS: Format = Format::new("#{session_id}\t#{session_name}");

/// `list-sessions` with the fields panectl needs.
pub fn list_sessions() -> Command {
    Command::new("list-sessions").format_option("-F", SESSIONS)
}

/// Parses the reply (or the stdout of a one-shot `tmux list-sessions -F ...`).
pub fn parse_sessions(lines: &[RawBytes]) -> Result<Vec<SessionRow>, QueryError> {
    lines
        .iter()
        .filter(|line| !line.is_empty())
        .map(|line| {
            let mut fields = line.splitn(2, |&b| b == b'\t');
            let id = fields
                .next()
                .and_then(SessionId::from_bytes)
                .ok_or_else(|| error("list-sessions", format!("bad line {line:?}")))?;
            let name = RawBytes(unvis(fields.next().unwrap_or_default()));
            Ok(SessionRow { id, name })
        })
        .collect()
}

/// The format of [`list_sessions`], for one-shot `tmux` invocations.
pub fn sessions_format() -> &'static str {
    SESSIONS.as_str()
}

/// A window as `list-windows` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowRow {
    /// Its id.
    pub id: WindowId,
    /// Its index in the session.
    pub index: u32,
    /// Whether it is the session's current window.
    pub active: bool,
    /// Its name, vis-decoded.
    pub name: RawBytes,
}

const WINDOWS: Format =
    Format::new("#{window_id}\t#{window_index}\t#{window_active}\t#{window_name}");

/// `list-windows -t $s` for one session.
pub fn list_windows(session: SessionId) -> Command {
    Command::new("list-windows")
        .target("-t", session)
        .format_option("-F", WINDOWS)
}

/// Parses a `list-windows` reply.
pub fn parse_windows(reply: &Reply) -> Result<Vec<WindowRow>, QueryError> {
    reply
        .body
        .iter()
        .filter(|line| !line.is_empty())
        .map(|line| {
            let fields: Vec<&[u8]> = line.splitn(4, |&b| b == b'\t').collect();
            let bad = || error("list-windows", format!("bad line {line:?}"));
            let [id, index, active, name] = fields.as_slice() else {
                return Err(bad());
            };
            Ok(WindowRow {
                id: WindowId::from_bytes(id).ok_or_else(bad)?,
                index: number(index).ok_or_else(bad)?,
                active: *active == b"1",
                name: RawBytes(unvis(name)),
            })
        })
        .collect()
}

/// What panectl knows about a pane besides its screen: where it is and how big (from
/// `list-panes` and layouts), and its [`PaneState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneRow {
    /// Its id.
    pub id: PaneId,
    /// The window it is in.
    pub window: WindowId,
    /// Its index in the window.
    pub index: u32,
    /// Width in cells.
    pub width: u16,
    /// Height in cells.
    pub height: u16,
    /// Whether it is its window's active pane.
    pub active: bool,
    /// Its program and panectl's options on it, as the pane poll also reports them.
    pub state: PaneState,
}

impl PaneRow {
    /// A pane known only by its id, window and size (replay takes panes so as they appear in a
    /// stream; tests make mirrors so): nothing else said of it yet.
    pub fn unlisted(id: PaneId, window: WindowId, width: u16, height: u16) -> PaneRow {
        PaneRow {
            id,
            window,
            index: 0,
            width,
            height,
            active: false,
            state: PaneState::default(),
        }
    }
}

/// The fields of a [`PaneState`], tab-separated, as a format.
macro_rules! pane_state_fields {
    () => {
        "#{pane_dead}\t#{pane_in_mode}\t#{pane_pid}\t#{pane_current_command}\t#{@panectl_provider_override}\t#{@panectl_name}\t#{pane_title}"
    };
}

const PANES: Format = Format::new(concat!(
    "#{pane_id}\t#{window_id}\t#{pane_index}\t#{pane_width}\t#{pane_height}\t#{pane_active}\t",
    pane_state_fields!()
));

/// `list-panes` for every pane of a session (`-s`) or of a window.
pub fn list_panes(target: Target) -> Command {
    let command = Command::new("list-panes");
    let command = match target {
        Target::Session(_) => command.flag("-s"),
        _ => command,
    };
    command.target("-t", target).format_option("-F", PANES)
}

/// Parses a `list-panes` reply.
pub fn parse_panes(reply: &Reply) -> Result<Vec<PaneRow>, QueryError> {
    reply
        .body
        .iter()
        .filter(|line| !line.is_empty())
        .map(|line| parse_pane_row(line))
        .collect()
}

fn parse_pane_row(line: &[u8]) -> Result<PaneRow, QueryError> {
    let fields: Vec<&[u8]> = line.splitn(7, |&b| b == b'\t').collect();
    let bad = || error("list-panes", format!("bad line {:?}", RawBytes::from(line)));
    let [id, window, index, width, height, active, state] = fields.as_slice() else {
        return Err(bad());
    };
    Ok(PaneRow {
        id: PaneId::from_bytes(id).ok_or_else(bad)?,
        window: WindowId::from_bytes(window).ok_or_else(bad)?,
        index: number(index).ok_or_else(bad)?,
        width: number(width).ok_or_else(bad)?,
        height: number(height).ok_or_else(bad)?,
        active: *active == b"1",
        state: parse_pane_state(state).ok_or_else(bad)?,
    })
}

/// `list-panes -a` with the [`PaneState`] fields of every pane of the server: what the
/// daemon asks once a second to keep titles, commands, pids and panectl's pane options
/// current (`daemon::pane_poll`). (A `refresh-client -B` subscription would report only
/// changes, but tmux's subscription timer crashes the server when it fires for a control
/// client whose session has gone: docs/tmux-crashes.md.) Read with [`parse_pane_poll`].
pub fn poll_panes() -> Command {
    Command::new("list-panes").flag("-a").format_option(
        "-F",
        Format::new(concat!("#{session_id}\t#{pane_id}\t", pane_state_fields!())),
    )
}

/// Parses a [`poll_panes`] reply: each pane with its session and fields (a pane in windows
/// linked to several sessions comes once for each); lines that do not parse are left out.
pub fn parse_pane_poll(reply: &Reply) -> Vec<(SessionId, PaneId, PaneState)> {
    reply
        .body
        .iter()
        .filter_map(|line| {
            let mut fields = line.splitn(3, |&b| b == b'\t');
            let session = SessionId::from_bytes(fields.next()?)?;
            let pane = PaneId::from_bytes(fields.next()?)?;
            Some((session, pane, parse_pane_state(fields.next()?)?))
        })
        .collect()
}

/// `display-message -p -t PANE` with the [`poll_panes`] fields: the same [`PaneState`] now,
/// for a pane whose program may just have changed (the poll comes only once a second). Its
/// reply body is read with [`parse_pane_state`].
pub fn pane_state(pane: PaneId) -> Command {
    commands::display_print(Format::new(pane_state_fields!()), Some(Target::Pane(pane)))
}

/// What tmux says of a pane's program and of panectl's options on it: the tail of a
/// `list-panes` row, and what the pane poll reports once a second.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaneState {
    /// `#{pane_dead}`.
    pub dead: bool,
    /// `#{pane_in_mode}`.
    pub in_mode: bool,
    /// `#{pane_pid}`.
    pub pid: u32,
    /// `#{pane_current_command}`.
    pub command: RawBytes,
    /// `#{pane_title}`.
    pub title: RawBytes,
    /// `#{@panectl_provider_override}`.
    pub assigned_provider: Option<String>,
    /// `#{@panectl_name}`.
    pub name: Option<String>,
}

/// Parses one pane's [`poll_panes`] fields (without the pane id), or a [`pane_update`] reply.
pub fn parse_pane_state(value: &[u8]) -> Option<PaneState> {
    let fields: Vec<&[u8]> = value.splitn(7, |&b| b == b'\t').collect();
    let [dead, in_mode, pid, command, assigned, name, title] = fields.as_slice() else {
        return None;
    };
    Some(PaneState {
        dead: *dead == b"1",
        in_mode: *in_mode == b"1",
        pid: number(pid).unwrap_or(0),
        command: RawBytes::from(*command),
        title: RawBytes::from(*title),
        assigned_provider: assigned_provider(assigned),
        name: agent_name(name),
    })
}

/// The pane option holding a provider assigned by `panectl set-provider`.
pub const PROVIDER_OVERRIDE_OPTION: &str = "@panectl_provider_override";

/// A provider id from the override option: lowercase letters, digits and `_`, else nothing.
fn assigned_provider(field: &[u8]) -> Option<String> {
    let valid = !field.is_empty()
        && field
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_');
    valid.then(|| String::from_utf8_lossy(field).into_owned())
}

/// An agent name from `@panectl_name`: a plain word (as `panectl launch` checks), else nothing.
fn agent_name(field: &[u8]) -> Option<String> {
    let valid = (1..=64).contains(&field.len())
        && field
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(b));
    valid.then(|| String::from_utf8_lossy(field).into_owned())
}

/// `set-option -p -t %p NAME VALUE` for one of panectl's pane options (`@panectl_*`), or
/// `set-option -p -u -t %p NAME` to unset it when `value` is `None`.
pub fn set_pane_option(pane: PaneId, name: &'static str, value: Option<&SafeValue>) -> Command {
    let command = Command::new("set-option").flag("-p");
    let command = if value.is_none() {
        command.flag("-u")
    } else {
        command
    };
    let command = command.target("-t", pane).option_name(name);
    match value {
        Some(value) => command.safe(value),
        None => command,
    }
}

/// `show-options -gqv NAME` for one of panectl's global options (`@panectl-...`): its value,
/// or nothing when it is unset.
pub fn show_global_option(name: &'static str) -> Command {
    Command::new("show-options")
        .flag("-g")
        .flag("-q")
        .flag("-v")
        .option_name(name)
}

/// `show-options -pqv -t %p NAME` for one of panectl's pane options (`@panectl_*`): its value,
/// or nothing when it is unset (message delivery reads back the mark its paste left).
pub fn show_pane_option(pane: PaneId, name: &'static str) -> Command {
    Command::new("show-options")
        .flag("-p")
        .flag("-q")
        .flag("-v")
        .target("-t", pane)
        .option_name(name)
}

/// `set-option -s NAME VALUE` (or `-u`) for one of panectl's server options.
pub fn set_server_option(name: &'static str, value: Option<&SafeValue>) -> Command {
    let command = Command::new("set-option").flag("-s");
    let command = if value.is_none() {
        command.flag("-u")
    } else {
        command
    };
    let command = command.option_name(name);
    match value {
        Some(value) => command.safe(value),
        None => command,
    }
}

const PANE_STATE: Format = Format::new(
    "#{pane_width} #{pane_height} #{cursor_x} #{cursor_y} #{alternate_on} #{alternate_saved_x} #{alternate_saved_y}",
);

/// The commands of a seed line, in order; their replies make a [`Snapshot`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeedPart {
    /// `refresh-client -A %p:continue`: resumes a paused pane (no effect otherwise).
    Continue,
    /// `capture-pane -e`: the visible screen (the alternate one when it is on).
    Visible,
    /// `capture-pane -a -e`: the primary screen while the alternate one is on (empty otherwise).
    Primary,
    /// Size, cursor and alternate-screen state.
    State,
    /// `capture-pane -P -C`: an escape sequence the program has only partly written.
    Pending,
}

/// The parts of a seed line, in the order of its commands.
pub const SEED_PARTS: [SeedPart; 5] = [
    SeedPart::Continue,
    SeedPart::Visible,
    SeedPart::Primary,
    SeedPart::State,
    SeedPart::Pending,
];

/// One line that resumes a pane and captures everything needed to rebuild its screen.
///
/// tmux runs the commands of a line back to back without reading any pane in between, so the
/// snapshot matches one point of the output stream: the point where the replies appear. Output
/// before them is superseded by the snapshot; output after them applies on top (protocol notes
/// §4.5). `-q` keeps `capture-pane -a` from failing (and aborting the line) when the alternate
/// screen is off.
pub fn seed_line(pane: PaneId) -> Line {
    let capture = || {
        Command::new("capture-pane")
            .flag("-p")
            .flag("-q")
            .flag("-e")
            .flag("-N")
            .target("-t", pane)
    };
    Line::new(commands::pane_output(pane, commands::PaneOutput::Continue))
        .then(capture())
        .then(capture().flag("-a"))
        .then(commands::display_print(
            PANE_STATE,
            Some(Target::Pane(pane)),
        ))
        .then(
            Command::new("capture-pane")
                .flag("-p")
                .flag("-q")
                .flag("-P")
                .flag("-C")
                .target("-t", pane),
        )
}

/// Builds the snapshot from the replies of a [`seed_line`].
pub fn parse_seed(replies: &[Option<Reply>]) -> Result<Snapshot, QueryError> {
    let part = |which: SeedPart| -> Result<&Reply, QueryError> {
        let index = SEED_PARTS
            .iter()
            .position(|p| *p == which)
            .unwrap_or_default();
        match replies.get(index) {
            Some(Some(reply)) if reply.success => Ok(reply),
            Some(Some(reply)) => Err(error(
                "capture-pane",
                format!("tmux refused: {}", RawBytes(reply.joined_body())),
            )),
            _ => Err(error("capture-pane", "the pane is gone")),
        }
    };
    let state = part(SeedPart::State)?;
    let numbers: Vec<u16> = state
        .body
        .first()
        .map(|line| {
            line.split(|&b| b == b' ')
                .map(|field| number(field).unwrap_or(0))
                .collect()
        })
        .unwrap_or_default();
    let [
        width,
        height,
        cursor_x,
        cursor_y,
        alternate,
        saved_x,
        saved_y,
    ] = numbers.as_slice()
    else {
        return Err(error(
            "display-message",
            format!("bad pane state {:?}", state.body),
        ));
    };
    let lines = |reply: &Reply| reply.body.iter().map(|l| l.0.clone()).collect::<Vec<_>>();
    let visible = lines(part(SeedPart::Visible)?);
    let alternate_on = *alternate == 1;
    let (primary, alternate) = if alternate_on {
        (lines(part(SeedPart::Primary)?), Some(visible))
    } else {
        (visible, None)
    };
    let pending = unvis(&part(SeedPart::Pending)?.joined_body());
    Ok(Snapshot {
        width: *width,
        height: *height,
        primary,
        alternate,
        cursor: (*cursor_x, *cursor_y),
        saved_cursor: alternate_on.then_some((*saved_x, *saved_y)),
        pending,
    })
}

/// `capture-pane -p -e` of the visible screen, for the divergence watchdog: colours and
/// attributes count as much as the text.
pub fn check_line(pane: PaneId) -> Line {
    Line::new(
        Command::new("capture-pane")
            .flag("-p")
            .flag("-q")
            .flag("-e")
            .target("-t", pane),
    )
    .then(commands::display_print(
        Format::new(
            "#{cursor_x} #{cursor_y} #{alternate_on} #{pane_dead} #{pane_width} #{pane_height}",
        ),
        Some(Target::Pane(pane)),
    ))
}

/// What tmux shows for a pane: rows, cursor and alternate-screen flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownScreen {
    /// The rows as `capture-pane -p -e` prints them (SGR codes included).
    pub styled: Vec<Vec<u8>>,
    /// The rows' text (codes removed), lossily decoded.
    pub rows: Vec<String>,
    /// The pane's size when the check ran, if tmux said: a screen of another size than the
    /// mirror's is a layout change whose notification has not arrived yet, not a divergence.
    pub size: Option<(u16, u16)>,
    /// Cursor column and row.
    pub cursor: (u16, u16),
    /// Alternate screen on.
    pub alternate: bool,
    /// The pane's process has exited (with `remain-on-exit`, tmux then draws its own message
    /// into the pane, which no `%output` carries).
    pub dead: bool,
}

/// Parses the replies of a [`check_line`].
pub fn parse_check(replies: &[Option<Reply>]) -> Result<ShownScreen, QueryError> {
    let (Some(Some(capture)), Some(Some(state))) = (replies.first(), replies.get(1)) else {
        return Err(error("capture-pane", "the pane is gone"));
    };
    if !capture.success || !state.success {
        return Err(error("capture-pane", "tmux refused the check"));
    }
    let numbers: Vec<u16> = state
        .body
        .first()
        .map(|line| {
            line.split(|&b| b == b' ')
                .map(|f| number(f).unwrap_or(0))
                .collect()
        })
        .unwrap_or_default();
    let (x, y, alternate, dead, size) = match numbers.as_slice() {
        [x, y, alternate, dead] => (x, y, alternate, dead, None),
        [x, y, alternate, dead, width, height] => (x, y, alternate, dead, Some((*width, *height))),
        _ => {
            return Err(error(
                "display-message",
                format!("bad cursor state {:?}", state.body),
            ));
        }
    };
    let mut shown = ShownScreen::new(
        capture.body.iter().map(|l| l.0.clone()).collect(),
        (*x, *y),
        *alternate == 1,
        *dead == 1,
    );
    shown.size = size;
    Ok(shown)
}

impl ShownScreen {
    /// From `capture-pane -p -e` rows and the pane's state.
    pub fn new(styled: Vec<Vec<u8>>, cursor: (u16, u16), alternate: bool, dead: bool) -> Self {
        let rows = styled
            .iter()
            .map(|line| String::from_utf8_lossy(&strip_codes(line)).into_owned())
            .collect();
        ShownScreen {
            styled,
            rows,
            size: None,
            cursor,
            alternate,
            dead,
        }
    }
}

/// A `capture-pane -e` line without its SGR codes and charset shifts: the text.
pub fn strip_codes(line: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            0x1b if line.get(i + 1) == Some(&b'[') => {
                i += 2;
                while i < line.len() && !(0x40..=0x7e).contains(&line[i]) {
                    i += 1;
                }
                i += 1;
            }
            0x0e | 0x0f => i += 1,
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

/// `display-message -p '#{version}'`.
pub fn version() -> Command {
    commands::display_print(Format::new("#{version}"), None)
}

fn number<T: std::str::FromStr>(field: &[u8]) -> Option<T> {
    std::str::from_utf8(field).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::Guard;

    fn reply(lines: &[&[u8]]) -> Reply {
        Reply {
            guard: Guard {
                time: 1,
                number: 1,
                flags: 1,
            },
            success: true,
            body: lines.iter().map(|l| RawBytes::from(*l)).collect(),
            tag: None,
            incomplete: false,
        }
    }

    #[test]
    fn pane_rows_parse_with_titles_holding_anything() {
        let panes = parse_panes(&reply(&[
            b"%3\t@1\t0\t80\t24\t1\t0\t0\t4242\tbash\t\t\ttitle with\ttab-like spaces",
            b"%4\t@1\t1\t40\t12\t0\t1\t1\t0\tclaude\tcodex\tworker-1\t",
            b"%5\t@1\t2\t40\t12\t0\t0\t0\t0\tclaude\t\tnot a #{name}\t",
        ]))
        .unwrap();
        assert_eq!(panes[0].id, PaneId(3));
        assert_eq!(panes[0].state.title, "title with\ttab-like spaces");
        assert!(panes[1].state.dead && panes[1].state.in_mode && !panes[1].active);
        assert_eq!(panes[0].state.assigned_provider, None);
        assert_eq!(panes[1].state.assigned_provider.as_deref(), Some("codex"));
        assert_eq!(panes[1].state.name.as_deref(), Some("worker-1"));
        assert_eq!(
            (
                panes[0].state.name.as_deref(),
                panes[2].state.name.as_deref()
            ),
            (None, None)
        );
        assert!(parse_panes(&reply(&[b"garbage"])).is_err());
    }

    #[test]
    fn sessions_and_windows_decode_vis_names() {
        let sessions = parse_sessions(&[
            RawBytes::from("$0\tmain"),
            RawBytes::from("$7\ta\\\\b \\$x"),
        ])
        .unwrap();
        assert_eq!(
            sessions[1],
            SessionRow {
                id: SessionId(7),
                name: "a\\b $x".into()
            }
        );
        let windows = parse_windows(&reply(&[b"@2\t3\t1\tmy window \\033"])).unwrap();
        assert_eq!(windows[0].name, RawBytes(b"my window \x1b".to_vec()));
        assert_eq!((windows[0].index, windows[0].active), (3, true));
    }

    #[test]
    fn seed_replies_make_a_snapshot() {
        let replies = vec![
            Some(reply(&[])),
            Some(reply(&[b"\x1b[1mvi\x1b[0m screen", b"~"])),
            Some(reply(&[b"$ vi", b""])),
            Some(reply(&[b"80 2 3 1 1 4 0"])),
            Some(reply(&[b"\\033["])),
        ];
        let snapshot = parse_seed(&replies).unwrap();
        assert_eq!(
            (snapshot.width, snapshot.height, snapshot.cursor),
            (80, 2, (3, 1))
        );
        assert_eq!(snapshot.primary, vec![b"$ vi".to_vec(), Vec::new()]);
        assert_eq!(snapshot.alternate.as_ref().map(Vec::len), Some(2));
        assert_eq!(snapshot.saved_cursor, Some((4, 0)));
        assert_eq!(snapshot.pending, b"\x1b[");

        let gone = vec![Some(reply(&[])), None, None, None, None];
        assert!(parse_seed(&gone).is_err());
    }

    #[test]
    fn seed_line_is_one_line_of_five_commands() {
        let line = seed_line(PaneId(7));
        assert_eq!(line.commands().len(), SEED_PARTS.len());
        let bytes = line.to_bytes();
        assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 1);
        assert!(
            String::from_utf8_lossy(&bytes)
                .starts_with("refresh-client -A '%7:continue' ; capture-pane")
        );
    }

    #[test]
    fn pane_updates_parse() {
        let update = parse_pane_state(b"0\t0\t99\tnode\t\tboss\tClaude Code").unwrap();
        assert_eq!(update.command, "node");
        assert_eq!(update.title, "Claude Code");
        assert_eq!(update.name.as_deref(), Some("boss"));
        assert!(parse_pane_state(b"short").is_none());
    }

    #[test]
    fn a_pane_poll_reads_every_pane_and_skips_broken_lines() {
        let reply = reply(&[
            b"$1\t%3\t0\t0\t99\tnode\t\t\tClaude Code",
            b"garbage",
            b"$1\t%x\t0\t0\t99\tnode\t\t\t",
            b"$2\t%4\t1\t0\t100\tbash\tcodex\t\ta\ttitle\twith tabs",
        ]);
        let panes = parse_pane_poll(&reply);
        assert_eq!(panes.len(), 2);
        assert_eq!((panes[0].0, panes[0].1), (SessionId(1), PaneId(3)));
        assert_eq!(panes[0].2.command, "node");
        assert_eq!((panes[1].0, panes[1].1), (SessionId(2), PaneId(4)));
        assert!(panes[1].2.dead);
        assert_eq!(panes[1].2.assigned_provider.as_deref(), Some("codex"));
        assert_eq!(panes[1].2.title, "a\ttitle\twith tabs");
        let command = String::from_utf8(Line::new(poll_panes()).to_bytes()).unwrap();
        assert!(command.starts_with("list-panes -a -F "), "{command}");
    }
}
