//! `panectl detect` (and `panectl explain FILE`): the status rules on screen captures, offline.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use panectl::status::engine;
use panectl::status::providers::{self, ProviderSet};
use panectl::status::{Status, classify, view_and_shading_of_capture};
use serde_json::json;

use super::values::ProviderParser;
use super::{Run, ServerArgs};

/// What `panectl detect` is given.
#[derive(Debug, clap::Args)]
pub struct DetectArgs {
    /// The provider whose rules to use (default: recognised from each file's banner).
    #[arg(long, value_parser = ProviderParser::new())]
    provider: Option<String>,
    /// Print JSON lines `{"file","provider","status","rule"}`.
    #[arg(long)]
    json: bool,
    /// Capture files (plain or ANSI text). A sibling `.json` file with a "title" gives the
    /// pane title.
    #[arg(required = true)]
    files: Vec<std::path::PathBuf>,
}

impl Run for DetectArgs {
    fn run(&self, _server: &ServerArgs) -> anyhow::Result<ExitCode> {
        detect(&self.files, self.provider.as_deref(), self.json)
    }
}

fn load_providers() -> anyhow::Result<ProviderSet> {
    let dir = providers::user_dir();
    ProviderSet::load(dir.as_deref()).map_err(|errors| {
        let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
        anyhow::anyhow!("broken provider rule files:\n{}", listed.join("\n"))
    })
}

/// One provider's rules (built-in or the user's), by id.
pub fn provider_rules(
    id: &str,
) -> anyhow::Result<std::sync::Arc<panectl::status::rules::Provider>> {
    let set = load_providers()?;
    set.get(id)
        .cloned()
        .with_context(|| format!("unknown provider {id:?} ({})", set.ids()))
}

/// The pane title saved next to a capture (`NAME.json` with a "title"), if any.
fn sidecar_title(file: &Path) -> String {
    let sidecar = file.with_extension("json");
    std::fs::read(&sidecar)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .and_then(|v| v["title"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A capture as read: its view, how its rows are coloured, and the provider picked.
type Read<'a> = (
    panectl::status::view::ScreenView,
    Vec<panectl::status::shading::RowShade>,
    Option<&'a std::sync::Arc<panectl::status::rules::Provider>>,
);

/// Reads a capture and picks the provider.
fn read<'a>(set: &'a ProviderSet, file: &Path, provider: Option<&str>) -> anyhow::Result<Read<'a>> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let (view, shaded) = view_and_shading_of_capture(&bytes, &sidecar_title(file), "");
    let provider = match provider {
        Some(id) => Some(
            set.get(id)
                .with_context(|| format!("unknown provider {id:?} ({})", set.ids()))?,
        ),
        None => set.detect_by_banner(&view.rows),
    };
    Ok((view, shaded, provider))
}

fn detect(
    files: &[std::path::PathBuf],
    provider: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let set = load_providers()?;
    let mut out = std::io::stdout().lock();
    for file in files {
        let (view, _, found) = read(&set, file, provider)?;
        let (status, rule, detail) = match found {
            Some(provider) => {
                let (status, detection) = classify(provider, &view);
                (
                    status,
                    detection.rule.map(|r| r.to_string()),
                    detection.detail,
                )
            }
            None => (Status::Unknown, None, None),
        };
        let provider_id = found.map(|p| p.id.to_string());
        if json {
            let line = json!({"file": file.display().to_string(), "provider": provider_id, "status": status, "rule": rule, "detail": detail});
            writeln!(out, "{line}")?;
        } else {
            let detail = detail.map(|d| format!(": {d}")).unwrap_or_default();
            writeln!(
                out,
                "{}: {status} ({}, {}){detail}",
                file.display(),
                provider_id.as_deref().unwrap_or("no provider"),
                rule.as_deref().unwrap_or("no rule")
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn explain_file(file: &Path, provider: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let set = load_providers()?;
    let (view, shaded, found) = read(&set, file, provider)?;
    let (status, rule, rules) = match found {
        Some(provider) => {
            let (status, detection) = classify(provider, &view);
            (
                status,
                detection.rule.map(|r| r.to_string()),
                engine::explain(provider, &view),
            )
        }
        None => (Status::Unknown, None, Vec::new()),
    };
    let rows: Vec<&str> = view.rows.iter().map(String::as_str).collect();
    let decision = found
        .filter(|_| status == Status::WaitingUserAnswer)
        .and_then(|provider| panectl::status::decision::for_provider(provider, &rows, &shaded));
    let explanation = json!({
        "file": file.display().to_string(),
        "provider": found.map(|p| p.id.to_string()),
        "status": status,
        "rule": rule,
        "rules": rules,
        "decision": decision,
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&explanation)?);
    } else {
        super::explanation::print_explanation(&super::explanation::Shown {
            subject: file.display().to_string(),
            status,
            provider: found.map(|p| &*p.id),
            rule: rule.as_deref(),
            source: None,
            signal: None,
            rules: &rules,
            decision: decision.as_ref(),
        })?;
    }
    Ok(ExitCode::SUCCESS)
}
