//! How `panectl close` asks a provider's CLI to exit its own way (its `[close]` table): the
//! text typed into its input (`/exit`) and the keys pressed after it (`Enter`).

use serde::Deserialize;
use toml::Spanned;

/// The keys pressed in a pane whose provider has no `[close]` table (or no provider at all):
/// Ctrl-C interrupts what runs, Ctrl-D ends the input of what reads it.
pub const FALLBACK_KEYS: [&str; 2] = ["C-c", "C-d"];

/// The `[close]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CloseSpec {
    text: Option<Spanned<String>>,
    keys: Option<Spanned<Vec<String>>>,
}

/// How to ask a CLI to exit: `text` typed literally, then `keys` pressed, in that order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Close {
    /// Typed literally into the CLI's input first (`/exit`), if any.
    pub text: Option<String>,
    /// tmux key names pressed after the text (`Enter`), in order.
    pub keys: Vec<String>,
}

impl Close {
    /// What a pane without a `[close]` table is sent: [`FALLBACK_KEYS`].
    pub fn fallback() -> Close {
        Close {
            text: None,
            keys: FALLBACK_KEYS.map(String::from).to_vec(),
        }
    }

    /// Checks a `[close]` table; an error is the byte offset it is about and what is wrong.
    pub(super) fn from_spec(spec: Spanned<CloseSpec>) -> Result<Close, (usize, String)> {
        let table = spec.span().start;
        let spec = spec.into_inner();
        if let Some(text) = &spec.text {
            let value = text.get_ref();
            if value.is_empty() {
                return Err((text.span().start, "close.text is empty".into()));
            }
            // A newline would submit half of it; other control characters mean nothing typed.
            if value.chars().any(char::is_control) {
                return Err((
                    text.span().start,
                    "close.text may hold no control characters (press keys with close.keys)".into(),
                ));
            }
        }
        let keys = match &spec.keys {
            Some(keys) => {
                if let Some(bad) = keys
                    .get_ref()
                    .iter()
                    .find(|k| !crate::control::command::commands::is_key_name(k))
                {
                    return Err((keys.span().start, format!("{bad:?} is not a tmux key name")));
                }
                keys.get_ref().clone()
            }
            None => Vec::new(),
        };
        if spec.text.is_none() && keys.is_empty() {
            return Err((table, "[close] needs text, keys or both".into()));
        }
        Ok(Close {
            text: spec.text.map(Spanned::into_inner),
            keys,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::Provider;
    use super::*;

    fn parse(close: &str) -> Result<Provider, super::super::RuleError> {
        Provider::parse(&format!("id = \"x\"\n[close]\n{close}\n"), "x.toml")
    }

    #[test]
    fn a_close_table_gives_the_text_then_the_keys() {
        let provider = parse("text = \"/exit\"\nkeys = [\"Enter\"]").expect("parses");
        assert_eq!(
            provider.close,
            Some(Close {
                text: Some("/exit".into()),
                keys: vec!["Enter".into()],
            })
        );
        let keys_only = parse("keys = [\"C-c\", \"C-c\"]").expect("parses");
        assert_eq!(
            keys_only.close.map(|c| (c.text, c.keys)),
            Some((None, vec!["C-c".to_string(), "C-c".to_string()]))
        );
        let text_only = parse("text = \"exit\"").expect("parses");
        assert!(text_only.close.is_some_and(|c| c.keys.is_empty()));
        assert_eq!(
            Provider::parse("id = \"x\"\n", "x.toml").unwrap().close,
            None
        );
    }

    #[test]
    fn bad_close_tables_are_refused_with_their_line() {
        for (close, says) in [
            (
                "keys = [\"Enter\", \"NotAKey\"]",
                "\"NotAKey\" is not a tmux key name",
            ),
            ("text = \"\"", "close.text is empty"),
            ("text = \"/exit\\n\"", "no control characters"),
            ("", "needs text, keys or both"),
            ("keys = []", "needs text, keys or both"),
            ("command = \"/exit\"", "unknown field"),
        ] {
            let error = parse(close).expect_err(close);
            assert!(error.message.contains(says), "{close}: {error}");
            assert!(error.line >= 2, "{close}: {error}");
        }
    }

    #[test]
    fn builtin_agents_close_their_own_way() {
        let set = crate::status::providers::ProviderSet::builtin().expect("builtin rules");
        let close = |id: &str| {
            let close = set.get(id).and_then(|p| p.close.clone());
            close.map(|c| (c.text.unwrap_or_default(), c.keys.join(" ")))
        };
        let typed = |text: &str| Some((text.to_string(), "Enter".to_string()));
        assert_eq!(close("claude_code"), typed("/exit"));
        assert_eq!(close("codex"), typed("/quit"));
        assert_eq!(close("gemini_cli"), typed("/quit"));
        assert_eq!(close("aider"), typed("/exit"));
        assert_eq!(close("opencode"), typed("/exit"));
        assert_eq!(close("kiro_cli"), typed("/exit"));
        assert_eq!(close("qwen_code"), typed("/quit"));
        assert_eq!(close("shell"), typed("exit"));
        assert_eq!(Close::fallback().keys, ["C-c", "C-d"]);
    }
}
