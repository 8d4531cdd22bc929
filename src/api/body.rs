//! Reading request bodies: the JSON extractor of the routes ([`Json`]), so that every refusal
//! is a 400 that names the field (the range checks of numbers are in
//! [`crate::orchestration::limits`]).

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;

use super::error::ApiError;

/// A JSON body, as `axum::Json`, whose refusals are `{"error": ...}` answers: a body that does
/// not fit the route's type (a missing or unknown field, a wrong type) is a 400 with serde's
/// words, which name the field (axum's own answer would be a 422).
pub(crate) struct Json<T>(pub T);

impl<T, S> FromRequest<S> for Json<T>
where
    axum::Json<T>: FromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(Json(value)),
            Err(rejection) => {
                let status = match rejection.status() {
                    StatusCode::UNPROCESSABLE_ENTITY => StatusCode::BAD_REQUEST,
                    other => other,
                };
                Err(ApiError(status, rejection.body_text()))
            }
        }
    }
}
