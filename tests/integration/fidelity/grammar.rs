//! A seeded generator of terminal byte streams for the screen fidelity tests.
//!
//! A case is a list of [`Token`]s, each one a complete sequence: a run of text, a control
//! character, a whole escape sequence or string, a whole (or deliberately invalid) UTF-8
//! character. Because every token leaves a terminal parser in its ground state, any subsequence
//! of a case is a valid case too, which is what lets the shrinker drop tokens freely. The one
//! exception by design is invalid UTF-8: tmux drops it, and every invalid token that could leave
//! tmux half-way through a character ends with an ASCII letter, which tmux prints and which
//! resets its UTF-8 state.
//!
//! The generator is deterministic (splitmix64, no dependencies): a seed always gives the same
//! bytes, so a failing seed can be rerun and shrunk. Plain text and cursor motion are weighted
//! heavily so that screens fill up and scroll.

use std::fmt;

/// What a token is, for reports and for the shrinker (which may split text runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Printable ASCII.
    Text,
    /// CR, LF, BS, HT, VT or FF on its own.
    Control,
    /// Another C0 control (NUL, BEL, ENQ, CAN, SUB, DEL...).
    OtherControl,
    /// SGR (`CSI ... m`).
    Sgr,
    /// Cursor motion (CUU ... VPR, CUP, HVP).
    Motion,
    /// RI, IND, NEL.
    Index,
    /// DECSTBM.
    ScrollRegion,
    /// SU, SD.
    Scroll,
    /// IL, DL, ICH, DCH, ECH.
    Edit,
    /// EL, ED (sometimes with a background colour set first).
    Erase,
    /// REP (`CSI b`).
    Repeat,
    /// HTS, TBC, CBT, CHT.
    Tabs,
    /// DECALN.
    Align,
    /// DECSC/DECRC, `CSI s`/`CSI u`.
    SaveRestore,
    /// Origin mode, autowrap, insert mode.
    Mode,
    /// `?47`, `?1047`, `?1049`.
    AltScreen,
    /// Modes that change nothing on the screen: bracketed paste, cursor keys, cursor
    /// visibility, mouse, keypad.
    OtherMode,
    /// OSC strings: titles, OSC 7, OSC 8 hyperlinks.
    Osc,
    /// DCS, APC, PM, SOS strings.
    String,
    /// `ESC ( 0`, `ESC ( B`, SO, SI.
    Charset,
    /// Text drawn in the line-drawing set.
    LineDrawing,
    /// Wide (CJK, fullwidth) characters.
    Wide,
    /// A base character with a combining mark, or a combining mark alone.
    Combining,
    /// Emoji, ZWJ sequences and skin tone modifiers.
    Emoji,
    /// Characters with VS15/VS16, or a variation selector alone.
    Variation,
    /// Hangul syllables and conjoining jamo.
    Hangul,
    /// Zero-width characters (ZWSP, ZWNJ, ZWJ alone, WJ, BOM, soft hyphen, LRM).
    ZeroWidth,
    /// Other narrow non-ASCII characters (Latin, Greek, Cyrillic, box drawing).
    Narrow,
    /// Invalid UTF-8.
    InvalidUtf8,
    /// A CSI sequence with a C0 control inside it.
    C0InCsi,
    /// RIS.
    Reset,
    /// DECSCUSR.
    CursorStyle,
    /// Device queries (DA, DSR) that tmux answers on the pane's input.
    Query,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// One complete sequence of a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: Kind,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl Token {
    fn new(kind: Kind, bytes: impl Into<Vec<u8>>) -> Token {
        Token {
            kind,
            bytes: bytes.into(),
        }
    }
}

/// The bytes of a case, in order.
pub fn bytes(tokens: &[Token]) -> Vec<u8> {
    tokens
        .iter()
        .flat_map(|t| t.bytes.iter().copied())
        .collect()
}

/// splitmix64: small, fast and good enough to spread seeds.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5eed_f1de_1173_0000)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent`/100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// The fewest and most tokens of a generated case.
pub const MIN_TOKENS: u64 = 50;
pub const MAX_TOKENS: u64 = 300;

