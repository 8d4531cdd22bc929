//! The agents' own state reports in a pane's byte stream: OSC 7501 (Codex 0.171:
//! `ESC ] 7501 ; state=working|idle|done|error|blocked : app=codex [: kind=permission|question]`
//! ended by `ESC \` or BEL).
//!
//! Terminals ignore an OSC they do not know, so these bytes reach only a reader of the raw
//! stream: tmux's `capture-pane` never shows them, a control client's `%output` does. A
//! sequence can be cut anywhere between two `%output` lines or two reads, so the scanner is a
//! small state machine kept per pane: bytes only, at most [`MAX_PAYLOAD`] bytes held, and any
//! byte sequence is accepted (garbage is dropped, never an error).

/// The longest payload kept; a longer OSC 7501 is dropped whole.
pub const MAX_PAYLOAD: usize = 128;

/// The OSC number agents report their state with.
const NUMBER: &[u8] = b"7501;";

/// One state report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentReport {
    /// `state=`: `working`, `idle`, `done`, `error`, `blocked` (as sent).
    pub state: String,
    /// `app=`, if given.
    pub app: Option<String>,
    /// `kind=` (`permission`, `question`), if given.
    pub kind: Option<String>,
}

impl AgentReport {
    /// Reads a payload (`state=...:app=...`); `None` without a `state`.
    pub fn parse(payload: &[u8]) -> Option<AgentReport> {
        let text = std::str::from_utf8(payload).ok()?;
        let mut report = AgentReport {
            state: String::new(),
            app: None,
            kind: None,
        };
        for field in text.split(':') {
            let Some((key, value)) = field.split_once('=') else {
                continue;
            };
            let value = value.trim();
            match key.trim() {
                "state" => report.state = value.to_string(),
                "app" => report.app = Some(value.to_string()),
                "kind" => report.kind = Some(value.to_string()),
                _ => {}
            }
        }
        (!report.state.is_empty()).then_some(report)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// Outside any escape sequence.
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// Inside an OSC, matching its number against `7501;` (`matched` bytes so far).
    Number { matched: usize },
    /// Inside an OSC 7501, keeping its payload.
    Payload,
    /// Inside an OSC that is not ours or too long: skipped to its end.
    Skip,
    /// ESC inside an OSC: `\` ends it, anything else aborts it.
    OscEscape { ours: bool },
}

/// The per-pane scanner. See the module documentation.
#[derive(Debug, Clone, Default)]
pub struct OscScanner {
    state: State,
    payload: Vec<u8>,
}

impl OscScanner {
    /// A scanner outside any sequence.
    pub fn new() -> OscScanner {
        OscScanner::default()
    }

    /// Scans a chunk of the pane's output; `report` gets every complete OSC 7501 in it.
    pub fn feed(&mut self, data: &[u8], mut report: impl FnMut(AgentReport)) {
        let mut i = 0;
        while i < data.len() {
            if self.state == State::Ground {
                // The usual case: no escape in flight. Jump to the next ESC.
                match memchr::memchr(0x1b, &data[i..]) {
                    Some(at) => {
                        i += at + 1;
                        self.state = State::Escape;
                        continue;
                    }
                    None => return,
                }
            }
            let byte = data[i];
            i += 1;
            self.state = match self.state {
                State::Ground => State::Ground,
                State::Escape => match byte {
                    b']' => State::Number { matched: 0 },
                    0x1b => State::Escape,
                    _ => State::Ground,
                },
                State::Number { matched } => {
                    if byte == NUMBER[matched] {
                        if matched + 1 == NUMBER.len() {
                            self.payload.clear();
                            State::Payload
                        } else {
                            State::Number {
                                matched: matched + 1,
                            }
                        }
                    } else {
                        self.other_osc_byte(byte, false)
                    }
                }
                State::Payload => match byte {
                    0x07 => {
                        self.finish(&mut report);
                        State::Ground
                    }
                    _ if self.payload.len() >= MAX_PAYLOAD => self.other_osc_byte(byte, false),
                    _ => self.payload_byte(byte),
                },
                State::Skip => self.other_osc_byte(byte, false),
                State::OscEscape { ours } => match byte {
                    b'\\' => {
                        if ours {
                            self.finish(&mut report);
                        }
                        State::Ground
                    }
                    // An ESC that starts something else: the OSC was cut off.
                    b']' => State::Number { matched: 0 },
                    0x1b => State::Escape,
                    _ => State::Ground,
                },
            };
        }
    }

