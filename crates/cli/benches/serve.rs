//! Issue 11's load benchmark for `steward serve`: 1,000 concurrent conversations against a local mock model
//! that answers after 200 ms. Reports errors, throughput, the latency the server adds over the model's 200 ms
//! (p50/p99) and the server's peak memory; first one server on SQLite, then two servers on one PostgreSQL
//! store.
//!
//! `cargo bench -p steward --bench serve` (optimised build). `STEWARD_BENCH_CONVERSATIONS=100` for a quick
//! run. Results and how to read them: bench/serve.md.
#![allow(
    missing_docs,
    unreachable_pub,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};

/// How long the mock model takes to answer, unless `STEWARD_BENCH_MODEL_DELAY_MS` says otherwise (0 measures
/// what the server alone can do: every turn's time is then the server's and its store's).
fn model_delay() -> Duration {
    static DELAY: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *DELAY.get_or_init(|| {
        std::env::var("STEWARD_BENCH_MODEL_DELAY_MS")
            .ok()
            .map_or(Duration::from_millis(200), |v| {
                Duration::from_millis(
                    v.parse()
                        .expect("STEWARD_BENCH_MODEL_DELAY_MS: milliseconds"),
                )
            })
    })
}

/// `STEWARD_BENCH_TOOL_CALL=1`: each turn is two model calls, the first asking for the calculator (so a turn
/// also runs a tool and chains its audit record), the second answering.
fn tool_turns() -> bool {
    std::env::var_os("STEWARD_BENCH_TOOL_CALL").is_some()
}

/// The binary under test: the one built with the bench, or `STEWARD_BENCH_BIN` (to put two builds side by
/// side on the same machine and load).
fn binary() -> String {
    std::env::var("STEWARD_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_steward").to_owned())
}
/// What the mock model answers (checked in every `answer` event).
const ANSWER: &str = "2 + 2 = 4.";
/// A message that has not ended after this long counts as an error.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);
/// Conversations created at once before the wave (creation is not what is measured).
const CREATE_PARALLELISM: usize = 32;

fn main() {
    let conversations: usize = std::env::var("STEWARD_BENCH_CONVERSATIONS")
        .ok()
        .map(|v| {
            v.parse()
                .expect("STEWARD_BENCH_CONVERSATIONS: a number of conversations")
        })
        .unwrap_or(1000);
    check_open_files(conversations);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(bench(conversations));
}

async fn bench(conversations: usize) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let model = Mock::start().await;
    let client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .unwrap();
    println!(
        "steward serve under load: {conversations} concurrent conversations, one message each; mock model \
         answers after {} ms; {} CPU core(s)",
        model_delay().as_millis(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );

    // Other work on the machine skews every figure: say how busy it was just before.
    let before = machine_ticks();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = machine_ticks();
    let busy = busy_percent(before, after);
    println!("cores busy in the second before the run: {busy:.0}%");
    if busy > 20.0 {
        println!(
            "WARNING: the machine is busy with other work; the figures below are not this server's alone"
        );
    }

    let mut reports = Vec::new();

    // 1. One server, SQLite store.
    let dir = scratch("sqlite");
    let store = format!("sqlite://{dir}/store.sqlite");
    let server = Serve::start("A", &dir, &store, &model.base);
    let report = run_wave(
        "1 server, SQLite",
        &client,
        &model,
        &[&server],
        conversations,
        |_| (0, 0),
    )
    .await;
    reports.push(report);
    drop(server);
    // A store of 1,000 conversations and their runs is tens of megabytes: not kept after each run.
    let _ = std::fs::remove_dir_all(&dir);

    // 2. Two servers, one PostgreSQL store: conversation i is created on server i % 2 and its message posted
    //    to the other one, so every turn reads a conversation the other server wrote.
    if std::env::var_os("STEWARD_BENCH_SQLITE_ONLY").is_some() {
        println!("\n2 servers, PostgreSQL: not run (STEWARD_BENCH_SQLITE_ONLY)");
    } else if postgres_up() {
        let name = format!(
            "steward_bench_{}_{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs()
        );
        psql(&format!("CREATE DATABASE {name}"));
        let _dropped = DropDatabase(name.clone());
        // A diagnostic: `STEWARD_BENCH_PG_SYNCHRONOUS_COMMIT=off` shows how much of the time is PostgreSQL
        // waiting for its log to reach the disk at each commit.
        if let Ok(value) = std::env::var("STEWARD_BENCH_PG_SYNCHRONOUS_COMMIT") {
            psql(&format!(
                "ALTER DATABASE {name} SET synchronous_commit = '{}'",
                value.replace('\'', "")
            ));
            println!("\n(PostgreSQL store with synchronous_commit = {value})");
        }
        let store = format!("postgres://postgres@127.0.0.1:5432/{name}");
        let dir = scratch("postgres");
        // One after the other: the first creates the store's tables.
        let a = Serve::start("A", &dir, &store, &model.base);
        let b = Serve::start("B", &dir, &store, &model.base);
        let report = run_wave(
            "2 servers, PostgreSQL",
            &client,
            &model,
            &[&a, &b],
            conversations,
            |i| (i % 2, (i + 1) % 2),
        )
        .await;
        reports.push(report);
        drop((a, b));
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        println!("\n2 servers, PostgreSQL: SKIPPED (no PostgreSQL at 127.0.0.1:5432)");
    }

    print_table(&reports);
    let errors: usize = reports.iter().map(|r| r.errors.len()).sum();
    if errors > 0 {
        println!("\n{errors} error(s); see above.");
        std::process::exit(1);
    }
}

