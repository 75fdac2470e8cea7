//! # steward-server
//!
//! `steward serve`: the HTTP API with streamed runs, the web UI, an OpenAI-compatible facade and the MCP
//! server, on [`steward_app::App`] — the same agents, roles, approvals and run store as the CLI.
//!
//! Routes and events are described in `docs/server-api.md`; `/openapi.json` is generated from the handlers.
//! Nothing a second server needs lives only in memory: conversations, their messages, approvals and runs are
//! in the run store, so several servers on one PostgreSQL store serve the same conversations. A turn in
//! flight is leased to the server running it; a turn whose server stopped is marked failed, never run twice.
//!
//! Every request first passes the guardrails (`server.hosts` against DNS rebinding, the `Origin` and JSON-only
//! state changes against cross-site requests); failed sign-ins are limited per client address and per claimed
//! identity, never refusing credentials that verify (`server.trusted_proxies` says whose `X-Forwarded-For` or
//! `Forwarded` names the client).
//!
//! The events a run streams to clients are typed: [`wire::ServerEvent`], described in `/openapi.json`. The
//! server logs through `tracing` (a span per request, with its method, path and client address); the binary
//! chooses the subscriber.

mod api;
pub mod auth;
pub mod chart;
mod error;
mod events;
mod guardrails;
pub mod mcp;
mod openai;
mod state;
mod turns;
mod ui;
pub mod wire;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;
use steward_app::App;
use tokio::sync::{Semaphore, watch};
use tower_http::trace::{DefaultOnFailure, DefaultOnRequest, DefaultOnResponse};
use tracing::{Instrument as _, Level};
use utoipa::OpenApi as _;

pub use auth::{Caller, token_hash};
pub use error::ServerError;
pub use state::Settings;
pub use steward_app::{ModelChoice, RunModels};

use state::{ApiError, InFlight, RateLimiter, Shared};

/// What a server is built from.
pub struct ServerOptions {
    /// The app: config, agents, tools, roles, and the run store (conversations, approvals, runs, audit),
    /// which a server must have.
    pub app: Arc<App>,
    /// How runs get their models (see [`App::models`]).
    pub models: ModelChoice,
    /// Whether the server listens only on a loopback address (without credentials configured, it must).
    pub loopback: bool,
}

/// A Steward server.
pub struct Server {
    shared: Arc<Shared>,
    stop_runs: watch::Sender<bool>,
}

#[derive(utoipa::OpenApi)]
#[openapi(
    info(title = "Steward", description = "Agents that act reliably on business data: conversations with streamed runs, approvals, and an OpenAI-compatible facade."),
    paths(
        health, ready,
        api::me, api::create_conversation, api::list_conversations, api::get_conversation,
        api::patch_conversation, api::delete_conversation, api::post_message, api::stop_turn,
        api::list_approvals, api::decide, api::list_changes, api::get_change_set, api::decide_changes,
        api::add_example, api::list_examples, api::chart, api::runs, api::run, api::audit,
        openai::models, openai::model, openai::chat_completions,
    ),
    components(schemas(
        state::Settings, state::ErrorBody, wire::ServerEvent, wire::ApprovalView, wire::Table,
        wire::ChangeSetView, wire::ChangeView, wire::TableChanges, wire::RowChangeView, wire::FieldView,
        wire::RunOutcome, chart::Chart, chart::ChartKind, api::NewExample, api::ExampleView,
    )),
    modifiers(&BearerAuth),
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        openapi.security = Some(vec![utoipa::openapi::security::SecurityRequirement::new(
            "bearer",
            Vec::<String>::new(),
        )]);
    }
}

/// The OpenAPI document of the API.
pub fn openapi() -> serde_json::Value {
    serde_json::to_value(ApiDoc::openapi()).unwrap_or_default()
}

/// The process is up.
#[utoipa::path(get, path = "/health", tag = "ops", security(), responses((status = 200, description = "Up")))]
async fn health() -> impl IntoResponse {
    axum::Json(json!({"status": "ok"}))
}

