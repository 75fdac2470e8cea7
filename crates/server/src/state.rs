//! What every request shares: the app, the store, the models, auth, limits, and the runs in flight.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use steward_app::store::{RunStore, StoreError};
use steward_app::{App, AppError, ServerLimits};
use tokio::sync::{Notify, Semaphore, watch};
use utoipa::ToSchema;

use crate::auth::Auth;
use crate::guardrails::HostName;
use crate::guardrails::failures::FailedSignIns;

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
    /// Failed sign-ins per client address.
    pub(crate) failures: FailedSignIns,
    /// `server.hosts`.
    pub(crate) hosts: Vec<HostName>,
}

impl Shared {
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

/// Requests per minute for each principal, as a token bucket (per process).
pub(crate) struct RateLimiter {
    per_minute: u32,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl RateLimiter {
    pub(crate) fn new(per_minute: u32) -> Self {
        Self {
            per_minute,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one request for `who`: `Err(seconds to wait)` when over the limit.
    pub(crate) fn take(&self, who: &str) -> Result<(), u64> {
        if self.per_minute == 0 {
            return Ok(());
        }
        let capacity = f64::from(self.per_minute);
        let per_second = capacity / 60.0;
        let now = Instant::now();
        let Ok(mut buckets) = self.buckets.lock() else {
            return Ok(());
        };
        if buckets.len() > 100_000 {
            buckets.retain(|_, (_, at)| now.duration_since(*at) < Duration::from_secs(120));
        }
        let (tokens, at) = buckets.entry(who.to_owned()).or_insert((capacity, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * per_second).min(capacity);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - *tokens) / per_second).ceil().max(1.0) as u64)
        }
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

/// An error answer: `{"error": message}` with a status.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
    pub(crate) retry_after: Option<u64>,
}

/// The body of an error answer.
#[derive(Serialize, ToSchema)]
pub(crate) struct ErrorBody {
    /// What went wrong and what to do.
    error: String,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            retry_after: None,
        }
    }

    pub(crate) fn bad(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub(crate) fn not_found(what: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, format!("there is no {what}"))
    }

    pub(crate) fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, message)
    }

    pub(crate) fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }

    pub(crate) fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message.to_string())
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(what) => Self::new(
                StatusCode::NOT_FOUND,
                format!("there is nothing with the id `{what}`"),
            ),
            StoreError::Ambiguous { .. } => Self::bad(e.to_string()),
            other => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the run store failed: {other}"),
            ),
        }
    }
}

impl From<AppError> for ApiError {
    fn from(e: AppError) -> Self {
        let status = match e.kind() {
            steward_app::ErrorKind::Invalid => StatusCode::BAD_REQUEST,
            steward_app::ErrorKind::Forbidden => StatusCode::FORBIDDEN,
            steward_app::ErrorKind::NotFound => StatusCode::NOT_FOUND,
            steward_app::ErrorKind::Conflict => StatusCode::CONFLICT,
            _ => match &e {
                AppError::Model(_) => StatusCode::BAD_GATEWAY,
                AppError::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            },
        };
        match e {
            AppError::Store(store) => store.into(),
            other => Self::new(status, other.to_string()),
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
            Err(rejection) => Err(ApiError::new(rejection.status(), rejection.body_text())),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            Json(ErrorBody {
                error: self.message,
            }),
        )
            .into_response();
        if let Some(seconds) = self.retry_after
            && let Ok(value) = seconds.to_string().parse()
        {
            response.headers_mut().insert("retry-after", value);
        }
        response
    }
}