// ---- The mock model --------------------------------------------------------------------------------------

/// An OpenAI chat-completions endpoint that answers every request with text after [`model_delay`].
struct Mock {
    base: String,
    state: Arc<MockState>,
}

#[derive(Default)]
struct MockState {
    calls: AtomicUsize,
    /// When the request carrying each message's tag came in, and when its reply went out.
    seen: Mutex<HashMap<String, (Instant, Instant)>>,
}

impl Mock {
    async fn start() -> Self {
        let state = Arc::new(MockState::default());
        let app = axum::Router::new()
            .route("/v1/chat/completions", post(complete))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/v1", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { base, state }
    }
}

/// The tag a message carries in its text (`[bench RUN-I]`), to match the model's request to the message.
fn tag_in(text: &str) -> Option<&str> {
    let start = text.find("[bench ")? + "[bench ".len();
    let len = text[start..].find(']')?;
    Some(&text[start..start + len])
}

/// A plain (non-streamed) chat completion, whether or not the request asked for a stream.
async fn complete(State(state): State<Arc<MockState>>, body: String) -> Json<Value> {
    let arrived = Instant::now();
    state.calls.fetch_add(1, Ordering::Relaxed);
    tokio::time::sleep(model_delay()).await;
    if let Some(tag) = tag_in(&body) {
        state
            .seen
            .lock()
            .unwrap()
            .insert(tag.to_owned(), (arrived, Instant::now()));
    }
    if tool_turns() && !body.contains(r#""role":"tool""#) {
        return Json(json!({
            "id": "chatcmpl-bench", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "calculator", "arguments": "{\"expression\": \"2 + 2\"}"}}]}}],
            "usage": {"prompt_tokens": 200, "completion_tokens": 15, "total_tokens": 215}
        }));
    }
    Json(json!({
        "id": "chatcmpl-bench", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 200, "completion_tokens": 15, "total_tokens": 215}
    }))
}

// ---- The server under test -------------------------------------------------------------------------------

/// A running `steward serve`, killed when dropped.
struct Serve {
    name: &'static str,
    child: Child,
    base: String,
    /// What it wrote on standard error after "listening on".
    log: Arc<Mutex<Vec<String>>>,
}

impl Serve {
    fn start(name: &'static str, dir: &str, store: &str, model_base: &str) -> Self {
        let config = format!("{dir}/steward.yaml");
        std::fs::write(
            &config,
            "agents:
  helper:
    description: Helps with sums.
    instructions: You help with sums.
    tools: [calculator]
server:
  limits: {requests_per_minute: 1000000, concurrent_runs: 4096}
",
        )
        .unwrap();
        let home = format!("{dir}/{name}");
        let mut child = Command::new(binary())
            .args([
                "serve",
                "-c",
                &config,
                "--bind",
                "127.0.0.1:0",
                "--store",
                store,
                "--grace",
                "2",
            ])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_DATA_HOME", format!("{home}/data"))
            .env("XDG_CACHE_HOME", format!("{home}/cache"))
            .env("XDG_STATE_HOME", format!("{home}/state"))
            .env("NO_COLOR", "1")
            // No Ollama is ever picked up by accident.
            .env("OLLAMA_HOST", "127.0.0.1:9")
            .env("OPENAI_BASE_URL", model_base)
            .env("OPENAI_API_KEY", "test")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let base = loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("steward serve ({name}) ended before listening"))
                .unwrap();
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
        };
        // Keep draining standard error so the server never blocks on it, and keep it to show.
        let log = Arc::new(Mutex::new(Vec::new()));
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        Self {
            name,
            child,
            base,
            log,
        }
    }

    /// A field of /proc/PID/status in kB (VmRSS, VmHWM).
    fn status_kb(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    fn cpu(&self) -> Duration {
        cpu_of(&self.child.id().to_string())
    }
}

