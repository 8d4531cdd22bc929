//! tmux versions as tmux names them, and the control-mode crashes known in each, for
//! `panectl doctor` and the daemon's log. Pure: no IO.
//!
//! The crashes are described in docs/tmux-crashes.md; panectl avoids both, but other
//! control-mode clients on the same server (iTerm2's `tmux -CC`, other tools) do not.

use std::fmt;

use crate::screen::Dialect;

/// A tmux version: `3.3a` is 3, 3, `a`; `next-3.8` (a build from master) is 3, 8 and marked as
/// a development build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TmuxVersion {
    /// The major number.
    pub major: u32,
    /// The minor number.
    pub minor: u32,
    /// The letter of a patch release (`a` in 3.3a), if any.
    pub patch: Option<char>,
    /// A development build (`next-3.8`, `master`).
    pub development: bool,
}

impl TmuxVersion {
    /// Reads `tmux -V` output or `#{version}`: `tmux 3.3a`, `3.5a`, `next-3.8`, `3.6`;
    /// `None` for what has no version number (`master`, `openbsd-7.5`).
    pub fn parse(text: &str) -> Option<TmuxVersion> {
        let text = text.trim();
        let text = text.strip_prefix("tmux ").unwrap_or(text);
        let (development, number) = match text.strip_prefix("next-") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (major, rest) = number.split_once('.')?;
        let major: u32 = major.parse().ok()?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let minor: u32 = digits.parse().ok()?;
        let suffix = &rest[digits.len()..];
        let patch = match suffix.chars().next() {
            Some(letter) if letter.is_ascii_lowercase() && suffix.len() == 1 => Some(letter),
            None => None,
            // `3.4-rc`, `3.5a-dirty` and the like: a build near that version.
            Some(_) => suffix.chars().next().filter(char::is_ascii_lowercase),
        };
        Some(TmuxVersion {
            major,
            minor,
            patch,
            development,
        })
    }

    /// The screen rules of this version (see [`Dialect`]).
    pub fn dialect(&self) -> Dialect {
        if self.below(3, 3) {
            Dialect::V3_2
        } else if self.below(3, 4) {
            Dialect::V3_3
        } else if self.below(3, 5) {
            Dialect::V3_4
        } else if self.below(3, 6) {
            Dialect::V3_5
        } else if self.major == 3 && self.minor == 6 && self.patch.is_none() {
            Dialect::V3_6
        } else {
            Dialect::V3_6a
        }
    }

    /// The screen rules of a server that reports `text` as its version: those of the version,
    /// or the newest for one without a number (a build from `master`).
    pub fn dialect_of(text: &str) -> Dialect {
        TmuxVersion::parse(text).map_or(Dialect::NEWEST, |version| version.dialect())
    }

    fn at_least(&self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }

    fn below(&self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) < (major, minor)
    }
}

impl fmt::Display for TmuxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.development {
            write!(f, "next-")?;
        }
        write!(f, "{}.{}", self.major, self.minor)?;
        if let Some(patch) = self.patch {
            write!(f, "{patch}")?;
        }
        Ok(())
    }
}

/// A control-mode crash of tmux.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownCrash {
    /// A short name, as docs/tmux-crashes.md heads it.
    pub name: &'static str,
    /// What sets it off.
    pub trigger: &'static str,
    /// How panectl keeps clear of it.
    pub avoided_by: &'static str,
}

/// A control client half introduced when a notification for every control client comes.
pub const HALF_ATTACHED_CLIENT: KnownCrash = KnownCrash {
    name: "notification to a half-attached control client",
    trigger: "a control client attaching while sessions are created or panes change \
              (any control-mode client, iTerm2's included)",
    avoided_by: "panectl attaches through a relay that makes the client a control client in \
                 one read",
};

/// The subscription timer of a control client left attached to nothing.
pub const SUBSCRIPTION_WITHOUT_SESSION: KnownCrash = KnownCrash {
    name: "subscription timer of a control client without a session",
    trigger: "kill-server or kill-session while a control client with a refresh-client -B \
              subscription is still connected",
    avoided_by: "panectl uses no subscription and lets its clients go at once",
};

