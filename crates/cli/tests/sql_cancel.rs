//! Ctrl-C during `steward sql run`, and during `steward ask` while the agent's query runs, stops the query on the
//! server, not only in the terminal: the command exits 130 and, a moment later, PostgreSQL's `pg_stat_activity`
//! and MariaDB's `PROCESSLIST` no longer show the statement running.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use common::*;
use steward_sql::{Database, QueryLimits};

/// One engine: its scratch database (dropped at the end) and how to count the sessions running a statement.
struct Engine {
    url: String,
    admin: Database,
    /// Counts other sessions running a statement whose text holds `{pattern}` (a LIKE pattern).
    running: &'static str,
    _cleanup: ServerDb,
}

/// A table whose triple cross join counts 8·10⁹ rows: minutes of work that the guard lets through.
fn setup() -> String {
    let values: Vec<String> = (1..=2000).map(|x| format!("({x})")).collect();
    format!(
        "CREATE TABLE t (x INT); INSERT INTO t (x) VALUES {}",
        values.join(",")
    )
}

async fn postgres() -> Option<Engine> {
    if !postgres_up() {
        return None;
    }
    let name = fresh_name("cancel");
    let (url, cleanup) = ServerDb::postgres(&name);
    let admin = Database::connect(cleanup.admin).await.unwrap();
    admin
        .execute_script(&format!("CREATE DATABASE \"{name}\""))
        .await
        .unwrap();
    Some(Engine {
        url,
        admin,
        running: "SELECT count(*) FROM pg_stat_activity \
                  WHERE state = 'active' AND query LIKE '{pattern}' AND pid <> pg_backend_pid()",
        _cleanup: cleanup,
    })
}

async fn mariadb() -> Option<Engine> {
    if !mariadb_up() {
        return None;
    }
    let name = fresh_name("cancel");
    let (url, cleanup) = ServerDb::mariadb(&name);
    let admin = Database::connect(cleanup.admin).await.unwrap();
    admin
        .execute_script(&format!("CREATE DATABASE `{name}`"))
        .await
        .unwrap();
    Some(Engine {
        url,
        admin,
        running: "SELECT count(*) FROM information_schema.PROCESSLIST \
                  WHERE COMMAND = 'Query' AND INFO LIKE '{pattern}' AND ID <> CONNECTION_ID()",
        _cleanup: cleanup,
    })
}

impl Engine {
    async fn running(&self, marker: &str) -> i64 {
        let sql = self.running.replace("{pattern}", &format!("%{marker}%"));
        let result = self
            .admin
            .query_read_only(&sql, &[], &QueryLimits::default())
            .await
            .unwrap();
        steward_sql::cell_text(&result.rows[0][0]).parse().unwrap()
    }

    /// Polls until `want(count)` holds or `within` has passed; the last count.
    async fn until(&self, marker: &str, within: Duration, want: fn(i64) -> bool) -> i64 {
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

/// Waits for `child` to exit, killing it after `within`.
async fn wait(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("steward did not exit within {within:?} of Ctrl-C");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Which command runs the query.
#[derive(Clone, Copy)]
enum Via {
    /// `steward sql run`.
    Sql,
    /// `steward ask`, whose agent runs it with `run_sql` (a mock model asks for it).
    Ask,
    /// `/v1/chat/completions` on `steward serve`, streamed, whose client goes away.
    V1,
}

async fn ctrl_c_cancels_the_query(engine: Engine, via: Via) {
    let db = Database::connect(&engine.url).await.unwrap();
    db.execute_script(&setup()).await.unwrap();
    db.close().await;
    let marker = format!(
        "cancel_{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let sql = format!("SELECT count(*) AS {marker} FROM t a, t b, t c");
    let model = mock_openai(vec![
        tool_reply(
            "q1",
            "run_sql",
            &serde_json::json!({ "sql": sql }).to_string(),
        ),
        text_reply("counted"),
    ])
    .await;
    let base = format!("{}/v1", model.uri());
    let data = scratch_dir("cancel-data");
    if let Via::V1 = via {
        return client_gone_cancels_the_query(&engine, &base, &data, &marker).await;
    }
    let mut child = match via {
        Via::Sql => steward_command(
            &[
                "sql",
                "run",
                "--db",
                &engine.url,
                "--time-limit",
                "120",
                &sql,
            ],
            &[],
        ),
        Via::Ask | Via::V1 => steward_command(
            &[
                "ask",
                "--db",
                &engine.url,
                "--agent",
                "analyst",
                "How many triples are there?",
            ],
            &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &data)],
        ),
    }
    .spawn()
    .unwrap();
    let seen = engine
        .until(&marker, Duration::from_secs(20), |n| n > 0)
        .await;
    if seen == 0 {
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        panic!(
            "the query never showed up as running: {}",
            text(&out.stderr)
        );
    }
    // A moment more, as a person pressing Ctrl-C would leave it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = wait(&mut child, Duration::from_secs(10)).await;
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(status.code(), Some(130), "{stderr}");
    if let Via::Sql = via {
        assert!(stderr.contains("interrupted"), "{stderr}");
    }
    let exited = Instant::now();
    let left = engine
        .until(&marker, Duration::from_secs(1), |n| n == 0)
        .await;
    assert_eq!(
        left,
        0,
        "still running {:?} after steward exited",
        exited.elapsed()
    );
    engine.admin.close().await;
}

/// A `/v1` client that goes away mid-query: the server cancels the run and its statement.
async fn client_gone_cancels_the_query(
    engine: &Engine,
    model_base: &str,
    data: &str,
    marker: &str,
) {
    let dir = scratch_dir("cancel-v1");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(&config, format!("databases:\n  shop: {}\n", engine.url)).unwrap();
    let server = serve(&config, &format!("{dir}/store.sqlite"), model_base, data);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let response = reqwest::Client::new()
        .post(format!("{}/v1/chat/completions", server.base))
        .header("content-type", "application/json")
        .body(
            serde_json::json!({"model": "analyst", "stream": true,
                "messages": [{"role": "user", "content": "How many triples are there?"}]})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let seen = engine
        .until(marker, Duration::from_secs(20), |n| n > 0)
        .await;
    assert!(seen > 0, "the query never showed up as running");
    // The client goes away.
    drop(response);
    let gone = Instant::now();
    let left = engine
        .until(marker, Duration::from_secs(5), |n| n == 0)
        .await;
    assert_eq!(
        left,
        0,
        "still running {:?} after the client left",
        gone.elapsed()
    );
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1_client_that_leaves_cancels_its_postgres_query() {
    if let Some(engine) = postgres().await {
        ctrl_c_cancels_the_query(engine, Via::V1).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_a_postgres_query() {
    if let Some(engine) = postgres().await {
        ctrl_c_cancels_the_query(engine, Via::Sql).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_a_mariadb_query() {
    if let Some(engine) = mariadb().await {
        ctrl_c_cancels_the_query(engine, Via::Sql).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_an_agents_postgres_query() {
    if let Some(engine) = postgres().await {
        ctrl_c_cancels_the_query(engine, Via::Ask).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_an_agents_mariadb_query() {
    if let Some(engine) = mariadb().await {
        ctrl_c_cancels_the_query(engine, Via::Ask).await;
    }
}
