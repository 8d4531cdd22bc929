//! The ranges of the numbers requests carry (timeouts, times to live): checked before they
//! become durations, so that every refusal names the field.

use std::time::Duration;

use super::Error;

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
/// to `max`; otherwise a bad request naming the field and the range. (`Duration::from_secs_f64`
/// panics on a value it cannot hold, such as 1e19: no such value reaches it.)
pub fn seconds(field: &str, value: f64, zero: Zero, max: f64) -> Result<Duration, Error> {
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
    Err(Error::BadRequest(format!(
        "{field} must be a number of seconds {low} up to {max} (got {value})"
    )))
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
            let Error::BadRequest(message) =
                seconds("timeout_seconds", bad, Zero::Allowed, 10.0).expect_err("out of range")
            else {
                panic!("not a bad request");
            };
            assert!(
                message.starts_with("timeout_seconds must be a number of seconds from 0 up to 10"),
                "{message}"
            );
        }
    }
}
