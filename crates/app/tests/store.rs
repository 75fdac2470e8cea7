//! The run store: runs written as they happen survive a reopen, a router's sub-runs are kept with it, a run
//! whose process died is listed as incomplete, concurrent writers lose nothing (SQLite and PostgreSQL), and
//! what could hold a secret is stored redacted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use common::*;
use steward_app::store::{INCOMPLETE, Recording, RunStore, StoreError, StoreObserver};
use steward_core::{
    Event, EventLog, EventRecord, Model, ModelError, ModelRequest, ModelResponse, Outcome, Runner,
};
use steward_llm::PriceTable;

async fn open(url: &str) -> RunStore {
    RunStore::open(Some(url)).await.unwrap()
}

fn observer(store: &RunStore) -> Arc<StoreObserver> {
    Arc::new(StoreObserver::new(store.clone()).unwrap())
}

fn kinds(records: &[EventRecord]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            serde_json::to_value(r).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn runs_survive_a_reopen_and_are_listed_newest_first() {
    let url = sqlite_url();
    let store = open(&url).await;
    let recording = Recording {
        model: Some("openai:gpt-4o-mini".to_owned()),
        ..Recording::default()
    }
    .priced(PriceTable::builtin());
    let obs = Arc::new(StoreObserver::recording(store.clone(), recording).unwrap());
    let mut ids = Vec::new();
    for question in ["first", "second", "third"] {
        ids.push(ask(obs.clone(), question).await.id().to_owned());
    }
    obs.flush().await.unwrap();
    drop(obs);
    store.close().await;

    let store = open(&url).await;
    let runs = store.list(10, 0).await.unwrap();
    let inputs: Vec<_> = runs.iter().map(|r| r.input.as_str()).collect();
    assert_eq!(inputs, ["third", "second", "first"]);
    ids.reverse();
    assert_eq!(runs.iter().map(|r| r.id.clone()).collect::<Vec<_>>(), ids);
    let newest = &runs[0];
    assert_eq!(newest.agent, "helper");
    assert_eq!(newest.outcome, "answered");
    assert!(newest.is_complete());
    assert_eq!(newest.steps, 2);
    assert_eq!(
        (newest.usage.input_tokens, newest.usage.output_tokens),
        (300, 30)
    );
    let expected = (300.0 * 0.15 + 30.0 * 0.60) / 1_000_000.0;
    assert!(
        (newest.cost_usd.unwrap() - expected).abs() < 1e-12,
        "{newest:?}"
    );
    assert_eq!(newest.model.as_deref(), Some("openai:gpt-4o-mini"));
    assert_eq!(newest.sub_runs, 0);
    assert!(newest.finished_at.unwrap() >= newest.started_at);
    assert!(newest.duration() >= chrono::Duration::zero());

    let page = store.list(1, 1).await.unwrap();
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].input, "second");

    let detail = store.get(&ids[2]).await.unwrap();
    assert_eq!(detail.run.input, "first");
    assert_eq!(
        detail.run.outcome,
        Some(Outcome::Answered {
            answer: "answer to first".into()
        })
    );
    assert_eq!(
        kinds(&detail.events),
        [
            "run_started",
            "model_request",
            "model_response",
            "tool_call",
            "tool_result",
            "model_request",
            "model_response",
            "finished"
        ]
    );
    assert_eq!(detail.tool_calls.len(), 1);
    let call = &detail.tool_calls[0];
    assert_eq!(
        (
            call.call_id.as_str(),
            call.tool.as_str(),
            call.arguments.as_str()
        ),
        ("e1", "echo", r#"{"text": "hi"}"#)
    );
    assert_eq!(call.result.as_deref(), Some("hi"));
    assert_eq!(call.is_error, Some(false));
    assert!(call.duration_ms.is_some());
}