/// The case of `seed`.
pub fn case(seed: u64) -> Vec<Token> {
    let mut rng = Rng::new(seed);
    let count = rng.range(MIN_TOKENS, MAX_TOKENS);
    (0..count).map(|_| token(&mut rng)).collect()
}

type Maker = fn(&mut Rng) -> Token;

/// Every kind of token with its weight (out of the sum of all weights).
const TABLE: &[(u32, Maker)] = &[
    (300, text),
    (110, control),
    (10, other_control),
    (120, sgr),
    (110, motion),
    (25, index),
    (15, scroll_region),
    (15, scroll),
    (35, edit),
    (35, erase),
    (8, repeat),
    (15, tabs),
    (3, align),
    (15, save_restore),
    (25, mode),
    (12, alt_screen),
    (8, other_mode),
    (12, osc),
    (6, string),
    (15, charset),
    (10, line_drawing),
    (18, wide),
    (14, combining),
    (14, emoji),
    (10, variation),
    (8, hangul),
    (8, zero_width),
    (10, narrow),
    (10, invalid_utf8),
    (10, c0_in_csi),
    (1, reset),
    (4, cursor_style),
    (3, query),
];

fn token(rng: &mut Rng) -> Token {
    let total: u32 = TABLE.iter().map(|(w, _)| w).sum();
    let mut roll = rng.below(u64::from(total)) as u32;
    for (weight, maker) in TABLE {
        if roll < *weight {
            return maker(rng);
        }
        roll -= weight;
    }
    unreachable!("the roll is below the total")
}

const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789     ";

fn text(rng: &mut Rng) -> Token {
    let len = if rng.percent(15) {
        rng.range(20, 60)
    } else {
        rng.range(1, 12)
    };
    let bytes = (0..len)
        .map(|_| {
            if rng.percent(75) {
                *rng.pick(LETTERS)
            } else {
                rng.range(0x20, 0x7e) as u8
            }
        })
        .collect::<Vec<u8>>();
    Token::new(Kind::Text, bytes)
}

fn control(rng: &mut Rng) -> Token {
    let bytes: &[u8] = match rng.below(21) {
        0..=4 => b"\r",
        5..=10 => b"\n",
        11..=14 => b"\r\n",
        15..=16 => b"\x08",
        17..=18 => b"\t",
        19 => b"\x0b",
        _ => b"\x0c",
    };
    Token::new(Kind::Control, bytes)
}

fn other_control(rng: &mut Rng) -> Token {
    let byte = *rng.pick(&[0x00u8, 0x05, 0x07, 0x07, 0x18, 0x1a, 0x1c, 0x1f, 0x7f]);
    Token::new(Kind::OtherControl, vec![byte])
}

/// A numeric parameter: often missing, 0 or 1, sometimes large.
fn param(rng: &mut Rng) -> String {
    match rng.below(100) {
        0..=24 => String::new(),
        25..=34 => "0".into(),
        35..=49 => "1".into(),
        50..=79 => rng.range(2, 10).to_string(),
        80..=91 => rng.range(11, 80).to_string(),
        _ => rng.range(100, 9999).to_string(),
    }
}

fn colour_index(rng: &mut Rng) -> u64 {
    if rng.percent(50) {
        rng.below(16)
    } else {
        rng.range(16, 255)
    }
}

fn rgb(rng: &mut Rng, separator: &str) -> String {
    let c: Vec<String> = (0..3).map(|_| rng.below(256).to_string()).collect();
    c.join(separator)
}

