//! A provider's `[signals]` table: which of the agent's own reports its panes are read for,
//! and what each says. Data, not code, so that a new CLI's hooks and titles are a rule file:
//!
//! ```toml
//! [signals]
//! osc_7501 = true                 # OSC 7501 reports in the output (Codex)
//! # Titles, tried in order; a title none matches clears what a title said.
//! titles = [
//!     { starts_with = "✦", contains = "Working", status = "processing" },
//! ]
//!
//! [signals.hooks]                 # `panectl hook` events: EVENT or EVENT:DETAIL (the
//! Stop = "completed"              # notification type or the session source)
//! "Notification:idle_prompt" = "ready"
//! SessionEnd = "clear"
//! ```
//!
//! A hook's or a title's meaning is a status word, `ready` (`completed` after a turn, else
//! `idle`), `clear` (what the agent said no longer holds) or `ignore`. A signal is believed
//! only from the CLI that sends it: another program printing the same bytes in another agent's
//! pane (a `tail -f` of a log) cannot forge a status.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use crate::status::Status;
use crate::status::signal::{Effect, Reported};

/// The `[signals]` table as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SignalsSpec {
    #[serde(default)]
    osc_7501: bool,
    #[serde(default)]
    titles: Vec<TitleSpec>,
    #[serde(default)]
    hooks: BTreeMap<String, Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TitleSpec {
    #[serde(default)]
    starts_with: String,
    #[serde(default)]
    contains: String,
    status: Spanned<String>,
}

/// What a report means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meaning {
    /// A status outright.
    Status(Status),
    /// Ready for input: `completed` after a turn, else `idle`.
    Ready,
    /// What the agent said no longer holds (its session ended).
    Clear,
    /// Nothing about the status.
    Ignore,
}

impl Meaning {
    fn parse(word: &str) -> Option<Meaning> {
        match word {
            "ready" => Some(Meaning::Ready),
            "clear" => Some(Meaning::Clear),
            "ignore" => Some(Meaning::Ignore),
            other => Status::parse(other)
                .filter(|s| !matches!(s, Status::Unknown | Status::Exited))
                .map(Meaning::Status),
        }
    }

    fn effect(self) -> Effect {
        match self {
            Meaning::Status(status) => Effect::Report(Reported::Status(status)),
            Meaning::Ready => Effect::Report(Reported::Ready),
            Meaning::Clear => Effect::Clear,
            Meaning::Ignore => Effect::Ignore,
        }
    }
}

/// A title that says a status: it starts with `starts_with` (after leading spaces) and holds
/// `contains`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TitleSignal {
    /// What the title starts with.
    pub starts_with: String,
    /// What it holds.
    pub contains: String,
    /// What it means.
    pub meaning: Meaning,
}

/// The agent's own signals a provider's panes are read for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signals {
    /// OSC 7501 reports in the output (`ESC ] 7501 ; state=... ESC \`: Codex).
    pub osc_7501: bool,
    /// Titles that say a status, tried in order (empty: titles say nothing).
    pub titles: Vec<TitleSignal>,
    /// Hook events (`EVENT` or `EVENT:DETAIL`) and what they mean.
    pub hooks: BTreeMap<String, Meaning>,
}

impl Signals {
    /// Compiles the table; an unknown meaning is an error at its offset in the file.
    pub(super) fn from_spec(spec: SignalsSpec) -> Result<Signals, (usize, String)> {
        let meaning = |word: &Spanned<String>| {
            Meaning::parse(word.get_ref()).ok_or_else(|| {
                (
                    word.span().start,
                    format!(
                        "{:?} is not a meaning (a status, ready, clear or ignore)",
                        word.get_ref()
                    ),
                )
            })
        };
        let mut titles = Vec::new();
        for title in spec.titles {
            if title.starts_with.is_empty() && title.contains.is_empty() {
                return Err((
                    title.status.span().start,
                    "a title signal needs starts_with or contains".into(),
                ));
            }
            titles.push(TitleSignal {
                meaning: meaning(&title.status)?,
                starts_with: title.starts_with,
                contains: title.contains,
            });
        }
        let mut hooks = BTreeMap::new();
        for (event, word) in &spec.hooks {
            hooks.insert(event.clone(), meaning(word)?);
        }
        Ok(Signals {
            osc_7501: spec.osc_7501,
            titles,
            hooks,
        })
    }

