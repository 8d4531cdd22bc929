//! Evaluating a provider's rules on a screen: the first matching rule (highest priority) gives
//! the verdict; `explain` says for every rule why it matched or not.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::rules::{Condition, Provider, Rule, Verdict};
use super::view::{Layout, Region, ScreenView};

/// The outcome of one evaluation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Detection {
    /// What the matching rule concludes; `None` when no rule matches.
    pub verdict: Option<Verdict>,
    /// The matching rule.
    pub rule: Option<Arc<str>>,
    /// Whether it is a real working marker.
    pub strong: bool,
    /// What the rule's `detail` pattern read on the screen (a retry's attempt, say).
    pub detail: Option<String>,
}

/// Region texts computed once per evaluation, shared by the rules that read them.
struct Regions<'a> {
    view: &'a ScreenView,
    layout: Layout,
    cache: Vec<((Region, Option<usize>), String)>,
}

impl<'a> Regions<'a> {
    fn new(view: &'a ScreenView, provider: &Provider) -> Regions<'a> {
        Regions {
            view,
            layout: view.layout(&provider.rule_line),
            cache: Vec::new(),
        }
    }

    fn text(&mut self, region: Region, lines: Option<usize>) -> &str {
        let key = (region, lines);
        let index = match self.cache.iter().position(|(k, _)| *k == key) {
            Some(index) => index,
            None => {
                let text = self.view.region_text(region, lines, self.layout);
                self.cache.push((key, text));
                self.cache.len() - 1
            }
        };
        &self.cache[index].1
    }
}

/// Why a rule did not match, or `None` if it does.
fn check(rule: &Rule, regions: &mut Regions<'_>) -> Option<String> {
    let command = regions.view.command.as_str();
    if !rule.commands.is_empty() && !rule.commands.iter().any(|c| c == command) {
        return Some(format!(
            "the command is {command:?}, not one of {:?}",
            rule.commands
        ));
    }
    if rule.not_commands.iter().any(|c| c == command) {
        return Some(format!("the command is {command:?}"));
    }
    rule.conditions
        .iter()
        .find_map(|condition| check_condition(condition, regions))
}

fn check_condition(condition: &Condition, regions: &mut Regions<'_>) -> Option<String> {
    let where_ = match condition.lines {
        Some(lines) => format!("the last {lines} rows of {}", condition.region.as_str()),
        None => condition.region.as_str().to_string(),
    };
    let text = regions.text(condition.region, condition.lines);
    if let Some(missing) = condition
        .contains
        .iter()
        .find(|needle| !text.contains(needle.as_str()))
    {
        return Some(format!("{missing:?} is not in {where_}"));
    }
    if !condition.any.is_empty()
        && !condition
            .any
            .iter()
            .any(|needle| text.contains(needle.as_str()))
    {
        return Some(format!("none of {:?} is in {where_}", condition.any));
    }
    if let Some(unmatched) = condition.regex.iter().find(|re| !re.is_match(text)) {
        return Some(format!("/{}/ does not match {where_}", unmatched.as_str()));
    }
    if let Some(present) = condition
        .not
        .iter()
        .find(|needle| text.contains(needle.as_str()))
    {
        return Some(format!("{present:?} is in {where_}"));
    }
    if let Some(matched) = condition.not_regex.iter().find(|re| re.is_match(text)) {
        return Some(format!("/{}/ matches {where_}", matched.as_str()));
    }
    if let Some(menu) = &condition.menu {
        let rows: Vec<&str> = regions
            .view
            .region_tail(condition.region, condition.lines, regions.layout)
            .iter()
            .map(String::as_str)
            .collect();
        if menu.find(&rows).is_none() {
            let kind = match menu.numbered {
                Some(true) => "numbered ",
                Some(false) => "unnumbered ",
                None => "",
            };
            return Some(format!(
                "no {kind}menu of {} or more options under one of {:?} in {where_}",
                menu.min_options, menu.pointers
            ));
        }
    }
    None
}

/// Evaluates the rules of `provider` on `view`.
pub fn evaluate(provider: &Provider, view: &ScreenView) -> Detection {
    let mut regions = Regions::new(view, provider);
    for rule in &provider.rules {
        if check(rule, &mut regions).is_none() {
            let detail = rule.detail.as_ref().and_then(|pattern| {
                let found = pattern
                    .captures_iter(regions.text(Region::Whole, None))
                    .last()?;
                let group = found.iter().skip(1).flatten().next();
                let text = group.or_else(|| found.get(0))?.as_str().trim();
                (!text.is_empty()).then(|| text.to_string())
            });
            return Detection {
                verdict: Some(rule.verdict),
                rule: Some(rule.id.clone()),
                strong: rule.strong,
                detail,
            };
        }
    }
    Detection {
        verdict: None,
        rule: None,
        strong: false,
        detail: None,
    }
}

/// One rule's outcome in an explanation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RuleReport {
    /// The rule's id.
    #[schema(value_type = String)]
    pub rule: Arc<str>,
    /// Its verdict.
    pub verdict: Verdict,
    /// Its priority.
    pub priority: i32,
    /// Whether it matched.
    pub matched: bool,
    /// Why it did not match (empty when it did).
    pub reason: String,
    /// Whether it decided the outcome (the first match).
    pub decisive: bool,
    /// The layer the provider inherited it from (`common`), if it is not the provider's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub layer: Option<Arc<str>>,
}

