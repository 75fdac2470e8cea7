//! Agent-loop overhead per step over loopback HTTP: steward-core's `Runner` driving the OpenAI provider against
//! a mock chat-completions server on 127.0.0.1 that answers a tool call on every request but the last, then a
//! final answer. One step is one model call over HTTP (request body built and sent, reply parsed), one
//! validation and one tool call. Compare with the in-process figure of `cargo bench -p steward-core --bench
//! step`, which has no HTTP.
//!
//! After the timings it prints, in process and over HTTP, the heap allocations per step made on the agent's
//! thread and that thread's CPU time per step (from `/proc/thread-self/schedstat`: steadier than wall time on a
//! busy machine). The mock server runs on a thread of its own and is not counted.
//!
//! Run: `cargo bench -p steward-llm --bench loop_http`
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The counting allocator below is a plain wrapper around the system allocator.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::post;
use criterion::{Criterion, criterion_group};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use steward_core::{
    Agent, HistoryBudget, Limits, Model, ModelResponse, Outcome, Retention, RunStatus, Runner,
    ScriptedModel, ToolCall, ToolOutput, Toolbox, TypedTool,
};
use steward_llm::{OpenAiConfig, OpenAiModel};

// ---- Allocation counting ---------------------------------------------------------------------------------

/// Counts allocations made on the current thread while `COUNTING` is set on it.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

fn count(size: usize) {
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
            let _ = BYTES.try_with(|n| n.set(n.get() + size as u64));
        }
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What one thread spent while `f` ran.
struct Spent {
    allocs: u64,
    bytes: u64,
    /// On-CPU nanoseconds (none where `/proc/thread-self/schedstat` is missing).
    cpu_ns: Option<u64>,
}

/// This thread's on-CPU time so far, in nanoseconds.
fn thread_cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

/// Allocations, bytes allocated and CPU time on this thread while `f` runs.
fn counted<T>(f: impl FnOnce() -> T) -> Spent {
    let cpu = thread_cpu_ns();
    ALLOCS.with(|n| n.set(0));
    BYTES.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
    drop(f());
    COUNTING.with(|on| on.set(false));
    let (allocs, bytes) = (ALLOCS.with(Cell::get), BYTES.with(Cell::get));
    let cpu_ns = thread_cpu_ns()
        .zip(cpu)
        .map(|(after, before)| after - before);
    Spent {
        allocs,
        bytes,
        cpu_ns,
    }
}

// ---- The mock model server -------------------------------------------------------------------------------

/// How many more requests get a tool call before the final answer.
#[derive(Default)]
struct Script {
    tool_calls_left: AtomicU64,
    served: AtomicU64,
}

async fn complete(State(script): State<Arc<Script>>, body: axum::body::Bytes) -> impl IntoResponse {
    assert!(body.starts_with(b"{"), "the request is not a JSON object");
    let n = script.served.fetch_add(1, Ordering::Relaxed);
    let left = script.tool_calls_left.load(Ordering::Relaxed);
    let reply = if left > 0 {
        script.tool_calls_left.store(left - 1, Ordering::Relaxed);
        json!({
            "id": "chatcmpl-bench", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": format!("call_{n}"), "type": "function",
                 "function": {"name": "echo", "arguments": "{\"text\":\"hello\"}"}}
            ]}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 420, "completion_tokens": 12, "total_tokens": 432}
        })
    } else {
        json!({
            "id": "chatcmpl-bench", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 420, "completion_tokens": 2, "total_tokens": 422}
        })
    };
    (
        [(CONTENT_TYPE, "application/json")],
        serde_json::to_vec(&reply).unwrap(),
    )
}

/// Starts the mock on a thread (and runtime) of its own; returns its base URL.
fn start_mock(script: Arc<Script>) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(format!("http://{}/v1", listener.local_addr().unwrap()))
                .unwrap();
            let app = axum::Router::new()
                .route("/v1/chat/completions", post(complete))
                .with_state(script);
            axum::serve(listener, app).await.unwrap();
        });
    });
    rx.recv().unwrap()
}

// ---- The agent -------------------------------------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Echo {
    /// The text to return.
    #[schemars(length(min = 1, max = 200))]
    text: String,
}

/// Its fields shape the schema the model is shown; the bench never calls it.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Query {
    /// One read-only SQL statement.
    sql: String,
    /// At most this many rows are returned.
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<u32>,
    /// Why the query answers the question.
    reason: Option<String>,
}

/// Its fields shape the schema the model is shown; the bench never calls it.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Describe {
    /// The tables to describe.
    tables: Vec<String>,
    /// Include sample values of each column.
    samples: Option<bool>,
}

