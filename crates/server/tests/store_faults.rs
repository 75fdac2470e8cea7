//! `steward serve` when its run store fails, over real HTTP: `/ready` answers 503 within a second, naming the
//! cause and what to do, while the store cannot be written, and 200 again once it can; the next turn is
//! saved without a restart. Faults: a SQLite store made unwritable (`chmod a-w`, or `chattr +i` for root, see
//! steward-app's `tests/faults`), a SQLite store deleted (reported, never created anew), a PostgreSQL database
//! that refuses connections and ends its sessions (`ALLOW_CONNECTIONS false`, `pg_terminate_backend`; the
//! shared server keeps running), and a PostgreSQL server that stopped (a proxy in front of it, stopped).
//! PostgreSQL tests say SKIPPED without a server at 127.0.0.1:5432, and fail under CI=true.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../../app/tests/faults/mod.rs"]
mod faults;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{ADA, Echo, ROOT, Running, config, events, start};
use faults::{Proxy, Unwritable};
use serde_json::{Value, json};
use steward_app::store::RunStore;
use steward_app::{App, AppOptions};
use steward_server::{ModelChoice, Server, ServerOptions};
use steward_sql::Database;

const PG_ADMIN: &str = "postgres://postgres@127.0.0.1:5432/postgres";

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Reports a missing prerequisite: SKIPPED locally, a failure under CI.
fn skip(what: &str) {
    if ci() {
        panic!("{what} (CI=true: required)");
    }
    eprintln!("\n==================== SKIPPED: {what} ====================\n");
}

fn scratch_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "store-faults-{}-{}",
        std::process::id(),
        uuid::Uuid::now_v7().simple()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A server on the store at `url` (the API tests' config and model), as `steward serve` serves it; the
/// SQLite tests use the API tests' own server (`common::start`), whose store is `store.sqlite` in its folder.
async fn serve(url: &str) -> Running {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let store = RunStore::open(Some(url)).await.unwrap();
    let app = App::build(
        config(""),
        AppOptions {
            db: None,
            demo: None,
            clock: steward_domains::common::Clock::System,
            store: Some(store),
        },
    )
    .await
    .unwrap();
    let server = Server::new(ServerOptions {
        app: Arc::new(app),
        models: ModelChoice::fixed(Arc::new(Echo)),
        loopback: true,
    })
    .await
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener, Duration::from_secs(5), std::future::pending()));
    Running {
        base,
        client: reqwest::Client::new(),
        _dir: scratch_dir(),
    }
}

/// `GET /ready`, which must answer within a second (the server allows its check half of that): the status,
/// the body, and how long it took.
async fn ready(s: &Running) -> (u16, Value, Duration) {
    let started = Instant::now();
    let response = s
        .client
        .get(format!("{}/ready", s.base))
        .timeout(Duration::from_secs(1))
        .send()
        .await
        .expect("/ready did not answer within a second");
    let status = response.status().as_u16();
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    (status, body, started.elapsed())
}

async fn conversation(s: &Running) -> String {
    let (status, created) = s
        .json("POST", "/api/conversations", Some(ADA), Some(json!({})))
        .await;
    assert_eq!(status, 201, "{created}");
    created["id"].as_str().unwrap().to_owned()
}

/// Posts `content` to conversation `id`: the status and the body.
async fn post(s: &Running, id: &str, content: &str) -> (u16, String) {
    s.call(
        "POST",
        &format!("/api/conversations/{id}/messages"),
        Some(ADA),
        Some(json!({"content": content})),
    )
    .await
}

/// A turn that is answered, and saved: the conversation read back holds the answer.
async fn saved_turn(s: &Running, id: &str, content: &str) {
    let (status, text) = post(s, id, content).await;
    assert_eq!(status, 200, "{text}");
    let last = events(&text).last().cloned().unwrap();
    assert_eq!(last["type"], "answer", "{text}");
    let (status, stored) = s
        .json("GET", &format!("/api/conversations/{id}"), Some(ADA), None)
        .await;
    assert_eq!(status, 200, "{stored}");
    let answers: Vec<&str> = stored["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        answers
            .iter()
            .any(|a| a.starts_with(&format!("echo: {content}"))),
        "{stored}"
    );
    assert_eq!(stored["status"], "idle", "{stored}");
}

