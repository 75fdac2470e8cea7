//! The settings of a provider's HTTP calls (timeouts, the retry policy, the retry hook) and the decisions
//! made from them: which failures are worth another try, and how long to wait before it (`Retry-After`, or
//! exponential backoff with jitter).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName};

/// How long to wait for each part of a model call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// To open the connection.
    pub connect: Duration,
    /// From sending the request to the response headers (for non-streamed calls that is the whole reply).
    pub first_byte: Duration,
    /// Between two pieces of a streamed reply.
    pub idle: Duration,
    /// For the whole call, body included.
    pub total: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(300),
            idle: Duration::from_secs(120),
            total: Duration::from_secs(900),
        }
    }
}

/// When and how often a failed call is tried again: on 408, 429, 5xx and 529, and on connections that could
/// not be made or were reset; never on other 4xx.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Most retries after the first attempt.
    pub max_retries: u32,
    /// The first backoff delay; each retry doubles it (with jitter).
    pub initial_delay: Duration,
    /// The longest backoff delay.
    pub max_delay: Duration,
    /// The longest `Retry-After` honoured; a provider asking for more gets an error instead.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

/// A call is about to be retried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryNotice {
    /// The provider.
    pub provider: String,
    /// The retry number (1 for the first retry).
    pub attempt: u32,
    /// How long it waits first.
    pub delay: Duration,
    /// Why (the status and the provider's text, or the connection error).
    pub reason: String,
}

/// Receives retry notices (for traces and logs).
pub type RetryHook = Arc<dyn Fn(&RetryNotice) + Send + Sync>;

/// HTTP settings shared by every provider.
#[derive(Clone, Default)]
pub struct HttpOptions {
    /// Timeouts.
    pub timeouts: Timeouts,
    /// Retries.
    pub retry: RetryPolicy,
    /// Called before each retry.
    pub on_retry: Option<RetryHook>,
}

impl fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpOptions")
            .field("timeouts", &self.timeouts)
            .field("retry", &self.retry)
            .field("on_retry", &self.on_retry.is_some())
            .finish()
    }
}

/// Statuses worth another try: 408, 409, 425, 429 and every 5xx (529 included).
pub(super) fn retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 409 | 425 | 429 | 500..=599)
}

/// A server error that is the request's fault, which another try will not change: a 500 whose text is a
/// request-validation or template error (llama.cpp's server answers 500 to a `response_format` it does not
/// take, or to a message its chat template cannot render).
pub(super) fn request_error(status: StatusCode, message: &str) -> bool {
    if status != StatusCode::INTERNAL_SERVER_ERROR {
        return false;
    }
    let text = message.to_ascii_lowercase();
    [
        "validation error",
        "validationerror",
        "has no attribute",
        "is not supported",
        "not supported",
        "unsupported",
        "input should be",
        "field required",
        "extra inputs are not permitted",
        "invalid request",
        "invalid_request",
        "templateerror",
        "jinja",
    ]
    .iter()
    .any(|marker| text.contains(marker))
}

/// Transport failures worth another try: a connection that could not be made, or one reset or closed before
/// the response arrived; never a timeout.
pub(super) fn retryable_transport(error: &reqwest::Error) -> bool {
    if error.is_connect() {
        return true;
    }
    if error.is_timeout() {
        return false;
    }
    // A connection reset or closed before the response arrived.
    error.is_request() || error.is_body()
}

/// `retry-after-ms` (OpenAI) or `Retry-After` in seconds or as an HTTP date.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(HeaderName::from_bytes(name.as_bytes()).ok()?)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .map(str::to_owned)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_millis(ms as u64));
    }
    let value = text("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        // A number too large for a Duration is as good as "never": the caller refuses delays over its maximum.
        return (secs >= 0.0).then(|| Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX));
    }
    let when = httpdate::parse_http_date(&value).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// The delay before the retry after `attempt` retries: the initial delay doubled per retry, capped, with jitter.
pub(super) fn backoff(policy: &RetryPolicy, attempt: u32) -> Duration {
    let exp = policy
        .initial_delay
        .saturating_mul(2u32.saturating_pow(attempt.min(16)));
    let capped = exp.min(policy.max_delay);
    // Full jitter in the upper half: spreads retries of many clients without making them much faster.
    Duration::try_from_secs_f64(capped.as_secs_f64() * (0.5 + fastrand::f64() * 0.5))
        .unwrap_or(capped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
        // Numbers too large for a Duration are "too long", never a panic.
        for huge in ["1e300", "18446744073709551616", "inf"] {
            let mut h = HeaderMap::new();
            h.insert("retry-after", HeaderValue::from_static(huge));
            assert_eq!(retry_after(&h), Some(Duration::MAX), "{huge}");
        }
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("NaN"));
        assert_eq!(retry_after(&h), None);
        let mut h = HeaderMap::new();
        h.insert("retry-after-ms", HeaderValue::from_static("1e300"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(u64::MAX)));
    }

    #[test]
    fn request_errors_are_told_from_server_trouble() {
        let e500 = StatusCode::INTERNAL_SERVER_ERROR;
        assert!(request_error(
            e500,
            "'dict object' has no attribute 'content'"
        ));
        assert!(request_error(
            e500,
            "1 validation error for CreateChatCompletionRequest response_format.type Input should be 'text' or 'json_object'"
        ));
        assert!(!request_error(e500, "CUDA out of memory"));
        assert!(!request_error(StatusCode::BAD_GATEWAY, "not supported"));
    }

    #[test]
    fn backoff_never_overflows() {
        let policy = RetryPolicy {
            initial_delay: Duration::MAX,
            max_delay: Duration::MAX,
            ..RetryPolicy::default()
        };
        for attempt in [0, 1, 16, u32::MAX] {
            assert!(backoff(&policy, attempt) <= Duration::MAX);
        }
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let policy = RetryPolicy {
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
            ..RetryPolicy::default()
        };
        for attempt in 0..10 {
            let d = backoff(&policy, attempt);
            let full = Duration::from_millis(100 * 2u64.pow(attempt)).min(Duration::from_secs(1));
            assert!(d >= full / 2 && d <= full, "{attempt}: {d:?}");
        }
    }
}