/// The machine's busy and idle (idle + iowait) clock ticks so far, all cores (/proc/stat).
fn machine_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    let idle = ticks.get(3).copied().unwrap_or(0) + ticks.get(4).copied().unwrap_or(0);
    let busy = ticks.iter().take(8).sum::<u64>() - idle;
    (busy, idle)
}

/// How busy all cores were between two [`machine_ticks`] readings, in percent.
fn busy_percent(before: (u64, u64), after: (u64, u64)) -> f64 {
    let busy = after.0.saturating_sub(before.0) as f64;
    let idle = after.1.saturating_sub(before.1) as f64;
    if busy + idle > 0.0 {
        100.0 * busy / (busy + idle)
    } else {
        0.0
    }
}

/// User + system CPU time of a process so far (/proc/PID/stat, in clock ticks of 1/100 s).
fn cpu_of(pid: &str) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name, which is in parentheses: utime and stime are 14 and 15.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---- The wave ----------------------------------------------------------------------------------------------

struct ServerFigures {
    name: &'static str,
    rss_before_kb: u64,
    peak_kb: u64,
    cpu: Duration,
    log: Vec<String>,
}

/// Of the messages that succeeded, sorted: request start → `answer` event; → response headers; → the model's
/// request arriving at the mock; the mock's reply sent → `answer` event.
#[derive(Default)]
struct Parts {
    latency: Vec<Duration>,
    headers: Vec<Duration>,
    before_model: Vec<Duration>,
    after_model: Vec<Duration>,
}

struct Report {
    label: &'static str,
    messages: usize,
    model_calls: usize,
    create: Duration,
    wave: Duration,
    /// The timings of the messages that succeeded, each sorted.
    parts: Parts,
    errors: Vec<String>,
    servers: Vec<ServerFigures>,
    /// CPU time of this process (the load and the mock model) during the wave.
    own_cpu: Duration,
    /// How busy all the machine's cores were during the wave, in percent (everything: servers, this process,
    /// PostgreSQL).
    machine_busy: f64,
}

/// Creates `n` conversations, then posts one message in each, all at once. `route(i)` gives the servers
/// conversation i is created on and posted to.
async fn run_wave(
    label: &'static str,
    client: &reqwest::Client,
    model: &Mock,
    servers: &[&Serve],
    n: usize,
    route: impl Fn(usize) -> (usize, usize),
) -> Report {
    println!("\n{label}: creating {n} conversations…");
    let started = Instant::now();
    let mut ids = vec![String::new(); n];
    for chunk in (0..n).collect::<Vec<_>>().chunks(CREATE_PARALLELISM) {
        let mut set = tokio::task::JoinSet::new();
        for &i in chunk {
            let base = servers[route(i).0].base.clone();
            let client = client.clone();
            set.spawn(async move { (i, create(&client, &base).await) });
        }
        while let Some(done) = set.join_next().await {
            let (i, id) = done.unwrap();
            ids[i] = id;
        }
    }
    let create_time = started.elapsed();
    let rss_before: Vec<u64> = servers.iter().map(|s| s.status_kb("VmRSS")).collect();
    let cpu_before: Vec<Duration> = servers.iter().map(|s| s.cpu()).collect();
    let calls_before = model.state.calls.load(Ordering::Relaxed);
    let own_cpu_before = cpu_of("self");
    let machine_before = machine_ticks();

    println!("{label}: posting {n} messages at once…");
    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for (i, id) in ids.into_iter().enumerate() {
        let url = format!(
            "{}/api/conversations/{id}/messages",
            servers[route(i).1].base
        );
        let client = client.clone();
        let tag = format!("{label}-{i}");
        set.spawn(async move { (message(&client, &url, &tag).await, tag) });
    }
    let mut timings = Vec::with_capacity(n);
    let mut errors = Vec::new();
    while let Some(done) = set.join_next().await {
        match done.unwrap() {
            (Ok(timing), tag) => timings.push((timing, tag)),
            (Err(e), _) => errors.push(e),
        }
    }
    let wave = started.elapsed();
    let own_cpu = cpu_of("self").saturating_sub(own_cpu_before);
    let machine_busy = busy_percent(machine_before, machine_ticks());
    let seen = model.state.seen.lock().unwrap().clone();
    let mut parts = Parts::default();
    for (t, tag) in &timings {
        parts.latency.push(t.answered - t.started);
        parts.headers.push(t.headers - t.started);
        if let Some(&(arrived, replied)) = seen.get(tag) {
            parts
                .before_model
                .push(arrived.saturating_duration_since(t.started));
            parts
                .after_model
                .push(t.answered.saturating_duration_since(replied));
        }
    }
    for v in [
        &mut parts.latency,
        &mut parts.headers,
        &mut parts.before_model,
        &mut parts.after_model,
    ] {
        v.sort();
    }

    let servers = servers
        .iter()
        .zip(rss_before.into_iter().zip(cpu_before))
        .map(|(s, (rss_before_kb, cpu_before))| ServerFigures {
            name: s.name,
            rss_before_kb,
            peak_kb: s.status_kb("VmHWM"),
            cpu: s.cpu().saturating_sub(cpu_before),
            log: s.log.lock().unwrap().clone(),
        })
        .collect();
    let report = Report {
        label,
        messages: n,
        model_calls: model.state.calls.load(Ordering::Relaxed) - calls_before,
        create: create_time,
        wave,
        parts,
        errors,
        servers,
        own_cpu,
        machine_busy,
    };
    print_report(&report);
    report
}

