//! What every request shares: the app, the store, the models, auth, limits, and the runs in flight.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Json;
use axum::http::header::{RETRY_AFTER, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use steward_app::store::{RunStore, StoreError};
use steward_app::{App, AppError, ServerLimits};
use tokio::sync::{Notify, Semaphore, watch};
use utoipa::ToSchema;

use crate::auth::Auth;
use crate::guardrails::HostName;
use crate::guardrails::failures::FailedSignIns;
use crate::guardrails::proxies::TrustedProxies;

/// The server's shared state.
pub(crate) struct Shared {
    pub(crate) app: Arc<App>,
    pub(crate) store: RunStore,
    /// How runs get their models.
    pub(crate) choice: steward_app::ModelChoice,
    /// The models connected so far, per agent and chosen model.
    pub(crate) models: steward_app::ModelCache,
    pub(crate) auth: Auth,
    pub(crate) limits: ServerLimits,
    /// This process's name on leases.
    pub(crate) instance: String,
    /// Runs this process may still start.
    pub(crate) run_slots: Arc<Semaphore>,
    pub(crate) in_flight: InFlight,
    /// Becomes true when runs in flight must stop (the shutdown grace period is over).
    pub(crate) stop_runs: watch::Receiver<bool>,
    pub(crate) rate: RateLimiter,
    /// Failed sign-ins per client address and per claimed identity.
    pub(crate) failures: FailedSignIns,
    /// `server.trusted_proxies`: whose forwarding headers say the client's address.
    pub(crate) proxies: Arc<TrustedProxies>,
    /// `server.hosts`.
    pub(crate) hosts: Vec<HostName>,
    /// When this server started (Unix seconds): the `created` of its `/v1` models.
    pub(crate) started: i64,
    /// The turns this server runs, by conversation: a person's Stop ends one (see `POST
    /// /api/conversations/{id}/stop`).
    pub(crate) stops: std::sync::Mutex<std::collections::HashMap<String, Arc<tokio::sync::Notify>>>,
    /// Why there is no model for the default agent, when there is none (found when the server started).
    pub(crate) no_model: Option<String>,
}

/// How to give a server a model, as `/ready` says it when it has none.
pub(crate) const SET_A_MODEL: &str = "start the server with --model PROVIDER:MODEL or STEWARD_MODEL, or set \
     `defaults.model` in steward.yaml (e.g. openai:gpt-4o-mini with OPENAI_API_KEY, or ollama:llama3.1), and restart it";

impl Shared {
    /// The model a turn runs when the person picks none: the server's `--model` or `STEWARD_MODEL`, else the
    /// config's default, else none chosen yet (what the environment offers is found when a turn starts).
    pub(crate) fn default_model(&self) -> Option<String> {
        self.choice
            .spec
            .clone()
            .or_else(|| self.app.config().defaults.model.clone())
            .or_else(|| {
                std::env::var("STEWARD_MODEL")
                    .ok()
                    .filter(|m| !m.trim().is_empty())
            })
    }

    /// [`Shared::default_model`] as people are shown it: a password or key in its base URL masked.
    pub(crate) fn default_model_shown(&self) -> Option<String> {
        self.default_model()
            .map(|m| steward_core::redact::redact_urls(&m))
    }

    /// Whether a person's `settings.model` names the default model (as configured or as shown): no pick.
    pub(crate) fn is_default_model(&self, pick: &str) -> bool {
        self.default_model().as_deref() == Some(pick)
            || self.default_model_shown().as_deref() == Some(pick)
    }

    /// Whether runs have a model, as `/ready` and `/api/me` say it: `{"configured", "message"?}`.
    pub(crate) fn model_status(&self) -> serde_json::Value {
        match &self.no_model {
            None => serde_json::json!({"configured": true}),
            Some(why) => serde_json::json!({
                "configured": false,
                "message": format!(
                    "Messages cannot be answered until a model is set; MCP's tools, approvals, change sets, runs \
                     and the audit trail work without one. Why: {why}"
                ),
            }),
        }
    }

    /// How long a turn's lease lasts without renewal.
    pub(crate) fn lease(&self) -> Duration {
        Duration::from_secs(self.limits.lease_seconds.max(1))
    }

    /// When a lease taken now runs out.
    pub(crate) fn lease_until(&self) -> chrono::DateTime<chrono::Utc> {
        chrono::Utc::now() + chrono::Duration::from_std(self.lease()).unwrap_or_default()
    }

    /// How often a turn in flight renews its lease, and how often expired leases are looked for.
    pub(crate) fn renew_every(&self) -> Duration {
        (self.lease() / 3).max(Duration::from_millis(300))
    }
}

/// Counts runs in flight, so that shutdown can wait for them.
#[derive(Default)]
pub(crate) struct InFlight {
    count: AtomicUsize,
    idle: Notify,
}

/// Held while a run is in flight.
pub(crate) struct InFlightGuard(Arc<Shared>);

impl InFlight {
    pub(crate) fn enter(shared: &Arc<Shared>) -> InFlightGuard {
        shared.in_flight.count.fetch_add(1, Ordering::SeqCst);
        InFlightGuard(shared.clone())
    }

    /// Waits until no run is in flight.
    pub(crate) async fn wait_idle(&self) {
        loop {
            let notified = self.idle.notified();
            if self.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            notified.await;
        }
    }

    pub(crate) fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        if self.0.in_flight.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.in_flight.idle.notify_waiters();
        }
    }
}