/// A router run with its specialist: both runs, their tool calls, and exactly the records the runner
/// reported, in order.
async fn router_round_trip(url: &str) {
    let store = open(url).await;
    let obs = observer(&store);
    let both = Both::new(obs.clone());
    let run = ask_router(Arc::new(both.clone()), "what did the helper say?").await;
    obs.flush().await.unwrap();
    let id = run.id().to_owned();
    let sub_id = format!("{id}/r1");

    let detail = store.get(&id[..8]).await.unwrap();
    assert_eq!(detail.run.id, id);
    assert_eq!(detail.run.parent_id, None);
    assert_eq!(detail.run.agent, "router");
    assert_eq!(detail.run.steps, 2);
    assert_eq!(detail.sub_runs.len(), 1);
    let sub = &detail.sub_runs[0];
    assert_eq!(sub.id, sub_id);
    assert_eq!(sub.parent_id.as_deref(), Some(id.as_str()));
    assert_eq!(sub.root_id, id);
    assert_eq!(
        (sub.agent.as_str(), sub.input.as_str()),
        ("helper", "say hi")
    );
    assert_eq!(
        sub.outcome.as_ref().and_then(Outcome::answer),
        Some("The helper said hi.")
    );
    assert_eq!(detail.events, both.log.records(), "every record, in order");
    let calls: Vec<_> = detail
        .tool_calls
        .iter()
        .map(|c| (c.run_id.as_str(), c.call_id.as_str(), c.tool.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            (id.as_str(), "r1", "helper"),
            (sub_id.as_str(), "s1", "echo")
        ]
    );
    assert_eq!(
        detail.tool_calls[0].result.as_deref(),
        Some("The helper said hi.")
    );

    // The list shows the router alone, with its specialist's tokens and steps in its totals.
    let runs = store.list(10, 0).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].id, id);
    assert_eq!(runs[0].sub_runs, 1);
    assert_eq!(runs[0].steps, 4);
    assert_eq!(
        (runs[0].usage.input_tokens, runs[0].usage.output_tokens),
        (410, 41)
    );
    assert_eq!(runs[0].cost_usd, None, "no prices were given");

    // A sub-run by its id: itself and its own events only.
    let detail = store.get(&sub_id).await.unwrap();
    assert_eq!(detail.run.id, sub_id);
    assert!(detail.sub_runs.is_empty());
    let own: Vec<_> = both
        .log
        .records()
        .into_iter()
        .filter(|r| r.parent_run_id.is_some())
        .collect();
    assert_eq!(detail.events, own);
    assert_eq!(detail.tool_calls.len(), 1);
    store.close().await;
}

#[tokio::test]
async fn a_router_run_is_stored_with_its_sub_run_on_sqlite() {
    router_round_trip(&sqlite_url()).await;
}

#[tokio::test]
async fn a_router_run_is_stored_with_its_sub_run_on_postgres() {
    let Some(url) = pg_url().await else { return };
    router_round_trip(&url).await;
}

/// Answers with a tool call once, then never answers again.
struct Hangs(AtomicUsize);

#[async_trait]
impl Model for Hangs {
    fn name(&self) -> &str {
        "hangs"
    }