fn sgr_param(rng: &mut Rng) -> String {
    match rng.below(40) {
        0 => String::new(),
        1..=2 => "0".into(),
        3..=8 => rng.range(1, 9).to_string(),
        9..=11 => rng.range(21, 29).to_string(),
        12..=13 => format!("4:{}", rng.range(0, 5)),
        14 => rng.pick(&["53", "55"]).to_string(),
        15..=18 => rng.range(30, 37).to_string(),
        19 => "39".into(),
        20..=22 => rng.range(40, 47).to_string(),
        23 => "49".into(),
        24..=25 => rng.range(90, 97).to_string(),
        26..=27 => rng.range(100, 107).to_string(),
        28..=29 => format!("38;5;{}", colour_index(rng)),
        30..=31 => format!("48;5;{}", colour_index(rng)),
        32 => format!("58;5;{}", colour_index(rng)),
        33 => format!("38;2;{}", rgb(rng, ";")),
        34 => format!("48;2;{}", rgb(rng, ";")),
        35 => format!("58;2;{}", rgb(rng, ";")),
        36 => "59".into(),
        37 => {
            let which = rng.pick(&["38", "48", "58"]);
            if rng.percent(50) {
                format!("{which}:5:{}", colour_index(rng))
            } else {
                format!("{which}:2::{}", rgb(rng, ":"))
            }
        }
        38 => rng.pick(&["38;5", "48;2;10", "38;2"]).to_string(),
        _ => rng
            .pick(&["1;31", "0;1;4;7", "22;24;27", "1;2;3;4;5;7;8;9"])
            .to_string(),
    }
}

fn sgr(rng: &mut Rng) -> Token {
    let count = *rng.pick(&[1u64, 1, 1, 2, 2, 3, 4]);
    let params: Vec<String> = (0..count).map(|_| sgr_param(rng)).collect();
    Token::new(Kind::Sgr, format!("\x1b[{}m", params.join(";")))
}

fn motion(rng: &mut Rng) -> Token {
    let finals = [
        b'A', b'B', b'C', b'D', b'E', b'F', b'G', b'H', b'f', b'd', b'`', b'a', b'e',
    ];
    let last = *rng.pick(&finals);
    let params = if matches!(last, b'H' | b'f') {
        match rng.below(5) {
            0 => String::new(),
            1 => param(rng),
            2 => format!(";{}", param(rng)),
            _ => format!("{};{}", param(rng), param(rng)),
        }
    } else {
        param(rng)
    };
    let mut bytes = format!("\x1b[{params}").into_bytes();
    bytes.push(last);
    Token::new(Kind::Motion, bytes)
}

fn index(rng: &mut Rng) -> Token {
    let bytes = *rng.pick(&[b"\x1bM", b"\x1bM", b"\x1bD", b"\x1bE"]);
    Token::new(Kind::Index, bytes.as_slice())
}

fn scroll_region(rng: &mut Rng) -> Token {
    let params = match rng.below(6) {
        0 => String::new(),
        1 => format!("{}", rng.range(0, 30)),
        2 => format!(";{}", rng.range(0, 30)),
        _ => {
            let top = rng.range(0, 14);
            let bottom = if rng.percent(70) {
                top + rng.range(1, 12)
            } else {
                rng.range(0, 30)
            };
            format!("{top};{bottom}")
        }
    };
    Token::new(Kind::ScrollRegion, format!("\x1b[{params}r"))
}

fn scroll(rng: &mut Rng) -> Token {
    let last = rng.pick(&['S', 'T']);
    Token::new(Kind::Scroll, format!("\x1b[{}{last}", param(rng)))
}

fn edit(rng: &mut Rng) -> Token {
    let last = rng.pick(&['L', 'M', '@', 'P', 'X']);
    Token::new(Kind::Edit, format!("\x1b[{}{last}", param(rng)))
}

fn background(rng: &mut Rng) -> String {
    match rng.below(3) {
        0 => format!("\x1b[{}m", rng.range(40, 47)),
        1 => format!("\x1b[48;5;{}m", colour_index(rng)),
        _ => format!("\x1b[48;2;{}m", rgb(rng, ";")),
    }
}

fn erase(rng: &mut Rng) -> Token {
    let prefix = if rng.percent(35) {
        background(rng)
    } else {
        String::new()
    };
    let sequence = if rng.percent(55) {
        format!("\x1b[{}K", rng.pick(&["", "0", "1", "2"]))
    } else {
        format!("\x1b[{}J", rng.pick(&["", "0", "1", "2", "3"]))
    };
    Token::new(Kind::Erase, prefix + &sequence)
}