/// The API tests' server, and its SQLite store's file.
async fn sqlite_server() -> (Running, PathBuf) {
    let s = start("").await;
    let file = s._dir.join("store.sqlite");
    assert!(file.exists(), "{}", file.display());
    (s, file)
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unwritable_sqlite_store_makes_ready_503_until_it_is_writable_again() {
    let (s, file) = sqlite_server().await;
    let id = conversation(&s).await;
    saved_turn(&s, &id, "before").await;
    let (status, body, _) = ready(&s).await;
    assert_eq!(status, 200, "{body}");

    let Some(fault) = Unwritable::apply(&file) else {
        skip("neither chmod nor chattr +i makes a file unwritable here");
        return;
    };
    let (status, body, took) = ready(&s).await;
    eprintln!(
        "/ready with the store unwritable ({:?}): {status} in {took:?}: {body}",
        fault.how
    );
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["kind"], "read_only", "{body}");
    assert!(
        body["cause"].as_str().unwrap().contains(&shown(&file)),
        "{body}"
    );
    assert!(
        body["action"]
            .as_str()
            .unwrap()
            .contains("reconnects by itself"),
        "{body}"
    );
    // Every message is refused with the cause, none half-saved, the conversation left idle.
    for n in 0..5 {
        let (status, text) = post(&s, &id, &format!("during {n}")).await;
        assert_eq!(status, 503, "{text}");
        assert!(text.contains("cannot be written"), "{text}");
    }
    let (_, stored) = s
        .json("GET", &format!("/api/conversations/{id}"), Some(ADA), None)
        .await;
    assert_eq!(stored["status"], "idle", "{stored}");

    fault.restore();
    let (status, body, took) = ready(&s).await;
    eprintln!("/ready with the store writable again: {status} in {took:?}");
    assert_eq!(status, 200, "{body}");
    saved_turn(&s, &id, "after").await;
    let (status, runs) = s.json("GET", "/api/runs", Some(ROOT), None).await;
    assert_eq!(status, 200, "{runs}");
    assert_eq!(runs.as_array().unwrap().len(), 2, "{runs}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_sqlite_store_makes_ready_503_naming_the_file_and_is_not_created_anew() {
    let (s, file) = sqlite_server().await;
    let id = conversation(&s).await;
    saved_turn(&s, &id, "before").await;

    std::fs::remove_file(&file).unwrap();
    let (status, body, took) = ready(&s).await;
    eprintln!("/ready with the store deleted: {status} in {took:?}: {body}");
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["kind"], "deleted", "{body}");
    assert!(
        body["cause"]
            .as_str()
            .unwrap()
            .contains(&format!("the run store file {} was deleted", shown(&file))),
        "{body}"
    );
    assert!(
        body["action"].as_str().unwrap().contains("backup"),
        "{body}"
    );
    let (status, text) = post(&s, &id, "lost?").await;
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("was deleted"), "{text}");
    let (status, text) = s.call("GET", "/api/conversations", Some(ADA), None).await;
    assert_eq!(status, 503, "{text}");
    assert!(
        !file.exists(),
        "a new, empty store was created in place of the deleted one"
    );
}

/// A fresh PostgreSQL database for a store (dropped by steward-app's store tests once two hours old, like
/// theirs), or None (SKIPPED) without a server.
async fn pg_database() -> Option<(Database, String)> {
    let admin = match Database::connect(PG_ADMIN).await {
        Ok(admin) => admin,
        Err(e) => {
            skip(&format!("PostgreSQL at {PG_ADMIN} is not reachable: {e}"));
            return None;
        }
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let name = format!(
        "steward_store_{now}_faults_{}",
        uuid::Uuid::now_v7().simple()
    );
    admin
        .execute_script(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    Some((admin, name))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_postgres_store_outage_makes_ready_503_at_once_and_the_store_reconnects() {
    let Some((admin, name)) = pg_database().await else {
        return;
    };
    let s = serve(&format!("postgres://postgres@127.0.0.1:5432/{name}")).await;
    let id = conversation(&s).await;
    saved_turn(&s, &id, "before").await;

    // This database's outage only: no new connections, its sessions ended; the shared server keeps running.
    admin
        .execute_script(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS false"))
        .await
        .unwrap();
    admin
        .execute_script(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
        ))
        .await
        .unwrap();
    let (status, body, took) = ready(&s).await;
    eprintln!("/ready during the outage: {status} in {took:?}: {body}");
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["kind"], "unreachable", "{body}");
    assert!(
        body["cause"]
            .as_str()
            .unwrap()
            .contains("not currently accepting connections"),
        "{body}"
    );
    let (status, text) = post(&s, &id, "during").await;
    assert_eq!(status, 503, "{text}");

    admin
        .execute_script(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true"))
        .await
        .unwrap();
    let (status, body, took) = ready(&s).await;
    eprintln!("/ready after the outage: {status} in {took:?}");
    assert_eq!(status, 200, "{body}");
    saved_turn(&s, &id, "after").await;
    drop(s);
    let _ = admin
        .execute_script(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_postgres_server_makes_ready_503_within_a_second_and_the_store_reconnects() {
    let Some((admin, name)) = pg_database().await else {
        return;
    };
    let mut proxy = Proxy::start("127.0.0.1:5432");
    let s = serve(&format!(
        "postgres://postgres@127.0.0.1:{}/{name}",
        proxy.port
    ))
    .await;
    let id = conversation(&s).await;
    saved_turn(&s, &id, "before").await;

    proxy.stop();
    let (status, body, took) = ready(&s).await;
    eprintln!("/ready with the server stopped: {status} in {took:?}: {body}");
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["kind"], "unreachable", "{body}");
    assert!(
        body["cause"].as_str().unwrap().contains("refused"),
        "{body}"
    );

    proxy.restart();
    let (status, body, took) = ready(&s).await;
    eprintln!("/ready with the server started again: {status} in {took:?}");
    assert_eq!(status, 200, "{body}");
    saved_turn(&s, &id, "after").await;
    drop(s);
    drop(proxy);
    let _ = admin
        .execute_script(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await;
}