    async fn complete(&self, _request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
            return Ok(call("e1", "echo", r#"{"text": "hi"}"#).with_usage(10, 1));
        }
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_run_that_dies_mid_way_is_listed_incomplete_with_its_last_event() {
    let url = sqlite_url();
    let store = open(&url).await;
    let obs = observer(&store);
    let both = Both::new(obs.clone());
    let runner = Runner::new(Arc::new(helper()), Arc::new(Hangs(AtomicUsize::new(0))))
        .with_observer(Arc::new(both.clone()));
    let task = tokio::spawn(async move { runner.run("will it end?").await });
    let log = both.log.clone();
    tokio::time::timeout(Duration::from_secs(30), async {
        while !log
            .events()
            .iter()
            .any(|e| matches!(e, Event::ModelRequest { step: 2, .. }))
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    // The run dies: no Finished is ever reported.
    task.abort();
    let _ = task.await;
    obs.flush().await.unwrap();
    drop(obs);
    store.close().await;

    let store = open(&url).await;
    let runs = store.list(10, 0).await.unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.outcome, INCOMPLETE);
    assert!(!run.is_complete());
    assert_eq!(run.finished_at, None);
    let records = log.records();
    let last = records.last().unwrap();
    assert!(matches!(last.event, Event::ModelRequest { step: 2, .. }));
    assert_eq!(
        run.last_event_at.timestamp_micros(),
        last.at.timestamp_micros(),
        "the last event's time"
    );
    assert_eq!((run.steps, run.usage.input_tokens), (1, 10));
    let detail = store.get(&run.id).await.unwrap();
    assert_eq!(detail.run.outcome, None);
    assert_eq!(detail.events, records);
    assert_eq!(detail.tool_calls[0].result.as_deref(), Some("hi"));
}

const RUNS: usize = 15;

/// Two writers, each with its own handle, runtime and thread, store routed runs at the same time.
fn concurrent_writers(url: &str) {
    let reference = EventLog::new();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(ask_router(Arc::new(reference.clone()), "reference"));
    let per_run = reference.records().len();

    let mut ids = write_concurrently(url, RUNS);

    rt.block_on(async {
        let store = open(url).await;
        let runs = store.list(1000, 0).await.unwrap();
        assert_eq!(runs.len(), 2 * RUNS);
        assert!(runs.windows(2).all(|w| w[0].started_at >= w[1].started_at));
        for run in &runs {
            assert_eq!(run.outcome, "answered", "{run:?}");
            assert_eq!((run.sub_runs, run.steps, run.usage.total()), (1, 4, 451));
        }
        let mut listed: Vec<String> = runs.iter().map(|r| r.id.clone()).collect();
        listed.sort();
        ids.sort();
        assert_eq!(listed, ids);
        for id in &ids {
            let detail = store.get(id).await.unwrap();
            assert_eq!(detail.events.len(), per_run, "run {id}");
            assert_eq!(kinds(&detail.events), kinds(&reference.records()));
            assert_eq!(detail.tool_calls.len(), 2);
        }
        store.close().await;
    });
}

#[test]
fn concurrent_writers_on_one_sqlite_file_lose_nothing() {
    concurrent_writers(&sqlite_url());
}

#[test]
fn concurrent_writers_on_postgres_lose_nothing() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let Some(url) = rt.block_on(pg_url()) else {
        return;
    };
    concurrent_writers(&url);
}

async fn schema_versions(url: &str) -> Vec<i64> {
    use sqlx::Connection as _;
    let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
    sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
        .fetch_all(&mut conn)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn opening_is_idempotent_and_safe_when_concurrent() {
    let url = sqlite_url();
    let opens: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { RunStore::open(Some(&url)).await })
        })
        .collect();
    for open in opens {
        open.await.unwrap().unwrap();
    }
    open(&url).await;
    let every_step: Vec<i64> = (1..=RunStore::schema_version()).collect();
    assert_eq!(schema_versions(&url).await, every_step);
}

#[tokio::test]
async fn postgres_opening_is_idempotent_and_safe_when_concurrent() {
    let Some(url) = pg_url().await else { return };
    let (a, b, c) = tokio::join!(
        RunStore::open(Some(&url)),
        RunStore::open(Some(&url)),
        RunStore::open(Some(&url))
    );
    for store in [a, b, c] {
        store.unwrap().close().await;
    }
}

#[tokio::test]
async fn a_store_from_a_newer_steward_is_refused() {
    let url = sqlite_url();
    open(&url).await.close().await;
    {
        use sqlx::Connection as _;
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (99, 'later', TRUE, X'00', 0)",
        )
        .execute(&mut conn)
        .await
        .unwrap();
    }
    match RunStore::open(Some(&url)).await {
        Err(StoreError::TooNew { found, known, .. }) => {
            assert_eq!((found, known), (99, RunStore::schema_version()))
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
}

async fn sqlite_exec(url: &str, sql: &str) {
    use sqlx::Connection as _;
    let mut conn = sqlx::SqliteConnection::connect(url).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(&mut conn)
        .await
        .unwrap();
}

/// A store the migrator before sqlx's wrote (its steps in `schema_version`) opens with its data, its steps
/// recorded in `_sqlx_migrations` with this build's checksums, and the old table gone; one from a newer
/// steward in the old table is refused as well.
#[tokio::test]
async fn a_store_of_the_earlier_migrator_is_taken_over() {
    let url = sqlite_url();
    let store = open(&url).await;
    let obs = observer(&store);
    ask(obs.clone(), "before the new migrator").await;
    obs.flush().await.unwrap();
    store.close().await;
    let latest = RunStore::schema_version();
    let legacy = (1..=latest)
        .map(|v| format!("INSERT INTO schema_version VALUES ({v}, 'then');"))
        .collect::<String>();
    sqlite_exec(
        &url,
        &format!(
            "DROP TABLE _sqlx_migrations; \
             CREATE TABLE schema_version (version BIGINT NOT NULL PRIMARY KEY, applied_at TEXT NOT NULL); {legacy}"
        ),
    )
    .await;
    let store = open(&url).await;
    assert_eq!(
        store.list(10, 0).await.unwrap()[0].input,
        "before the new migrator"
    );
    store.close().await;
    assert_eq!(
        schema_versions(&url).await,
        (1..=latest).collect::<Vec<_>>()
    );
    {
        use sqlx::Connection as _;
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        let old: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_master WHERE name = 'schema_version'")
                .fetch_one(&mut conn)
                .await
                .unwrap();
        assert_eq!(old, 0);
    }
    // Opened again: nothing to do.
    open(&url).await.close().await;

    let newer = sqlite_url();
    open(&newer).await.close().await;
    sqlite_exec(
        &newer,
        "DROP TABLE _sqlx_migrations; \
         CREATE TABLE schema_version (version BIGINT NOT NULL PRIMARY KEY, applied_at TEXT NOT NULL); \
         INSERT INTO schema_version VALUES (1, 'then'), (42, 'later');",
    )
    .await;
    match RunStore::open(Some(&newer)).await {
        Err(StoreError::TooNew { found, .. }) => assert_eq!(found, 42),
        other => panic!("expected TooNew, got {other:?}"),
    }
}

/// A store whose applied step differs from the one this build ships (the step was edited after release) is
/// refused with the step's number, not migrated over.
#[tokio::test]
async fn a_store_whose_step_was_edited_is_refused() {
    let url = sqlite_url();
    open(&url).await.close().await;
    sqlite_exec(
        &url,
        "UPDATE _sqlx_migrations SET checksum = X'00' WHERE version = 3",
    )
    .await;
    let error = RunStore::open(Some(&url)).await.unwrap_err().to_string();
    assert!(
        error.contains("step 3") && error.contains("_sqlx_migrations"),
        "{error}"
    );
}

#[tokio::test]
async fn unsupported_urls_are_refused_without_showing_secrets() {
    let error = RunStore::open(Some("mysql://bob:s3cret@db/app"))
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, StoreError::BadUrl(_)));
    assert!(!text.contains("s3cret"), "{text}");
    assert!(
        text.contains("sqlite://") && text.contains("postgres://"),
        "{text}"
    );
    let error = RunStore::open(Some("postgres://bob:s3cret@127.0.0.1:9/app"))
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Open { .. }), "{error:?}");
    assert!(!error.to_string().contains("s3cret"), "{error}");
}

