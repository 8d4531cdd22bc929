//! The record `restore` works from: each launch (what it asked for, without values from the
//! caller's environment; its session and window; its pane), and the conversation id an agent's
//! hooks report (an agent learned of only through its hooks is recorded here too). Kept apart
//! from [`super::restore`], which launches, so that launching and restoring do not import each
//! other.

use super::Context;
use super::launch_plan::LaunchBody;
use crate::ids::PaneId;
use crate::inbox::AgentRecord;
use crate::session::PaneSummary;
use crate::status::signal::HookReport;

/// How long a launch waits for the mirror to show its new pane, for its session's name.
const PLACEMENT_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Records a launch for [`restore`] with the conversation id it started its CLI on, if it chose
/// one (best effort: a launch that worked is not failed by it; a failure is logged).
pub async fn record_launch(
    state: &Context,
    body: &LaunchBody,
    pane: PaneId,
    provider: &str,
    worktree_path: Option<&str>,
    conversation: Option<String>,
) {
    if body.restoring {
        return;
    }
    let mut launch = match serde_json::to_value(body) {
        Ok(serde_json::Value::Object(launch)) => launch,
        _ => return,
    };
    // Never a value from the caller's environment; a worktree is made once, then used.
    launch.remove("caller_env");
    launch.remove("worktree");
    launch.remove("base");
    // Split off a pane: restore splits off the agent of that pane again, known by its name
    // (pane ids change when tmux starts again); one with no name is not split off again.
    if let Some(target) = body.split.as_deref()
        && target.parse::<PaneId>().is_ok()
    {
        let named = state
            .all_panes()
            .await
            .into_iter()
            .find(|p| p.pane.to_string() == target)
            .and_then(|p| p.name);
        match named {
            Some(name) => launch.insert("split".into(), name.into()),
            None => launch.remove("split"),
        };
    }
    if let Some(path) = worktree_path {
        launch.insert("cwd".into(), path.into());
    }
    let deadline = tokio::time::Instant::now() + PLACEMENT_WAIT;
    let placed = loop {
        let found = state.all_panes().await.into_iter().find(|p| p.pane == pane);
        if found.is_some() || tokio::time::Instant::now() >= deadline {
            break found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let record = AgentRecord {
        key: body.name.clone().unwrap_or_else(|| pane.to_string()),
        name: body.name.clone(),
        provider: provider.to_string(),
        launch: serde_json::Value::Object(launch).to_string(),
        from_env: body.caller_env.0.keys().cloned().collect(),
        session: placed
            .as_ref()
            .map(|p| p.session.to_string())
            .or_else(|| body.session.clone())
            .unwrap_or_default(),
        window_name: placed.as_ref().map(|p| p.window.to_string()),
        window_index: placed.as_ref().map(|p| p.window_index),
        pane: pane.to_string(),
        conversation,
        launched: true,
        seq: 0,
        updated_at: crate::inbox::now_ms(),
    };
    if let Err(error) = state
        .inbox
        .call(move |store| store.put_agent(&record))
        .await
    {
        tracing::warn!(%pane, %error, "the launch is not recorded for restore");
    }
}

/// Notes the conversation id a hook reports for the agent in `pane`, when the hook came from
/// that pane's agent (`sender`, the hook's process and its ancestors, holds the pane's
/// process). An agent panectl did not launch is recorded here, so that it comes back too.
pub async fn note_conversation(
    state: &Context,
    pane: &PaneSummary,
    sender: &[u32],
    report: &HookReport,
) {
    let Some(conversation) = report.session_id.clone() else {
        return;
    };
    if !sender.contains(&pane.pid) || conversation.is_empty() || conversation.len() > 200 {
        return;
    }
    let pane_text = pane.pane.to_string();
    let now = crate::inbox::now_ms();
    let noted = {
        let (pane_text, conversation) = (pane_text.clone(), conversation.clone());
        state
            .inbox
            .call(move |store| store.set_agent_conversation(&pane_text, &conversation, now))
            .await
    };
    let learned = match (noted, pane.provider.as_deref()) {
        (Ok(true), _) | (_, None | Some("shell")) => return,
        (Ok(false), Some(provider)) => {
            let mut launch = serde_json::json!({ "provider": provider });
            if let Some(name) = &pane.name {
                launch["name"] = name.as_str().into();
            }
            if let Some(cwd) = report.cwd.as_deref().filter(|c| c.starts_with('/')) {
                launch["cwd"] = cwd.into();
            }
            AgentRecord {
                key: pane.name.clone().unwrap_or_else(|| pane_text.clone()),
                name: pane.name.clone(),
                provider: provider.to_string(),
                launch: launch.to_string(),
                from_env: Vec::new(),
                session: pane.session.to_string(),
                window_name: Some(pane.window.to_string()),
                window_index: Some(pane.window_index),
                pane: pane_text.clone(),
                conversation: Some(conversation),
                launched: false,
                seq: 0,
                updated_at: now,
            }
        }
        (Err(error), _) => {
            tracing::warn!(pane = %pane_text, %error, "the conversation id is not recorded");
            return;
        }
    };
    if let Err(error) = state
        .inbox
        .call(move |store| store.put_agent(&learned))
        .await
    {
        tracing::warn!(pane = %pane_text, %error, "the agent is not recorded for restore");
    }
}
