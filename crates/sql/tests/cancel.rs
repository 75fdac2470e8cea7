//! A query whose future is dropped before it finished (Ctrl-C, a client gone, a caller's time limit) stops on
//! the server too, by effect: PostgreSQL's `pg_stat_activity` and MariaDB's `PROCESSLIST` no longer show it
//! running a moment later, and a SQLite reader's connections come free again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use sqlx::Connection as _;
use steward_core::{ToolCall, ToolContext, Toolbox};
use steward_sql::{Database, QueryLimits, SqlToolkit, settle_cancellations};

/// Long enough that only a cancellation, never the time limit, ends a statement within the test.
fn limits() -> QueryLimits {
    QueryLimits {
        timeout: Duration::from_secs(120),
        ..QueryLimits::default()
    }
}

/// A table whose triple cross join counts 8·10⁹ rows: minutes of work that the guard lets through.
fn setup() -> String {
    let values: Vec<String> = (1..=2000).map(|x| format!("({x})")).collect();
    format!(
        "CREATE TABLE t (x INT); INSERT INTO t (x) VALUES {}",
        values.join(",")
    )
}

/// A fresh database on a server, or None (SKIPPED; a failure under CI=true).
async fn scratch(admin: &str, mysql: bool, name: &str) -> Option<String> {
    match common::fresh(admin, &setup(), mysql).await {
        Ok(url) => Some(url),
        Err(e) => {
            common::skip(&format!("{name} is not usable: {e}"));
            None
        }
    }
}

/// A connection of its own that watches the server's sessions.
enum Monitor {
    Postgres(sqlx::PgConnection),
    Mariadb(sqlx::MySqlConnection),
}

impl Monitor {
    async fn open(url: &str) -> Self {
        if url.starts_with("postgres") {
            Self::Postgres(sqlx::PgConnection::connect(url).await.unwrap())
        } else {
            Self::Mariadb(sqlx::MySqlConnection::connect(url).await.unwrap())
        }
    }

    /// How many other sessions are running a statement that contains `marker`.
    async fn running(&mut self, marker: &str) -> i64 {
        let pattern = format!("%{marker}%");
        match self {
            Self::Postgres(conn) => sqlx::query_scalar(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()",
            )
            .bind(pattern)
            .fetch_one(conn)
            .await
            .unwrap(),
            Self::Mariadb(conn) => sqlx::query_scalar(
                "SELECT count(*) FROM information_schema.PROCESSLIST \
                 WHERE COMMAND = 'Query' AND INFO LIKE ? AND ID <> CONNECTION_ID()",
            )
            .bind(pattern)
            .fetch_one(conn)
            .await
            .unwrap(),
        }
    }

