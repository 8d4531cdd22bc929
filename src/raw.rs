//! Byte strings that are shown like text.
//!
//! Everything that comes from tmux (pane output, names, command output) is bytes that are usually,
//! but not always, UTF-8. Keeping them as `Vec<u8>` is correct; printing a `Vec<u8>` with `{:?}`
//! gives a list of numbers nobody can read. [`RawBytes`] keeps the bytes exact and prints them as
//! an escaped string, which makes test snapshots and logs readable.

use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Exact bytes, displayed as text: `Debug` escapes them unambiguously, `Display` decodes lossily.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RawBytes(pub Vec<u8>);

impl RawBytes {
    /// The bytes, borrowed.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The bytes decoded as UTF-8, with invalid sequences replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }

    /// Consumes the wrapper and returns the bytes.
    pub fn into_vec(self) -> Vec<u8> {
        self.0
    }
}

impl Deref for RawBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl AsRef<[u8]> for RawBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl From<Vec<u8>> for RawBytes {
    fn from(bytes: Vec<u8>) -> Self {
        RawBytes(bytes)
    }
}

impl From<&[u8]> for RawBytes {
    fn from(bytes: &[u8]) -> Self {
        RawBytes(bytes.to_vec())
    }
}

impl From<&str> for RawBytes {
    fn from(text: &str) -> Self {
        RawBytes(text.as_bytes().to_vec())
    }
}

impl PartialEq<[u8]> for RawBytes {
    fn eq(&self, other: &[u8]) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for RawBytes {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl fmt::Debug for RawBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", escape(&self.0))
    }
}

impl fmt::Display for RawBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0))
    }
}

impl Serialize for RawBytes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&String::from_utf8_lossy(&self.0))
    }
}

/// Reads the text [`Serialize`] writes: its UTF-8 bytes (bytes that were not UTF-8 arrive
/// replaced by U+FFFD, so serializing again gives the same text).
impl<'de> Deserialize<'de> for RawBytes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|text| RawBytes(text.into_bytes()))
    }
}

/// The API's schema: the text [`Serialize`] writes (named `TmuxText`, as the API shows names,
/// titles and commands that tmux reported).
impl utoipa::PartialSchema for RawBytes {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some(
                "Text from tmux (a name, a title, a command): bytes, shown as UTF-8 with \
                 invalid sequences replaced by U+FFFD.",
            ))
            .into()
    }
}

impl utoipa::ToSchema for RawBytes {
    fn name() -> std::borrow::Cow<'static, str> {
        "TmuxText".into()
    }
}

/// Escapes bytes for display: printable ASCII stays, `\n \r \t \\ \"` are C-style, everything
/// else (including bytes of multi-byte UTF-8 characters) becomes `\xNN`. Unambiguous and stable,
/// which is what logs and snapshots need.
pub fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

/// Why escaped text cannot be read back into bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad escape at byte {at} of {text:?}")]
pub struct UnescapeError {
    /// Where the bad escape starts.
    pub at: usize,
    /// The text (cut to 40 characters around the problem).
    pub text: String,
}

/// Reads back what [`escape`] writes: the exact bytes, for files that keep pane output as
/// readable text (a divergence record, say).
pub fn unescape(text: &str) -> Result<Vec<u8>, UnescapeError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    let bad = |at: usize| UnescapeError {
        at,
        text: text
            .get(at.saturating_sub(20)..(at + 20).min(text.len()))
            .unwrap_or_default()
            .to_string(),
    };
    while at < bytes.len() {
        let b = bytes[at];
        if b != b'\\' {
            out.push(b);
            at += 1;
            continue;
        }
        let (byte, used) = match bytes.get(at + 1) {
            Some(b'n') => (b'\n', 2),
            Some(b'r') => (b'\r', 2),
            Some(b't') => (b'\t', 2),
            Some(b'\\') => (b'\\', 2),
            Some(b'"') => (b'"', 2),
            Some(b'x') => {
                let hex = bytes.get(at + 2..at + 4).ok_or_else(|| bad(at))?;
                let hex = std::str::from_utf8(hex).map_err(|_| bad(at))?;
                (u8::from_str_radix(hex, 16).map_err(|_| bad(at))?, 4)
            }
            _ => return Err(bad(at)),
        };
        out.push(byte);
        at += used;
    }
    Ok(out)
}

/// Serde for exact bytes as [`escape`]d text (`#[serde(with = "crate::raw::escaped")]`):
/// readable in a file and read back byte for byte, unlike [`RawBytes`]' lossy text.
pub mod escaped {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    /// Writes the bytes escaped.
    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&super::escape(bytes))
    }

    /// Reads escaped bytes back.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        super::unescape(&text).map_err(D::Error::custom)
    }
}

/// Serde for lines of exact bytes, each as [`escape`]d text (see [`escaped`]).
pub mod escaped_lines {
    use serde::{Deserialize, Deserializer, Serializer, de::Error, ser::SerializeSeq};

    /// Writes each line escaped.
    pub fn serialize<S: Serializer>(lines: &[Vec<u8>], serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(lines.len()))?;
        for line in lines {
            seq.serialize_element(&super::escape(line))?;
        }
        seq.end()
    }

    /// Reads escaped lines back.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<Vec<u8>>, D::Error> {
        Vec::<String>::deserialize(deserializer)?
            .iter()
            .map(|line| super::unescape(line).map_err(D::Error::custom))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_escapes_every_non_printable_byte() {
        let raw = RawBytes(b"a\"b\\c\n\x1b\xff\xc3\xa9".to_vec());
        assert_eq!(format!("{raw:?}"), r#""a\"b\\c\n\x1b\xff\xc3\xa9""#);
    }

    #[test]
    fn display_and_json_are_lossy_text() {
        let raw = RawBytes(b"caf\xc3\xa9 \xff".to_vec());
        assert_eq!(raw.to_string(), "café \u{fffd}");
        assert_eq!(serde_json::to_string(&raw).unwrap(), "\"café \u{fffd}\"");
    }

    #[test]
    fn json_reads_back_to_the_same_json() {
        let raw = RawBytes(b"caf\xc3\xa9 \xff".to_vec());
        let json = serde_json::to_string(&raw).unwrap();
        let back: RawBytes = serde_json::from_str(&json).unwrap();
        assert_eq!(back, "café \u{fffd}");
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
    }

    #[test]
    fn unescape_reads_back_every_byte_string() {
        let all: Vec<u8> = (0..=255u8).chain(*b"\\x\\\"").collect();
        assert_eq!(unescape(&escape(&all)).unwrap(), all);
        assert!(unescape("a\\q").is_err());
        assert!(unescape("a\\x4").is_err());
        assert!(unescape("trailing\\").is_err());
        assert!(unescape("\\xzz").is_err());
    }

    proptest::proptest! {
        #[test]
        fn escape_and_unescape_round_trip(bytes: Vec<u8>) {
            proptest::prop_assert_eq!(unescape(&escape(&bytes)).unwrap(), bytes);
        }
    }
}