/// Requests per minute for each principal (per process): up to the limit at once, then one every
/// 60 / limit seconds (governor's GCRA, the same shape as a token bucket of that size).
pub(crate) struct RateLimiter(Option<governor::DefaultKeyedRateLimiter<String>>);

/// Principals kept by the limiter before those not seen lately are dropped.
const RATE_KEYS: usize = 100_000;

impl RateLimiter {
    /// `per_minute` requests a minute for each principal; 0 turns the limit off.
    pub(crate) fn new(per_minute: u32) -> Self {
        Self(
            NonZeroU32::new(per_minute)
                .map(|n| governor::RateLimiter::keyed(governor::Quota::per_minute(n))),
        )
    }

    /// Takes one request for `who`: `Err(seconds to wait)` when over the limit.
    pub(crate) fn take(&self, who: &str) -> Result<(), u64> {
        let Some(limiter) = &self.0 else {
            return Ok(());
        };
        if limiter.len() > RATE_KEYS {
            limiter.retain_recent();
        }
        limiter.check_key(&who.to_owned()).map_err(|not_until| {
            let wait = not_until.wait_time_from(governor::clock::Clock::now(limiter.clock()));
            wait.as_secs_f64().ceil().max(1.0) as u64
        })
    }
}

/// The settings of a conversation's runs (the web UI's settings panel).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The agent that answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The model, by name from the config's `models`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Sampling temperature, 0 to 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Most tokens in one reply of the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// How many earlier messages of the conversation the model is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<usize>,
    /// Most model calls (actions) per message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_actions: Option<u32>,
}

impl Settings {
    /// These settings with `other`'s given values on top.
    pub(crate) fn overlay(&self, other: &Settings) -> Settings {
        Settings {
            agent: other.agent.clone().or_else(|| self.agent.clone()),
            model: other.model.clone().or_else(|| self.model.clone()),
            temperature: other.temperature.or(self.temperature),
            max_tokens: other.max_tokens.or(self.max_tokens),
            history: other.history.or(self.history),
            max_actions: other.max_actions.or(self.max_actions),
        }
    }

    /// An error for a value out of range.
    pub(crate) fn check(&self) -> Result<(), ApiError> {
        if let Some(t) = self.temperature
            && !(0.0..=2.0).contains(&t)
        {
            return Err(ApiError::bad(format!(
                "settings.temperature must be from 0 to 2, not {t}"
            )));
        }
        if let Some(n) = self.max_tokens
            && !(1..=1_000_000).contains(&n)
        {
            return Err(ApiError::bad(format!(
                "settings.max_tokens must be from 1 to 1000000, not {n}"
            )));
        }
        if let Some(n) = self.history
            && n > 1000
        {
            return Err(ApiError::bad(format!(
                "settings.history must be from 0 to 1000, not {n}"
            )));
        }
        if let Some(n) = self.max_actions
            && !(1..=1000).contains(&n)
        {
            return Err(ApiError::bad(format!(
                "settings.max_actions must be from 1 to 1000, not {n}"
            )));
        }
        Ok(())
    }
}