/// How long `/ready` waits for the run store's write check: well under the second a load balancer's check
/// usually allows, so the answer is a 503 that says why rather than a timeout that says nothing.
const READY_LIMIT: Duration = Duration::from_millis(500);

/// The server can serve: its run store can be written now (checked without writing, within half a second;
/// see `RunStore::health`). A 503 names the cause and what to do.
#[utoipa::path(get, path = "/ready", tag = "ops", security(), responses((status = 200, description = "Ready: the run store can be written"), (status = 503, description = "The run store cannot be written now: `cause` says why, `action` what to do")))]
async fn ready(State(shared): State<Arc<Shared>>) -> Response {
    match shared.store.health(READY_LIMIT).await {
        Ok(()) => axum::Json(json!({
            "status": "ready",
            "runs_in_flight": shared.in_flight.count(),
            // Whether there is a model and how to set one, not why not (the reason names config files): `/api/me`
            // says that.
            "model": if shared.no_model.is_none() {
                json!({"configured": true})
            } else {
                json!({"configured": false, "how": state::SET_A_MODEL})
            },
        }))
        .into_response(),
        Err(fault) => (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(json!({
                "status": "unavailable",
                "store": shared.store.url(),
                "kind": fault.kind,
                "cause": fault.cause,
                "action": fault.action,
                "error": fault.to_string(),
            })),
        )
            .into_response(),
    }
}

/// Authenticates the request (401/403) and applies the caller's rate limit (429). Every surface that needs
/// credentials (`/api`, `/v1`, `/mcp`) comes through here. Credentials that verify are never refused for
/// failed sign-ins; credentials that do not, from an address or claiming an identity with too many failed
/// sign-ins, get 429 instead of 401 (see [`guardrails::failures`]).
async fn authenticate(
    State(shared): State<Arc<Shared>>,
    mut request: Request,
    next: Next,
) -> Response {
    let address = match request.extensions().get::<guardrails::ClientAddress>() {
        Some(address) => *address,
        None => guardrails::ClientAddress::of(&request, &shared.proxies),
    };
    let header = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let caller = match shared
        .auth
        .authenticate(header.as_deref(), shared.app.config())
        .await
    {
        Ok(caller) => caller,
        Err(refusal) if refusal.status == StatusCode::FORBIDDEN.as_u16() => {
            // Credentials that verified, of a caller who may not use the server: not a failed sign-in.
            return ApiError::Forbidden(refusal.message).into_response();
        }
        Err(refusal) => {
            // None sent (a first visit) is not a guess: a 401 that says how to sign in, never counted.
            let Some(header) = header else {
                return ApiError::Unauthorized(refusal.message).into_response();
            };
            let client = guardrails::failures::client(address.0);
            let claimed = guardrails::failures::Identity::of(&header);
            if let Err(refused) = shared.failures.check(client, Some(claimed.identity)) {
                return ApiError::TooManyRequests {
                    message: refused.message(),
                    retry_after: refused.wait(),
                }
                .into_response();
            }
            let reached = shared.failures.failed(client, Some(claimed.identity));
            tracing::debug!(client = %address, claims = %claimed.shown, "failed sign-in");
            if reached.address {
                tracing::warn!(client = %address,
                    "too many failed sign-ins from {address}: its credentials that do not verify get 429 for a \
                     while (valid ones are still accepted)");
            }
            if reached.identity {
                tracing::warn!(client = %address,
                    "too many failed sign-ins claiming {}: credentials that claim it and do not verify get 429 \
                     for a while (valid ones are still accepted)", claimed.shown);
            }
            return ApiError::Unauthorized(refusal.message).into_response();
        }
    };
    if let Err(wait) = shared.rate.take(&caller.principal.name) {
        return ApiError::TooManyRequests {
            message: format!(
                "too many requests: {} a minute are allowed; try again in {wait} s",
                shared.limits.requests_per_minute
            ),
            retry_after: wait,
        }
        .into_response();
    }
    request.extensions_mut().insert(caller);
    next.run(request).await
}