/// Every rule of `provider` on `view`, in the order they are tried.
pub fn explain(provider: &Provider, view: &ScreenView) -> Vec<RuleReport> {
    let mut regions = Regions::new(view, provider);
    let mut decided = false;
    provider
        .rules
        .iter()
        .map(|rule| {
            let reason = check(rule, &mut regions);
            let matched = reason.is_none();
            let decisive = matched && !decided;
            decided |= matched;
            RuleReport {
                rule: rule.id.clone(),
                verdict: rule.verdict,
                priority: rule.priority,
                matched,
                reason: reason.unwrap_or_default(),
                decisive,
                layer: rule.layer.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: &str = r#"
id = "demo"

[[rules]]
id = "dialog"
status = "waiting_user_answer"
priority = 90
contains = ["Do you want to proceed?"]

[[rules]]
id = "working"
status = "processing"
priority = 80
region = "below_input"
contains = ["esc to interrupt"]
strong = true

[[rules]]
id = "ready"
status = "ready"
priority = 10
region = "below_input"
contains = ["? for shortcuts"]
not = ["esc to interrupt"]

[[rules]]
id = "shell"
status = "ready"
priority = 5
commands = ["bash"]
regex = ['(?m)\$$']
"#;

    fn provider() -> Provider {
        Provider::parse(RULES, "demo.toml").unwrap()
    }

    fn screen(footer: &str) -> ScreenView {
        ScreenView::from_text(
            &format!("● hi\n──────────\n❯ \n──────────\n  {footer}"),
            "",
            "claude",
        )
    }

    #[test]
    fn the_highest_matching_rule_decides() {
        let provider = provider();
        let working = evaluate(&provider, &screen("esc to interrupt"));
        assert_eq!(working.verdict, Some(Verdict::Processing));
        assert_eq!(working.rule.as_deref(), Some("working"));
        assert!(working.strong);
        assert_eq!(
            evaluate(&provider, &screen("? for shortcuts")).verdict,
            Some(Verdict::Ready)
        );
        let nothing = evaluate(&provider, &screen("something else"));
        assert_eq!((nothing.verdict, nothing.rule), (None, None));
    }

    #[test]
    fn commands_condition_the_rules() {
        let provider = provider();
        let prompt = ScreenView::from_text("$ ls\nfile\n$", "", "bash");
        assert_eq!(evaluate(&provider, &prompt).rule.as_deref(), Some("shell"));
        let other = ScreenView::from_text("$ ls\nfile\n$", "", "vim");
        assert_eq!(evaluate(&provider, &other).rule, None);
    }

    #[test]
    fn explanations_say_why_each_rule_failed() {
        let reports = explain(&provider(), &screen("? for shortcuts"));
        let by_id = |id: &str| reports.iter().find(|r| &*r.rule == id).unwrap();
        assert_eq!(
            by_id("dialog").reason,
            "\"Do you want to proceed?\" is not in whole"
        );
        assert_eq!(
            by_id("working").reason,
            "\"esc to interrupt\" is not in below_input"
        );
        assert!(by_id("ready").matched && by_id("ready").decisive);
        assert_eq!(
            by_id("shell").reason,
            "the command is \"claude\", not one of [\"bash\"]"
        );
    }
}
