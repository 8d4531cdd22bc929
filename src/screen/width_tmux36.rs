//! tmux 3.6's tables for joining characters (`utf8-combined.c`): the emoji that take a skin
//! tone, the regional indicators, and the classes of Hangul jamo. Shared with the differential
//! tests' capture parser, which includes this file.

/// The emoji a skin tone joins (`utf8_should_combine` in tmux 3.6a), sorted.
pub const SKIN_TONE_BASES: &[(u32, u32)] = &[
    (0x1f44b, 0x1f450),
    (0x1f466, 0x1f469),
    (0x1f46e, 0x1f46e),
    (0x1f470, 0x1f478),
    (0x1f47c, 0x1f47c),
    (0x1f481, 0x1f483),
    (0x1f485, 0x1f487),
    (0x1f4aa, 0x1f4aa),
    (0x1f575, 0x1f575),
    (0x1f57a, 0x1f57a),
    (0x1f590, 0x1f590),
    (0x1f595, 0x1f596),
    (0x1f645, 0x1f647),
    (0x1f64b, 0x1f64f),
    (0x1f6b4, 0x1f6b6),
    (0x1f926, 0x1f926),
    (0x1f937, 0x1f939),
    (0x1f93d, 0x1f93e),
    (0x1f9b5, 0x1f9b6),
    (0x1f9b8, 0x1f9b9),
    (0x1f9cd, 0x1f9cf),
    (0x1f9d1, 0x1f9df),
];

/// Whether `cp` is a regional indicator (half of a flag).
pub fn is_regional_indicator(cp: u32) -> bool {
    (0x1f1e6..=0x1f1ff).contains(&cp)
}

/// Whether `cp` is a skin tone (an emoji modifier).
pub fn is_skin_tone(cp: u32) -> bool {
    (0x1f3fb..=0x1f3ff).contains(&cp)
}

/// Whether `cp` is an emoji a skin tone joins.
pub fn takes_skin_tone(cp: u32) -> bool {
    SKIN_TONE_BASES
        .iter()
        .any(|&(first, last)| first <= cp && cp <= last)
}

/// tmux 3.6a's `utf8_should_combine(with, add)`, given the first code point of each: two
/// regional indicators, or an emoji that takes a skin tone added to a skin tone.
pub fn should_combine(with: u32, add: u32) -> bool {
    (is_regional_indicator(with) && is_regional_indicator(add))
        || (takes_skin_tone(add) && is_skin_tone(with))
}

/// The class of a Hangul jamo (`hanguljamo_get_class`), for a character of three UTF-8
/// bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JamoClass {
    /// A leading consonant (choseong), its filler included.
    Leading,
    /// A vowel (jungseong), its filler included.
    Vowel,
    /// A trailing consonant (jongseong).
    Trailing,
}

/// The jamo class of `cp`, if it is one.
pub fn jamo_class(cp: u32) -> Option<JamoClass> {
    match cp {
        0x1100..=0x115f | 0xa960..=0xa97c => Some(JamoClass::Leading),
        0x1160..=0x11a7 | 0xd7b0..=0xd7c6 => Some(JamoClass::Vowel),
        0x11a8..=0x11ff | 0xd7cb..=0xd7fb => Some(JamoClass::Trailing),
        _ => None,
    }
}

/// U+3164 HANGUL FILLER, which tmux 3.6 ignores altogether.
pub const HANGUL_FILLER: u32 = 0x3164;
