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
        let protocol = [
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ]
        .into_iter()
        .find_map(|name| var(name).map(|value| (name, value)));
        if let Some((protocol_var, protocol)) = protocol
            && protocol.trim().eq_ignore_ascii_case("grpc")
        {
            return Err(format!(
                "{protocol_var} is `grpc`, but Steward sends OTLP over HTTP (JSON bodies): point the endpoint at the \
                 collector's HTTP port (4318 by default) and set the protocol to http/json"
            ));
        }
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://"))
            || reqwest::Url::parse(&endpoint).is_err()
        {
            return Err(format!(
                "{name} is `{}`, not an http:// or https:// URL (e.g. http://localhost:4318)",
                steward_core::redact::redact_urls(&given)
            ));
        }
        let headers_var = [
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
            "OTEL_EXPORTER_OTLP_HEADERS",
        ]
        .into_iter()
        .find_map(|name| var(name).map(|value| (name, value)));
        let mut headers = Vec::new();
        if let Some((headers_name, text)) = headers_var {
            for pair in text.split(',').filter(|p| !p.trim().is_empty()) {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                // Values are percent-encoded (the W3C baggage form the OTel spec uses).
                let (key, value) = (key.trim(), percent_decode(value.trim()));
                let valid = reqwest::header::HeaderName::from_bytes(key.as_bytes()).is_ok()
                    && reqwest::header::HeaderValue::from_str(&value).is_ok();
                if !valid {
                    return Err(format!(
                        "{headers_name}: `{key}` is not a header name with a valid value (write key=value pairs \
                         separated by commas, values percent-encoded)"
                    ));
                }
                headers.push((key.to_owned(), value));
            }
        }
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
    /// How it failed, when it did: a category (`tool_error`, `denied`, `invalid_arguments`), never the
    /// tool's own text.
    pub failure: Option<&'a str>,
}