fn repeat(rng: &mut Rng) -> Token {
    Token::new(Kind::Repeat, format!("\x1b[{}b", param(rng)))
}

fn tabs(rng: &mut Rng) -> Token {
    let sequence = *rng.pick(&[
        "\x1bH", "\x1bH", "\x1b[g", "\x1b[0g", "\x1b[3g", "\x1b[Z", "\x1b[2Z", "\x1b[I", "\x1b[3I",
    ]);
    Token::new(Kind::Tabs, sequence)
}

fn align(_rng: &mut Rng) -> Token {
    Token::new(Kind::Align, "\x1b#8")
}

fn save_restore(rng: &mut Rng) -> Token {
    let sequence = *rng.pick(&["\x1b7", "\x1b8", "\x1b[s", "\x1b[u"]);
    Token::new(Kind::SaveRestore, sequence)
}

fn mode(rng: &mut Rng) -> Token {
    let which = *rng.pick(&["?6", "?7", "?7", "4", "4"]);
    let set = if which == "?7" {
        rng.percent(60)
    } else {
        rng.percent(50)
    };
    let last = if set { 'h' } else { 'l' };
    Token::new(Kind::Mode, format!("\x1b[{which}{last}"))
}

fn alt_screen(rng: &mut Rng) -> Token {
    let which = rng.pick(&["?47", "?1047", "?1049", "?1049"]);
    let last = if rng.percent(50) { 'h' } else { 'l' };
    Token::new(Kind::AltScreen, format!("\x1b[{which}{last}"))
}

fn other_mode(rng: &mut Rng) -> Token {
    let sequence = match rng.below(5) {
        0 => "\x1b=".to_string(),
        1 => "\x1b>".to_string(),
        2 => "\x1b[?1;25;2004h".to_string(),
        _ => {
            let which = rng.pick(&["?2004", "?1", "?25", "?12", "?1000", "?1006", "?1004"]);
            let last = if rng.percent(50) { 'h' } else { 'l' };
            format!("\x1b[{which}{last}")
        }
    };
    Token::new(Kind::OtherMode, sequence)
}

fn terminator(rng: &mut Rng) -> &'static str {
    if rng.percent(50) { "\x07" } else { "\x1b\\" }
}

fn osc(rng: &mut Rng) -> Token {
    let title = *rng.pick(&[
        "vim",
        "make test",
        "build: ok",
        "caf\u{e9} \u{65e5}",
        "",
        "a;b",
    ]);
    let sequence = match rng.below(7) {
        0 => format!("\x1b]0;{title}{}", terminator(rng)),
        1 | 2 => format!("\x1b]2;{title}{}", terminator(rng)),
        3 => format!("\x1b]1;{title}{}", terminator(rng)),
        4 => format!("\x1b]7;file://host/tmp/dir{}", terminator(rng)),
        5 => format!(
            "\x1b]8;;https://example.com/{}{}link{}\x1b]8;;{}",
            rng.below(100),
            terminator(rng),
            rng.below(10),
            terminator(rng)
        ),
        _ => format!("\x1b]8;id={};http://x.y/{}", rng.below(9), terminator(rng)),
    };
    Token::new(Kind::Osc, sequence)
}

fn string(rng: &mut Rng) -> Token {
    let sequence = *rng.pick(&[
        "\x1bP+q544e\x1b\\",
        "\x1bP$qm\x1b\\",
        "\x1bP1;2|abc\x1b\\",
        "\x1bPq#0;2;0;0;0#0!10~\x1b\\",
        "\x1b_Gi=1;abc\x1b\\",
        "\x1b^private\x1b\\",
        "\x1bXstring\x1b\\",
    ]);
    Token::new(Kind::String, sequence)
}

