//! Runs recorded while the store cannot be written, by effect: a PostgreSQL database that refuses connections
//! (its sessions ended) while runs are answered, and a SQLite file made unwritable. The records are kept and
//! written in order once the store is back: every run has its outcome and every event, in order, and the calls
//! they settled are in an intact audit chain. A flush during the outage reports it within its bound.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod faults;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use faults::Unwritable;
use sqlx::Connection as _;
use steward_app::store::{RunStore, StoreObserver};
use steward_core::{EventRecord, Outcome};

/// Runs `sql` on the administration database.
async fn admin(sql: &str) {
    let mut admin = sqlx::PgConnection::connect(PG_ADMIN).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(&mut admin)
        .await
        .unwrap();
    admin.close().await.unwrap();
}

/// The records of the run `id` and the runs under it, as the log has them.
fn of_tree(log: &[EventRecord], id: &str) -> Vec<EventRecord> {
    let below = format!("{id}/");
    log.iter()
        .filter(|r| {
            let json = serde_json::to_value(&r.event).unwrap();
            let run = json["run_id"].as_str().unwrap_or_default();
            run == id || run.starts_with(&below)
        })
        .cloned()
        .collect()
}

/// Checks that the run `id` is stored whole: its outcome and its sub-runs', every record the runner reported
/// for its tree, in order, and its calls settled in an intact chain.
async fn stored_whole(store: &RunStore, log: &[EventRecord], id: &str, sub_runs: usize) {
    let detail = store.get(id).await.unwrap();
    assert!(
        matches!(detail.run.outcome, Some(Outcome::Answered { .. })),
        "{:?}",
        detail.run
    );
    assert_eq!(detail.sub_runs.len(), sub_runs);
    for sub in &detail.sub_runs {
        assert!(sub.outcome.is_some(), "{sub:?}");
    }
    assert_eq!(detail.events, of_tree(log, id), "every record, in order");
    let trail = store.audit(1000, 0).await.unwrap();
    let calls = trail
        .iter()
        .filter(|r| r.run_id == id || r.run_id.starts_with(&format!("{id}/")))
        .filter(|r| r.status == "ok")
        .count();
    assert_eq!(calls, detail.tool_calls.len(), "{trail:#?}");
    let report = store.verify_audit().await.unwrap();
    assert!(report.is_intact(), "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_answered_during_a_postgres_outage_are_stored_whole_once_it_is_back() {
    let Some(url) = pg_url().await else { return };
    let name = url.rsplit('/').next().unwrap().to_owned();
    let store = RunStore::open(Some(&url)).await.unwrap();
    let obs = Arc::new(StoreObserver::new(store.clone()).unwrap());
    let both = Both::new(obs.clone());
    let before = ask(Arc::new(both.clone()), "before the outage").await;
    obs.flush().await.unwrap();

    // The outage: no new connections, the store's sessions ended.
    admin(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS false")).await;
    admin(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
    ))
    .await;
    let routed = ask_router(Arc::new(both.clone()), "during the outage").await;
    let plain = ask(Arc::new(both.clone()), "still during the outage").await;
    assert!(routed.outcome().is_some_and(Outcome::is_answered));
    assert!(plain.outcome().is_some_and(Outcome::is_answered));

    // A flush while the store is out says so within its bound (and the write being tried then).
    let started = Instant::now();
    let e = obs
        .flush_within(Duration::from_secs(1))
        .await
        .unwrap_err()
        .to_string();
    let took = started.elapsed();
    eprintln!("flush during the outage: {e} after {took:?}");
    assert!(e.contains("not written yet"), "{e}");
    assert!(e.contains("not currently accepting connections"), "{e}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(obs.error().is_some());

    // Back: the records kept are written, in order, and nothing was lost.
    admin(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true")).await;
    obs.flush().await.unwrap();
    assert!(obs.error().is_none(), "{:?}", obs.error());
    let log = both.log.records();
    stored_whole(&store, &log, before.id(), 0).await;
    stored_whole(&store, &log, routed.id(), 1).await;
    stored_whole(&store, &log, plain.id(), 0).await;
    let listed = store.list(10, 0).await.unwrap();
    assert_eq!(listed.len(), 3);
    assert!(listed.iter().all(|r| r.outcome == "answered"), "{listed:?}");
    drop(obs);
    store.close().await;
    admin(&format!("DROP DATABASE IF EXISTS {name}")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_answered_while_a_sqlite_store_is_unwritable_are_stored_whole_once_it_is_writable() {
    let url = sqlite_url();
    let file = PathBuf::from(url.trim_start_matches("sqlite://"));
    let store = RunStore::open(Some(&url)).await.unwrap();
    let obs = Arc::new(StoreObserver::new(store.clone()).unwrap());
    let both = Both::new(obs.clone());
    let before = ask(Arc::new(both.clone()), "before").await;
    obs.flush().await.unwrap();

    let Some(fault) = Unwritable::apply(&file) else {
        skip("neither chmod nor chattr +i makes a file unwritable here");
        return;
    };
    let routed = ask_router(Arc::new(both.clone()), "while unwritable").await;
    let during = obs.flush_within(Duration::from_millis(500)).await;
    eprintln!("flush while unwritable ({:?}): {during:?}", fault.how);
    if fault.how == faults::How::Immutable {
        let e = during.unwrap_err().to_string();
        assert!(e.contains("not written yet"), "{e}");
        assert!(e.contains(&file.display().to_string()), "{e}");
    }
    fault.restore();
    obs.flush().await.unwrap();
    assert!(obs.error().is_none(), "{:?}", obs.error());
    let log = both.log.records();
    stored_whole(&store, &log, before.id(), 0).await;
    stored_whole(&store, &log, routed.id(), 1).await;
    drop(obs);
    store.close().await;
}

#[tokio::test]
async fn records_sent_to_a_closed_store_are_dropped_at_once_and_counted() {
    let store = RunStore::open(Some(&sqlite_url())).await.unwrap();
    let obs = Arc::new(StoreObserver::new(store.clone()).unwrap());
    store.close().await;
    let started = Instant::now();
    ask(obs.clone(), "lost").await;
    let e = obs.flush().await.unwrap_err().to_string();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "no retries for a closed store"
    );
    assert!(e.contains("records of the run not written"), "{e}");
}