impl Server {
    /// Builds a server: reads the config's `server:` section (tokens, OIDC, CORS, limits).
    pub async fn new(options: ServerOptions) -> Result<Self, ServerError> {
        let config = options.app.config();
        let limits = config
            .server
            .as_ref()
            .map(|s| s.limits.clone())
            .unwrap_or_default();
        let auth = auth::Auth::from_config(config, options.loopback).await?;
        let hosts = guardrails::configured_hosts(config)?;
        let proxies = Arc::new(guardrails::proxies::configured_proxies(config)?);
        let (stop_runs, stop_rx) = watch::channel(false);
        let instance = format!("{}-{}", std::process::id(), uuid::Uuid::now_v7().simple());
        let Some(store) = options.app.store().cloned() else {
            return Err(ServerError::NoStore);
        };
        // Without a model the server still serves what needs none (MCP's tools, approvals, change sets, runs,
        // the audit trail); it says so at /ready, in /api/me and the web UI, and a message is refused with why.
        let default_agent = options
            .app
            .default_agent_for(&steward_core::Principal::local());
        let no_model = options
            .app
            .models(&options.models, &default_agent, None, None)
            .await
            .err()
            .map(|e| e.to_string());
        let shared = Arc::new(Shared {
            app: options.app,
            store,
            choice: options.models,
            models: steward_app::ModelCache::default(),
            auth,
            run_slots: Arc::new(Semaphore::new(limits.concurrent_runs.max(1))),
            rate: RateLimiter::new(limits.requests_per_minute),
            limits,
            instance,
            in_flight: InFlight::default(),
            stop_runs: stop_rx,
            failures: guardrails::failures::FailedSignIns::default(),
            proxies,
            hosts,
            started: chrono::Utc::now().timestamp(),
            stops: std::sync::Mutex::default(),
            no_model,
        });
        Ok(Self { shared, stop_runs })
    }

    /// Why the server has no model for its default agent, when it has none: it serves what needs no model,
    /// and says this at `/ready`, in `/api/me` and in the web UI.
    pub fn no_model(&self) -> Option<&str> {
        self.shared.no_model.as_deref()
    }

    /// Allows `failures` failed sign-ins per client address, and as many per claimed identity, within
    /// `window` (default: 10 a minute; 0 turns the limit off); past it, credentials from that address or
    /// claiming that identity that do not verify get 429 until the window has passed (valid ones never do).
    pub fn with_failed_sign_in_limit(self, failures: u32, window: Duration) -> Self {
        self.shared
            .failures
            .configure(failures, window, guardrails::failures::MAX_ADDRESSES);
        self
    }

