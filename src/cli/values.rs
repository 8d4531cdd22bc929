//! Values of the command line that are no closed enum: a provider id. (Statuses and states are
//! the library's own types, `clap::ValueEnum`s.)

use std::ffi::OsStr;
use std::sync::OnceLock;

use clap::builder::{PossibleValue, TypedValueParser};
use panectl::status::providers::{BUILTIN, ProviderSet};

/// A provider id on the command line. Providers can be the user's own (rule files), so any
/// well-formed id is taken (lowercase letters, digits and `_`, as a rule file's id must be;
/// the daemon says whether it knows it); help and completions offer the built-in ones, and
/// `auto` where it is meant.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProviderParser {
    auto: bool,
}

impl ProviderParser {
    /// A provider id.
    pub fn new() -> ProviderParser {
        ProviderParser { auto: false }
    }

    /// A provider id or `auto` (let the daemon recognise the provider again).
    pub fn with_auto() -> ProviderParser {
        ProviderParser { auto: true }
    }
}

/// Whether `id` could be a rule file's provider id.
fn well_formed(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The built-in providers' ids, in the order of [`BUILTIN`], without its layers.
pub fn builtin_ids() -> &'static [&'static str] {
    static IDS: OnceLock<Vec<&'static str>> = OnceLock::new();
    IDS.get_or_init(|| {
        let set = ProviderSet::builtin().unwrap_or_default();
        BUILTIN
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| set.get(name).is_some())
            .collect()
    })
}

impl TypedValueParser for ProviderParser {
    type Value = String;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        let text = value.to_str().unwrap_or_default();
        if well_formed(text) {
            return Ok(text.to_string());
        }
        let name = arg.map_or_else(|| "PROVIDER".to_string(), ToString::to_string);
        let message = format!(
            "invalid value '{}' for '{name}': a provider id is lowercase letters, digits and _ \
             (built in: {}{})\n",
            value.to_string_lossy(),
            builtin_ids().join(", "),
            if self.auto { "; or auto" } else { "" }
        );
        Err(clap::Error::raw(clap::error::ErrorKind::InvalidValue, message).with_cmd(command))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let auto = self
            .auto
            .then(|| PossibleValue::new("auto").help("recognise the provider again"));
        Some(Box::new(
            builtin_ids()
                .iter()
                .map(|id| PossibleValue::new(*id))
                .chain(auto),
        ))
    }
}

#[cfg(test)]
mod tests {
    use clap::builder::TypedValueParser;

    use super::{ProviderParser, builtin_ids};

    fn offered(parser: ProviderParser) -> Vec<String> {
        parser
            .possible_values()
            .into_iter()
            .flatten()
            .map(|value| value.get_name().to_string())
            .collect()
    }

    #[test]
    fn the_builtin_providers_are_offered_without_the_layers() {
        assert!(builtin_ids().contains(&"claude_code"));
        assert!(builtin_ids().contains(&"codex"));
        assert!(!builtin_ids().contains(&"common"));
        let plain = offered(ProviderParser::new());
        assert_eq!(plain, builtin_ids());
        let with_auto = offered(ProviderParser::with_auto());
        assert_eq!(with_auto.last().map(String::as_str), Some("auto"));
        assert_eq!(with_auto.len(), plain.len() + 1);
    }

    #[test]
    fn any_well_formed_id_is_taken_and_a_malformed_one_refused() {
        let command = clap::Command::new("test");
        let parse = |text: &str| ProviderParser::new().parse_ref(&command, None, text.as_ref());
        assert_eq!(parse("my_agent2").ok().as_deref(), Some("my_agent2"));
        assert_eq!(parse("codex").ok().as_deref(), Some("codex"));
        for bad in ["", "Codex", "my-agent", "a b", "../x"] {
            let error = parse(bad).err();
            assert_eq!(
                error.map(|e| e.kind()),
                Some(clap::error::ErrorKind::InvalidValue),
                "{bad:?}"
            );
        }
    }
}