/// An error answer: `{"error": message}` with the status of its kind (and `Retry-After` when the client should
/// wait, `WWW-Authenticate: Bearer` on 401).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ApiError {
    /// 400: the request is wrong; the message says what to send.
    #[error("{0}")]
    BadRequest(String),
    /// 401: no credentials, or credentials that do not hold.
    #[error("{0}")]
    Unauthorized(String),
    /// 403: the caller may not do this, or the request came from a page of another origin.
    #[error("{0}")]
    Forbidden(String),
    /// 404: no such thing (or not the caller's to see).
    #[error("{0}")]
    NotFound(String),
    /// 409: the thing is in a state that does not allow it now.
    #[error("{0}")]
    Conflict(String),
    /// 413: the body is too large.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// 415: a state change whose body is not JSON.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 421: the request's `Host` is not one of the server's names.
    #[error("{0}")]
    Misdirected(String),
    /// 422: a well-formed request that cannot be done (a JSON body of the wrong shape, nothing to chart).
    #[error("{0}")]
    Unprocessable(String),
    /// 429: too many requests, or too many failed sign-ins; try again in `retry_after` seconds.
    #[error("{message}")]
    TooManyRequests {
        /// What the limit is.
        message: String,
        /// Seconds to wait (`Retry-After`).
        retry_after: u64,
    },
    /// 503: the server cannot serve this now (its run slots are full, the run store failed).
    #[error("{message}")]
    Unavailable {
        /// Why.
        message: String,
        /// Seconds to wait (`Retry-After`), when known.
        retry_after: Option<u64>,
    },
    /// 502: something the server depends on (the model's provider) failed.
    #[error("{0}")]
    BadGateway(String),
    /// 500: the server failed.
    #[error("{0}")]
    Internal(String),
}

/// The body of an error answer.
#[derive(Serialize, ToSchema)]
pub(crate) struct ErrorBody {
    /// What went wrong and what to do.
    error: String,
}

impl ApiError {
    /// An error with the variant of `status` (the statuses of axum's body rejections: 400, 413, 415, 422;
    /// anything else from 500 up is an internal error, the rest a bad request).
    pub(crate) fn with_status(status: StatusCode, message: impl Into<String>) -> Self {
        let message = message.into();
        match status {
            StatusCode::PAYLOAD_TOO_LARGE => Self::PayloadTooLarge(message),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => Self::UnsupportedMediaType(message),
            StatusCode::UNPROCESSABLE_ENTITY => Self::Unprocessable(message),
            s if s.is_server_error() => Self::Internal(message),
            _ => Self::BadRequest(message),
        }
    }

    pub(crate) fn bad(message: impl Into<String>) -> Self {
        Self::BadRequest(message.into())
    }

    pub(crate) fn not_found(what: &str) -> Self {
        Self::NotFound(format!("there is no {what}"))
    }

    pub(crate) fn forbidden(message: impl Into<String>) -> Self {
        Self::Forbidden(message.into())
    }

    pub(crate) fn conflict(message: impl Into<String>) -> Self {
        Self::Conflict(message.into())
    }

    pub(crate) fn internal(message: impl std::fmt::Display) -> Self {
        Self::Internal(message.to_string())
    }

