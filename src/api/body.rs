//! Reading request bodies: the JSON extractor of the routes ([`Json`]) and the range checks of
//! their numbers ([`seconds`]), so that every refusal is a 400 that names the field.

use std::time::Duration;

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

/// The longest wait a request may ask for: `wait` and the timeouts of handoffs (30 days).
pub const MAX_WAIT_SECONDS: f64 = 86_400.0 * 30.0;

/// The longest a launch may wait for its agent to be ready (an hour).
pub const MAX_LAUNCH_SECONDS: f64 = 3_600.0;

/// The longest time to live of a message (a year).
pub const MAX_TTL_SECONDS: f64 = 86_400.0 * 365.0;

/// Whether 0 is in a range of seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zero {
    /// 0 is allowed (answer at once).
    Allowed,
    /// The value must be above 0.
    Refused,
}

/// `value` (the request's field `field`) as a duration, if it is a number from 0 (or above 0)
/// to `max`; otherwise a 400 naming the field and the range. (`Duration::from_secs_f64`
/// panics on a value it cannot hold, such as 1e19: no such value reaches it.)
pub(crate) fn seconds(field: &str, value: f64, zero: Zero, max: f64) -> Result<Duration, ApiError> {
    let low_ok = match zero {
        Zero::Allowed => value >= 0.0,
        Zero::Refused => value > 0.0,
    };
    if value.is_finite() && low_ok && value <= max {
        return Ok(Duration::from_secs_f64(value));
    }
    let low = match zero {
        Zero::Allowed => "from 0",
        Zero::Refused => "above 0 and",
    };
    Err(ApiError(
        StatusCode::BAD_REQUEST,
        format!("{field} must be a number of seconds {low} up to {max} (got {value})"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_checked_before_they_become_durations() {
        assert_eq!(
            seconds("t", 1.5, Zero::Allowed, 10.0).ok(),
            Some(Duration::from_millis(1500))
        );
        assert!(seconds("t", 0.0, Zero::Allowed, 10.0).is_ok());
        assert!(seconds("t", 0.0, Zero::Refused, 10.0).is_err());
        for bad in [-1.0, 1e19, f64::INFINITY, f64::NAN, 10.5] {
            let ApiError(status, message) =
                seconds("timeout_seconds", bad, Zero::Allowed, 10.0).expect_err("out of range");
            assert_eq!(status, StatusCode::BAD_REQUEST);
            assert!(
                message.starts_with("timeout_seconds must be a number of seconds from 0 up to 10"),
                "{message}"
            );
        }
    }
}