    /// Polls until `want(count)` holds or `within` has passed; the last count.
    async fn until(&mut self, marker: &str, within: Duration, want: fn(i64) -> bool) -> i64 {
        let deadline = Instant::now() + within;
        loop {
            let count = self.running(marker).await;
            if want(count) || Instant::now() >= deadline {
                return count;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

type Query<'a> = Pin<Box<dyn Future<Output = String> + Send + 'a>>;

/// Starts `query`, waits until the server shows it running, drops it, and asserts that the server stops
/// running it within a second.
async fn dropped_query_stops(monitor: &mut Monitor, what: &str, marker: &str, query: Query<'_>) {
    let mut query = query;
    let seen = tokio::select! {
        ended = &mut query => panic!("{what}: the query ended on its own: {ended}"),
        seen = monitor.until(marker, Duration::from_secs(20), |n| n > 0) => seen,
    };
    assert_eq!(seen, 1, "{what}: the statement never showed up as running");
    // A moment more, as a person pressing Ctrl-C would leave it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let dropped = Instant::now();
    drop(query);
    assert!(
        settle_cancellations().await,
        "{what}: the cancellation did not settle"
    );
    let left = monitor
        .until(
            marker,
            Duration::from_secs(1).saturating_sub(dropped.elapsed()),
            |n| n == 0,
        )
        .await;
    assert_eq!(
        left,
        0,
        "{what}: still running {:?} after the query was dropped",
        dropped.elapsed()
    );
}

/// The engine's direct read path with its own sleep function, and the run_sql tool with a guarded query.
async fn engine_stops_dropped_queries(url: &str, sleep: &str) {
    let db = Arc::new(Database::connect(url).await.unwrap());
    let mut monitor = Monitor::open(url).await;
    let limits = limits();

    let marker = format!("cancel_{}", common::unique());
    let sql = format!("SELECT {sleep}(30) AS {marker}");
    let query: Query<'_> =
        Box::pin(async { format!("{:?}", db.query_read_only(&sql, &[], &limits).await) });
    dropped_query_stops(&mut monitor, &sql, &marker, query).await;
    // The pool is usable afterwards.
    let one = db.query_read_only("SELECT 1", &[], &limits).await.unwrap();
    assert_eq!(steward_sql::cell_text(&one.rows[0][0]), "1");

    // Through the tool a model calls: validated, guarded, run read-only.
    let kit = SqlToolkit::new(db.clone()).await.unwrap();
    let mut tools = Toolbox::new();
    for tool in kit.tools() {
        tools.add(tool).unwrap();
    }
    let marker = format!("cancel_{}", common::unique());
    let sql = format!("SELECT count(*) AS {marker} FROM t a, t b, t c");
    let call = ToolCall::new("c1", "run_sql", json!({ "sql": sql }).to_string());
    let (tool, args) = tools.check(&call).map_err(|r| r.observation).unwrap();
    let query: Query<'_> = Box::pin(async move {
        match tool.call(&ToolContext::default(), args).await {
            Ok(output) => output.content,
            Err(e) => e.message,
        }
    });
    dropped_query_stops(&mut monitor, &sql, &marker, query).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stops_a_dropped_query() {
    let Some(url) = scratch(common::PG_ADMIN, false, "PostgreSQL at 127.0.0.1:5432").await else {
        return;
    };
    engine_stops_dropped_queries(&url, "pg_sleep").await;
    drop_database(common::PG_ADMIN, &url, " WITH (FORCE)").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_stops_a_dropped_query() {
    let Some(url) = scratch(common::MARIA_ADMIN, true, "MariaDB at 127.0.0.1:3306").await else {
        return;
    };
    engine_stops_dropped_queries(&url, "SLEEP").await;
    drop_database(common::MARIA_ADMIN, &url, "").await;
}

/// SQLite runs a statement on sqlx's worker thread, and a running read holds a shared lock on the file that
/// keeps a writer from committing (rollback journal): a write right after a dropped endless read commits only
/// if the read really stopped (else it waits for the busy timeout, 15 s, and fails).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_stops_a_dropped_query() {
    let db = common::scratch_sqlite(
        "PRAGMA journal_mode=DELETE; CREATE TABLE t (x INT); INSERT INTO t VALUES (0)",
    )
    .await;
    let limits = limits();
    let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) \
                   SELECT count(*) FROM c, t";
    for round in 1..=3 {
        let ended = tokio::time::timeout(
            Duration::from_millis(300),
            db.query_read_only(endless, &[], &limits),
        )
        .await;
        assert!(ended.is_err(), "round {round}: ended on its own: {ended:?}");
        let write = tokio::time::timeout(
            Duration::from_secs(5),
            db.execute_script(&format!("INSERT INTO t VALUES ({round})")),
        )
        .await;
        assert!(
            matches!(write, Ok(Ok(()))),
            "round {round}: the dropped read still holds the database: {write:?}"
        );
    }
    let count = db
        .query_read_only("SELECT count(*) FROM t", &[], &limits)
        .await
        .unwrap();
    assert_eq!(steward_sql::cell_text(&count.rows[0][0]), "4");
    // Nothing was sent to a server: whatever is in flight (another test's) settles.
    assert!(settle_cancellations().await);
    db.close().await;
}

/// Drops the scratch database `url` names (best effort: an older run's leftovers are dropped by later runs).
async fn drop_database(admin: &str, url: &str, suffix: &str) {
    let Some((_, name)) = url.rsplit_once('/') else {
        return;
    };
    if let Ok(admin) = Database::connect(admin).await {
        let _ = admin
            .execute_script(&format!("DROP DATABASE IF EXISTS {name}{suffix}"))
            .await;
        admin.close().await;
    }
}