    /// The answer's status.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Misdirected(_) => StatusCode::MISDIRECTED_REQUEST,
            Self::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::BadGateway(_) => StatusCode::BAD_GATEWAY,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The message (the answer's `error`).
    pub(crate) fn message(&self) -> &str {
        match self {
            Self::BadRequest(m)
            | Self::Unauthorized(m)
            | Self::Forbidden(m)
            | Self::NotFound(m)
            | Self::Conflict(m)
            | Self::PayloadTooLarge(m)
            | Self::UnsupportedMediaType(m)
            | Self::Misdirected(m)
            | Self::Unprocessable(m)
            | Self::BadGateway(m)
            | Self::Internal(m)
            | Self::TooManyRequests { message: m, .. }
            | Self::Unavailable { message: m, .. } => m,
        }
    }

    /// Seconds the client should wait before trying again (`Retry-After`).
    pub(crate) fn retry_after(&self) -> Option<u64> {
        match self {
            Self::TooManyRequests { retry_after, .. } => Some(*retry_after),
            Self::Unavailable { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The headers of the answer but the content type: `Retry-After`, and `WWW-Authenticate` on 401.
    pub(crate) fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(seconds) = self.retry_after()
            && let Ok(value) = HeaderValue::from_str(&seconds.to_string())
        {
            headers.insert(RETRY_AFTER, value);
        }
        if let Self::Unauthorized(_) = self {
            headers.insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        headers
    }

    /// Says on the log what the operator should know: the server's own failures, and what it depends on.
    pub(crate) fn log(&self) {
        match self {
            Self::Internal(message) => tracing::error!(status = 500, "{message}"),
            Self::BadGateway(message) => tracing::warn!(status = 502, "{message}"),
            Self::Unavailable { message, .. } => tracing::warn!(status = 503, "{message}"),
            _ => {}
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(what) | StoreError::NoChangeSet(what) => {
                Self::NotFound(format!("there is nothing with the id `{what}`"))
            }
            StoreError::Ambiguous { .. } => Self::BadRequest(e.to_string()),
            other => Self::Unavailable {
                message: format!("the run store failed: {other}"),
                retry_after: None,
            },
        }
    }
}

impl From<AppError> for ApiError {
    fn from(e: AppError) -> Self {
        if let AppError::Store(store) = e {
            return store.into();
        }
        let message = e.to_string();
        match e.kind() {
            steward_app::ErrorKind::Invalid => Self::BadRequest(message),
            steward_app::ErrorKind::Forbidden => Self::Forbidden(message),
            steward_app::ErrorKind::NotFound => Self::NotFound(message),
            steward_app::ErrorKind::Conflict => Self::Conflict(message),
            _ => match e {
                AppError::Model(_) => Self::BadGateway(message),
                _ => Self::Internal(message),
            },
        }
    }
}

/// A JSON request body whose errors (malformed JSON, unknown fields, too large) answer as [`ApiError`]s:
/// `{"error": …}` with 400, 413, 415 or 422.
pub(crate) struct Body<T>(pub(crate) T);

impl<S, T> axum::extract::FromRequest<S> for Body<T>
where
    S: Send + Sync,
    T: serde::de::DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(ApiError::with_status(
                rejection.status(),
                rejection_text(&rejection.body_text()),
            )),
        }
    }
}

/// A JSON body's rejection in a reader's words: axum's "Failed to deserialize the JSON body into the target
/// type: messages[0]: missing field `role` at line 1 column 30" says which field, after wording about Rust
/// types.
fn rejection_text(text: &str) -> String {
    if let Some(rest) =
        text.strip_prefix("Failed to deserialize the JSON body into the target type: ")
    {
        format!("the body does not have the expected fields: {rest}")
    } else if let Some(rest) = text.strip_prefix("Failed to parse the request body as JSON: ") {
        format!("the body is not valid JSON: {rest}")
    } else if text.starts_with("Expected request with `Content-Type: application/json`") {
        "send the body as JSON with the header `Content-Type: application/json`".to_owned()
    } else {
        text.to_owned()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        self.log();
        let status = self.status();
        let headers = self.headers();
        let body = ErrorBody {
            error: self.message().to_owned(),
        };
        (status, headers, Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::RateLimiter;

    #[test]
    fn each_principal_gets_its_burst_then_waits_for_the_next_slot() {
        let limiter = RateLimiter::new(3);
        for _ in 0..3 {
            assert_eq!(limiter.take("ada"), Ok(()));
        }
        // One request every 20 s after the burst: the wait says so, in whole seconds.
        let wait = limiter.take("ada").unwrap_err();
        assert!((1..=20).contains(&wait), "{wait}");
        assert_eq!(limiter.take("vic"), Ok(()));
    }

    #[test]
    fn a_rejected_body_is_said_without_rust_types() {
        let said = super::rejection_text(
            "Failed to deserialize the JSON body into the target type: messages: invalid type: string \"x\", expected a sequence at line 1 column 30",
        );
        assert_eq!(
            said,
            "the body does not have the expected fields: messages: invalid type: string \"x\", expected a sequence at line 1 column 30"
        );
        assert!(
            super::rejection_text("Failed to parse the request body as JSON: EOF")
                .starts_with("the body is not valid JSON")
        );
        assert!(
            super::rejection_text("Expected request with `Content-Type: application/json`")
                .contains("Content-Type: application/json")
        );
    }

    #[test]
    fn a_limit_of_zero_turns_it_off() {
        let limiter = RateLimiter::new(0);
        for _ in 0..10_000 {
            assert_eq!(limiter.take("ada"), Ok(()));
        }
    }
}
