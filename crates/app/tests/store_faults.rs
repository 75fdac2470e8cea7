//! The run store when its storage fails, by effect: a SQLite file made unwritable and then writable again, a
//! SQLite file deleted while open (and at the next start), a PostgreSQL database that refuses connections and
//! then takes them again. [`RunStore::health`] says what is wrong within its limit, writes fail with an error
//! that names the store, and the store is written again once the fault is gone, without being reopened.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod faults;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{PG_ADMIN, pg_url, skip, sqlite_url, unique};
use faults::{How, Proxy, Unwritable};
use serde_json::json;
use sqlx::Connection as _;
use steward_app::store::{RunStore, StoreFaultKind};

/// The limit the server's `/ready` uses.
const LIMIT: Duration = Duration::from_millis(500);

fn path_of(url: &str) -> PathBuf {
    PathBuf::from(url.trim_start_matches("sqlite://"))
}

async fn write(store: &RunStore) -> Result<String, String> {
    let id = unique();
    store
        .create_conversation(&id, "ada", "", "assistant", &json!({}))
        .await
        .map(|c| c.id)
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn an_unwritable_sqlite_store_is_reported_and_written_again_once_writable() {
    let url = sqlite_url();
    let file = path_of(&url);
    let store = RunStore::open(Some(&url)).await.unwrap();
    let before = write(&store).await.unwrap();
    store.health(LIMIT).await.unwrap();

    let Some(fault) = Unwritable::apply(&file) else {
        skip("neither chmod nor chattr +i makes a file unwritable here");
        return;
    };
    let started = Instant::now();
    let found = store.health(LIMIT).await.unwrap_err();
    eprintln!(
        "health of an unwritable store ({:?}): {:?} in {:?}",
        fault.how,
        found,
        started.elapsed()
    );
    assert_eq!(found.kind, StoreFaultKind::ReadOnly, "{found}");
    assert!(found.cause.contains(&file.display().to_string()), "{found}");
    assert!(found.action.contains("reconnects by itself"), "{found}");
    // Every write fails, and says why (not one in five, as when only new connections were read-only).
    for _ in 0..5 {
        let e = write(&store).await.unwrap_err();
        assert!(e.contains("cannot be written"), "{e}");
        assert!(e.contains(&file.display().to_string()), "{e}");
    }
    // Reads go on.
    store.conversation(&before).await.unwrap();

    fault.restore();
    store.health(LIMIT).await.unwrap();
    let after = write(&store).await.unwrap();
    let ids: Vec<String> = store
        .conversations(None, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert!(ids.contains(&before) && ids.contains(&after), "{ids:?}");
    // More writes than the pool has connections: none of them meets a connection opened read-only.
    for _ in 0..8 {
        write(&store).await.unwrap();
    }
    store.close().await;
}

#[tokio::test]
async fn a_sqlite_store_whose_connections_were_opened_read_only_writes_once_writable() {
    // The fault comes first, the connections after: every connection the pool opens is read-only, and the
    // first write after the fault is gone must not meet one of them.
    let url = sqlite_url();
    let file = path_of(&url);
    let store = RunStore::open(Some(&url)).await.unwrap();
    write(&store).await.unwrap();
    let Some(fault) = Unwritable::apply(&file) else {
        skip("neither chmod nor chattr +i makes a file unwritable here");
        return;
    };
    for _ in 0..3 {
        let during = write(&store).await;
        // Made immutable, the file refuses every write; made read-only with chmod, a connection opened
        // before still holds a descriptor open for writing, and its writes go through.
        if fault.how == How::Immutable {
            during.unwrap_err();
        }
    }
    fault.restore();
    // No health check in between: the store notices by itself.
    for _ in 0..6 {
        write(&store).await.unwrap();
    }
    store.close().await;
}

#[tokio::test]
async fn a_deleted_sqlite_store_is_reported_and_never_created_anew() {
    let url = sqlite_url();
    let file = path_of(&url);
    let store = RunStore::open(Some(&url)).await.unwrap();
    write(&store).await.unwrap();
    std::fs::remove_file(&file).unwrap();

    let found = store.health(LIMIT).await.unwrap_err();
    assert_eq!(found.kind, StoreFaultKind::Deleted, "{found}");
    assert!(
        found
            .cause
            .contains(&format!("{} was deleted", file.display())),
        "{found}"
    );
    let e = write(&store).await.unwrap_err();
    assert!(
        e.contains(&format!("{} was deleted", file.display())),
        "{e}"
    );
    let e = store.conversations(None, 10).await.unwrap_err().to_string();
    assert!(e.contains("was deleted"), "{e}");
    assert!(!file.exists(), "a new store file was created in its place");
    store.close().await;
    assert!(!file.exists(), "a new store file was created in its place");

    // The next start refuses too: the marker left next to the file says a store was there.
    let e = RunStore::open(Some(&url)).await.unwrap_err().to_string();
    assert!(e.contains("is missing"), "{e}");
    assert!(e.contains(".created"), "{e}");
    assert!(!file.exists());
    // Deleting the marker, as the message says, starts a new, empty store.
    let mut marker = file.clone().into_os_string();
    marker.push(".created");
    std::fs::remove_file(&marker).unwrap();
    let fresh = RunStore::open(Some(&url)).await.unwrap();
    assert!(fresh.conversations(None, 10).await.unwrap().is_empty());
    fresh.close().await;
}

#[tokio::test]
async fn a_sqlite_store_replaced_by_another_file_is_reported() {
    let url = sqlite_url();
    let file = path_of(&url);
    let store = RunStore::open(Some(&url)).await.unwrap();
    write(&store).await.unwrap();
    let copy = file.with_extension("copy");
    std::fs::copy(&file, &copy).unwrap();
    std::fs::rename(&copy, &file).unwrap();
    let found = store.health(LIMIT).await.unwrap_err();
    assert_eq!(found.kind, StoreFaultKind::Replaced, "{found}");
    let e = write(&store).await.unwrap_err();
    assert!(e.contains("was replaced"), "{e}");
    store.close().await;
}

/// Runs `sql` on the administration database.
async fn admin(sql: &str) {
    let mut admin = sqlx::PgConnection::connect(PG_ADMIN).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(&mut admin)
        .await
        .unwrap();
    admin.close().await.unwrap();
}

#[tokio::test]
async fn a_postgres_store_that_refuses_connections_is_reported_fast_and_reconnects() {
    let Some(url) = pg_url().await else { return };
    let name = url.rsplit('/').next().unwrap().to_owned();
    let store = RunStore::open(Some(&url)).await.unwrap();
    write(&store).await.unwrap();
    store.health(LIMIT).await.unwrap();

    // An outage of this database only, the shared server going on: no new connections, and the store's
    // sessions ended.
    admin(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS false")).await;
    admin(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
    ))
    .await;
    let started = Instant::now();
    let found = store.health(LIMIT).await.unwrap_err();
    eprintln!(
        "health during the outage: {found:?} in {:?}",
        started.elapsed()
    );
    assert!(
        matches!(
            found.kind,
            StoreFaultKind::Unreachable | StoreFaultKind::Timeout
        ),
        "{found}"
    );
    assert!(found.cause.contains(&name), "{found}");
    let e = write(&store).await.unwrap_err();
    assert!(e.contains("not currently accepting connections"), "{e}");

    admin(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true")).await;
    store.health(LIMIT).await.unwrap();
    let after = write(&store).await.unwrap();
    store.conversation(&after).await.unwrap();
    store.close().await;
    admin(&format!("DROP DATABASE IF EXISTS {name}")).await;
}

#[tokio::test]
async fn a_stopped_postgres_store_is_reported_within_the_limit_and_reconnects() {
    // The shared server is not stopped: a proxy in front of it is, which looks the same to the store
    // (sessions end, connecting is refused), and the pool keeps trying to connect until its acquire timeout.
    let Some(url) = pg_url().await else { return };
    let name = url.rsplit('/').next().unwrap().to_owned();
    let mut proxy = Proxy::start("127.0.0.1:5432");
    let through = format!("postgres://postgres@127.0.0.1:{}/{name}", proxy.port);
    let store = RunStore::open(Some(&through)).await.unwrap();
    write(&store).await.unwrap();

    proxy.stop();
    let started = Instant::now();
    let found = store.health(LIMIT).await.unwrap_err();
    let took = started.elapsed();
    eprintln!("health of a stopped server: {found:?} in {took:?}");
    // The pool would keep trying until its acquire timeout; a direct connection says why.
    assert_eq!(found.kind, StoreFaultKind::Unreachable, "{found}");
    assert!(found.cause.contains("refused"), "{found}");
    // A write gives up after the pool's acquire timeout (5 s), not the 10 s it took before.
    let started = Instant::now();
    let e = write(&store).await.unwrap_err();
    eprintln!(
        "a write to a stopped server: {e} after {:?}",
        started.elapsed()
    );

    proxy.restart();
    store.health(LIMIT).await.unwrap();
    let after = write(&store).await.unwrap();
    store.conversation(&after).await.unwrap();
    store.close().await;
    drop(proxy);
    admin(&format!("DROP DATABASE IF EXISTS {name}")).await;
}
