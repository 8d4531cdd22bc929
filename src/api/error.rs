//! The API's error answer, apart from the server so that the request-body checks and the
//! routes can return it without depending on the HTTP module. The workflows' errors become
//! answers through `From`, one status code per kind.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use crate::orchestration::Error;

/// An error answer: status and a JSON `{"error": ...}` body.
pub(crate) struct ApiError(pub(crate) StatusCode, pub(crate) String);

/// The body of every error answer (its schema is `Error` in the OpenAPI document).
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = Error)]
pub(crate) struct ErrorBody {
    /// What went wrong.
    pub(crate) error: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, axum::Json(ErrorBody { error: self.1 })).into_response()
    }
}

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        let status = match &error {
            Error::BadRequest(_) => StatusCode::BAD_REQUEST,
            Error::NotFound(_) => StatusCode::NOT_FOUND,
            Error::Conflict(_) => StatusCode::CONFLICT,
            Error::Gone(_) => StatusCode::GONE,
            Error::Forbidden(_) => StatusCode::FORBIDDEN,
            Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Error::Failed(_) => StatusCode::BAD_GATEWAY,
            Error::CommandFailed(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Error::TimedOut(_) => StatusCode::GATEWAY_TIMEOUT,
            Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError(status, error.to_string())
    }
}

impl From<crate::orchestration::names::NameError> for ApiError {
    fn from(error: crate::orchestration::names::NameError) -> Self {
        Error::from(error).into()
    }
}

impl From<crate::orchestration::shell_guard::ShellRefused> for ApiError {
    fn from(refused: crate::orchestration::shell_guard::ShellRefused) -> Self {
        Error::from(refused).into()
    }
}

impl From<crate::inbox::InboxError> for ApiError {
    fn from(error: crate::inbox::InboxError) -> Self {
        Error::from(error).into()
    }
}

/// A connection that failed or closed: the daemon cannot answer now (503).
impl From<crate::tmux::ConnectionError> for ApiError {
    fn from(error: crate::tmux::ConnectionError) -> Self {
        ApiError(StatusCode::SERVICE_UNAVAILABLE, error.to_string())
    }
}
