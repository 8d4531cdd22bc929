//! The path parameters of the routes, as the handlers read them: one type each, so that the
//! OpenAPI document describes the very names and types the router extracts.

use serde::Deserialize;

/// `{pane}` of the pane routes.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct PanePath {
    /// A pane name, percent-encoded: `%N` (as `%25N`), `session:window.pane` (each part a name,
    /// an index or an id; without `.pane`, the window's active pane), or a window name unique
    /// on the server (its active pane).
    #[param(example = "%3")]
    pub(crate) pane: String,
}

/// `{session}` of `POST /v1/sessions/{session}/transport`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct SessionPath {
    /// `$N` (percent-encoded: `%24N`) or the session's name, percent-encoded.
    #[param(example = "$0")]
    pub(crate) session: String,
}

/// `{id}` of the message routes.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct MessagePath {
    /// A message id.
    pub(crate) id: i64,
}

/// `{id}` of `GET /v1/assignments/{id}`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct AssignmentPath {
    /// An assignment id.
    pub(crate) id: i64,
}

/// `{name}` of `DELETE /v1/worktrees/{name}`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct WorktreePath {
    /// The worktree's name (as `GET /v1/worktrees` lists it), percent-encoded.
    #[param(example = "fix-login")]
    pub(crate) name: String,
}

/// The query of `DELETE /v1/worktrees/{name}`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct RemoveWorktreeQuery {
    /// Remove it even with uncommitted changes or commits that are on no remote and not on
    /// its base (the branch keeps the commits).
    #[serde(default)]
    pub(crate) force: bool,
}