fn charset(rng: &mut Rng) -> Token {
    let sequence = *rng.pick(&[
        "\x1b(0", "\x1b(0", "\x1b(B", "\x1b(B", "\x1b)0", "\x1b)B", "\x0e", "\x0f",
    ]);
    Token::new(Kind::Charset, sequence)
}

fn line_drawing(rng: &mut Rng) -> Token {
    const DRAWING: &[u8] = b"`afgjklmnopqrstuvwxyz{|}~";
    let len = rng.range(1, 8);
    let text: Vec<u8> = (0..len).map(|_| *rng.pick(DRAWING)).collect();
    let bytes = match rng.below(3) {
        0 => [b"\x1b(0".as_slice(), &text, b"\x1b(B"].concat(),
        1 => [b"\x0e".as_slice(), &text, b"\x0f"].concat(),
        _ => text,
    };
    Token::new(Kind::LineDrawing, bytes)
}

/// Wide characters.
pub const WIDE: &[&str] = &[
    "\u{65e5}", "\u{672c}", "\u{8a9e}", "\u{4e2d}", "\u{6587}", "\u{5b57}", "\u{ff21}", "\u{3007}",
    "\u{3042}",
];
/// A base character followed by combining marks; the last ones stand alone (they join
/// whatever cell is left of the cursor).
pub const COMBINING: &[&str] = &[
    "e\u{301}",
    "a\u{300}",
    "o\u{308}",
    "c\u{327}",
    "n\u{303}\u{301}",
    "\u{5b57}\u{301}",
    "x\u{20dd}",
    "\u{301}",
    "\u{332}",
];
/// Emoji, ZWJ sequences, skin tones, flags.
pub const EMOJI: &[&str] = &[
    "\u{1f44d}",
    "\u{1f389}",
    "\u{1f600}",
    "\u{1f680}",
    "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}",
    "\u{1f469}\u{200d}\u{1f4bb}",
    "\u{1f3f3}\u{fe0f}\u{200d}\u{1f308}",
    "\u{1f44d}\u{1f3fd}",
    "\u{1f44b}\u{1f3ff}",
    "\u{1f3fd}",
    "\u{1f1eb}\u{1f1f7}",
];
/// Characters with a variation selector, and the selectors alone.
pub const VARIATION: &[&str] = &[
    "\u{2139}\u{fe0f}",
    "\u{2139}\u{fe0e}",
    "\u{2764}\u{fe0f}",
    "\u{2764}\u{fe0e}",
    "\u{263a}\u{fe0f}",
    "\u{263a}\u{fe0e}",
    "1\u{fe0f}\u{20e3}",
    "#\u{fe0f}\u{20e3}",
    "\u{2714}\u{fe0f}",
    "\u{26a0}\u{fe0f}",
    "\u{fe0f}",
    "\u{fe0e}",
];
/// Hangul syllables, compatibility jamo and conjoining jamo.
pub const HANGUL: &[&str] = &[
    "\u{d55c}",
    "\u{ae00}",
    "\u{314e}",
    "\u{1100}\u{1161}\u{11a8}",
    "\u{1112}\u{1161}",
];
/// Characters of no width.
pub const ZERO_WIDTH: &[&str] = &[
    "\u{200b}", "\u{200c}", "\u{200d}", "\u{2060}", "\u{feff}", "\u{ad}", "\u{200e}",
];
/// Narrow non-ASCII characters.
pub const NARROW: &[&str] = &[
    "\u{e9}", "\u{fc}", "\u{df}", "\u{f1}", "\u{3a9}", "\u{416}", "\u{2192}", "\u{2500}",
    "\u{2502}", "\u{250c}", "\u{2026}", "\u{20ac}", "\u{bd}", "\u{2022}", "\u{ff76}",
];

/// Every non-ASCII character or cluster the generator writes, for the width oracle.
pub fn alphabet() -> Vec<&'static str> {
    [
        WIDE, COMBINING, EMOJI, VARIATION, HANGUL, ZERO_WIDTH, NARROW,
    ]
    .iter()
    .flat_map(|set| set.iter().copied())
    .collect()
}

