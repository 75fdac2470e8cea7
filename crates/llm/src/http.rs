//! HTTP for providers: timeouts, retries with exponential backoff and jitter, `Retry-After`, the provider's own
//! error text in every error, and secrets kept out of all of it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Response, StatusCode};
use serde_json::Value;
use steward_core::ModelError;
use steward_core::redact::{redact_secrets, redact_urls};

/// A secret (API key, token) that never shows in `Debug`, logs or errors.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the one header that needs it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

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

/// The largest response body read (error bodies are cut far shorter).
const MAX_BODY: usize = 64 * 1024 * 1024;
/// The most of an error body quoted in an error.
const MAX_ERROR_TEXT: usize = 600;

/// A provider's HTTP client.
pub(crate) struct Http {
    client: reqwest::Client,
    provider: String,
    options: HttpOptions,
    secrets: Vec<Secret>,
}

impl Http {
    /// A client for `provider`; `secrets` are scrubbed from every error text.
    pub(crate) fn new(
        provider: impl Into<String>,
        options: HttpOptions,
        secrets: Vec<Secret>,
    ) -> Result<Self, ModelError> {
        let provider = provider.into();
        // reqwest is built without a bundled crypto provider; ring is ours. Installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(options.timeouts.connect)
            .read_timeout(options.timeouts.idle)
            .user_agent(concat!("steward/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ModelError::Transport {
                provider: provider.clone(),
                message: format!("could not set up the HTTP client: {e}"),
            })?;
        Ok(Self {
            client,
            provider,
            options,
            secrets: secrets
                .into_iter()
                .filter(|s| !s.expose().is_empty())
                .collect(),
        })
    }

    /// The provider's name.
    pub(crate) fn provider(&self) -> &str {
        &self.provider
    }

    /// Posts a JSON body and returns the successful response (its body not read yet), retrying what is worth
    /// retrying.
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<Response, ModelError> {
        let body = serde_json::to_vec(body)
            .map(Bytes::from)
            .map_err(|e| self.invalid(format!("could not encode the request: {e}")))?;
        let retry = self.options.retry;
        let mut attempt = 0u32;
        loop {
            let request = self
                .client
                .post(url)
                .headers(headers.clone())
                .header(
                    reqwest::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )
                .body(body.clone())
                .timeout(self.options.timeouts.total);
            let sent = tokio::time::timeout(self.options.timeouts.first_byte, request.send()).await;
            let (reason, delay) = match sent {
                Err(_) => {
                    return Err(ModelError::Timeout {
                        provider: self.provider.clone(),
                        after: self.options.timeouts.first_byte,
                    });
                }
                Ok(Err(error)) => {
                    let message = self.describe(&error);
                    if !retryable_transport(&error) || attempt >= retry.max_retries {
                        return Err(if error.is_timeout() {
                            ModelError::Timeout {
                                provider: self.provider.clone(),
                                after: self.options.timeouts.total,
                            }
                        } else {
                            ModelError::Transport {
                                provider: self.provider.clone(),
                                message,
                            }
                        });
                    }
                    (message, backoff(&retry, attempt))
                }
                Ok(Ok(response)) if response.status().is_success() => return Ok(response),
                Ok(Ok(response)) => {
                    let status = response.status();
                    let asked = retry_after(response.headers());
                    let message = self.error_text(response).await;
                    if !retryable_status(status) || attempt >= retry.max_retries {
                        return Err(self.status_error(status, message));
                    }
                    let delay = match asked {
                        Some(asked) if asked > retry.max_retry_after => {
                            return Err(self.status_error(
                                status,
                                format!(
                                    "{message} (the provider asks to retry after {} s, more than the {} s allowed)",
                                    asked.as_secs(),
                                    retry.max_retry_after.as_secs()
                                ),
                            ));
                        }
                        Some(asked) => asked,
                        None => backoff(&retry, attempt),
                    };
                    (format!("HTTP {}: {message}", status.as_u16()), delay)
                }
            };
            attempt += 1;
            if let Some(hook) = &self.options.on_retry {
                hook(&RetryNotice {
                    provider: self.provider.clone(),
                    attempt,
                    delay,
                    reason,
                });
            }
            tokio::time::sleep(delay).await;
        }
    }