/// The known control-mode crashes of a version. Measured in 3.3a, 3.4, 3.5a and 3.6a; 3.8
/// has neither; 3.7 was not measured and counts as affected.
pub fn known_crashes(version: &TmuxVersion) -> Vec<KnownCrash> {
    let affected = version.at_least(3, 2) && version.below(3, 8);
    if affected {
        vec![HALF_ATTACHED_CLIENT, SUBSCRIPTION_WITHOUT_SESSION]
    } else {
        Vec::new()
    }
}

/// What the screen model does differently from a tmux version: nothing for the versions whose
/// rules it follows (3.2 to 3.6, see [`Dialect`]); a later one was not measured (the model
/// follows 3.6's rules there, and the daemon's watchdog repairs what differs by resyncing the
/// pane).
pub fn model_differences(version: &TmuxVersion) -> &'static [&'static str] {
    if version.below(3, 7) {
        return &[];
    }
    &["not measured against this version: the screen model follows tmux 3.6a's rules"]
}

/// The oldest tmux panectl works with (`pause-after`, `refresh-client -A`, client flags).
pub const MINIMUM: TmuxVersion = TmuxVersion {
    major: 3,
    minor: 2,
    patch: None,
    development: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn version(text: &str) -> TmuxVersion {
        TmuxVersion::parse(text).unwrap_or_else(|| panic!("{text} parses"))
    }

    #[test]
    fn the_model_follows_every_version_up_to_3_6() {
        assert!(model_differences(&version("3.2a")).is_empty());
        assert!(model_differences(&version("3.3a")).is_empty());
        assert!(model_differences(&version("3.4")).is_empty());
        assert!(model_differences(&version("3.5a")).is_empty());
        assert!(model_differences(&version("3.6a")).is_empty());
        assert_eq!(model_differences(&version("next-3.8")).len(), 1);
    }

    #[test]
    fn versions_parse_as_tmux_prints_them() {
        assert_eq!(version("tmux 3.3a").to_string(), "3.3a");
        assert_eq!(version("3.5a\n").to_string(), "3.5a");
        assert_eq!(version("next-3.8").to_string(), "next-3.8");
        assert_eq!(version("tmux 3.6").patch, None);
        assert_eq!(version("tmux 3.4-rc").to_string(), "3.4");
        assert_eq!(version("3.10").minor, 10);
        assert!(TmuxVersion::parse("master").is_none());
        assert!(TmuxVersion::parse("openbsd-7.5").is_none());
        assert!(TmuxVersion::parse("").is_none());
        assert!(version("3.3a") > version("3.3") && version("3.3a") < version("3.4"));
        assert!(version("3.1c") < MINIMUM);
        assert_eq!(version("3.2a").dialect(), Dialect::V3_2);
        assert_eq!(version("3.3a").dialect(), Dialect::V3_3);
        assert_eq!(version("3.4").dialect(), Dialect::V3_4);
        assert_eq!(version("3.5a").dialect(), Dialect::V3_5);
        assert_eq!(version("3.6").dialect(), Dialect::V3_6);
        assert_eq!(version("3.6a").dialect(), Dialect::V3_6a);
        assert_eq!(version("next-3.8").dialect(), Dialect::V3_6a);
        assert_eq!(TmuxVersion::dialect_of("master"), Dialect::NEWEST);
    }

    #[test]
    fn crashes_are_known_from_3_2_up_to_3_8() {
        for affected in [
            "3.2", "3.2a", "3.3a", "3.4", "3.5a", "3.6a", "3.7c", "next-3.7",
        ] {
            assert_eq!(known_crashes(&version(affected)).len(), 2, "{affected}");
        }
        for clear in ["3.1c", "3.8", "next-3.8", "3.9", "4.0"] {
            assert!(known_crashes(&version(clear)).is_empty(), "{clear}");
        }
    }
}