fn cluster(rng: &mut Rng, kind: Kind, set: &[&str]) -> Token {
    let count = *rng.pick(&[1u64, 1, 1, 2, 3]);
    let text: String = (0..count).map(|_| *rng.pick(set)).collect();
    Token::new(kind, text)
}

fn wide(rng: &mut Rng) -> Token {
    cluster(rng, Kind::Wide, WIDE)
}

fn combining(rng: &mut Rng) -> Token {
    let text = *rng.pick(COMBINING);
    Token::new(Kind::Combining, text)
}

fn emoji(rng: &mut Rng) -> Token {
    cluster(rng, Kind::Emoji, EMOJI)
}

fn variation(rng: &mut Rng) -> Token {
    let text = *rng.pick(VARIATION);
    Token::new(Kind::Variation, text)
}

fn hangul(rng: &mut Rng) -> Token {
    cluster(rng, Kind::Hangul, HANGUL)
}

fn zero_width(rng: &mut Rng) -> Token {
    let text = *rng.pick(ZERO_WIDTH);
    Token::new(Kind::ZeroWidth, text)
}

fn narrow(rng: &mut Rng) -> Token {
    cluster(rng, Kind::Narrow, NARROW)
}

fn invalid_utf8(rng: &mut Rng) -> Token {
    let bytes: Vec<u8> = match rng.below(9) {
        // A lone continuation byte (which includes the C1 range 0x80-0x9f).
        0 | 1 => vec![rng.range(0x80, 0xbf) as u8],
        // Bytes that never start a character.
        2 => vec![*rng.pick(&[0xffu8, 0xfe, 0xc0, 0xc1, 0xf5, 0xf8])],
        // Truncated characters, then ASCII (which tmux prints, ending its UTF-8 state).
        3 => b"\xe6\x97Z".to_vec(),
        4 => b"\xf0\x9f\x91Y".to_vec(),
        5 => b"\xc3X".to_vec(),
        // Overlong encodings.
        6 => rng
            .pick(&[b"\xc0\xaf".as_slice(), b"\xe0\x80\xaf", b"\xf0\x80\x80\xaf"])
            .to_vec(),
        // A surrogate; a code point past U+10FFFF.
        7 => b"\xed\xa0\x80".to_vec(),
        _ => b"\xf4\x90\x80\x80".to_vec(),
    };
    Token::new(Kind::InvalidUtf8, bytes)
}

fn c0_in_csi(rng: &mut Rng) -> Token {
    let c0 = *rng.pick(&[0x08u8, 0x0d, 0x0a, 0x09, 0x0b, 0x07, 0x00, 0x0e, 0x0f]);
    let (params, last): (String, u8) = match rng.below(4) {
        0 => (format!("{};{}", rng.range(1, 9), rng.range(31, 37)), b'm'),
        1 => (rng.range(1, 5).to_string(), *rng.pick(b"ABCD")),
        2 => (format!("{};{}", rng.range(1, 12), rng.range(1, 40)), b'H'),
        _ => (rng.range(0, 2).to_string(), *rng.pick(b"KJ")),
    };
    let at = rng.below(params.len() as u64 + 1) as usize;
    let mut bytes = b"\x1b[".to_vec();
    bytes.extend_from_slice(&params.as_bytes()[..at]);
    bytes.push(c0);
    bytes.extend_from_slice(&params.as_bytes()[at..]);
    bytes.push(last);
    Token::new(Kind::C0InCsi, bytes)
}

fn reset(_rng: &mut Rng) -> Token {
    Token::new(Kind::Reset, "\x1bc")
}

fn cursor_style(rng: &mut Rng) -> Token {
    Token::new(Kind::CursorStyle, format!("\x1b[{} q", rng.range(0, 6)))
}

fn query(rng: &mut Rng) -> Token {
    let sequence = *rng.pick(&["\x1b[c", "\x1b[>c", "\x1b[5n", "\x1b[6n", "\x1b[>q"]);
    Token::new(Kind::Query, sequence)
}