    /// Reads a whole (successful) body.
    pub(crate) async fn body(&self, mut response: Response) -> Result<Vec<u8>, ModelError> {
        let mut out = Vec::new();
        while let Some(chunk) = self.chunk(&mut response).await? {
            if out.len() + chunk.len() > MAX_BODY {
                return Err(self.invalid(format!("the reply is larger than {MAX_BODY} bytes")));
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }

    /// The next piece of a body; `None` at its end. A connection that breaks is an error that says so.
    pub(crate) async fn chunk(&self, response: &mut Response) -> Result<Option<Bytes>, ModelError> {
        response.chunk().await.map_err(|error| {
            if error.is_timeout() {
                ModelError::Timeout {
                    provider: self.provider.clone(),
                    after: self.options.timeouts.idle,
                }
            } else {
                ModelError::Transport {
                    provider: self.provider.clone(),
                    message: format!("the reply was cut off: {}", self.describe(&error)),
                }
            }
        })
    }

    /// An error for a reply that could not be understood.
    pub(crate) fn invalid(&self, message: impl Into<String>) -> ModelError {
        ModelError::InvalidResponse {
            provider: self.provider.clone(),
            message: self.redact(&message.into()),
        }
    }

    fn status_error(&self, status: StatusCode, message: String) -> ModelError {
        let hint = match status.as_u16() {
            401 => " Check the API key.",
            403 => " Check that the key may use this model.",
            404 => " Check the model or deployment name and the base URL.",
            _ => "",
        };
        ModelError::Status {
            provider: self.provider.clone(),
            status: status.as_u16(),
            message: self.redact(&format!("{message}{hint}")),
        }
    }

    /// The provider's own error text from an error response.
    async fn error_text(&self, mut response: Response) -> String {
        let mut raw = Vec::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            raw.extend_from_slice(&chunk);
            if raw.len() > 64 * 1024 {
                break;
            }
        }
        let text = String::from_utf8_lossy(&raw);
        let message = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| provider_message(&v))
            .unwrap_or_else(|| text.trim().to_owned());
        let message = if message.is_empty() {
            "no error text".to_owned()
        } else {
            message
        };
        self.quote(&message, MAX_ERROR_TEXT)
    }

    fn describe(&self, error: &reqwest::Error) -> String {
        let mut text = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            let cause_text = cause.to_string();
            if !text.contains(&cause_text) {
                text.push_str(": ");
                text.push_str(&cause_text);
            }
            source = cause.source();
        }
        if error.is_connect() {
            text.push_str(". Is the server running and the base URL right?");
        }
        self.redact(&text)
    }

    /// Removes every secret from a text: the keys and URL credentials this client knows, and passwords and
    /// keys in any URL quoted in it.
    pub(crate) fn redact(&self, text: &str) -> String {
        let secrets: Vec<&str> = self.secrets.iter().map(Secret::expose).collect();
        redact_urls(&redact_secrets(text, &secrets))
    }

    /// A text to quote in an error, at most `max` characters: redacted first, then cut, so that no piece of a
    /// secret survives the cut.
    pub(crate) fn quote(&self, text: &str, max: usize) -> String {
        cut(&self.redact(text), max)
    }
}

/// The error message inside a provider's JSON error body, for the shapes OpenAI, Azure, Anthropic, Ollama and
/// the local servers use.
pub(crate) fn provider_message(body: &Value) -> Option<String> {
    let error = body.get("error").unwrap_or(body);
    if let Some(s) = error.as_str() {
        return Some(s.to_owned());
    }
    let message = ["message", "detail", "msg"]
        .iter()
        .find_map(|k| error.get(*k).and_then(Value::as_str))?;
    let kind = ["type", "code"]
        .iter()
        .find_map(|k| error.get(*k).and_then(Value::as_str));
    Some(match kind {
        Some(kind) if !message.contains(kind) => format!("{message} ({kind})"),
        _ => message.to_owned(),
    })
}

fn retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 409 | 425 | 429 | 500..=599)
}

fn retryable_transport(error: &reqwest::Error) -> bool {
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
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
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

fn backoff(policy: &RetryPolicy, attempt: u32) -> Duration {
    let exp = policy
        .initial_delay
        .saturating_mul(2u32.saturating_pow(attempt.min(16)));
    let capped = exp.min(policy.max_delay);
    // Full jitter in the upper half: spreads retries of many clients without making them much faster.
    Duration::try_from_secs_f64(capped.as_secs_f64() * (0.5 + fastrand::f64() * 0.5))
        .unwrap_or(capped)
}

/// Cuts a text to at most `max` characters.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let head: String = text.chars().take(max).collect();
        format!("{head}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn provider_messages_of_every_shape() {
        let openai = json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}});
        assert_eq!(
            provider_message(&openai).unwrap(),
            "Rate limit reached (requests)"
        );
        let anthropic = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        assert_eq!(
            provider_message(&anthropic).unwrap(),
            "Overloaded (overloaded_error)"
        );
        let ollama = json!({"error": "model \"qwen\" not found, try pulling it first"});
        assert_eq!(
            provider_message(&ollama).unwrap(),
            "model \"qwen\" not found, try pulling it first"
        );
        let vllm = json!({"object": "error", "message": "bad request", "type": "BadRequestError", "code": 400});
        assert_eq!(
            provider_message(&vllm).unwrap(),
            "bad request (BadRequestError)"
        );
        assert!(provider_message(&json!({"foo": 1})).is_none());
    }

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
    fn quoting_redacts_before_cutting() {
        let key = "sk-live-0123456789";
        let http = Http::new("p", HttpOptions::default(), vec![Secret::new(key)]).unwrap();
        for offset in 0..30 {
            let text = format!("{}{key} tail", "x".repeat(offset));
            let quoted = http.quote(&text, 20);
            assert!(!quoted.contains("sk-l"), "{offset}: {quoted}");
        }
        assert_eq!(
            http.redact("see https://u:pw@h/v1?token=abc"),
            "see https://u:***@h/v1?token=***"
        );
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

    #[test]
    fn secrets_never_show() {
        let s = Secret::new("sk-live-123");
        assert_eq!(format!("{s:?}"), "[redacted]");
        let http = Http::new("p", HttpOptions::default(), vec![s]).unwrap();
        assert_eq!(
            http.redact("bad key sk-live-123 given"),
            "bad key [redacted] given"
        );
    }
}
