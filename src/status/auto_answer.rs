//! Dialogs the user has marked safe to answer without them: `[[auto_answer]]` rules in
//! `auto_answer.toml`, next to the provider rule files. Off unless that file exists; each rule
//! names the provider, a regex the dialog's question must match and the option to pick, so
//! that one rule answers one kind of dialog and nothing else.
//!
//! ```toml
//! [[auto_answer]]
//! name = "tests"                     # shown in the log and in the event
//! provider = "claude_code"
//! question = '(?m)^\s*cargo test\b'   # a regex on the question (the text above the options)
//! option = "Yes"                      # the option's label (or the start of exactly one)
//! ```

use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

use super::decision::{Answer, Choice, Decision};
use super::rules::RuleError;

/// The file of the rules, in the provider rules directory.
pub const FILE: &str = "auto_answer.toml";

/// One rule: which dialog of which provider is answered with which option.
#[derive(Debug, Clone)]
pub struct AutoAnswer {
    /// The rule's name (the log and the `decision_closed` event say it).
    pub name: String,
    /// The provider whose dialogs it answers.
    pub provider: String,
    /// What the question must match.
    pub question: Regex,
    /// The label of the option it picks.
    pub option: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    #[serde(default)]
    auto_answer: Vec<Spanned<RuleSpec>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    name: Option<String>,
    provider: String,
    question: Spanned<String>,
    option: String,
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Reads the rules of a file; `source` names it in errors, which name the line.
pub fn parse(text: &str, source: &str) -> Result<Vec<AutoAnswer>, RuleError> {
    let error = |offset: usize, message: String| RuleError {
        file: source.to_string(),
        line: line_of(text, offset),
        message,
    };
    let spec: FileSpec = toml::from_str(text).map_err(|e| {
        error(
            e.span().map_or(0, |s| s.start),
            e.message().trim().to_string(),
        )
    })?;
    let mut rules = Vec::new();
    for (index, spanned) in spec.auto_answer.into_iter().enumerate() {
        let start = spanned.span().start;
        let rule = spanned.into_inner();
        let question = rule.question.get_ref();
        if question.trim().is_empty() {
            return Err(error(
                rule.question.span().start,
                "an empty question would answer every dialog: name the one this rule is for".into(),
            ));
        }
        let regex = Regex::new(question).map_err(|e| {
            let detail = e.to_string();
            let last = detail.lines().last().unwrap_or_default().trim().to_string();
            error(
                rule.question.span().start,
                format!("bad regex {question:?}: {last}"),
            )
        })?;
        if rule.option.trim().is_empty() {
            return Err(error(start, "say which option: `option = \"Yes\"`".into()));
        }
        rules.push(AutoAnswer {
            name: rule.name.unwrap_or_else(|| format!("#{}", index + 1)),
            provider: rule.provider,
            question: regex,
            option: rule.option,
        });
    }
    Ok(rules)
}

/// The first rule that answers `decision` of `provider`, and the option it picks. A rule whose
/// option the dialog does not have (or has twice) answers nothing.
pub fn matching<'a>(
    rules: &'a [AutoAnswer],
    provider: Option<&str>,
    decision: &'a Decision,
) -> Option<(&'a AutoAnswer, &'a Choice)> {
    let provider = provider?;
    rules.iter().find_map(|rule| {
        if rule.provider != provider || !rule.question.is_match(&decision.question) {
            return None;
        }
        let choice = decision.choose(&Answer::Label(rule.option.clone())).ok()?;
        Some((rule, choice))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(question: &str, labels: &[&str]) -> Decision {
        Decision {
            question: question.into(),
            options: labels
                .iter()
                .enumerate()
                .map(|(i, label)| Choice {
                    number: i + 1,
                    label: label.to_string(),
                    detail: String::new(),
                    pointed: i == 0,
                    keys: vec![(i + 1).to_string()],
                })
                .collect(),
            fingerprint: "00".into(),
        }
    }

    const RULES: &str = r#"
[[auto_answer]]
name = "tests"
provider = "claude_code"
question = '(?m)^\s*cargo test\b'
option = "Yes"
"#;

    #[test]
    fn a_rule_answers_only_its_provider_and_question() {
        let rules = parse(RULES, "auto_answer.toml").unwrap();
        let tests = decision(
            "Bash command\n  cargo test --all\nDo you want to proceed?",
            &["Yes", "Yes, and don't ask again", "No"],
        );
        let (rule, choice) = matching(&rules, Some("claude_code"), &tests).unwrap();
        assert_eq!((rule.name.as_str(), choice.number), ("tests", 1));
        assert!(matching(&rules, Some("codex"), &tests).is_none());
        assert!(matching(&rules, None, &tests).is_none());
        let other = decision(
            "Bash command\n  rm -rf /\nDo you want to proceed?",
            &["Yes", "No"],
        );
        assert!(matching(&rules, Some("claude_code"), &other).is_none());
        // A dialog without the option: nothing is answered.
        let no_yes = decision("  cargo test\n", &["Allow", "Deny"]);
        assert!(matching(&rules, Some("claude_code"), &no_yes).is_none());
    }

    #[test]
    fn errors_name_the_line() {
        let empty = "[[auto_answer]]\nprovider = \"codex\"\nquestion = ''\noption = \"Yes\"\n";
        let error = parse(empty, "f.toml").unwrap_err();
        assert_eq!(error.line, 3, "{error}");
        assert!(error.message.contains("every dialog"), "{error}");
        let bad =
            "[[auto_answer]]\nprovider = \"codex\"\n\nquestion = '(unclosed'\noption = \"Yes\"\n";
        assert_eq!(parse(bad, "f.toml").unwrap_err().line, 4);
        let unknown =
            "[[auto_answer]]\nprovider = \"codex\"\nquestion = 'x'\noption = \"Y\"\nkeys = 1\n";
        let error = parse(unknown, "f.toml").unwrap_err();
        assert!(error.message.contains("unknown field"), "{error}");
        assert!(parse("", "f.toml").unwrap().is_empty());
    }
}
