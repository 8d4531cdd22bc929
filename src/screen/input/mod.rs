//! The terminal parser: bytes a program writes, in, operations on a [`Screen`] out. A port of
//! tmux 3.3a's `input.c` state machine, so odd input does what it does in tmux: a C0 control
//! inside a sequence acts at once, CAN and SUB abort, a UTF-8 character may be interrupted by an
//! escape sequence and completed after it, invalid UTF-8 is dropped, unknown sequences are
//! ignored whole. Two things tmux does depend on time, which a mirror fed the same bytes cannot
//! see: it drops a string left unterminated for five seconds, and it forgets a zero-width joiner
//! that ends one read from the pane (each read starts a new `screen_write_ctx`). The mirror
//! acts as if neither happened; the watchdog's resync repairs the rare screen where one did.

mod osc;
mod sgr;
mod states;
mod utf8;

use super::cell::{Attrs, Colour, Style};
use super::width::Width;
use super::writer::{self, Glyph, Screen};
use sgr::{set_256, set_rgb, set_underline, sgr_colon};
use states::{Action, State, transition};

/// The pen: the style characters are written in, and the character sets.
#[derive(Debug, Clone, Copy, Default)]
struct Pen {
    style: Style,
    /// 0 for G0, 1 for G1 (SO/SI).
    set: u8,
    g0_line_drawing: bool,
    g1_line_drawing: bool,
}

/// A parameter of a control sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Param {
    Missing,
    Number(i32),
    /// A parameter with colons (`4:3`, `38:2::1:2:3`).
    Sub(Vec<u8>),
}

/// Longest parameter string kept (tmux's `param_buf`); a longer sequence is discarded.
const PARAM_BYTES: usize = 63;
/// Most intermediate bytes kept.
const INTERMEDIATE_BYTES: usize = 3;
/// Most parameters; a sequence with more is ignored.
const MAX_PARAMS: usize = 24;

/// The parser and the screen it writes to.
#[derive(Debug, Clone)]
pub(crate) struct Terminal {
    pub(crate) screen: Screen,
    state: State,
    pen: Pen,
    saved_pen: Pen,
    saved_cursor: (usize, usize),
    saved_origin: bool,
    intermediates: Vec<u8>,
    params: Vec<u8>,
    discard: bool,
    utf8: Vec<u8>,
    utf8_size: usize,
    utf8_invalid: bool,
    /// The last printed character, for REP.
    last: Option<Repeat>,
    /// The string of the OSC sequence being read (tmux 3.4 and later act on OSC 8 links).
    osc: Vec<u8>,
    /// The OSC string outgrew tmux's buffer: it is ignored.
    osc_discard: bool,
    /// The program began a synchronized update (`?2026h`) and has not ended it: the screen
    /// holds half a frame. tmux draws it as it comes; only the status reader waits for the end.
    pub(crate) synchronized: bool,
}

/// The longest OSC string tmux reads (`INPUT_BUF_LIMIT`); a longer one is ignored.
const OSC_LIMIT: usize = 1 << 20;

/// What REP repeats: the last printed character (tmux 3.3 and 3.4 repeat only ASCII).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repeat {
    Ascii(u8),
    /// A decoded character and its width (tmux 3.5 and later).
    Char(u32, Width),
}

impl Terminal {
    /// A terminal of `sx` x `sy` keeping `hlimit` lines of history.
    pub(crate) fn new(sx: usize, sy: usize, hlimit: usize) -> Terminal {
        Terminal {
            screen: Screen::new(sx, sy, hlimit),
            state: State::Ground,
            pen: Pen::default(),
            saved_pen: Pen::default(),
            saved_cursor: (0, 0),
            saved_origin: false,
            intermediates: Vec::new(),
            params: Vec::new(),
            discard: false,
            utf8: Vec::new(),
            utf8_size: 0,
            utf8_invalid: false,
            last: None,
            osc: Vec::new(),
            osc_discard: false,
            synchronized: false,
        }
    }

    /// Puts the cursor at `(x, y)`, `x` up to one past the last column (a pending wrap).
    pub(crate) fn place_cursor(&mut self, x: usize, y: usize) {
        self.screen.collect_end();
        let screen = &mut self.screen;
        screen.cx = x.min(screen.sx());
        screen.cy = y.min(screen.sy() - 1);
    }

