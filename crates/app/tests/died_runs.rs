//! Runs whose process died, by effect: opening the store marks `died` every run without an outcome (sub-runs
//! too) whose owner is a process of this host that is gone — its pid no longer there, or taken by a process
//! that started at another time — and leaves alone the runs of live processes, of other hosts, runs parked to
//! wait for an approval and runs that ended. A died run that gets another event is taken by the process that
//! writes it and has no outcome again. SQLite and PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use common::*;
use sqlx::Connection as _;
use steward_app::store::{DIED, INCOMPLETE, RunStore, StoreObserver};
use steward_core::{
    Agent, AgentTool, Event, EventRecord, Model, ModelError, ModelRequest, ModelResponse, Observer,
    Runner, Toolbox,
};

/// Plays its replies, then never answers again.
struct ThenHangs(Mutex<VecDeque<ModelResponse>>);

#[async_trait]
impl Model for ThenHangs {
    fn name(&self) -> &str {
        "then-hangs"
    }

    async fn complete(&self, _request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let next = self.0.lock().unwrap().pop_front();
        match next {
            Some(reply) => Ok(reply),
            None => std::future::pending().await,
        }
    }
}

/// Starts a run of the agent `agent` makes (given the model) for `input`, whose model plays `replies` then
/// hangs; stops it (the run never ends) once `requests` model requests were reported. Returns the run's id.
async fn stopped_midway(
    observer: &Both,
    agent: fn(Arc<dyn Model>) -> Agent,
    replies: Vec<ModelResponse>,
    requests: usize,
    input: &str,
) -> String {
    let model: Arc<dyn Model> = Arc::new(ThenHangs(Mutex::new(replies.into())));
    let runner = Runner::new(Arc::new(agent(model.clone())), model)
        .with_observer(Arc::new(observer.clone()));
    let before = observer.log.records().len();
    let input = input.to_owned();
    let task = tokio::spawn(async move { runner.run(&input).await });
    let log = observer.log.clone();
    let id = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let records = log.records();
            let mine = &records[before.min(records.len())..];
            let asked = mine
                .iter()
                .filter(|r| matches!(r.event, Event::ModelRequest { .. }))
                .count();
            if asked >= requests
                && let Some(Event::RunStarted { run_id, .. }) = mine.first().map(|r| &r.event)
            {
                break run_id.clone();
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    task.abort();
    let _ = task.await;
    id
}

/// A router whose specialist is `helper`, both on `model`.
fn router(model: Arc<dyn Model>) -> Agent {
    Agent::new(
        "router",
        "Route.",
        Toolbox::new()
            .with(AgentTool::new(Arc::new(helper()), model))
            .unwrap(),
    )
}

/// Runs `sql` (no parameters) on the store's database.
async fn exec(url: &str, sql: &str) {
    let sql = sqlx::AssertSqlSafe(sql.to_owned());
    if url.starts_with("sqlite:") {
        let mut c = sqlx::SqliteConnection::connect(url).await.unwrap();
        sqlx::raw_sql(sql).execute(&mut c).await.unwrap();
        c.close().await.unwrap();
    } else {
        let mut c = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::raw_sql(sql).execute(&mut c).await.unwrap();
        c.close().await.unwrap();
    }
}

/// The owner stored with the run `id`.
async fn owner_of(url: &str, id: &str) -> String {
    let query = "SELECT owner FROM runs WHERE id = $1";
    if url.starts_with("sqlite:") {
        let mut c = sqlx::SqliteConnection::connect(url).await.unwrap();
        let owner: String = sqlx::query_scalar(query)
            .bind(id)
            .fetch_one(&mut c)
            .await
            .unwrap();
        c.close().await.unwrap();
        owner
    } else {
        let mut c = sqlx::PgConnection::connect(url).await.unwrap();
        let owner: String = sqlx::query_scalar(query)
            .bind(id)
            .fetch_one(&mut c)
            .await
            .unwrap();
        c.close().await.unwrap();
        owner
    }
}

async fn set_owner(url: &str, root: &str, owner: &str) {
    exec(
        url,
        &format!("UPDATE runs SET owner = '{owner}' WHERE root_id = '{root}'"),
    )
    .await;
}

/// The pid of a process that has ended (and was collected).
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

async fn outcome(store: &RunStore, id: &str) -> String {
    store
        .list(100, 0)
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.id == id)
        .unwrap()
        .outcome
}