async fn create(client: &reqwest::Client, base: &str) -> String {
    let response = client
        .post(format!("{base}/api/conversations"))
        .header("content-type", "application/json")
        .body(json!({"agent": "helper"}).to_string())
        .send()
        .await
        .unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status.as_u16(), 201, "creating a conversation: {text}");
    serde_json::from_str::<Value>(&text).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// When one message's request started, its response headers came, and its `answer` event came.
struct Timing {
    started: Instant,
    headers: Instant,
    answered: Instant,
}

/// Posts one message tagged `tag` and reads its event stream to the end: its timing, or what went wrong.
async fn message(client: &reqwest::Client, url: &str, tag: &str) -> Result<Timing, String> {
    let started = Instant::now();
    let mut response = client
        .post(url)
        .header("accept", "text/event-stream")
        .header("content-type", "application/json")
        .body(json!({"content": format!("What is 2 + 2? [bench {tag}]")}).to_string())
        .send()
        .await
        .map_err(|e| format!("request: {e}"))?;
    let headers = Instant::now();
    let status = response.status();
    if status.as_u16() != 200 {
        let text = response.text().await.unwrap_or_default();
        return Err(format!("HTTP {status}: {text}"));
    }
    let mut buffer = String::new();
    let mut answered = None;
    let mut last = String::new();
    loop {
        let chunk = response
            .chunk()
            .await
            .map_err(|e| format!("reading the stream: {e}"))?;
        let Some(chunk) = chunk else { break };
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            let Some(data) = line.trim_end().strip_prefix("data:") else {
                continue;
            };
            let event: Value =
                serde_json::from_str(data.trim()).map_err(|e| format!("bad event {data}: {e}"))?;
            last = event["type"].as_str().unwrap_or_default().to_owned();
            match last.as_str() {
                "answer" => {
                    answered = Some(Instant::now());
                    if event["content"] != ANSWER {
                        return Err(format!("unexpected answer: {event}"));
                    }
                }
                "error" | "approval" => return Err(format!("`{last}` event: {event}")),
                _ => {}
            }
        }
    }
    let answered = answered
        .ok_or_else(|| format!("the stream ended without an answer (last event: `{last}`)"))?;
    Ok(Timing {
        started,
        headers,
        answered,
    })
}

// ---- Reporting ---------------------------------------------------------------------------------------------

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn mib(kb: u64) -> String {
    format!("{:.1}", kb as f64 / 1024.0)
}

/// The figures of one run: (p50, p99, max) added latency, throughput.
fn figures(r: &Report) -> (Duration, Duration, Duration, f64) {
    let sorted = &r.parts.latency;
    let added = |d: Duration| d.saturating_sub(model_delay());
    (
        added(percentile(sorted, 50.0)),
        added(percentile(sorted, 99.0)),
        added(sorted.last().copied().unwrap_or_default()),
        r.parts.latency.len() as f64 / r.wave.as_secs_f64(),
    )
}

