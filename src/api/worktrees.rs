//! The routes of the worktrees launches made: `GET /v1/worktrees` lists them with what git
//! says of each now, `DELETE /v1/worktrees/{name}` removes one (never its branch).

use axum::extract::{Path as UrlPath, Query, State};
use axum::response::{IntoResponse, Response};

use super::error::{ApiError, ErrorBody};
use super::params::{RemoveWorktreeQuery, WorktreePath};
use super::responses::{InboxFailed, UnreadableQuery};
use super::state::ApiState;
use crate::inbox::WorktreeRecord;
use crate::orchestration::worktrees::{self, WorktreeListing};

/// The worktrees launches made
///
/// Each recorded worktree (`launch --worktree`) with its branch and base, the agent launched
/// in it and that agent's status while its pane is there, and what git says now: `missing`
/// (its directory was deleted by hand), `dirty`, and commits `ahead` of and `behind` its base.
#[utoipa::path(
    get,
    path = "/v1/worktrees",
    operation_id = "list_worktrees",
    tag = "orchestration",
    responses(
        (status = 200, description = "The worktrees, oldest first.", body = Vec<WorktreeListing>),
        (status = 500, response = InboxFailed),
    )
)]
pub(crate) async fn list(State(state): State<ApiState>) -> Result<Response, ApiError> {
    let listed = worktrees::list(&state.ctx).await?;
    Ok(axum::Json(listed).into_response())
}

/// Remove a worktree a launch made
///
/// `git worktree remove` (a directory deleted by hand is pruned), then the record goes. The
/// branch always stays. Refused while the agent launched in it still runs, and, without
/// `force`, when it has uncommitted changes or commits on no remote and not on its base.
#[utoipa::path(
    delete,
    path = "/v1/worktrees/{name}",
    operation_id = "remove_worktree",
    tag = "orchestration",
    params(WorktreePath, RemoveWorktreeQuery),
    responses(
        (status = 200, description = "Removed: the record it had.", body = WorktreeRecord),
        (status = 400, response = UnreadableQuery),
        (status = 404, description = "No worktree has that name.", body = ErrorBody),
        (
            status = 409,
            description = "Its agent still runs, or (without `force`) it has uncommitted \
                           changes or unsaved commits.",
            body = ErrorBody
        ),
        (status = 500, response = InboxFailed),
        (status = 502, description = "git failed (its message).", body = ErrorBody),
    )
)]
pub(crate) async fn remove(
    State(state): State<ApiState>,
    UrlPath(WorktreePath { name }): UrlPath<WorktreePath>,
    Query(query): Query<RemoveWorktreeQuery>,
) -> Result<Response, ApiError> {
    let removed = worktrees::remove(&state.ctx, &name, query.force).await?;
    Ok(axum::Json(removed).into_response())
}