async fn died_runs_are_marked_when_the_store_opens(url: &str) {
    let store = RunStore::open(Some(url)).await.unwrap();
    let obs = Arc::new(StoreObserver::new(store.clone()).unwrap());
    let both = Both::new(obs.clone());

    // A router stopped while its specialist works: two runs without an outcome.
    let killed = stopped_midway(
        &both,
        router,
        vec![
            call("r1", "helper", r#"{"request": "say hi"}"#),
            call("s1", "echo", r#"{"text": "hi"}"#),
        ],
        3,
        "killed",
    )
    .await;
    let reused = stopped_midway(&both, |_| helper(), vec![], 1, "pid reused").await;
    let alive = stopped_midway(&both, |_| helper(), vec![], 1, "still going").await;
    let elsewhere = stopped_midway(&both, |_| helper(), vec![], 1, "on another host").await;
    let parked = stopped_midway(&both, |_| helper(), vec![], 1, "waits for approval").await;
    let ended = ask(Arc::new(both.clone()), "answered")
        .await
        .id()
        .to_owned();
    obs.flush().await.unwrap();

    let me = owner_of(url, &alive).await;
    let parts: Vec<&str> = me.split(':').collect();
    if parts.len() != 3 {
        skip(&format!(
            "this system has no /proc to tell a live process from a dead one (owner `{me}`)"
        ));
        return;
    }
    let (host, pid, start) = (parts[0], parts[1], parts[2]);
    let ticks: u64 = start.split('.').next().unwrap().parse().unwrap();
    let rest = start.split_once('.').unwrap().1;
    let dead = format!("{host}:{}:{ticks}.{rest}", dead_pid());
    set_owner(url, &killed, &dead).await;
    // The same pid, started at another time: the process that wrote it is gone and another has its pid.
    set_owner(url, &reused, &format!("{host}:{pid}:{}.{rest}", ticks + 1)).await;
    set_owner(
        url,
        &elsewhere,
        &format!("another-{host}:{}:{ticks}.{rest}", dead_pid()),
    )
    .await;
    set_owner(url, &parked, &dead).await;
    set_owner(url, &ended, &dead).await;
    exec(
        url,
        &format!(
            "INSERT INTO pending_runs (run_id, agent, principal, state, saved_at) \
             VALUES ('{parked}', 'helper', '{{}}', '{{}}', '2026-11-21T08:30:00.000000Z')"
        ),
    )
    .await;
    assert_eq!(outcome(&store, &killed).await, INCOMPLETE);

    // The next open marks them.
    let reopened = RunStore::open(Some(url)).await.unwrap();
    assert_eq!(outcome(&reopened, &killed).await, DIED);
    let summary = reopened
        .list(100, 0)
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.id == killed)
        .unwrap();
    assert!(summary.died() && summary.is_complete(), "{summary:?}");
    assert_eq!(summary.finished_at, None);
    let detail = reopened.get(&killed).await.unwrap();
    assert!(
        detail.run.died && detail.run.outcome.is_none(),
        "{detail:?}"
    );
    assert_eq!(detail.sub_runs.len(), 1);
    assert!(detail.sub_runs[0].died, "the sub-run died with it");
    let json = serde_json::to_value(&detail.run).unwrap();
    assert_eq!(json["died"], true);
    assert_eq!(outcome(&reopened, &reused).await, DIED);
    // Left alone: a live process's run, another host's, a parked one and one that ended.
    assert_eq!(outcome(&reopened, &alive).await, INCOMPLETE);
    assert_eq!(outcome(&reopened, &elsewhere).await, INCOMPLETE);
    assert_eq!(outcome(&reopened, &parked).await, INCOMPLETE);
    assert_eq!(outcome(&reopened, &ended).await, "answered");
    let alive_detail = reopened.get(&alive).await.unwrap();
    assert!(!alive_detail.run.died);
    assert!(
        serde_json::to_value(&alive_detail.run)
            .unwrap()
            .get("died")
            .is_none(),
        "`died` is only shown when true"
    );
    assert_eq!(
        reopened.mark_died().await.unwrap(),
        0,
        "nothing left to mark"
    );

    // The killed run goes on, written by another observer (an approval resumed here): it is this process's,
    // and has no outcome again until it ends.
    let taker = StoreObserver::new(reopened.clone()).unwrap();
    taker.on_record(&EventRecord::now(
        Event::ModelRequest {
            run_id: killed.clone(),
            step: 3,
            messages: 4,
            tools: 1,
        },
        None,
    ));
    taker.flush().await.unwrap();
    assert_eq!(outcome(&reopened, &killed).await, INCOMPLETE);
    assert_eq!(owner_of(url, &killed).await, me);
    reopened.close().await;
    store.close().await;
}

#[tokio::test]
async fn runs_of_a_dead_process_are_marked_died_on_sqlite() {
    died_runs_are_marked_when_the_store_opens(&sqlite_url()).await;
}

#[tokio::test]
async fn runs_of_a_dead_process_are_marked_died_on_postgres() {
    let Some(url) = pg_url().await else { return };
    died_runs_are_marked_when_the_store_opens(&url).await;
}