    /// A copy whose screen has no history (see [`Screen::without_history`]).
    pub(crate) fn without_history(&self) -> Terminal {
        Terminal {
            screen: self.screen.without_history(),
            state: self.state,
            pen: self.pen,
            saved_pen: self.saved_pen,
            saved_cursor: self.saved_cursor,
            saved_origin: self.saved_origin,
            intermediates: self.intermediates.clone(),
            params: self.params.clone(),
            discard: self.discard,
            utf8: self.utf8.clone(),
            utf8_size: self.utf8_size,
            utf8_invalid: self.utf8_invalid,
            last: self.last,
            osc: self.osc.clone(),
            osc_discard: self.osc_discard,
            synchronized: self.synchronized,
        }
    }

    /// Whether nothing is half-read: no escape sequence or UTF-8 character begun, no joiner
    /// waiting for the character it joins. A snapshot taken then and reseeded from gives the
    /// same screen for what follows (up to the modes a reseed resets).
    pub(crate) fn at_rest(&self) -> bool {
        self.state == State::Ground && self.utf8_size == 0 && !self.screen.joiner_pending()
    }

    /// Bytes that set again what a reseed resets and the screen's cells do not show: the
    /// pen, the character sets, insert and wrap modes, the scroll region and origin mode (the
    /// last two only where the cursor can be placed again with CUP, not one past the last
    /// column). Fed after a reseed from a snapshot of this terminal, they make what follows
    /// land as it would have here.
    pub(crate) fn restore_bytes(&self) -> Vec<u8> {
        let screen = &self.screen;
        let mut out = b"\x1b[m".to_vec();
        out.extend_from_slice(&super::capture::codes_for(&self.pen.style));
        if self.pen.g0_line_drawing {
            out.extend_from_slice(b"\x1b(0");
        }
        if self.pen.g1_line_drawing {
            out.extend_from_slice(b"\x1b)0");
        }
        if self.pen.set == 1 {
            out.push(0x0e);
        }
        if screen.mode & super::writer::MODE_INSERT != 0 {
            out.extend_from_slice(b"\x1b[4h");
        }
        if screen.mode & super::writer::MODE_WRAP == 0 {
            out.extend_from_slice(b"\x1b[?7l");
        }
        let origin = screen.mode & super::writer::MODE_ORIGIN != 0;
        let full = screen.rupper == 0 && screen.rlower + 1 == screen.sy();
        if (!full || origin) && screen.cx < screen.sx() {
            out.extend_from_slice(
                format!("\x1b[{};{}r", screen.rupper + 1, screen.rlower + 1).as_bytes(),
            );
            let row = if origin {
                out.extend_from_slice(b"\x1b[?6h");
                screen.cy.saturating_sub(screen.rupper)
            } else {
                screen.cy
            };
            out.extend_from_slice(format!("\x1b[{};{}H", row + 1, screen.cx + 1).as_bytes());
        }
        out
    }

    /// The style characters are written in now.
    pub(crate) fn pen_style(&self) -> Style {
        self.pen.style
    }