/// `%XX` sequences decoded; anything else (a lone `%`, invalid UTF-8 once decoded) left as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
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
        let dropped = Arc::new(AtomicU64::new(0));
        tokio::spawn(export(config, http, receiver, dropped.clone()));
        Ok(Self { sender, dropped })
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
            nonce: nonce(),
            spans: Mutex::new(Spans::default()),
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
        let mut attributes = tool_attributes(call.tool, call.call_id);
        attributes.push(attr("steward.surface", call.surface));
        if !call.principal.is_empty() {
            attributes.push(attr("steward.principal", call.principal));
        }
        if let Some(decision) = call.decision {
            attributes.push(attr("steward.decision", decision));
        }
        if let Some(failure) = call.failure {
            attributes.push(attr("error.type", failure));
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
            error: call.failure.map(str::to_owned),
        });
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
    dropped: Arc<AtomicU64>,
) {
    let mut batch: Vec<SpanData> = Vec::new();
    let mut failures = 0u64;
    loop {
        // Spans that did not fit the queue (the collector is slower than the runs) are said, not hidden.
        let lost = dropped.swap(0, Ordering::Relaxed);
        if lost > 0 {
            tracing::warn!(
                "{lost} span(s) dropped: more came than the collector took ({QUEUE} are held)"
            );
        }
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
                post(&config, &http, &mut batch, &mut failures).await;
                let _ = done.send(());
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

/// The trace of a run tree: its top run's id (a sub-run's id is `<parent id>/<call id>`), so a resumed run
/// joins the trace it began in.
fn trace_of(run_id: &str) -> String {
    id(16, &["trace", run_id.split('/').next().unwrap_or(run_id)])
}

/// What a span's status says when it failed: a category, never text from the run (a tool's error, a model's
/// error can hold rows, arguments or the prompt).
#[derive(Clone, Copy, Debug)]
enum Failure {
    Tool,
    Denied,
    Invalid,
    Run(&'static str),
}

impl Failure {
    fn text(self) -> &'static str {
        match self {
            Self::Tool => "tool_error",
            Self::Denied => "denied",
            Self::Invalid => "invalid_arguments",
            Self::Run(outcome) => outcome,
        }
    }
}

/// A distinct value for each observer, so that span ids stay unique across turns of one run (a conversation's
/// follow-up, a resumed run) and calls whose ids a model reused.
fn nonce() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}:{}:{}",
        std::process::id(),
        Utc::now().timestamp_nanos_opt().unwrap_or_default(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The spans of one turn in flight.
#[derive(Default)]
struct Spans {
    /// Started and not ended, by span id.
    open: HashMap<String, SpanData>,
    /// The span of each run seen, by run id.
    runs: HashMap<String, String>,
    /// The span of each tool call, by run id and call id (the latest, if a model reused an id).
    tools: HashMap<(String, String), String>,
    /// The span of each model call, by run id and step.
    chats: HashMap<(String, u32), String>,
    /// Spans made so far (part of each id).
    made: u64,
}

/// Turns one turn's events into spans.
struct SpanObserver {
    telemetry: Telemetry,
    /// The top run's model provider (`gen_ai.provider.name`), when its name says.
    provider: Option<String>,
    model: String,
    principal: String,
    surface: String,
    nonce: String,
    spans: Mutex<Spans>,
}

fn attr(key: &str, value: impl Into<Value>) -> (String, Value) {
    (key.to_owned(), value.into())
}

/// The GenAI attributes of a tool call's span.
fn tool_attributes(tool: &str, call_id: &str) -> Vec<(String, Value)> {
    vec![
        attr("gen_ai.operation.name", "execute_tool"),
        attr("gen_ai.tool.name", tool),
        attr("gen_ai.tool.call.id", call_id),
        attr("gen_ai.tool.type", "function"),
    ]
}

impl SpanObserver {
    fn spans(&self) -> std::sync::MutexGuard<'_, Spans> {
        self.spans.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new span id.
    fn new_id(&self, spans: &mut Spans, kind: &str, run_id: &str) -> String {
        spans.made += 1;
        id(8, &[kind, run_id, &self.nonce, &spans.made.to_string()])
    }

    /// The span of `run_id`, started now (at `at`) when the run was not seen yet: a run begun in an earlier
    /// turn or process (a resumed run) gets one from its first event here.
    fn run_span(
        &self,
        spans: &mut Spans,
        run_id: &str,
        at: DateTime<Utc>,
        agent: Option<&str>,
    ) -> String {
        if let Some(id) = spans.runs.get(run_id) {
            return id.clone();
        }
        self.start_run(spans, run_id, at, agent)
    }

    fn start_run(
        &self,
        spans: &mut Spans,
        run_id: &str,
        at: DateTime<Utc>,
        agent: Option<&str>,
    ) -> String {
        let id = self.new_id(spans, "run", run_id);
        // A sub-run is a child of the tool call that started it.
        let parent = run_id.rsplit_once('/').and_then(|(parent_run, call)| {
            spans
                .tools
                .get(&(parent_run.to_owned(), call.to_owned()))
                .cloned()
        });
        let mut attributes = vec![
            attr("gen_ai.operation.name", "invoke_agent"),
            attr("steward.run_id", run_id),
            attr("steward.surface", self.surface.as_str()),
        ];
        if let Some(agent) = agent {
            attributes.push(attr("gen_ai.agent.name", agent));
        }
        if !self.principal.is_empty() {
            attributes.push(attr("steward.principal", self.principal.as_str()));
        }
        let name = match agent {
            Some(agent) => format!("invoke_agent {agent}"),
            None => "invoke_agent".to_owned(),
        };
        spans.open.insert(
            id.clone(),
            SpanData {
                trace: trace_of(run_id),
                id: id.clone(),
                parent,
                name,
                kind: 1,
                start: at,
                end: at,
                attributes,
                error: None,
            },
        );
        spans.runs.insert(run_id.to_owned(), id.clone());
        id
    }

    fn start(
        &self,
        spans: &mut Spans,
        run_id: &str,
        (id, name, kind): (String, String, u8),
        at: DateTime<Utc>,
        attributes: Vec<(String, Value)>,
    ) {
        let parent = self.run_span(spans, run_id, at, None);
        spans.open.insert(
            id.clone(),
            SpanData {
                trace: trace_of(run_id),
                id,
                parent: Some(parent),
                name,
                kind,
                start: at,
                end: at,
                attributes,
                error: None,
            },
        );
    }

    /// Ends the span `id` (when it is open) with more attributes and, if it failed, why.
    fn end(
        &self,
        spans: &mut Spans,
        id: &str,
        at: DateTime<Utc>,
        more: Vec<(String, Value)>,
        failure: Option<Failure>,
    ) {
        let Some(mut span) = spans.open.remove(id) else {
            return;
        };
        span.end = at;
        span.attributes.extend(more);
        if let Some(failure) = failure {
            span.attributes.push(attr("error.type", failure.text()));
            span.error = Some(failure.text().to_owned());
        }
        self.telemetry.send(span);
    }

    /// The span of a tool call: the one its `ToolCall` started, or, for a call refused before it ran (denied,
    /// invalid, waiting for approval: no `ToolCall` comes first), one started now.
    fn tool_span(
        &self,
        spans: &mut Spans,
        run_id: &str,
        call: &steward_core::ToolCall,
        at: DateTime<Utc>,
    ) -> String {
        let key = (run_id.to_owned(), call.id.clone());
        if let Some(id) = spans.tools.get(&key)
            && spans.open.contains_key(id)
        {
            return id.clone();
        }
        self.start_tool(spans, run_id, call, at)
    }

    fn start_tool(
        &self,
        spans: &mut Spans,
        run_id: &str,
        call: &steward_core::ToolCall,
        at: DateTime<Utc>,
    ) -> String {
        let id = self.new_id(spans, "tool", run_id);
        spans
            .tools
            .insert((run_id.to_owned(), call.id.clone()), id.clone());
        self.start(
            spans,
            run_id,
            (id.clone(), format!("execute_tool {}", call.name), 1),
            at,
            tool_attributes(&call.name, &call.id),
        );
        id
    }
}

impl Observer for SpanObserver {
    fn on_event(&self, event: &Event) {
        self.on_record(&EventRecord::now(event.clone(), None));
    }

    fn on_record(&self, record: &EventRecord) {
        let at = record.at;
        let mut spans = self.spans();
        let spans = &mut *spans;
        match &record.event {
            Event::RunStarted { run_id, agent, .. } => {
                self.start_run(spans, run_id, at, Some(agent));
            }
            Event::FollowUp { run_id, .. } => {
                // A conversation's next turn of the same run: a span of its own.
                spans.runs.remove(run_id);
                self.start_run(spans, run_id, at, None);
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
                let id = self.new_id(spans, "chat", run_id);
                spans.chats.insert((run_id.clone(), *step), id.clone());
                self.start(spans, run_id, (id, name, 3), at, attributes);
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
                if let Some(id) = spans.chats.remove(&(run_id.clone(), *step)) {
                    self.end(
                        spans,
                        &id,
                        at,
                        vec![
                            attr("gen_ai.usage.input_tokens", usage.input_tokens),
                            attr("gen_ai.usage.output_tokens", usage.output_tokens),
                            attr("gen_ai.response.finish_reasons", json!([reason])),
                        ],
                        None,
                    );
                }
            }
            Event::ToolCall { run_id, call } => {
                self.start_tool(spans, run_id, call, at);
            }
            Event::ToolResult {
                run_id,
                call_id,
                is_error,
                ..
            } => {
                if let Some(id) = spans.tools.get(&(run_id.clone(), call_id.clone())).cloned() {
                    let failure = is_error.then_some(Failure::Tool);
                    self.end(spans, &id, at, Vec::new(), failure);
                }
            }
            Event::ToolDenied { run_id, call, .. } => {
                let id = self.tool_span(spans, run_id, call, at);
                let more = vec![attr("steward.decision", "denied")];
                self.end(spans, &id, at, more, Some(Failure::Denied));
            }
            Event::ValidationError { run_id, call, .. } => {
                let id = self.tool_span(spans, run_id, call, at);
                let more = vec![attr("steward.decision", "invalid")];
                self.end(spans, &id, at, more, Some(Failure::Invalid));
            }
            Event::ApprovalRequested { run_id, call, .. } => {
                let id = self.tool_span(spans, run_id, call, at);
                let more = vec![attr("steward.decision", "waits_for_approval")];
                self.end(spans, &id, at, more, None);
            }
            Event::Finished {
                run_id,
                outcome,
                usage,
                steps,
            } => {
                let id = self.run_span(spans, run_id, at, None);
                spans.runs.remove(run_id);
                let failure = match outcome {
                    Outcome::Answered { .. } => None,
                    other => Some(Failure::Run(other.name())),
                };
                self.end(
                    spans,
                    &id,
                    at,
                    vec![
                        attr("steward.outcome", outcome.name()),
                        attr("steward.steps", *steps),
                        attr("gen_ai.usage.input_tokens", usage.input_tokens),
                        attr("gen_ai.usage.output_tokens", usage.output_tokens),
                    ],
                    failure,
                );
            }
            Event::ApprovalDecided { run_id, .. } => {
                // A resumed run: its span starts with the decision.
                self.run_span(spans, run_id, at, None);
            }
            _ => {}
        }
    }
}

impl Drop for SpanObserver {
    /// Spans still open when the turn is dropped (a run that waits for approval, one cancelled, a model call
    /// that failed) end now.
    fn drop(&mut self) {
        let now = Utc::now();
        let open: Vec<SpanData> = self.spans().open.drain().map(|(_, span)| span).collect();
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
    fn a_run_tree_is_one_trace() {
        assert_eq!(trace_of("top/a1"), trace_of("top"));
        assert_eq!(trace_of("top/a1/b2"), trace_of("top"));
        assert_ne!(trace_of("top"), trace_of("other"));
        assert_eq!(trace_of("top").len(), 32);
    }

    #[test]
    fn header_values_are_percent_decoded_and_bad_ones_refused() {
        assert_eq!(percent_decode("Basic%20abc%3D"), "Basic abc=");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
        let config = TelemetryConfig::from_vars(vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Basic%20abc"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            config.headers,
            [("authorization".to_owned(), "Basic abc".to_owned())]
        );
        for bad in ["bad key=1", "k=line%0Abreak", "=v"] {
            let error = TelemetryConfig::from_vars(vars(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
                ("OTEL_EXPORTER_OTLP_HEADERS", bad),
            ]))
            .unwrap_err();
            assert!(
                error.contains("OTEL_EXPORTER_OTLP_HEADERS"),
                "{bad}: {error}"
            );
        }
        for bad in ["http://u:p@[::1", "http://a:99999"] {
            assert!(
                TelemetryConfig::from_vars(vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", bad)])).is_err(),
                "{bad}"
            );
        }
        let traces_grpc = TelemetryConfig::from_vars(vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4317"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"),
        ]))
        .unwrap_err();
        assert!(
            traces_grpc.starts_with("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
            "{traces_grpc}"
        );
    }
}
