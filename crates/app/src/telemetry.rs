//! Optional OpenTelemetry traces of runs, following the GenAI semantic conventions: one `invoke_agent {agent}`
//! span per run (a sub-agent's run is a child of the tool call that started it), a `chat {model}` span per
//! model call (with `gen_ai.usage.*` and the finish reason) and an `execute_tool {tool}` span per tool call.
//!
//! Off unless the standard environment asks for it: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL) or
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` is added), with `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,…`),
//! `OTEL_SERVICE_NAME` (default `steward`), and `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` to turn
//! it off. Spans go as OTLP over HTTP with JSON bodies (any OTLP/HTTP receiver takes them, e.g. a collector's
//! port 4318), in batches, from a task of their own: a run never waits for the collector, and spans that do not
//! fit the queue (a collector that is down) are dropped and counted, never held without bound.
//!
//! Span and trace ids are derived from the run's id (SHA-256), so a sub-run finds its parent span without any
//! shared state, and the spans of one run tree share one trace.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use steward_core::{Event, EventRecord, Observer, Outcome};
use tokio::sync::{mpsc, oneshot};

/// Spans held for the exporter at most (beyond, new spans are dropped and counted).
const QUEUE: usize = 4_096;

/// Spans sent in one request at most.
const BATCH: usize = 512;

/// How long a span waits for others before its batch is sent.
const LINGER: Duration = Duration::from_secs(2);

/// How long one export request may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where spans go and how: read from the standard `OTEL_*` environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// The OTLP/HTTP traces URL (`…/v1/traces`).
    pub endpoint: String,
    /// Extra request headers (`OTEL_EXPORTER_OTLP_HEADERS`).
    pub headers: Vec<(String, String)>,
    /// `service.name` of the spans.
    pub service: String,
}

impl TelemetryConfig {
    /// The configuration the environment asks for, `None` when it asks for none; `Err` says what is wrong
    /// with it (a protocol Steward does not speak).
    pub fn from_env() -> Result<Option<Self>, String> {
        Self::from_vars(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
    }

    /// [`TelemetryConfig::from_env`] over any source of variables.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, String> {
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none"))
        {
            return Ok(None);
        }
        let (name, given, endpoint) = match (
            var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            var("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(url), _) => {
                let url = url.trim().to_owned();
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url.clone(), url)
            }
            (None, Some(base)) => {
                let base = base.trim().to_owned();
                let url = format!("{}/v1/traces", base.trim_end_matches('/'));
                ("OTEL_EXPORTER_OTLP_ENDPOINT", base, url)
            }
            (None, None) => return Ok(None),
        };
        let protocol = var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"));
        if let Some(protocol) = protocol.map(|p| p.trim().to_ascii_lowercase())
            && protocol == "grpc"
        {
            return Err(format!(
                "OTEL_EXPORTER_OTLP_PROTOCOL is `{protocol}`, but Steward sends OTLP over HTTP (JSON bodies): point \
                 the endpoint at the collector's HTTP port (4318 by default) and set the protocol to http/json"
            ));
        }
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(format!(
                "{name} is `{}`, not an http:// or https:// URL (e.g. http://localhost:4318)",
                steward_core::redact::redact_urls(&given)
            ));
        }
        let headers = var("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
            .or_else(|| var("OTEL_EXPORTER_OTLP_HEADERS"))
            .map(|text| {
                text.split(',')
                    .filter_map(|pair| pair.split_once('='))
                    .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                    .filter(|(k, _)| !k.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        Ok(Some(Self {
            endpoint,
            headers,
            service: var("OTEL_SERVICE_NAME").unwrap_or_else(|| "steward".to_owned()),
        }))
    }
}

/// A tool called directly, for [`Telemetry::direct_call`].
#[derive(Clone, Debug)]
pub struct DirectSpan<'a> {
    /// The tool.
    pub tool: &'a str,
    /// The call's id.
    pub call_id: &'a str,
    /// Where it came from (`cli`, `mcp`).
    pub surface: &'a str,
    /// Who asked (empty: the local user).
    pub principal: &'a str,
    /// When it started.
    pub start: DateTime<Utc>,
    /// How it was decided, when not simply allowed (`approved`, `rejected`).
    pub decision: Option<&'a str>,
    /// Why it failed, when it did.
    pub error: Option<String>,
}

/// A finished span, ready to send.
#[derive(Clone, Debug)]
struct SpanData {
    trace: String,
    id: String,
    parent: Option<String>,
    name: String,
    /// 1 internal, 3 client.
    kind: u8,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    attributes: Vec<(String, Value)>,
    /// The error message, when the span failed.
    error: Option<String>,
}

enum Command {
    Span(Box<SpanData>),
    Flush(oneshot::Sender<()>),
}

/// The exporter: cheap to clone; its task sends spans in batches.
#[derive(Clone, Debug)]
pub struct Telemetry {
    sender: mpsc::Sender<Command>,
    dropped: Arc<AtomicU64>,
}

impl Telemetry {
    /// Starts the exporter task on the current Tokio runtime; fails only when no HTTP client can be made.
    pub fn start(config: TelemetryConfig) -> Result<Self, String> {
        // reqwest is built without a bundled crypto provider; ring is ours. Installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(EXPORT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("steward/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("the trace exporter cannot start: {e}"))?;
        let (sender, receiver) = mpsc::channel(QUEUE);
        tokio::spawn(export(config, http, receiver));
        Ok(Self {
            sender,
            dropped: Arc::new(AtomicU64::new(0)),
        })
    }

    /// An observer that turns the events of the runs it sees into spans; `model` names the top run's model,
    /// `principal` and `surface` who asked and from where.
    pub fn observer(&self, model: &str, principal: &str, surface: &str) -> Arc<dyn Observer> {
        // Steward names models `provider:model`.
        let (provider, model) = match model.split_once(':') {
            Some((provider, model)) => (Some(provider.to_owned()), model.to_owned()),
            None => (None, model.to_owned()),
        };
        Arc::new(SpanObserver {
            telemetry: self.clone(),
            provider,
            model,
            principal: principal.to_owned(),
            surface: surface.to_owned(),
            open: Mutex::new(HashMap::new()),
        })
    }

    /// Waits (up to `limit`) until the spans given so far are sent or given up.
    pub async fn flush(&self, limit: Duration) {
        let (done, sent) = oneshot::channel();
        let flushed = async {
            if self.sender.send(Command::Flush(done)).await.is_ok() {
                let _ = sent.await;
            }
        };
        let _ = tokio::time::timeout(limit, flushed).await;
    }

    /// The span of a tool called directly, not by a run (`steward tools call`, MCP `tools/call`): its own
    /// trace, named as a run's tool span is, with where it came from and who asked.
    pub fn direct_call(&self, call: &DirectSpan<'_>) {
        let nanos = call
            .start
            .timestamp_nanos_opt()
            .unwrap_or_default()
            .to_string();
        let mut attributes = vec![
            attr("gen_ai.operation.name", "execute_tool"),
            attr("gen_ai.tool.name", call.tool),
            attr("gen_ai.tool.call.id", call.call_id),
            attr("gen_ai.tool.type", "function"),
            attr("steward.surface", call.surface),
        ];
        if !call.principal.is_empty() {
            attributes.push(attr("steward.principal", call.principal));
        }
        if let Some(decision) = call.decision {
            attributes.push(attr("steward.decision", decision));
        }
        if call.error.is_some() {
            attributes.push(attr("error.type", "steward.error"));
        }
        self.send(SpanData {
            trace: id(16, &["direct", call.surface, call.call_id, &nanos]),
            id: id(8, &["direct", call.surface, call.call_id, &nanos]),
            parent: None,
            name: format!("execute_tool {}", call.tool),
            kind: 1,
            start: call.start,
            end: Utc::now(),
            attributes,
            error: call.error.clone(),
        });
    }

    /// Spans dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn send(&self, span: SpanData) {
        if self.sender.try_send(Command::Span(Box::new(span))).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

async fn export(
    config: TelemetryConfig,
    http: reqwest::Client,
    mut receiver: mpsc::Receiver<Command>,
) {
    let mut batch: Vec<SpanData> = Vec::new();
    let mut waiting: Vec<oneshot::Sender<()>> = Vec::new();
    let mut failures = 0u64;
    loop {
        let command = if batch.is_empty() {
            receiver.recv().await
        } else {
            match tokio::time::timeout(LINGER, receiver.recv()).await {
                Ok(command) => command,
                Err(_) => {
                    post(&config, &http, &mut batch, &mut failures).await;
                    continue;
                }
            }
        };
        match command {
            Some(Command::Span(span)) => {
                batch.push(*span);
                if batch.len() >= BATCH {
                    post(&config, &http, &mut batch, &mut failures).await;
                }
            }
            Some(Command::Flush(done)) => {
                waiting.push(done);
                post(&config, &http, &mut batch, &mut failures).await;
                for done in waiting.drain(..) {
                    let _ = done.send(());
                }
            }
            None => {
                post(&config, &http, &mut batch, &mut failures).await;
                return;
            }
        }
    }
}

/// Sends `batch` (and empties it); a failure is logged, and the spans are given up.
async fn post(
    config: &TelemetryConfig,
    http: &reqwest::Client,
    batch: &mut Vec<SpanData>,
    failures: &mut u64,
) {
    if batch.is_empty() {
        return;
    }
    let body = otlp_json(&config.service, batch);
    batch.clear();
    let mut request = http
        .post(&config.endpoint)
        .timeout(EXPORT_TIMEOUT)
        .header("content-type", "application/json")
        .body(body.to_string());
    for (key, value) in &config.headers {
        request = request.header(key.as_str(), value.as_str());
    }
    let outcome = match request.send().await {
        Ok(response) if response.status().is_success() => Ok(()),
        Ok(response) => Err(format!("the collector answered {}", response.status())),
        Err(e) => Err(steward_core::redact::redact_urls(&e.to_string())),
    };
    if let Err(why) = outcome {
        *failures += 1;
        // The first failure, then one in a hundred: a collector that is down does not flood the log.
        if *failures == 1 || failures.is_multiple_of(100) {
            tracing::warn!(
                endpoint = %steward_core::redact::redact_urls(&config.endpoint),
                "traces not exported ({failures} batch(es) so far): {why}"
            );
        }
    }
}

/// The OTLP/JSON body of `spans` (ids in hex, times in nanoseconds since the epoch, as decimal strings).
fn otlp_json(service: &str, spans: &[SpanData]) -> Value {
    let spans: Vec<Value> = spans
        .iter()
        .map(|s| {
            let mut span = json!({
                "traceId": s.trace,
                "spanId": s.id,
                "name": s.name,
                "kind": s.kind,
                "startTimeUnixNano": nanos(s.start),
                "endTimeUnixNano": nanos(s.end.max(s.start)),
                "attributes": s.attributes.iter().map(|(k, v)| json!({"key": k, "value": any_value(v)})).collect::<Vec<_>>(),
                "status": match &s.error {
                    Some(message) => json!({"code": 2, "message": message}),
                    None => json!({"code": 0}),
                },
            });
            if let Some(parent) = &s.parent {
                span["parentSpanId"] = json!(parent);
            }
            span
        })
        .collect();
    json!({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeSpans": [{"scope": {"name": "steward", "version": env!("CARGO_PKG_VERSION")}, "spans": spans}]
    }]})
}

fn any_value(value: &Value) -> Value {
    match value {
        Value::String(s) => json!({"stringValue": s}),
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Number(n) if n.is_i64() || n.is_u64() => json!({"intValue": n.to_string()}),
        Value::Number(n) => json!({"doubleValue": n.as_f64()}),
        Value::Array(items) => {
            json!({"arrayValue": {"values": items.iter().map(any_value).collect::<Vec<_>>()}})
        }
        other => json!({"stringValue": other.to_string()}),
    }
}

fn nanos(at: DateTime<Utc>) -> String {
    at.timestamp_nanos_opt()
        .unwrap_or_default()
        .max(0)
        .to_string()
}

/// The first `bytes` bytes of SHA-256 of `parts`, in hex.
fn id(bytes: usize, parts: &[&str]) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hash.finalize()
        .iter()
        .take(bytes)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The trace of a run tree: its top run's id (a sub-run's id is `<parent id>/<call id>`).
fn trace_of(run_id: &str) -> String {
    id(16, &[run_id.split('/').next().unwrap_or(run_id)])
}

fn run_span(run_id: &str) -> String {
    id(8, &["run", run_id])
}

fn chat_span(run_id: &str, step: u32) -> String {
    id(8, &["chat", run_id, &step.to_string()])
}

fn tool_span(run_id: &str, call_id: &str) -> String {
    id(8, &["tool", run_id, call_id])
}

/// Turns one turn's events into spans.
struct SpanObserver {
    telemetry: Telemetry,
    /// The top run's model provider (`gen_ai.provider.name`), when its name says.
    provider: Option<String>,
    model: String,
    principal: String,
    surface: String,
    /// Spans started and not ended, by span id.
    open: Mutex<HashMap<String, SpanData>>,
}

impl SpanObserver {
    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<String, SpanData>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[allow(clippy::too_many_arguments)]
    fn start(
        &self,
        run_id: &str,
        id: String,
        parent: Option<String>,
        name: String,
        kind: u8,
        at: DateTime<Utc>,
        attributes: Vec<(String, Value)>,
    ) {
        let span = SpanData {
            trace: trace_of(run_id),
            id: id.clone(),
            parent,
            name,
            kind,
            start: at,
            end: at,
            attributes,
            error: None,
        };
        self.open().insert(id, span);
    }

    /// Ends the span `id` (when it is open) with more attributes and, if it failed, its error.
    fn end(&self, id: &str, at: DateTime<Utc>, more: Vec<(String, Value)>, error: Option<String>) {
        let Some(mut span) = self.open().remove(id) else {
            return;
        };
        span.end = at;
        span.attributes.extend(more);
        if let Some(error) = error {
            span.attributes
                .push(("error.type".to_owned(), json!("steward.error")));
            span.error = Some(error);
        }
        self.telemetry.send(span);
    }
}

fn attr(key: &str, value: impl Into<Value>) -> (String, Value) {
    (key.to_owned(), value.into())
}

impl Observer for SpanObserver {
    fn on_event(&self, event: &Event) {
        self.on_record(&EventRecord::now(event.clone(), None));
    }

    fn on_record(&self, record: &EventRecord) {
        let at = record.at;
        match &record.event {
            Event::RunStarted { run_id, agent, .. } => {
                // A sub-run is a child of the tool call that started it.
                let parent = run_id
                    .rsplit_once('/')
                    .map(|(parent_run, call)| tool_span(parent_run, call));
                let mut attributes = vec![
                    attr("gen_ai.operation.name", "invoke_agent"),
                    attr("gen_ai.agent.name", agent.as_str()),
                    attr("steward.run_id", run_id.as_str()),
                    attr("steward.surface", self.surface.as_str()),
                ];
                if !self.principal.is_empty() {
                    attributes.push(attr("steward.principal", self.principal.as_str()));
                }
                self.start(
                    run_id,
                    run_span(run_id),
                    parent,
                    format!("invoke_agent {agent}"),
                    1,
                    at,
                    attributes,
                );
            }
            Event::ModelRequest { run_id, step, .. } => {
                // The turn's model is the top run's; a sub-agent may use another, which the events do not name.
                let top = !run_id.contains('/');
                let mut attributes = vec![attr("gen_ai.operation.name", "chat")];
                if top {
                    attributes.push(attr("gen_ai.request.model", self.model.as_str()));
                    if let Some(provider) = &self.provider {
                        attributes.push(attr("gen_ai.provider.name", provider.as_str()));
                    }
                }
                let name = if top {
                    format!("chat {}", self.model)
                } else {
                    "chat".to_owned()
                };
                self.start(
                    run_id,
                    chat_span(run_id, *step),
                    Some(run_span(run_id)),
                    name,
                    3,
                    at,
                    attributes,
                );
            }
            Event::ModelResponse {
                run_id,
                step,
                usage,
                finish_reason,
                ..
            } => {
                let reason = serde_json::to_value(finish_reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_else(|| "other".to_owned());
                self.end(
                    &chat_span(run_id, *step),
                    at,
                    vec![
                        attr("gen_ai.usage.input_tokens", usage.input_tokens),
                        attr("gen_ai.usage.output_tokens", usage.output_tokens),
                        attr("gen_ai.response.finish_reasons", json!([reason])),
                    ],
                    None,
                );
            }
            Event::ToolCall { run_id, call } => {
                self.start(
                    run_id,
                    tool_span(run_id, &call.id),
                    Some(run_span(run_id)),
                    format!("execute_tool {}", call.name),
                    1,
                    at,
                    vec![
                        attr("gen_ai.operation.name", "execute_tool"),
                        attr("gen_ai.tool.name", call.name.as_str()),
                        attr("gen_ai.tool.call.id", call.id.as_str()),
                        attr("gen_ai.tool.type", "function"),
                    ],
                );
            }
            Event::ToolResult {
                run_id,
                call_id,
                is_error,
                content,
                ..
            } => {
                let error = is_error.then(|| content.chars().take(200).collect());
                self.end(&tool_span(run_id, call_id), at, Vec::new(), error);
            }
            Event::ToolDenied {
                run_id,
                call,
                reason,
            } => {
                self.end(
                    &tool_span(run_id, &call.id),
                    at,
                    vec![attr("steward.decision", "denied")],
                    Some(reason.clone()),
                );
            }
            Event::ValidationError {
                run_id,
                call,
                rejection,
            } => {
                self.end(
                    &tool_span(run_id, &call.id),
                    at,
                    vec![attr("steward.decision", "invalid")],
                    Some(rejection.observation.clone()),
                );
            }
            Event::ApprovalRequested { run_id, call, .. } => {
                self.end(
                    &tool_span(run_id, &call.id),
                    at,
                    vec![attr("steward.decision", "waits_for_approval")],
                    None,
                );
            }
            Event::Finished {
                run_id,
                outcome,
                usage,
                steps,
            } => {
                let error = match outcome {
                    Outcome::Answered { .. } => None,
                    other => Some(other.to_string()),
                };
                self.end(
                    &run_span(run_id),
                    at,
                    vec![
                        attr("steward.outcome", outcome.name()),
                        attr("steward.steps", *steps),
                        attr("gen_ai.usage.input_tokens", usage.input_tokens),
                        attr("gen_ai.usage.output_tokens", usage.output_tokens),
                    ],
                    error,
                );
            }
            _ => {}
        }
    }
}

impl Drop for SpanObserver {
    /// Spans still open when the turn is dropped (a run that waits for approval, one cancelled) end now.
    fn drop(&mut self) {
        let now = Utc::now();
        let open: Vec<SpanData> = self.open().drain().map(|(_, span)| span).collect();
        for mut span in open {
            span.end = now;
            span.attributes.push(attr("steward.ended", "unfinished"));
            self.telemetry.send(span);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_environment_chooses_the_endpoint_or_none() {
        assert_eq!(TelemetryConfig::from_vars(vars(&[])), Ok(None));
        let config = TelemetryConfig::from_vars(vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "authorization=Bearer x, team = data",
            ),
            ("OTEL_SERVICE_NAME", "steward-prod"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(config.endpoint, "http://collector:4318/v1/traces");
        assert_eq!(
            config.headers,
            [
                ("authorization".to_owned(), "Bearer x".to_owned()),
                ("team".to_owned(), "data".to_owned())
            ]
        );
        assert_eq!(config.service, "steward-prod");
        let traces = TelemetryConfig::from_vars(vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://b/v1/traces"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(traces.endpoint, "https://b/v1/traces");
        for off in [
            ("OTEL_SDK_DISABLED", "true"),
            ("OTEL_TRACES_EXPORTER", "none"),
        ] {
            assert_eq!(
                TelemetryConfig::from_vars(vars(&[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
                    off
                ])),
                Ok(None)
            );
        }
        let grpc = TelemetryConfig::from_vars(vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]))
        .unwrap_err();
        assert!(grpc.contains("4318"), "{grpc}");
        let bad =
            TelemetryConfig::from_vars(vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")]))
                .unwrap_err();
        assert!(bad.contains("http://"), "{bad}");
    }

    #[test]
    fn a_sub_run_is_a_child_of_the_call_that_started_it_in_the_same_trace() {
        assert_eq!(trace_of("top/a1"), trace_of("top"));
        assert_ne!(trace_of("top"), trace_of("other"));
        assert_eq!(run_span("top").len(), 16);
        assert_eq!(trace_of("top").len(), 32);
        assert_ne!(tool_span("top", "a1"), run_span("top/a1"));
    }
}