    /// The routes, ready to serve on `local`, the address listened on (the Host check accepts it). Serve them
    /// with `into_make_service_with_connect_info::<SocketAddr>()`: failed sign-ins are counted per client
    /// address (without it, all clients count as one, and `server.trusted_proxies` is never consulted).
    pub fn router(&self, local: SocketAddr) -> Router {
        let shared = self.shared.clone();
        let protected = Router::new()
            .route("/api/me", get(api::me))
            .route(
                "/api/conversations",
                post(api::create_conversation).get(api::list_conversations),
            )
            .route(
                "/api/conversations/{id}",
                get(api::get_conversation)
                    .patch(api::patch_conversation)
                    .delete(api::delete_conversation),
            )
            .route("/api/conversations/{id}/messages", post(api::post_message))
            .route("/api/conversations/{id}/stop", post(api::stop_turn))
            .route("/api/approvals", get(api::list_approvals))
            .route("/api/approvals/{id}", post(api::decide))
            .route("/api/changes", get(api::list_changes))
            .route(
                "/api/changes/{id}",
                get(api::get_change_set).post(api::decide_changes),
            )
            .route(
                "/api/examples",
                post(api::add_example).get(api::list_examples),
            )
            .route("/api/chart", post(api::chart))
            .route("/api/runs", get(api::runs))
            .route("/api/runs/{id}", get(api::run))
            .route("/api/audit", get(api::audit))
            .route_layer(axum::middleware::from_fn_with_state(
                shared.clone(),
                authenticate,
            ));
        // The OpenAI-compatible routes (their errors are put in OpenAI's shape by the outermost layer below).
        let v1: Router<Arc<Shared>> = Router::new()
            .route("/v1/models", get(openai::models))
            .route("/v1/models/{model}", get(openai::model))
            .route("/v1/chat/completions", post(openai::chat_completions))
            .route_layer(axum::middleware::from_fn_with_state(
                shared.clone(),
                authenticate,
            ))
            .route("/v1/{*rest}", axum::routing::any(openai::no_route));
        let protected = protected.merge(v1);
        // MCP over streamable HTTP, behind the same authentication; the guardrails below check its Host.
        let hosts = mcp::McpHttpOptions::default().with_allowed_hosts(Vec::<String>::new());
        let mcp_routes: Router<Arc<Shared>> = mcp::McpServer::new(
            shared.app.clone(),
            shared.choice.clone(),
            steward_core::Principal::local(),
        )
        .http_router("/mcp", hosts.with_max_body_bytes(shared.limits.body_bytes))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            authenticate,
        ));
        let protected = protected.merge(mcp_routes);
        let mut router = Router::new()
            .route("/health", get(health))
            .route("/ready", get(ready))
            .route("/openapi.json", get(|| async { axum::Json(openapi()) }))
            .merge(protected)
            .merge(ui::router())
            .layer(DefaultBodyLimit::max(shared.limits.body_bytes))
            .with_state(shared.clone());
        let cors: Vec<String> = shared
            .app
            .config()
            .server
            .as_ref()
            .map(|s| s.cors.clone())
            .unwrap_or_default();
        let origins: Vec<HeaderValue> = cors.iter().filter_map(|o| o.parse().ok()).collect();
        if !origins.is_empty() {
            router = router.layer(
                tower_http::cors::CorsLayer::new()
                    .allow_origin(origins)
                    .allow_methods([Method::GET, Method::POST, Method::PATCH, Method::DELETE])
                    .allow_headers([
                        axum::http::header::AUTHORIZATION,
                        axum::http::header::CONTENT_TYPE,
                        axum::http::header::ACCEPT,
                    ]),
            );
        }
        // Every route, the UI's files and CORS preflights included.
        let guardrails =
            guardrails::Guardrails::new(&shared.hosts, &cors, Some(local), shared.auth.required());
        router
            .layer(axum::middleware::from_fn_with_state(
                Arc::new(guardrails),
                guardrails::check,
            ))
            // Every error under /v1, whoever made it (the guardrails, authentication, the body's extractor, the
            // rate limit, a path that does not exist), in OpenAI's shape: SDKs read `error.message`; those of
            // /mcp as JSON-RPC errors.
            .layer(axum::middleware::from_fn(openai::error_objects))
            // A span for every request, refused ones included.
            .layer(
                tower_http::trace::TraceLayer::new_for_http()
                    .make_span_with(request_span)
                    .on_request(DefaultOnRequest::new().level(Level::DEBUG))
                    .on_response(
                        DefaultOnResponse::new()
                            .level(Level::DEBUG)
                            .latency_unit(tower_http::LatencyUnit::Millis),
                    )
                    .on_failure(DefaultOnFailure::new().level(Level::WARN)),
            )
            // Outermost: the client's address (behind `server.trusted_proxies`, the one they forwarded), for the
            // span and the failed sign-in limit.
            .layer(axum::middleware::from_fn_with_state(
                shared.proxies.clone(),
                guardrails::client_address,
            ))
    }

    /// Serves on `listener` until `shutdown` completes; then stops taking requests, waits up to `grace` for
    /// runs in flight to finish, and cancels the rest (each saved as cancelled, its conversation free again).
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        grace: Duration,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let shared = self.shared.clone();
        let reaper = tokio::spawn(reap(shared.clone()).instrument(tracing::info_span!("reaper")));
        let (signalled_tx, signalled_rx) = watch::channel(false);
        let router = self.router(listener.local_addr()?);
        let stop_runs = self.stop_runs;
        let on_shutdown = {
            let shared = shared.clone();
            async move {
                shutdown.await;
                let _ = signalled_tx.send(true);
                tracing::info!(
                    "shutting down; waiting up to {} s for {} run(s) in flight",
                    grace.as_secs(),
                    shared.in_flight.count()
                );
                // Past the grace period, runs still going are cancelled so their streams end.
                let shared_for_timer = shared.clone();
                tokio::spawn(async move {
                    if tokio::time::timeout(grace, shared_for_timer.in_flight.wait_idle())
                        .await
                        .is_err()
                    {
                        let _ = stop_runs.send(true);
                    }
                });
            }
        };
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(on_shutdown)
        .await?;
        // Runs whose clients went away are still driven: wait for them too.
        let _ = signalled_rx;
        if tokio::time::timeout(grace + Duration::from_secs(5), shared.in_flight.wait_idle())
            .await
            .is_err()
        {
            tracing::warn!("some runs did not stop in time");
        }
        reaper.abort();
        shared.store.close().await;
        Ok(())
    }
}