    /// What a hook event says: `EVENT:DETAIL` first (the notification type, else the session
    /// source), then `EVENT`; an event the table does not name says nothing.
    pub fn hook_effect(&self, event: &str, detail: Option<&str>) -> Effect {
        let specific = detail.and_then(|detail| self.hooks.get(&format!("{event}:{detail}")));
        specific
            .or_else(|| self.hooks.get(event))
            .map_or(Effect::Ignore, |meaning| meaning.effect())
    }

    /// What a pane title says: the first title signal it matches; none matched clears what a
    /// title said before; a provider without title signals ignores titles.
    pub fn title_effect(&self, title: &str) -> Effect {
        if self.titles.is_empty() {
            return Effect::Ignore;
        }
        let title = title.trim_start();
        self.titles
            .iter()
            .find(|t| title.starts_with(&t.starts_with) && title.contains(&t.contains))
            .map_or(Effect::Clear, |t| t.meaning.effect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::providers::ProviderSet;

    fn report(status: Status) -> Effect {
        Effect::Report(Reported::Status(status))
    }

    #[test]
    fn claude_code_and_gemini_cli_hooks_are_their_rule_files_data() {
        let set = ProviderSet::builtin().unwrap();
        let claude = &set.get("claude_code").unwrap().signals;
        assert_eq!(
            claude.hook_effect("UserPromptSubmit", None),
            report(Status::Processing)
        );
        assert_eq!(
            claude.hook_effect("Notification", Some("permission_prompt")),
            report(Status::WaitingUserAnswer)
        );
        assert_eq!(
            claude.hook_effect("Notification", Some("idle_prompt")),
            Effect::Report(Reported::Ready)
        );
        assert_eq!(
            claude.hook_effect("Notification", Some("other")),
            Effect::Ignore
        );
        assert_eq!(claude.hook_effect("Stop", None), report(Status::Completed));
        assert_eq!(
            claude.hook_effect("SessionStart", Some("startup")),
            report(Status::Idle)
        );
        assert_eq!(
            claude.hook_effect("SessionStart", Some("compact")),
            Effect::Ignore
        );
        assert_eq!(claude.hook_effect("SessionEnd", None), Effect::Clear);
        assert_eq!(claude.hook_effect("MessageDisplay", None), Effect::Ignore);
        // Gemini CLI's names are its own; Claude Code's mean nothing to it.
        let gemini = &set.get("gemini_cli").unwrap().signals;
        assert_eq!(
            gemini.hook_effect("AfterAgent", None),
            report(Status::Completed)
        );
        assert_eq!(gemini.hook_effect("Stop", None), Effect::Ignore);
        // A provider without hooks takes none.
        let codex = &set.get("codex").unwrap().signals;
        assert_eq!(codex.hook_effect("Stop", None), Effect::Ignore);
    }

    #[test]
    fn gemini_cli_titles_are_its_rule_files_data() {
        let set = ProviderSet::builtin().unwrap();
        let gemini = &set.get("gemini_cli").unwrap().signals;
        assert_eq!(
            gemini.title_effect("✦  Working… (work)   "),
            report(Status::Processing)
        );
        assert_eq!(
            gemini.title_effect("✋  Action Required (work)"),
            report(Status::WaitingUserAnswer)
        );
        assert_eq!(gemini.title_effect("◇  Ready (work)"), Effect::Clear);
        let codex = &set.get("codex").unwrap().signals;
        assert_eq!(codex.title_effect("✦  Working…"), Effect::Ignore);
    }

    #[test]
    fn a_meaning_that_is_not_one_is_refused_with_its_line() {
        let text = "id = \"x\"\n[signals.hooks]\nStop = \"finished\"\n[[rules]]\nid = \"x.r\"\nstatus = \"ready\"\ncontains = [\"$\"]\n";
        let error = crate::status::rules::Provider::parse(text, "x.toml").unwrap_err();
        assert_eq!(error.line, 3, "{error}");
        assert!(error.message.contains("finished"), "{error}");
        let text = "id = \"x\"\n[signals]\ntitles = [{ status = \"processing\" }]\n[[rules]]\nid = \"x.r\"\nstatus = \"ready\"\ncontains = [\"$\"]\n";
        let error = crate::status::rules::Provider::parse(text, "x.toml").unwrap_err();
        assert!(error.message.contains("starts_with or contains"), "{error}");
    }
}
