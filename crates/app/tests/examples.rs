//! Verified examples in the run store, on SQLite and PostgreSQL: saved per database, a duplicate refused as
//! such, listed, removed by id or prefix; and an app holding them sees what another app on the same store
//! added once its examples are older than `EXAMPLES_FRESH`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::{pg_url, sqlite_url, unique};
use steward_app::store::{Added, ExampleSource, NewExample, RunStore, StoreError};
use steward_app::{App, AppOptions, Config, EXAMPLES_FRESH};
use steward_core::Principal;

fn example(database: &str, question: &str, sql: &str) -> NewExample {
    NewExample {
        database: database.to_owned(),
        question: question.to_owned(),
        sql: sql.to_owned(),
        saved_by: "ada".to_owned(),
        source: ExampleSource::Cli,
        run_id: None,
    }
}

async fn examples_are_kept_per_database_once(url: &str) {
    let store = RunStore::open(Some(url)).await.unwrap();
    let shop = "sqlite:/data/shop.sqlite";
    let other = "postgres://u@h/other";
    let Added::Saved(first) = store
        .add_example(&example(
            shop,
            "How many orders?",
            "SELECT COUNT(*) FROM orders",
        ))
        .await
        .unwrap()
    else {
        panic!("the first example was not saved");
    };
    assert_eq!(first.saved_by, "ada");
    assert_eq!(first.source, ExampleSource::Cli);
    // The same question and SQL again: refused as a duplicate, naming the one saved.
    match store
        .add_example(&example(
            shop,
            "How many orders?",
            "SELECT COUNT(*) FROM orders",
        ))
        .await
        .unwrap()
    {
        Added::Duplicate(saved) => assert_eq!(saved.id, first.id),
        other => panic!("a duplicate was saved: {other:?}"),
    }
    // Another SQL for the same question, and the same pair for another database, are new.
    let mut from_run = example(shop, "How many orders?", "SELECT COUNT(id) FROM orders");
    from_run.source = ExampleSource::Web;
    from_run.run_id = Some("run-1".to_owned());
    let Added::Saved(second) = store.add_example(&from_run).await.unwrap() else {
        panic!("another SQL is not a duplicate");
    };
    assert_eq!(second.run_id.as_deref(), Some("run-1"));
    assert_eq!(second.source, ExampleSource::Web);
    assert!(matches!(
        store
            .add_example(&example(
                other,
                "How many orders?",
                "SELECT COUNT(*) FROM orders"
            ))
            .await
            .unwrap(),
        Added::Saved(_)
    ));
    let listed = store.examples(shop).await.unwrap();
    assert_eq!(
        listed.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        [first.id.as_str(), second.id.as_str()]
    );
    assert_eq!(listed[0], first);
    assert_eq!(store.all_examples().await.unwrap().len(), 3);
    assert_eq!(store.examples("sqlite:/nowhere").await.unwrap(), []);

    // Removed by a prefix that names one; a prefix of several is ambiguous; an unknown id removes nothing.
    assert!(matches!(
        store.remove_example("").await,
        Ok(None) | Err(StoreError::Ambiguous { .. })
    ));
    assert_eq!(store.remove_example("no-such-id").await.unwrap(), None);
    let removed = store.remove_example(&first.id[..30]).await;
    match removed {
        Ok(Some(e)) => assert_eq!(e.id, first.id),
        // uuid v7 ids made in the same millisecond can share 30 characters.
        Err(StoreError::Ambiguous { .. }) => {
            assert_eq!(
                store.remove_example(&first.id).await.unwrap().unwrap().id,
                first.id
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        store.examples(shop).await.unwrap(),
        std::slice::from_ref(&second)
    );
    assert_eq!(store.remove_example(&first.id).await.unwrap(), None);
    store.close().await;
    // Kept across opens.
    let store = RunStore::open(Some(url)).await.unwrap();
    assert_eq!(store.examples(shop).await.unwrap(), [second]);
    store.close().await;
}

#[tokio::test]
async fn examples_are_kept_per_database_once_on_sqlite() {
    examples_are_kept_per_database_once(&sqlite_url()).await;
}

#[tokio::test]
async fn examples_are_kept_per_database_once_on_postgres() {
    let Some(url) = pg_url().await else { return };
    examples_are_kept_per_database_once(&url).await;
}

/// A SQLite business database with `orders`, in a fresh folder.
async fn shop() -> String {
    let dir =
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("shop-{}", unique()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("shop.sqlite");
    let db = steward_sql::Database::connect(&format!("sqlite://{}?mode=rwc", path.display()))
        .await
        .unwrap();
    db.execute_script(
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL NOT NULL);
         INSERT INTO orders (total) VALUES (10), (32.5);",
    )
    .await
    .unwrap();
    db.close().await;
    format!("sqlite://{}", path.display())
}

async fn app(db: &str, store: &str) -> Arc<App> {
    let store = RunStore::open(Some(store)).await.unwrap();
    Arc::new(
        App::build(
            Config::default(),
            AppOptions {
                db: Some(db.to_owned()),
                store: Some(store),
                ..AppOptions::default()
            },
        )
        .await
        .unwrap(),
    )
}

/// Two servers on one store: what one adds, the other's analyst sees once its examples are older than
/// `EXAMPLES_FRESH` (and not before: a turn does not read the store each time).
#[tokio::test]
async fn an_app_sees_the_examples_another_added_within_a_few_seconds() {
    let db = shop().await;
    let store = sqlite_url();
    let one = app(&db, &store).await;
    let two = app(&db, &store).await;
    let sql = "SELECT SUM(total) AS revenue FROM orders";
    let question = "What is our revenue in total?";
    let context = |app: &App| {
        app.schema_context_for(&Principal::local(), Some(question), 1500)
            .unwrap()
            .unwrap()
            .0
    };
    let saved = two
        .add_example(&Principal::local(), question, sql, ExampleSource::Cli, None)
        .await
        .unwrap();
    assert_eq!(saved.database, one.examples_database().unwrap());
    // The app that added it holds it at once.
    assert_eq!(context(&two).examples, [question]);
    assert!(context(&two).text.contains(sql));
    one.refresh_examples().await;
    assert!(context(&one).examples.is_empty());
    tokio::time::sleep(EXAMPLES_FRESH + std::time::Duration::from_millis(200)).await;
    one.refresh_examples().await;
    assert_eq!(context(&one).examples, [question]);
}

/// The governed path: SQL the guard refuses, SQL that fails, an empty question and a duplicate are refused,
/// each saying why; nothing is saved for them.
#[tokio::test]
async fn adding_an_example_checks_and_runs_its_sql_first() {
    let db = shop().await;
    let app = app(&db, &sqlite_url()).await;
    let local = Principal::local();
    let add = |q: &'static str, sql: &'static str| {
        let app = app.clone();
        let local = local.clone();
        async move {
            app.add_example(&local, q, sql, ExampleSource::Cli, None)
                .await
        }
    };
    let refused = add("Delete them", "DELETE FROM orders").await.unwrap_err();
    assert!(refused.to_string().contains("guard refuses"), "{refused}");
    let fails = add("Overflow", "SELECT abs(-9223372036854775808) FROM orders")
        .await
        .unwrap_err();
    assert!(fails.to_string().contains("does not run"), "{fails}");
    let unknown = add("Unknown", "SELECT nope FROM orders").await.unwrap_err();
    assert!(
        matches!(
            unknown.kind(),
            steward_app::ErrorKind::Forbidden | steward_app::ErrorKind::Invalid
        ),
        "{unknown}"
    );
    let empty = add("  ", "SELECT 1").await.unwrap_err();
    assert!(empty.to_string().contains("question is empty"), "{empty}");
    add("How many orders?", "SELECT COUNT(*) FROM orders;")
        .await
        .unwrap();
    let twice = add("How many orders?", "SELECT COUNT(*) FROM orders")
        .await
        .unwrap_err();
    assert_eq!(twice.kind(), steward_app::ErrorKind::Conflict);
    assert!(twice.to_string().contains("saved already"), "{twice}");
    let saved = app.examples_for(&local).await.unwrap();
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].sql, "SELECT COUNT(*) FROM orders");
}