#[tokio::test]
async fn unknown_and_ambiguous_prefixes_are_clear_errors() {
    let store = open(&sqlite_url()).await;
    let obs = observer(&store);
    let a = ask(obs.clone(), "a").await.id().to_owned();
    let b = ask(obs.clone(), "b").await.id().to_owned();
    obs.flush().await.unwrap();
    let common = a
        .chars()
        .zip(b.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect::<String>();
    match store.get(&common).await {
        Err(StoreError::Ambiguous { candidates, .. }) => {
            assert_eq!(candidates, [b.clone(), a.clone()])
        }
        other => panic!("expected Ambiguous, got {other:?}"),
    }
    let error = store.get("zzzz").await.unwrap_err();
    assert!(
        matches!(&error, StoreError::NotFound(p) if p == "zzzz"),
        "{error:?}"
    );
    assert!(error.to_string().contains("steward runs list"), "{error}");
    assert_eq!(store.get(&a).await.unwrap().run.input, "a");
}

/// Fails like a provider whose error names its URL with a password and a key.
struct Leaky;

#[async_trait]
impl Model for Leaky {
    fn name(&self) -> &str {
        "leaky"
    }

    async fn complete(&self, _request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        Err(ModelError::Transport {
            provider: "openai".into(),
            message: "cannot reach https://bob:s3cret@llm.lan/v1?api-key=k3y-abcdef".into(),
        })
    }
}

#[tokio::test]
async fn provider_errors_are_stored_without_their_secrets() {
    let url = sqlite_url();
    let store = open(&url).await;
    let obs = observer(&store);
    let runner = Runner::new(Arc::new(helper()), Arc::new(Leaky)).with_observer(obs.clone());
    let (run, _) = runner.run("hello").await;
    obs.flush().await.unwrap();
    let detail = store.get(run.id()).await.unwrap();
    match &detail.run.outcome {
        Some(Outcome::ModelFailed { error, .. }) => {
            assert!(
                error.contains("https://bob:***@llm.lan/v1?api-key=***"),
                "{error}"
            )
        }
        other => panic!("expected ModelFailed, got {other:?}"),
    }
    // Nothing stored anywhere holds the secrets.
    use sqlx::Connection as _;
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let texts: Vec<String> =
        sqlx::query_scalar("SELECT record FROM events UNION ALL SELECT outcome_json FROM runs")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    for text in texts {
        assert!(
            !text.contains("s3cret") && !text.contains("k3y-abcdef"),
            "{text}"
        );
    }
}

#[tokio::test]
async fn a_conversation_keeps_every_question_and_is_incomplete_between_end_and_answer() {
    let store = open(&sqlite_url()).await;
    let obs = observer(&store);
    let model = Arc::new(steward_core::ScriptedModel::new([
        ModelResponse::text("Hi."),
        ModelResponse::text("Still hi."),
    ]));
    let runner = Runner::new(Arc::new(helper()), model).with_observer(obs.clone());
    let (mut run, _) = runner.run("hello").await;
    runner.follow_up(&mut run, "and again?").unwrap();
    obs.flush().await.unwrap();
    assert_eq!(
        store.list(1, 0).await.unwrap()[0].outcome,
        INCOMPLETE,
        "the second turn is going"
    );
    runner.drive(&mut run).await;
    obs.flush().await.unwrap();
    let runs = store.list(10, 0).await.unwrap();
    assert_eq!(runs.len(), 1, "one conversation, one run");
    assert_eq!((runs[0].outcome.as_str(), runs[0].steps), ("answered", 2));
    let detail = store.get(run.id()).await.unwrap();
    assert!(
        detail
            .events
            .iter()
            .any(|r| matches!(&r.event, Event::FollowUp { input, .. } if input == "and again?"))
    );
    assert_eq!(
        detail.run.outcome.as_ref().and_then(Outcome::answer),
        Some("Still hi.")
    );
}

#[tokio::test]
async fn write_errors_are_kept_and_never_fail_the_run() {
    let store = open(&sqlite_url()).await;
    let obs = observer(&store);
    store.close().await; // every write fails from here on
    let run = ask(obs.clone(), "still answered?").await;
    assert_eq!(
        run.outcome().and_then(Outcome::answer),
        Some("answer to still answered?")
    );
    let error = obs.flush().await.unwrap_err();
    assert!(matches!(error, StoreError::Database { .. }), "{error:?}");
    assert_eq!(
        obs.error().map(|e| e.to_string()),
        Some(error.to_string()),
        "the first error is kept"
    );
}
