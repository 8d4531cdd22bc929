//! The API's error answer, apart from the server so that the request-body checks and the
//! workflows can return it without depending on the HTTP module.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::names::NameError;

/// An error answer: status and a JSON `{"error": ...}` body.
pub(crate) struct ApiError(pub(crate) StatusCode, pub(crate) String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, axum::Json(serde_json::json!({ "error": self.1 }))).into_response()
    }
}

impl From<NameError> for ApiError {
    fn from(error: NameError) -> Self {
        let status = match error {
            NameError::NotFound(_) => StatusCode::NOT_FOUND,
            NameError::Ambiguous { .. } => StatusCode::CONFLICT,
        };
        ApiError(status, error.to_string())
    }
}

impl From<super::shell_guard::ShellRefused> for ApiError {
    fn from(refused: super::shell_guard::ShellRefused) -> Self {
        ApiError(StatusCode::CONFLICT, refused.0)
    }
}