    /// Feeds bytes; sequences may be cut anywhere.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            // Runs of printable ASCII in the ground state, the bulk of most output, at once.
            if self.state == State::Ground && is_printable(bytes[i]) {
                let start = i;
                while i < bytes.len() && is_printable(bytes[i]) {
                    i += 1;
                }
                self.print_run(&bytes[start..i]);
                continue;
            }
            self.byte(bytes[i]);
            i += 1;
        }
        self.screen.collect_end();
    }

    /// What [`Terminal::print`] does for each byte of `run`.
    fn print_run(&mut self, run: &[u8]) {
        self.stop_utf8();
        if self.line_drawing() {
            for &ch in run {
                self.print(ch);
            }
            return;
        }
        self.pen.style.attrs.remove(Attrs::CHARSET);
        self.screen.collect_run(run, self.pen.style);
        self.last = run.last().copied().map(Repeat::Ascii);
    }

    fn byte(&mut self, ch: u8) {
        let (action, next) = transition(self.state, ch);
        if action != Action::Print {
            self.screen.collect_end();
        }
        self.run(action, ch);
        if let Some(next) = next {
            self.set_state(next);
        }
    }

    fn set_state(&mut self, next: State) {
        if self.state == State::OscString && next != State::OscString {
            self.osc_end();
        }
        self.state = next;
        match next {
            State::EscEnter | State::CsiEnter => self.clear(),
            State::DcsEnter
            | State::OscString
            | State::ApcString
            | State::RenameString
            | State::ConsumeSt => {
                self.clear();
                self.last = None;
            }
            _ => {}
        }
    }

    fn clear(&mut self) {
        self.intermediates.clear();
        self.params.clear();
        self.discard = false;
    }

    fn run(&mut self, action: Action, ch: u8) {
        match action {
            // The strings of OSC, DCS and APC change nothing on the screen (titles, colours and
            // the clipboard are read from tmux itself): they are parsed past, not kept.
            Action::Input if self.state == State::OscString => self.osc_input(ch),
            Action::None | Action::EndBel | Action::DcsDispatch | Action::Input => {}
            Action::Print => self.print(ch),
            Action::Intermediate => {
                if self.intermediates.len() == INTERMEDIATE_BYTES {
                    self.discard = true;
                } else {
                    self.intermediates.push(ch);
                }
            }
            Action::Parameter => {
                if self.params.len() == PARAM_BYTES {
                    self.discard = true;
                } else {
                    self.params.push(ch);
                }
            }
            Action::C0 => self.c0(ch),
            Action::Esc => self.esc(ch),
            Action::Csi => self.csi(ch),
            Action::TopBitSet => self.top_bit_set(ch),
        }
    }

    fn print(&mut self, ch: u8) {
        self.stop_utf8();
        let line_drawing = self.line_drawing();
        // What REP left in the pen (tmux 3.6) ends with a printable character.
        self.pen.style.attrs.remove(Attrs::CHARSET);
        let mut style = self.pen.style;
        if line_drawing {
            style.attrs.insert(Attrs::CHARSET);
        } else {
            style.attrs.remove(Attrs::CHARSET);
        }
        self.screen.collect_add(ch, style);
        self.last = Some(Repeat::Ascii(ch));
    }

    fn c0(&mut self, ch: u8) {
        self.stop_utf8();
        let screen = &mut self.screen;
        match ch {
            0x08 => screen.backspace(),
            0x09 if screen.dialect.follows_3_6() => screen.tab(),
            0x09 => {
                let sx = screen.sx();
                if screen.cx < sx - 1 {
                    loop {
                        screen.cx += 1;
                        if screen.is_tab(screen.cx) || screen.cx >= sx - 1 {
                            break;
                        }
                    }
                }
            }
            0x0a..=0x0c => screen.linefeed(false, self.pen.style.bg),
            0x0d => screen.carriage_return(),
            0x0e => self.pen.set = 1,
            0x0f => self.pen.set = 0,
            _ => {}
        }
        self.last = None;
    }

    fn save_state(&mut self) {
        self.saved_pen = self.pen;
        self.saved_cursor = (self.screen.cx, self.screen.cy);
        self.saved_origin = self.screen.mode & writer::MODE_ORIGIN != 0;
    }

    fn restore_state(&mut self) {
        self.pen = self.saved_pen;
        if self.saved_origin {
            self.screen.mode_set(writer::MODE_ORIGIN);
        } else {
            self.screen.mode_clear(writer::MODE_ORIGIN);
        }
        let (cx, cy) = self.saved_cursor;
        self.screen.cursor_move(Some(cx), Some(cy), false);
    }

    fn esc(&mut self, ch: u8) {
        if self.discard || !known_esc(ch, &self.intermediates) {
            return;
        }
        let bg = self.pen.style.bg;
        match (ch, self.intermediates.as_slice()) {
            (b'c', []) => {
                self.pen = Pen::default();
                self.saved_pen = Pen::default();
                self.saved_cursor = (0, 0);
                self.synchronized = false;
                self.screen.reset();
            }
            (b'D', []) => self.screen.linefeed(false, bg),
            (b'E', []) => {
                self.screen.carriage_return();
                self.screen.linefeed(false, bg);
            }
            (b'H', []) => {
                let cx = self.screen.cx;
                if cx < self.screen.sx() {
                    self.screen.set_tab(cx, true);
                }
            }
            (b'M', []) => self.screen.reverse_index(bg),
            (b'=', []) => self.screen.mode_set(writer::MODE_KKEYPAD),
            (b'>', []) => self.screen.mode_clear(writer::MODE_KKEYPAD),
            (b'7', []) => self.save_state(),
            (b'8', []) => self.restore_state(),
            (b'8', b"#") => self.screen.alignment_test(),
            (b'0', b"(") => self.pen.g0_line_drawing = true,
            (b'B', b"(") => self.pen.g0_line_drawing = false,
            (b'0', b")") => self.pen.g1_line_drawing = true,
            (b'B', b")") => self.pen.g1_line_drawing = false,
            _ => {}
        }
        self.last = None;
    }

    /// The parameters, or `None` when tmux would ignore the sequence (a number too large, too
    /// many parameters).
    fn split_params(&self) -> Option<Vec<Param>> {
        if self.params.is_empty() {
            return Some(Vec::new());
        }
        let mut list = Vec::new();
        for part in self.params.split(|&b| b == b';') {
            let param = if part.is_empty() {
                Param::Missing
            } else if part.contains(&b':') {
                Param::Sub(part.to_vec())
            } else {
                Param::Number(number(part)?)
            };
            list.push(param);
            if list.len() == MAX_PARAMS {
                return None;
            }
        }
        Some(list)
    }

    fn csi(&mut self, ch: u8) {
        if self.discard {
            return;
        }
        let Some(params) = self.split_params() else {
            return;
        };
        // An unknown sequence is ignored whole (it does not even end a REP's memory).
        if !known_csi(ch, &self.intermediates) {
            return;
        }
        let get = |i: usize, min: i32, default: i32| -> Option<usize> {
            match params.get(i) {
                None | Some(Param::Missing) => usize::try_from(default).ok(),
                Some(Param::Sub(_)) => None,
                Some(Param::Number(n)) => usize::try_from((*n).max(min)).ok(),
            }
        };
        let bg = self.pen.style.bg;
        let interm = std::mem::take(&mut self.intermediates);
        match (ch, interm.as_slice()) {
            (b'b', []) => {
                if let Some(n) = get(0, 1, 1) {
                    let n = n.min(self.screen.sx().saturating_sub(self.screen.cx));
                    if let Some(last) = self.last {
                        self.repeat(last, n);
                    }
                }
            }
            (b'u', []) => self.restore_state(),
            (b's', []) => self.save_state(),
            (b'l', []) => self.reset_modes(&params),
            (b'l', b"?") => self.reset_private_modes(&params),
            (b'h', []) => self.set_modes(&params),
            (b'h', b"?") => self.set_private_modes(&params),
            (b'm', []) => self.sgr(&params),
            _ => self.csi_screen(ch, &interm, &params, bg),
        }
        self.intermediates = interm;
        self.last = None;
    }

    /// The control sequences that act on the screen alone.
    fn csi_screen(&mut self, ch: u8, interm: &[u8], params: &[Param], bg: Colour) {
        let get = |i: usize, min: i32, default: i32| -> Option<usize> {
            match params.get(i) {
                None | Some(Param::Missing) => usize::try_from(default).ok(),
                Some(Param::Sub(_)) => None,
                Some(Param::Number(n)) => usize::try_from((*n).max(min)).ok(),
            }
        };
        let screen = &mut self.screen;
        match (ch, interm) {
            (b'Z', []) => {
                let mut cx = screen.cx.min(screen.sx() - 1);
                if let Some(mut n) = get(0, 1, 1) {
                    while cx > 0 && n > 0 {
                        n -= 1;
                        loop {
                            cx -= 1;
                            if cx == 0 || screen.is_tab(cx) {
                                break;
                            }
                        }
                    }
                    screen.cx = cx;
                }
            }
            (b'D', []) => get(0, 1, 1).into_iter().for_each(|n| screen.cursor_left(n)),
            (b'B', []) => get(0, 1, 1).into_iter().for_each(|n| screen.cursor_down(n)),
            (b'C', []) => get(0, 1, 1)
                .into_iter()
                .for_each(|n| screen.cursor_right(n)),
            (b'H' | b'f', []) => {
                if let (Some(n), Some(m)) = (get(0, 1, 1), get(1, 1, 1)) {
                    screen.cursor_move(Some(m - 1), Some(n - 1), true);
                }
            }
            (b'A', []) => get(0, 1, 1).into_iter().for_each(|n| screen.cursor_up(n)),
            (b'E', []) => {
                if let Some(n) = get(0, 1, 1) {
                    screen.carriage_return();
                    screen.cursor_down(n);
                }
            }
            (b'F', []) => {
                if let Some(n) = get(0, 1, 1) {
                    screen.carriage_return();
                    screen.cursor_up(n);
                }
            }
            (b'X', []) => get(0, 1, 1)
                .into_iter()
                .for_each(|n| screen.erase_characters(n, bg)),
            (b'P', []) => get(0, 1, 1)
                .into_iter()
                .for_each(|n| screen.delete_characters(n, bg)),
            (b'r', []) => {
                let sy = i32::try_from(screen.sy()).unwrap_or(i32::MAX);
                if let (Some(n), Some(m)) = (get(0, 1, 1), get(1, 1, sy)) {
                    screen.scroll_region(n - 1, m - 1);
                }
            }
            (b'M', []) => get(0, 1, 1)
                .into_iter()
                .for_each(|n| screen.delete_lines(n, bg)),
            (b'J', []) => match get(0, 0, 0) {
                Some(0) => screen.clear_end_of_screen(bg),
                Some(1) => screen.clear_start_of_screen(bg),
                Some(2) => screen.clear_screen(bg),
                Some(3) if get(1, 0, 0) == Some(0) => screen.clear_history(),
                _ => {}
            },
            (b'K', []) => match get(0, 0, 0) {
                Some(0) => screen.clear_end_of_line(bg),
                Some(1) => screen.clear_start_of_line(bg),
                Some(2) => screen.clear_line(bg),
                _ => {}
            },
            (b'G' | b'`', []) => {
                if let Some(n) = get(0, 1, 1) {
                    screen.cursor_move(Some(n - 1), None, true);
                }
            }
            (b'@', []) => get(0, 1, 1)
                .into_iter()
                .for_each(|n| screen.insert_characters(n, bg)),
            (b'L', []) => get(0, 1, 1)
                .into_iter()
                .for_each(|n| screen.insert_lines(n, bg)),
            (b'S', []) => get(0, 1, 1)
                .into_iter()
                .for_each(|n| screen.scroll_up(n, bg)),
            (b'T', []) => get(0, 1, 1)
                .into_iter()
                .for_each(|n| screen.scroll_down(n, bg)),
            (b'g', []) => match get(0, 0, 0) {
                Some(0) => {
                    let cx = screen.cx;
                    if cx < screen.sx() {
                        screen.set_tab(cx, false);
                    }
                }
                Some(3) => screen.clear_tabs(),
                _ => {}
            },
            (b'd', []) => {
                if let Some(n) = get(0, 1, 1) {
                    screen.cursor_move(None, Some(n - 1), true);
                }
            }
            _ => {}
        }
    }

    fn mode_numbers(params: &[Param]) -> impl Iterator<Item = i32> + '_ {
        params.iter().filter_map(|param| match param {
            Param::Number(n) => Some(*n),
            // A missing mode reads as 0, which no mode has.
            Param::Missing => Some(0),
            Param::Sub(_) => None,
        })
    }

    fn reset_modes(&mut self, params: &[Param]) {
        for n in Self::mode_numbers(params) {
            match n {
                4 => self.screen.mode_clear(writer::MODE_INSERT),
                34 => self.screen.mode_set(writer::MODE_CURSOR_VERY_VISIBLE),
                _ => {}
            }
        }
    }

    fn set_modes(&mut self, params: &[Param]) {
        for n in Self::mode_numbers(params) {
            match n {
                4 => self.screen.mode_set(writer::MODE_INSERT),
                34 => self.screen.mode_clear(writer::MODE_CURSOR_VERY_VISIBLE),
                _ => {}
            }
        }
    }

    fn reset_private_modes(&mut self, params: &[Param]) {
        for n in Self::mode_numbers(params) {
            let screen = &mut self.screen;
            match n {
                1 => screen.mode_clear(writer::MODE_KCURSOR),
                3 => {
                    screen.cursor_move(Some(0), Some(0), true);
                    screen.clear_screen(self.pen.style.bg);
                }
                6 => {
                    screen.mode_clear(writer::MODE_ORIGIN);
                    screen.cursor_move(Some(0), Some(0), true);
                }
                7 => screen.mode_clear(writer::MODE_WRAP),
                12 => {
                    screen.mode_clear(writer::MODE_CURSOR_BLINKING);
                    screen.mode_set(writer::MODE_CURSOR_BLINKING_SET);
                }
                25 => screen.mode_clear(writer::MODE_CURSOR),
                1000..=1003 => screen.mode_clear(writer::ALL_MOUSE_MODES),
                1004 => screen.mode_clear(writer::MODE_FOCUSON),
                1005 => screen.mode_clear(writer::MODE_MOUSE_UTF8),
                1006 => screen.mode_clear(writer::MODE_MOUSE_SGR),
                47 | 1047 => {
                    screen.alternate_off(false);
                }
                1049 => {
                    if let Some(style) = screen.alternate_off(true) {
                        self.pen.style = style;
                    }
                }
                2004 => screen.mode_clear(writer::MODE_BRACKETPASTE),
                2026 => self.synchronized = false,
                _ => {}
            }
        }
    }

    fn set_private_modes(&mut self, params: &[Param]) {
        for n in Self::mode_numbers(params) {
            let screen = &mut self.screen;
            match n {
                1 => screen.mode_set(writer::MODE_KCURSOR),
                3 => {
                    screen.cursor_move(Some(0), Some(0), true);
                    screen.clear_screen(self.pen.style.bg);
                }
                6 => {
                    screen.mode_set(writer::MODE_ORIGIN);
                    screen.cursor_move(Some(0), Some(0), true);
                }
                7 => screen.mode_set(writer::MODE_WRAP),
                12 => {
                    screen.mode_set(writer::MODE_CURSOR_BLINKING);
                    screen.mode_set(writer::MODE_CURSOR_BLINKING_SET);
                }
                25 => screen.mode_set(writer::MODE_CURSOR),
                1000 => {
                    screen.mode_clear(writer::ALL_MOUSE_MODES);
                    screen.mode_set(writer::MODE_MOUSE_STANDARD);
                }
                1002 => {
                    screen.mode_clear(writer::ALL_MOUSE_MODES);
                    screen.mode_set(writer::MODE_MOUSE_BUTTON);
                }
                1003 => {
                    screen.mode_clear(writer::ALL_MOUSE_MODES);
                    screen.mode_set(writer::MODE_MOUSE_ALL);
                }
                1004 => screen.mode_set(writer::MODE_FOCUSON),
                1005 => screen.mode_set(writer::MODE_MOUSE_UTF8),
                1006 => screen.mode_set(writer::MODE_MOUSE_SGR),
                47 | 1047 => screen.alternate_on(self.pen.style, false),
                1049 => screen.alternate_on(self.pen.style, true),
                2004 => screen.mode_set(writer::MODE_BRACKETPASTE),
                2026 => self.synchronized = true,
                _ => {}
            }
        }
    }

    fn sgr(&mut self, params: &[Param]) {
        let style = &mut self.pen.style;
        if params.is_empty() {
            // `\e[m` ends a link too; `\e[0m` does not (tmux's quirk).
            *style = Style::default();
            return;
        }
        let get = |i: usize| -> Option<i32> {
            match params.get(i) {
                None | Some(Param::Missing) => None,
                Some(Param::Sub(_)) => None,
                Some(Param::Number(n)) => Some(*n),
            }
        };
        let mut i = 0;
        while i < params.len() {
            let n = match &params[i] {
                Param::Sub(text) => {
                    sgr_colon(style, text);
                    i += 1;
                    continue;
                }
                Param::Missing => 0,
                Param::Number(n) => *n,
            };
            if matches!(n, 38 | 48 | 58) {
                i += 1;
                match get(i) {
                    Some(2) => {
                        let (r, g, b) = (get(i + 1), get(i + 2), get(i + 3));
                        if set_rgb(style, n, r, g, b) {
                            i += 3;
                        }
                    }
                    Some(5) => {
                        set_256(style, n, get(i + 1));
                        i += 1;
                    }
                    _ => {}
                }
                i += 1;
                continue;
            }
            let attrs = &mut style.attrs;
            match n {
                0 => {
                    let link = style.link;
                    *style = Style::default();
                    style.link = link;
                }
                1 => attrs.insert(Attrs::BOLD),
                2 => attrs.insert(Attrs::DIM),
                3 => attrs.insert(Attrs::ITALIC),
                4 => set_underline(attrs, Attrs::UNDERLINE),
                5 | 6 => attrs.insert(Attrs::BLINK),
                7 => attrs.insert(Attrs::REVERSE),
                8 => attrs.insert(Attrs::HIDDEN),
                9 => attrs.insert(Attrs::STRIKETHROUGH),
                21 => set_underline(attrs, Attrs::DOUBLE_UNDERLINE),
                22 => attrs.remove(Attrs(Attrs::BOLD.0 | Attrs::DIM.0)),
                23 => attrs.remove(Attrs::ITALIC),
                24 => attrs.remove(Attrs::ALL_UNDERLINES),
                25 => attrs.remove(Attrs::BLINK),
                27 => attrs.remove(Attrs::REVERSE),
                28 => attrs.remove(Attrs::HIDDEN),
                29 => attrs.remove(Attrs::STRIKETHROUGH),
                30..=37 => style.fg = Colour::Ansi((n - 30) as u8),
                39 => style.fg = Colour::Default,
                40..=47 => style.bg = Colour::Ansi((n - 40) as u8),
                49 => style.bg = Colour::Default,
                53 => attrs.insert(Attrs::OVERLINE),
                55 => attrs.remove(Attrs::OVERLINE),
                59 => style.underline = Colour::Default,
                90..=97 => style.fg = Colour::Bright((n - 90) as u8),
                100..=107 => style.bg = Colour::Bright((n - 100) as u8),
                _ => {}
            }
            i += 1;
        }
    }

    /// REP: `last` again `n` times. tmux 3.3 and 3.4 print the character again as it came (in
    /// the character set chosen now); 3.5 and later write the character kept, in the current
    /// style without the line-drawing set, and UTF-8 characters too (joining as they would).
    fn repeat(&mut self, last: Repeat, n: usize) {
        if !self.screen.dialect.repeats_any_character() {
            if let Repeat::Ascii(ch) = last {
                for _ in 0..n {
                    self.print(ch);
                }
            }
            return;
        }
        let mut style = self.pen.style;
        if self.screen.dialect.follows_3_6() {
            // tmux 3.6 repeats in the character set chosen now, and the pen keeps it until the
            // next printable character (UTF-8 in between takes it too).
            if self.line_drawing() {
                self.pen.style.attrs.insert(Attrs::CHARSET);
            } else {
                self.pen.style.attrs.remove(Attrs::CHARSET);
            }
            style = self.pen.style;
        } else {
            style.attrs.remove(Attrs::CHARSET);
        }
        for _ in 0..n {
            match last {
                Repeat::Ascii(ch) => self.screen.collect_add(ch, style),
                Repeat::Char(ch, width) => self.screen.cell(Glyph { ch, width, style }),
            }
        }
    }

    /// Whether the character set in use is the line-drawing one.
    fn line_drawing(&self) -> bool {
        if self.pen.set == 0 {
            self.pen.g0_line_drawing
        } else {
            self.pen.g1_line_drawing
        }
    }
}

fn is_printable(byte: u8) -> bool {
    (0x20..0x7f).contains(&byte)
}

/// Whether tmux's escape table has `ESC interm ch`.
fn known_esc(ch: u8, interm: &[u8]) -> bool {
    match interm {
        b"" => b"78=>DEHMc\\".contains(&ch),
        b"(" | b")" => ch == b'0' || ch == b'B',
        b"#" => ch == b'8',
        _ => false,
    }
}

/// Whether tmux's control sequence table has `CSI interm ... ch`.
fn known_csi(ch: u8, interm: &[u8]) -> bool {
    match interm {
        b"" => b"@ABCDEFGHJKLMPSTXZ`bcdfghlmnrstu".contains(&ch),
        b"?" => ch == b'h' || ch == b'l',
        b">" => b"cmnq".contains(&ch),
        b" " => ch == b'q',
        _ => false,
    }
}

/// A parameter as tmux's `strtonum(0, INT_MAX)` reads it.
pub(super) fn number(digits: &[u8]) -> Option<i32> {
    let mut value: i64 = 0;
    for &digit in digits {
        if !digit.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(digit - b'0');
        if value > i64::from(i32::MAX) {
            return None;
        }
    }
    i32::try_from(value).ok()
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