    fn payload_byte(&mut self, byte: u8) -> State {
        match byte {
            0x1b => State::OscEscape { ours: true },
            // CAN and SUB cancel a sequence; other C0 controls mean it was garbage.
            0x00..=0x1f | 0x7f => State::Ground,
            _ => {
                self.payload.push(byte);
                State::Payload
            }
        }
    }

    /// A byte of an OSC being skipped (not ours, or too long).
    fn other_osc_byte(&mut self, byte: u8, ours: bool) -> State {
        match byte {
            0x07 => State::Ground,
            0x1b => State::OscEscape { ours },
            0x18 | 0x1a => State::Ground,
            _ => State::Skip,
        }
    }

    fn finish(&mut self, report: &mut impl FnMut(AgentReport)) {
        if let Some(found) = AgentReport::parse(&self.payload) {
            report(found);
        }
        self.payload.clear();
    }

    /// Bytes held (at most [`MAX_PAYLOAD`]).
    pub fn held(&self) -> usize {
        self.payload.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(chunks: &[&[u8]]) -> Vec<AgentReport> {
        let mut scanner = OscScanner::new();
        let mut found = Vec::new();
        for chunk in chunks {
            scanner.feed(chunk, |r| found.push(r));
        }
        found
    }

    fn states(found: &[AgentReport]) -> Vec<&str> {
        found.iter().map(|r| r.state.as_str()).collect()
    }

    #[test]
    fn codex_reports_are_read_with_either_terminator() {
        let found = scan(&[
            b"\x1b]0;work\x07text\x1b]7501;state=working:app=codex\x1b\\\x1b[2K",
            b"\x1b]7501;state=blocked:app=codex:kind=permission\x07",
        ]);
        assert_eq!(states(&found), ["working", "blocked"]);
        assert_eq!(found[0].app.as_deref(), Some("codex"));
        assert_eq!(found[1].kind.as_deref(), Some("permission"));
    }

    #[test]
    fn a_report_split_at_every_byte_is_read_once() {
        let bytes = b"ab\x1b]7501;state=done:app=codex\x1b\\cd";
        for cut in 0..=bytes.len() {
            let found = scan(&[&bytes[..cut], &bytes[cut..]]);
            assert_eq!(states(&found), ["done"], "cut at {cut}");
        }
        // One byte per chunk.
        let single: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(states(&scan(&single)), ["done"]);
    }

    #[test]
    fn garbage_is_dropped_and_memory_stays_bounded() {
        let mut scanner = OscScanner::new();
        let mut found = Vec::new();
        let long = [b'x'; 10_000];
        scanner.feed(b"\x1b]7501;state=", |r| found.push(r));
        scanner.feed(&long, |r| found.push(r));
        assert!(scanner.held() <= MAX_PAYLOAD);
        scanner.feed(b"\x07", |r| found.push(r));
        assert!(found.is_empty(), "a payload that overflowed is dropped");
        for garbage in [
            &b"\x1b]7501;\xff\xfe\x07"[..],
            b"\x1b]7501;no-state-here\x07",
            b"\x1b]7501;state=working\x1bX", // cut off by another escape
            b"\x1b]7501;state=working\x18",  // cancelled
            b"\x1b]75015;state=working\x07", // another number
            b"\x1b]750\x1b]7501;state=idle\x07", // a new OSC inside a cut one
        ] {
            scanner.feed(garbage, |r| found.push(r));
        }
        assert_eq!(states(&found), ["idle"]);
        // Random bytes never panic.
        let mut seed = 0x1234_5678u32;
        let noise: Vec<u8> = (0..100_000)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                [
                    0x1b,
                    b']',
                    b'7',
                    b'5',
                    b'0',
                    b'1',
                    b';',
                    0x07,
                    b'\\',
                    (seed >> 8) as u8,
                ][(seed % 10) as usize]
            })
            .collect();
        scanner.feed(&noise, |_| {});
        assert!(scanner.held() <= MAX_PAYLOAD);
    }
}