fn print_report(r: &Report) {
    let (p50, p99, max, throughput) = figures(r);
    println!(
        "{}: {} messages in {:.2} s ({throughput:.0} messages/s), {} ok, {} error(s); model calls {}; \
         added latency p50 {} ms, p99 {} ms, max {} ms; {n} conversations created in {:.2} s",
        r.label,
        r.messages,
        r.wave.as_secs_f64(),
        r.parts.latency.len(),
        r.errors.len(),
        r.model_calls,
        ms(p50),
        ms(p99),
        ms(max),
        r.create.as_secs_f64(),
        n = r.messages,
    );
    let p = &r.parts;
    println!(
        "  where it goes (p50 / p99 ms): request → response headers {} / {}; request → model request at the \
         mock {} / {}; mock reply sent → `answer` event {} / {}",
        ms(percentile(&p.headers, 50.0)),
        ms(percentile(&p.headers, 99.0)),
        ms(percentile(&p.before_model, 50.0)),
        ms(percentile(&p.before_model, 99.0)),
        ms(percentile(&p.after_model, 50.0)),
        ms(percentile(&p.after_model, 99.0)),
    );
    for s in &r.servers {
        println!(
            "  server {}: RSS before the wave {} MiB, peak (VmHWM) {} MiB, CPU during the wave {:.2} s",
            s.name,
            mib(s.rss_before_kb),
            mib(s.peak_kb),
            s.cpu.as_secs_f64()
        );
    }
    if !r.errors.is_empty() {
        let mut kinds: Vec<(String, usize)> = Vec::new();
        for e in &r.errors {
            // Group by the message without ids.
            let key: String = e.chars().take(300).collect();
            match kinds.iter_mut().find(|(k, _)| *k == key) {
                Some((_, n)) => *n += 1,
                None => kinds.push((key, 1)),
            }
        }
        println!("  errors (first 10 kinds):");
        for (k, n) in kinds.iter().take(10) {
            println!("    {n} × {k}");
        }
    }
    println!(
        "  this process (load + mock model): CPU during the wave {:.2} s; all cores busy {:.0}% of the wave",
        r.own_cpu.as_secs_f64(),
        r.machine_busy
    );
    for s in &r.servers {
        if !s.log.is_empty() {
            println!(
                "  server {} wrote {} line(s) on standard error; the first 10:",
                s.name,
                s.log.len()
            );
            for line in s.log.iter().take(10) {
                println!("    {line}");
            }
        }
    }
}

fn print_table(reports: &[Report]) {
    println!(
        "\n| run | messages | errors | wave (s) | throughput (msg/s) | added p50 (ms) | added p99 (ms) | added max (ms) | RSS before wave (MiB) | peak RSS (MiB) | server CPU (s) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in reports {
        let (p50, p99, max, throughput) = figures(r);
        let per_server = |f: &dyn Fn(&ServerFigures) -> String| {
            r.servers
                .iter()
                .map(|s| {
                    if r.servers.len() > 1 {
                        format!("{}: {}", s.name, f(s))
                    } else {
                        f(s)
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!(
            "| {} | {} | {} | {:.2} | {throughput:.0} | {} | {} | {} | {} | {} | {} |",
            r.label,
            r.messages,
            r.errors.len(),
            r.wave.as_secs_f64(),
            ms(p50),
            ms(p99),
            ms(max),
            per_server(&|s| mib(s.rss_before_kb)),
            per_server(&|s| mib(s.peak_kb)),
            per_server(&|s| format!("{:.2}", s.cpu.as_secs_f64())),
        );
    }
}

// ---- Helpers -----------------------------------------------------------------------------------------------

/// Each message holds one connection from here to a server, and the server one to the mock model (also in
/// this process): about two descriptors per conversation here.
fn check_open_files(conversations: usize) {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let soft: Option<u64> = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3)?.parse().ok());
    let needed = 2 * conversations as u64 + 256;
    if let Some(soft) = soft
        && soft < needed
    {
        eprintln!(
            "The open-file limit is {soft}; {conversations} concurrent conversations need about {needed} here \
             (and {} in each server). Raise it first, e.g. `ulimit -n 65536`, then run again.",
            conversations + 256
        );
        std::process::exit(2);
    }
}

fn scratch(what: &str) -> String {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("bench-serve-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

fn postgres_up() -> bool {
    std::net::TcpStream::connect("127.0.0.1:5432").is_ok()
}

/// Drops the benchmark's database when dropped (also when the benchmark panics); declared before the servers,
/// so they are stopped first.
struct DropDatabase(String);

impl Drop for DropDatabase {
    fn drop(&mut self) {
        // Never panics here: a failed drop leaves a database to drop by hand, named in the message.
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.0);
        let dropped = Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-c",
                &sql,
            ])
            .output()
            .is_ok_and(|out| out.status.success());
        if !dropped {
            eprintln!("could not drop the database {}; drop it by hand", self.0);
        }
    }
}

fn psql(sql: &str) {
    let out = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            sql,
        ])
        .output()
        .expect("run psql");
    assert!(
        out.status.success(),
        "psql -c {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
