//! How an explanation and a dialog read as a decision are shown to people: what `explain`
//! (of a pane or of a capture file) and `decisions` print.

use std::io::Write;

use panectl::api::wire::{Explanation, RuleReport, SignalReport};
use panectl::status::Status;
use panectl::status::decision::Decision;
use panectl::status::signal::StatusSource;

use super::client::{or_none, printable, show_some};
use super::table::Table;

/// What `explain` shows for people: a pane's [`Explanation`] from the daemon, or a screen
/// file's from `panectl detect --explain`.
pub struct Shown<'a> {
    /// The pane, or the file.
    pub subject: String,
    /// The status.
    pub status: Status,
    /// The provider whose rules apply.
    pub provider: Option<&'a str>,
    /// The rule behind the status.
    pub rule: Option<&'a str>,
    /// Where the status came from (a pane's only).
    pub source: Option<StatusSource>,
    /// The agent's own report in force, with the screen's own status and how long ago that
    /// changed (a pane's only).
    pub signal: Option<(&'a SignalReport, Status, f64)>,
    /// Every rule on the screen.
    pub rules: &'a [RuleReport],
    /// The dialog's question and options, when it waits for an answer.
    pub decision: Option<&'a Decision>,
}

impl<'a> Shown<'a> {
    /// A pane's explanation from the daemon.
    pub fn pane(explanation: &'a Explanation) -> Shown<'a> {
        Shown {
            subject: explanation.pane.to_string(),
            status: explanation.status,
            provider: explanation.provider.as_deref(),
            rule: explanation.rule.as_deref(),
            source: Some(explanation.source),
            signal: explanation.signal.as_ref().map(|signal| {
                (
                    signal,
                    explanation.screen_status,
                    explanation.screen_changed_seconds,
                )
            }),
            rules: &explanation.rules,
            decision: explanation.decision.as_ref(),
        }
    }
}

/// A dialog's question and options for people: the question indented, then each option with
/// its number, a pointer on the pointed one, and the keys that pick it.
pub fn write_decision(out: &mut impl Write, decision: &Decision) -> std::io::Result<()> {
    writeln!(out, "   decision {}:", decision.fingerprint)?;
    for line in decision.question.lines() {
        writeln!(out, "     {}", printable(line))?;
    }
    for choice in &decision.options {
        writeln!(
            out,
            "   {} {}. {}   [{}]",
            if choice.pointed { ">" } else { " " },
            choice.number,
            printable(&choice.label),
            choice.keys.join(" "),
        )?;
    }
    Ok(())
}

/// Prints an explanation (from the daemon or from a file) for people.
pub fn print_explanation(explanation: &Shown<'_>) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let source = match explanation.source {
        None => String::new(),
        Some(source) => format!(", source {source}"),
    };
    writeln!(
        out,
        "{}: {} (provider {}, rule {}{source})",
        printable(&explanation.subject),
        explanation.status,
        or_none(show_some(explanation.provider)),
        or_none(show_some(explanation.rule)),
    )?;
    if let Some((signal, screen_status, screen_changed_seconds)) = explanation.signal {
        writeln!(
            out,
            "   signal: {} {} -> {}, {:.1}s ago; screen says {} (changed {:.1}s ago)",
            signal.source,
            printable(&signal.detail),
            signal.status,
            signal.age_seconds,
            screen_status,
            screen_changed_seconds,
        )?;
    }
    if let Some(decision) = explanation.decision {
        write_decision(&mut out, decision)?;
    }
    // Every rule: `=>` the one that decided, `+` others that matched.
    let mut table = Table::new(&["", "PRIORITY", "RULE", "VERDICT", "WHY"])
        .right_aligned(1)
        .status_column(3);
    for rule in explanation.rules {
        let mark = if rule.decisive {
            "=>"
        } else if rule.matched {
            "+"
        } else {
            ""
        };
        let mut why = if rule.matched {
            "matches".to_string()
        } else {
            printable(&rule.reason)
        };
        if let Some(layer) = &rule.layer {
            why.push_str(&format!("  [inherited from {layer}]"));
        }
        table.row(vec![
            mark.to_string(),
            rule.priority.to_string(),
            printable(&rule.rule),
            rule.verdict.as_str().to_string(),
            why,
        ]);
    }
    if !explanation.rules.is_empty() {
        out.write_all(table.render(super::table::colour_wanted()).as_bytes())?;
    }
    Ok(())
}
