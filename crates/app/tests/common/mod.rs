//! Fixtures for the store tests: scratch SQLite files, fresh PostgreSQL databases (SKIPPED without a server,
//! failing under CI=true), small agents driven by scripted models, and an observer that also keeps a log.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::Deserialize;
use sqlx::Connection as _;
use steward_app::store::{RunStore, StoreObserver};
use steward_core::{
    Agent, AgentTool, Event, EventLog, EventRecord, ModelResponse, Observer, Run, Runner,
    ScriptedModel, Tool, ToolCall, ToolOutput, Toolbox, TypedTool,
};

pub const PG_ADMIN: &str = "postgres://postgres@127.0.0.1:5432/postgres";

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Reports a missing prerequisite: SKIPPED locally, a failure under CI.
pub fn skip(what: &str) {
    if ci() {
        panic!("{what} (CI=true: required)");
    }
    eprintln!("SKIPPED: {what}");
}

pub fn unique() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{}_{:x}_{}",
        std::process::id(),
        nanos & 0xffff_ffff,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A SQLite store URL in a fresh folder that does not exist yet (the store creates it).
pub fn sqlite_url() -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("store-{}", unique()));
    format!("sqlite://{}", dir.join("runs.sqlite").display())
}

/// A fresh PostgreSQL database for this test, or None (SKIPPED) without a server. Databases of earlier runs
/// older than two hours are dropped first.
pub async fn pg_url() -> Option<String> {
    let mut admin = match sqlx::PgConnection::connect(PG_ADMIN).await {
        Ok(c) => c,
        Err(e) => {
            skip(&format!("PostgreSQL at {PG_ADMIN} is not reachable: {e}"));
            return None;
        }
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let old: Vec<(String,)> = sqlx::query_as(
        "SELECT datname::text FROM pg_database WHERE datname LIKE 'steward\\_store\\_%'",
    )
    .fetch_all(&mut admin)
    .await
    .unwrap();
    for (name,) in old {
        let born: u64 = name
            .split('_')
            .nth(2)
            .and_then(|t| t.parse().ok())
            .unwrap_or(now);
        if now.saturating_sub(born) > 7200 {
            let _ = sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name}"
            )))
            .execute(&mut admin)
            .await;
        }
    }
    let name = format!("steward_store_{now}_{}", unique().to_lowercase());
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .unwrap();
    Some(format!("postgres://postgres@127.0.0.1:5432/{name}"))
}

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
pub struct EchoArgs {
    /// What to say back.
    pub text: String,
}

pub fn echo() -> impl Tool {
    TypedTool::new(
        "echo",
        "Says the text back.",
        |_ctx, args: EchoArgs| async move { Ok(ToolOutput::text(args.text)) },
    )
    .read_only()
}

/// Reports to the store and keeps a log of the same records.
#[derive(Clone)]
pub struct Both {
    pub store: Arc<StoreObserver>,
    pub log: EventLog,
}

impl Both {
    pub fn new(store: Arc<StoreObserver>) -> Self {
        Self {
            store,
            log: EventLog::new(),
        }
    }
}

impl Observer for Both {
    fn on_event(&self, event: &Event) {
        self.on_record(&EventRecord::now(event.clone(), None));
    }

    fn on_record(&self, record: &EventRecord) {
        self.store.on_record(record);
        self.log.on_record(record);
    }
}

pub fn call(id: &str, name: &str, arguments: &str) -> ModelResponse {
    ModelResponse::tool_calls(vec![ToolCall::new(id, name, arguments)])
}

/// The `helper` agent: echo only.
pub fn helper() -> Agent {
    Agent::new("helper", "You help.", Toolbox::new().with(echo()).unwrap())
        .with_description("Says things back.")
}

/// One run of `helper`: an echo call (100 in, 10 out), then the answer (200 in, 20 out).
pub async fn ask(observer: Arc<dyn Observer>, input: &str) -> Run {
    let model = Arc::new(ScriptedModel::new([
        call("e1", "echo", r#"{"text": "hi"}"#).with_usage(100, 10),
        ModelResponse::text(format!("answer to {input}")).with_usage(200, 20),
    ]));
    let runner = Runner::new(Arc::new(helper()), model).with_observer(observer);
    let (run, _) = runner.run(input).await;
    run
}

/// One run of a router whose tool is `helper`: it asks the helper (which echoes, then answers), then answers.
pub async fn ask_router(observer: Arc<dyn Observer>, input: &str) -> Run {
    let model = Arc::new(ScriptedModel::new([
        call("r1", "helper", r#"{"request": "say hi"}"#).with_usage(50, 5),
        call("s1", "echo", r#"{"text": "hi"}"#).with_usage(100, 10),
        ModelResponse::text("The helper said hi.").with_usage(200, 20),
        ModelResponse::text("It said hi.").with_usage(60, 6),
    ]));
    let router = Agent::new(
        "router",
        "Route.",
        Toolbox::new()
            .with(AgentTool::new(Arc::new(helper()), model.clone()))
            .unwrap(),
    );
    let runner = Runner::new(Arc::new(router), model).with_observer(observer);
    let (run, _) = runner.run(input).await;
    run
}

/// Two writers, each with its own store handle, runtime and thread, each storing `runs` routed runs into the
/// store at `url` at the same time; returns every run's id.
pub fn write_concurrently(url: &str, runs: usize) -> Vec<String> {
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let url = url.to_owned();
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    let store = RunStore::open(Some(&url)).await.unwrap();
                    let obs = Arc::new(StoreObserver::new(store.clone()).unwrap());
                    let mut ids = Vec::new();
                    for i in 0..runs {
                        let run = ask_router(obs.clone(), &format!("writer {w} run {i}")).await;
                        ids.push(run.id().to_owned());
                    }
                    obs.flush().await.unwrap();
                    store.close().await;
                    ids
                })
            })
        })
        .collect();
    writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect()
}