/// The same case in smaller tokens, so that the shrinker can drop parts of them: every text run
/// cut into one token per character, every SGR with several parameters into one SGR per
/// parameter (an extended colour, `38;5;n` or `38;2;r;g;b`, stays whole).
pub fn split(tokens: &[Token]) -> Vec<Token> {
    let mut out = Vec::new();
    for token in tokens {
        match token.kind {
            Kind::Text if token.bytes.len() > 1 => {
                out.extend(token.bytes.iter().map(|&b| Token::new(Kind::Text, vec![b])));
            }
            Kind::Sgr => out.extend(
                split_sgr(&token.bytes)
                    .into_iter()
                    .map(|bytes| Token::new(Kind::Sgr, bytes)),
            ),
            _ => out.push(token.clone()),
        }
    }
    out
}

/// `ESC [ a ; b ... m` as `ESC [ a m`, `ESC [ b m`...
fn split_sgr(bytes: &[u8]) -> Vec<Vec<u8>> {
    let Some(params) = bytes
        .strip_prefix(b"\x1b[")
        .and_then(|b| b.strip_suffix(b"m"))
        .and_then(|b| std::str::from_utf8(b).ok())
    else {
        return vec![bytes.to_vec()];
    };
    let fields: Vec<&str> = params.split(';').collect();
    let mut groups = Vec::new();
    let mut i = 0;
    while i < fields.len() {
        let len = match (fields[i], fields.get(i + 1).copied()) {
            ("38" | "48" | "58", Some("5")) => 3,
            ("38" | "48" | "58", Some("2")) => 5,
            _ => 1,
        };
        let end = (i + len).min(fields.len());
        groups.push(format!("\x1b[{}m", fields[i..end].join(";")).into_bytes());
        i = end;
    }
    groups
}

/// `bytes` escaped for a report: printable ASCII as is, `\e` and other C0 controls escaped,
/// characters of no width as `\u{...}`, bytes that are not UTF-8 as `\xNN`.
pub fn escape(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\x1b' => out.push_str("\\e"),
                '\r' => out.push_str("\\r"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 || c == '\x7f' => {
                    out.push_str(&format!("\\x{:02x}", c as u32));
                }
                c if c.is_ascii() => out.push(c),
                c if super::compare::wcwidth(c) > 0 => out.push(c),
                c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            }
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_always_gives_the_same_case() {
        assert_eq!(bytes(&case(7)), bytes(&case(7)));
        assert_ne!(bytes(&case(7)), bytes(&case(8)));
        let len = case(7).len() as u64;
        assert!((MIN_TOKENS..=MAX_TOKENS).contains(&len));
    }

    #[test]
    fn every_kind_of_token_is_generated() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200 {
            seen.extend(case(seed).iter().map(|t| t.kind));
        }
        assert_eq!(seen.len(), TABLE.len(), "{seen:?}");
    }

    #[test]
    fn split_cuts_text_and_sgr() {
        let tokens = vec![
            Token::new(Kind::Text, "ab"),
            Token::new(Kind::Sgr, "\x1b[1;38;5;9;4:3;48;2;1;2;3;;0m"),
            Token::new(Kind::Sgr, "\x1b[m"),
        ];
        let parts: Vec<String> = split(&tokens).iter().map(|t| escape(&t.bytes)).collect();
        assert_eq!(
            parts,
            [
                "a",
                "b",
                "\\e[1m",
                "\\e[38;5;9m",
                "\\e[4:3m",
                "\\e[48;2;1;2;3m",
                "\\e[m",
                "\\e[0m",
                "\\e[m"
            ]
        );
        assert!(split(&case(3)).len() > case(3).len());
    }

    #[test]
    fn escape_is_readable() {
        assert_eq!(
            escape(b"\x1b[1mA\\\r\n\x07\xff e\xcc\x81 \xe6\x97\xa5"),
            "\\e[1mA\\\\\\r\\n\\x07\\xff e\\u{301} \u{65e5}"
        );
    }
}