/// Denies, as expired, every call that has waited for approval longer than `hours`, and lets each run go on as
/// a person's denial would (the resumed run's events are read to the end: nobody waits for them).
async fn expire_approvals(
    shared: &Arc<Shared>,
    hours: u32,
    failed: &mut std::collections::HashSet<String>,
) {
    let cutoff = chrono::Utc::now() - chrono::Duration::hours(i64::from(hours));
    let waiting = match shared.store.approvals(false).await {
        Ok(waiting) => waiting,
        Err(e) => {
            tracing::error!("looking for approvals to expire failed: {e}");
            return;
        }
    };
    for old in waiting
        .into_iter()
        .filter(|a| a.decision.is_none() && a.requested_at < cutoff)
    {
        let approval = steward_core::Approval::Reject {
            reason: Some(format!(
                "expired: nobody decided it within {hours} hour{}",
                if hours == 1 { "" } else { "s" }
            )),
        };
        match turns::decide(shared, &old.id, approval, "steward (approval_hours)").await {
            Ok(events) => {
                tracing::info!(approval = %old.id, run_id = %old.run_id, tool = %old.tool,
                    "a call nobody decided within {hours} h was denied as expired");
                if let Some(mut events) = events {
                    tokio::spawn(async move { while events.recv().await.is_some() {} });
                }
            }
            Err(e) => {
                if failed.insert(old.id.clone()) {
                    tracing::warn!(approval = %old.id, "expiring a call nobody decided failed: {e}");
                }
            }
        }
    }
}

/// The span of a request: its method, path and client address (behind `server.trusted_proxies`, the client
/// they forwarded; no headers, so no credentials). Its answer is logged at `DEBUG`
/// (`RUST_LOG=tower_http=debug` shows each status and latency), a failure (a 5xx answer, a broken stream) at
/// `WARN`.
fn request_span(request: &Request) -> tracing::Span {
    let client = request
        .extensions()
        .get::<guardrails::ClientAddress>()
        .copied()
        .unwrap_or(guardrails::ClientAddress(None));
    tracing::info_span!(
        "request",
        method = %request.method(),
        path = %request.uri().path(),
        client = %client,
    )
}

/// Marks turns whose server stopped (their lease ran out) as failed, and denies the calls that waited for
/// approval longer than `limits.approval_hours`, every few seconds.
async fn reap(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(shared.renew_every());
    // Calls whose expiry failed (no model to resume their run, say): said once, tried again each tick.
    let mut failed = std::collections::HashSet::new();
    loop {
        tick.tick().await;
        if let Some(hours) = shared.limits.approval_hours {
            expire_approvals(&shared, hours, &mut failed).await;
        }
        match shared
            .store
            .reap_expired(chrono::Utc::now(), &shared.instance)
            .await
        {
            Ok(reaped) if !reaped.is_empty() => tracing::warn!(
                conversations = ?reaped,
                "{} conversation(s) whose server stopped mid-answer were marked failed",
                reaped.len()
            ),
            Ok(_) => {}
            Err(e) => tracing::error!("checking leases failed: {e}"),
        }
    }
}