/// An agent with three tools (only `echo` is called) and a window of 20 messages, as a SQL agent would have.
fn agent(max_steps: u32) -> Arc<Agent> {
    let echo = TypedTool::new("echo", "Returns its text.", |_ctx, a: Echo| async move {
        Ok(ToolOutput::text(a.text))
    })
    .read_only();
    let query = TypedTool::new(
        "query",
        "Runs one read-only SQL statement and returns its rows as a table.",
        |_ctx, a: Query| async move { Ok(ToolOutput::text(a.sql)) },
    )
    .read_only();
    let describe = TypedTool::new(
        "describe",
        "Describes tables: columns, types, keys and sample values.",
        |_ctx, a: Describe| async move { Ok(ToolOutput::text(a.tables.join(","))) },
    )
    .read_only();
    let tools = Toolbox::new()
        .with(echo)
        .unwrap()
        .with(query)
        .unwrap()
        .with(describe)
        .unwrap();
    let instructions = "You answer questions about a SQL database. Look at the schema before you query; \
                        run one read-only statement at a time; answer with the figures the query returned.";
    Arc::new(
        Agent::new("bench", instructions, tools)
            .with_limits(Limits {
                max_steps,
                ..Limits::default()
            })
            .with_history(HistoryBudget {
                max_messages: Some(20),
                retention: Retention::Window,
                ..HistoryBudget::default()
            }),
    )
}

/// A run of `calls` model calls (`calls - 1` tool calls, then the answer); returns its wall time.
fn run(
    rt: &tokio::runtime::Runtime,
    model: &Arc<dyn Model>,
    script: &Script,
    calls: u64,
) -> Duration {
    let calls = calls.max(1);
    script.tool_calls_left.store(calls - 1, Ordering::Relaxed);
    let runner = Runner::new(agent(u32::MAX), model.clone());
    let mut run = runner.start("echo hello until told otherwise");
    let started = Instant::now();
    let status = rt.block_on(runner.drive(&mut run));
    let spent = started.elapsed();
    match status {
        RunStatus::Done(Outcome::Answered { answer }) => assert_eq!(answer, "hello"),
        other => panic!("the run ended with {other:?}"),
    }
    spent
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn http_model(base: &str) -> Arc<dyn Model> {
    Arc::new(OpenAiModel::new(OpenAiConfig::compatible("gpt-4o-mini", base, None)).unwrap())
}

fn per_step(c: &mut Criterion) {
    let rt = runtime();
    let script = Arc::new(Script::default());
    let base = start_mock(script.clone());
    let model = http_model(&base);
    // Warm the connection pool so that no sample pays for the TCP connect.
    run(&rt, &model, &script, 2);
    let mut group = c.benchmark_group("loop_http");
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("step", |b| {
        // One iteration is one step (one model call over HTTP).
        b.iter_custom(|iters| run(&rt, &model, &script, iters));
    });
    group.finish();
}

/// Allocations and CPU time per step on the agent's thread: in process (a scripted model) and over HTTP.
fn allocations() {
    const CALLS: u64 = 10_000;
    let rt = runtime();
    let script = Arc::new(Script::default());
    let base = start_mock(script.clone());
    let http = http_model(&base);
    run(&rt, &http, &script, 10);
    let reply = ModelResponse::tool_calls(vec![ToolCall::new("", "echo", r#"{"text":"hello"}"#)])
        .with_usage(420, 12);
    let answer = ModelResponse::text("hello").with_usage(420, 2);
    let calls = usize::try_from(CALLS).unwrap();
    let scripted = || -> Arc<dyn Model> {
        let replies = std::iter::repeat_n(reply.clone(), calls - 1).chain([answer.clone()]);
        Arc::new(ScriptedModel::new(replies).without_recording())
    };
    let in_process = scripted();
    let spent = counted(|| run(&rt, &in_process, &script, CALLS));
    report("in process (scripted model)", &spent, CALLS);
    let spent = counted(|| run(&rt, &http, &script, CALLS));
    report("over loopback HTTP (OpenAI provider)", &spent, CALLS);
}

fn report(what: &str, spent: &Spent, calls: u64) {
    let per = |n: u64| n as f64 / calls as f64;
    let cpu = spent.cpu_ns.map_or_else(
        || "CPU time unknown".to_owned(),
        |ns| format!("{:.1} µs CPU", per(ns) / 1000.0),
    );
    println!(
        "per step, {what}: {:.0} allocations ({:.1} KiB), {cpu} on the agent's thread",
        per(spent.allocs),
        per(spent.bytes) / 1024.0
    );
}

criterion_group!(benches, per_step);

fn main() {
    benches();
    allocations();
    Criterion::default().configure_from_args().final_summary();
}
