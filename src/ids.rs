//! Identifiers of tmux objects.
//!
//! tmux names its objects by ids that never change while the object lives: `$N` for a session,
//! `@N` for a window and `%N` for a pane. panectl addresses everything by id (names can be changed
//! by users and contain anything), so these three small types appear throughout the code.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a string is not a valid tmux id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} id {text:?}: expected {sigil} followed by a number")]
pub struct IdError {
    /// Which kind of id was expected ("pane", "window", "session").
    pub kind: &'static str,
    /// The sigil that should start it.
    pub sigil: char,
    /// The text that was given.
    pub text: String,
}

macro_rules! tmux_id {
    (
        $(#[$doc:meta])* $name:ident, $sigil:literal, $sigil_byte:literal, $kind:literal,
        $pattern:literal, $example:literal
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl $name {
            /// The sigil tmux writes before the number.
            pub const SIGIL: u8 = $sigil_byte;

            /// Parses the id from bytes such as `b"%12"`, as tmux writes it.
            pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
                let (&sigil, digits) = bytes.split_first()?;
                if sigil != Self::SIGIL {
                    return None;
                }
                crate::ids::parse_u32(digits).map(Self)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}{}", $sigil, self.0)
            }
        }

        impl FromStr for $name {
            type Err = IdError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::from_bytes(s.as_bytes()).ok_or_else(|| IdError {
                    kind: $kind,
                    sigil: $sigil,
                    text: s.to_string(),
                })
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }

        /// The API's schema: the string [`Serialize`] writes (a derive would say an integer).
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                id_schema($kind, $sigil, $pattern, $example)
            }
        }

        impl utoipa::ToSchema for $name {}
    };
}

tmux_id!(
    /// A pane, written `%N` by tmux. Panes are where agents run and where output comes from.
    PaneId,
    '%',
    b'%',
    "pane",
    "^%[0-9]+$",
    "%3"
);
tmux_id!(
    /// A window, written `@N` by tmux. Layout changes and names are per window.
    WindowId,
    '@',
    b'@',
    "window",
    "^@[0-9]+$",
    "@1"
);
tmux_id!(
    /// A session, written `$N` by tmux. panectl runs one control client per session.
    SessionId,
    '$',
    b'$',
    "session",
    "^\\$[0-9]+$",
    "$0"
);

/// The OpenAPI schema of an id: a string of the sigil and a number.
fn id_schema(
    kind: &str,
    sigil: char,
    pattern: &str,
    example: &str,
) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .description(Some(format!("A {kind} id, `{sigil}N`.")))
        .pattern(Some(pattern))
        .examples([example])
        .into()
}

/// Parses a decimal `u32` made only of ASCII digits (no sign, no spaces, no overflow).
pub(crate) fn parse_u32(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() || digits.len() > 10 {
        return None;
    }
    let mut value: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u64::from(b - b'0');
    }
    u32::try_from(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_text() {
        assert_eq!("%12".parse::<PaneId>().unwrap(), PaneId(12));
        assert_eq!(PaneId(12).to_string(), "%12");
        assert_eq!("@0".parse::<WindowId>().unwrap().to_string(), "@0");
        assert_eq!(
            "$4294967295".parse::<SessionId>().unwrap(),
            SessionId(u32::MAX)
        );
    }

    #[test]
    fn malformed_ids_are_rejected() {
        for bad in [
            "",
            "%",
            "12",
            "@1",
            "%1a",
            "% 1",
            "%-1",
            "%4294967296",
            "%+1",
        ] {
            assert!(bad.parse::<PaneId>().is_err(), "{bad:?} accepted");
        }
        let err = "x1".parse::<SessionId>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid session id \"x1\": expected $ followed by a number"
        );
    }

    #[test]
    fn the_api_schema_of_an_id_matches_what_it_serializes_to() {
        let schema = serde_json::to_value(<SessionId as utoipa::PartialSchema>::schema()).unwrap();
        assert_eq!(schema["type"], "string");
        let pattern = regex::Regex::new(schema["pattern"].as_str().unwrap()).unwrap();
        assert!(pattern.is_match(&SessionId(12).to_string()));
        assert!(!pattern.is_match("12") && !pattern.is_match("%12"));
        let pane = serde_json::to_value(<PaneId as utoipa::PartialSchema>::schema()).unwrap();
        assert!(
            regex::Regex::new(pane["pattern"].as_str().unwrap())
                .unwrap()
                .is_match(&PaneId(0).to_string())
        );
    }

    #[test]
    fn ids_serialize_as_tmux_writes_them() {
        assert_eq!(serde_json::to_string(&PaneId(3)).unwrap(), "\"%3\"");
        let back: WindowId = serde_json::from_str("\"@7\"").unwrap();
        assert_eq!(back, WindowId(7));
    }
}
