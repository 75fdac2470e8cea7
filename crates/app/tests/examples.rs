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

/// The roles the row-filter tests share: a manager who sees every row, a clerk who sees customer 1's rows
/// only, a viewer who reads customers' `ssn` masked, and an administrator.
const ROLES: &str = r#"
roles:
  manager: {}
  clerk:
    sql:
      rows:
        orders: "customer_id = {principal.customer_id}"
        customers: "id = {principal.customer_id}"
  viewer:
    sql:
      masks: {customers.ssn: hash}
  admin: {admin: true}
principals:
  mia: {role: manager}
  ada: {role: clerk, customer_id: 1}
  vic: {role: viewer}
  root: {role: admin}
"#;

/// A shop whose second customer's order code and SSN only a reader of every row may learn.
const SECRET_SHOP: &str = "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, ssn TEXT);
     CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, order_code TEXT NOT NULL,
                          total REAL NOT NULL, ordered_at DATE NOT NULL);
     INSERT INTO customers (id, name, ssn) VALUES (1, 'Ann', 'SSN-ANN'), (2, 'Bob', 'SSN-BOB-SECRET');
     INSERT INTO orders (id, customer_id, order_code, total, ordered_at) VALUES
       (1, 1, 'AAAAAAAAAA', 10, '2024-01-05'), (2, 2, 'QZKDLWPRTM', 32.5, '2024-02-07');";

/// The app on `db` (a shop made with [`SECRET_SHOP`]) with [`ROLES`] and a fresh store; its principals by name.
async fn secret_app(db: &str) -> (Arc<App>, impl Fn(&str) -> Principal) {
    let config = Config::parse(ROLES, std::path::Path::new("steward.yaml")).unwrap();
    let store = RunStore::open(Some(&sqlite_url())).await.unwrap();
    let app = Arc::new(
        App::build(
            config.clone(),
            AppOptions {
                db: Some(db.to_owned()),
                store: Some(store),
                ..AppOptions::default()
            },
        )
        .await
        .unwrap(),
    );
    let principal =
        move |name: &str| steward_app::resolve_principal(&config, Some(name), None).unwrap();
    (app, principal)
}

async fn sqlite_shop(schema: &str) -> String {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("secret-shop-{}", unique()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}", dir.join("shop.sqlite").display());
    let db = steward_sql::Database::connect(&format!("{url}?mode=rwc"))
        .await
        .unwrap();
    db.execute_script(schema).await.unwrap();
    db.close().await;
    url
}

const SECRETS: [&str; 3] = ["QZKDLWPRTM", "SSN-BOB-SECRET", "Bob"];

fn holds_a_secret(text: &str) -> Option<&'static str> {
    SECRETS.into_iter().find(|s| text.contains(s))
}

/// Item 6 of issue 35: a manager's example whose literal names a row, or whose comment holds a secret, never
/// reaches a reader whose rows are filtered (or whose values are masked) — not in the list, not in a check,
/// not in the model's schema context — while a reader of every row gets it, without comments.
#[tokio::test]
async fn a_saved_example_never_carries_rows_to_a_reader_who_may_not_see_them() {
    let db = sqlite_shop(SECRET_SHOP).await;
    let (app, who) = secret_app(&db).await;
    let (mia, ada, vic, root) = (who("mia"), who("ada"), who("vic"), who("root"));
    let save = |q: &'static str, sql: &'static str| {
        let app = app.clone();
        let mia = mia.clone();
        async move {
            app.add_example(&mia, q, sql, ExampleSource::Api, None)
                .await
                .unwrap()
        }
    };
    let literal = save(
        "How many orders have the code QZKDLWPRTM?",
        "SELECT COUNT(*) AS n FROM orders WHERE order_code = 'QZKDLWPRTM'",
    )
    .await;
    let commented = save(
        "How many orders are there?",
        "SELECT COUNT(*) AS n /* SSN-BOB-SECRET */ FROM orders -- SSN-BOB-SECRET",
    )
    .await;
    // Comments go on save, in odd places too; a string that looks like one stays.
    assert_eq!(commented.sql, "SELECT COUNT(*) AS n FROM orders");
    let odd = save(
        "What is the total of orders per customer?",
        "SELECT/*SSN-BOB-SECRET*/customer_id, SUM(total) AS total -- SSN-BOB-SECRET\nFROM orders\nWHERE order_code <> '-- not /* a comment */'\nGROUP BY customer_id /* SSN-BOB-SECRET",
    )
    .await;
    assert_eq!(
        odd.sql,
        "SELECT customer_id, SUM(total) AS total\nFROM orders\nWHERE order_code <> '-- not /* a comment */'\nGROUP BY customer_id"
    );
    let number = save(
        "How much did customer 2 order?",
        "SELECT SUM(total) AS total FROM orders WHERE customer_id = 2",
    )
    .await;
    let date = save(
        "How many orders are there?",
        "SELECT COUNT(*) AS n FROM orders WHERE ordered_at >= DATE('2024-02-01')",
    )
    .await;
    let alias = save(
        "What is the total of orders?",
        "SELECT SUM(total) AS \"Bob Smith\" FROM orders",
    )
    .await;
    let named = save(
        "Which customer is Bob?",
        "SELECT id FROM customers ORDER BY id",
    )
    .await;

    let ids = |list: &[steward_app::ShownExample]| -> Vec<String> {
        list.iter().map(|e| e.id.clone()).collect()
    };
    // A reader of every row gets every one, without comments.
    let manager = app.examples_for(&mia).await.unwrap();
    assert_eq!(
        ids(&manager),
        [&literal, &commented, &odd, &number, &date, &alias, &named].map(|e| e.id.clone())
    );
    assert!(!format!("{manager:?}").contains("SSN-BOB-SECRET"));
    assert!(format!("{manager:?}").contains("QZKDLWPRTM"));
    // The clerk gets only the one that holds no data of rows, as the manager saved it less its comments.
    let clerk = app.examples_for(&ada).await.unwrap();
    assert_eq!(ids(&clerk), std::slice::from_ref(&commented.id));
    assert_eq!(clerk[0].sql, "SELECT COUNT(*) AS n FROM orders");
    assert_eq!(holds_a_secret(&format!("{clerk:?}")), None, "{clerk:?}");
    // The viewer reads every order, customers' SSN masked: values over orders reach it, but no question that
    // may name rows, nor values over customers.
    let viewer = app.examples_for(&vic).await.unwrap();
    assert_eq!(
        ids(&viewer),
        [&commented, &odd, &date, &alias].map(|e| e.id.clone())
    );
    assert!(!ids(&viewer).contains(&named.id));

    // The model's schema context: the clerk's never holds the secrets, the manager's does.
    for question in [
        "How many orders have the code QZKDLWPRTM?",
        "How many orders are there, and what is their total per customer?",
        "Which customer is Bob, and how much did customer 2 order?",
    ] {
        let context = |p: &Principal| {
            app.schema_context_for(p, Some(question), 4000)
                .unwrap()
                .unwrap()
                .0
        };
        let clerk = context(&ada);
        assert_eq!(holds_a_secret(&clerk.text), None, "{}", clerk.text);
        // (The manager's schema shows sample values of every column: its examples are judged alone.)
        let manager = context(&mia).text;
        let examples = manager
            .split_once("-- Verified examples")
            .map(|(_, examples)| examples)
            .unwrap_or_default();
        assert!(!examples.is_empty(), "{manager}");
        assert!(!examples.contains("SSN-BOB-SECRET"), "{manager}");
        if question.contains("code") {
            assert!(examples.contains("QZKDLWPRTM"), "{manager}");
        }
    }
    let seen = app
        .schema_context_for(&ada, Some("How many orders are there?"), 4000)
        .unwrap()
        .unwrap()
        .0;
    assert!(
        seen.text.contains("SELECT COUNT(*) AS n FROM orders;"),
        "{}",
        seen.text
    );

    // `steward examples check` for the clerk checks them all, their text withheld.
    let checks = app.check_examples(&ada).await.unwrap();
    assert_eq!(checks.len(), 7);
    assert_eq!(holds_a_secret(&format!("{checks:?}")), None, "{checks:?}");

    // Who saved an example, and from which run: for an administrator and the saver only (item 9 ii).
    assert!(manager.iter().all(|e| e.saved_by.as_deref() == Some("mia")));
    assert_eq!(clerk[0].saved_by, None);
    assert_eq!(clerk[0].run_id, None);
    let admin = app.examples_for(&root).await.unwrap();
    assert!(admin.iter().all(|e| e.saved_by.as_deref() == Some("mia")));
    // A duplicate saved by someone else does not name them either.
    let twice = app
        .add_example(
            &ada,
            "How many orders are there?",
            "SELECT COUNT(*) AS n FROM orders",
            ExampleSource::Api,
            None,
        )
        .await
        .unwrap_err();
    assert!(twice.to_string().contains("saved already"), "{twice}");
    assert!(!twice.to_string().contains("mia"), "{twice}");
}

/// Item 9 (i) of issue 35: saving an example runs its SQL once, within a few seconds, not a whole query's
/// time limit: a query that runs on is stopped and refused, saying so.
#[tokio::test]
async fn a_slow_example_is_refused_within_the_bound() {
    let db = shop().await;
    let app = app(&db, &sqlite_url()).await;
    let started = std::time::Instant::now();
    let slow = app
        .add_example(
            &Principal::local(),
            "How many numbers are there?",
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) AS n FROM c",
            ExampleSource::Cli,
            None,
        )
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert_eq!(slow.kind(), steward_app::ErrorKind::Invalid, "{slow}");
    assert!(slow.to_string().contains("ran longer than 5 s"), "{slow}");
    assert!(
        took < steward_app::CONFIRM_TIMEOUT + std::time::Duration::from_secs(3),
        "{took:?}"
    );
    assert!(
        app.examples_for(&Principal::local())
            .await
            .unwrap()
            .is_empty()
    );
}

/// The same on the servers: comments as PostgreSQL (nested, dollar quotes) and MariaDB (`#`, backslash
/// escapes) read them are removed, strings that hold comment marks survive, and literals of their own kinds keep
/// an example from the clerk. The first of `examples` (question, SQL, SQL as kept) is the only one it sees.
async fn comments_and_literals_as_the_engine_reads_them(db: &str, examples: &[(&str, &str, &str)]) {
    let (app, who) = secret_app(db).await;
    let (mia, ada) = (who("mia"), who("ada"));
    for (question, sql, kept) in examples {
        let saved = app
            .add_example(&mia, question, sql, ExampleSource::Api, None)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(saved.sql, *kept);
    }
    let manager = app.examples_for(&mia).await.unwrap();
    assert_eq!(manager.len(), examples.len());
    assert!(
        !format!("{manager:?}").contains("SSN-BOB-SECRET"),
        "{manager:?}"
    );
    let clerk = app.examples_for(&ada).await.unwrap();
    assert_eq!(
        clerk.iter().map(|e| e.sql.as_str()).collect::<Vec<_>>(),
        [examples[0].2]
    );
    let context = app
        .schema_context_for(
            &ada,
            Some("How many orders have the code QZKDLWPRTM?"),
            4000,
        )
        .unwrap()
        .unwrap()
        .0;
    assert_eq!(holds_a_secret(&context.text), None, "{}", context.text);
}

#[tokio::test]
async fn comments_and_literals_as_postgres_reads_them() {
    let Some(url) = pg_url().await else { return };
    let db = steward_sql::Database::connect(&url).await.unwrap();
    db.execute_script(SECRET_SHOP).await.unwrap();
    db.close().await;
    comments_and_literals_as_the_engine_reads_them(
        &url,
        &[
            (
                "How many orders are there?",
                "SELECT COUNT(*) AS n /* SSN /* nested SSN-BOB-SECRET */ still SSN-BOB-SECRET */ FROM orders -- SSN-BOB-SECRET",
                "SELECT COUNT(*) AS n FROM orders",
            ),
            (
                "How many orders have this code?",
                "SELECT COUNT(*) AS n FROM orders WHERE order_code <> $q$-- kept /* too */$q$ AND order_code = $$QZKDLWPRTM$$",
                "SELECT COUNT(*) AS n FROM orders WHERE order_code <> $q$-- kept /* too */$q$ AND order_code = $$QZKDLWPRTM$$",
            ),
            (
                "How many orders are there?",
                "SELECT COUNT(*) AS n FROM orders WHERE ordered_at >= DATE '2024-02-01'",
                "SELECT COUNT(*) AS n FROM orders WHERE ordered_at >= DATE '2024-02-01'",
            ),
            (
                "What is the total of orders?",
                "SELECT SUM(total) AS total FROM orders WHERE total > 20.5",
                "SELECT SUM(total) AS total FROM orders WHERE total > 20.5",
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn comments_and_literals_as_mariadb_reads_them() {
    let admin = "mysql://root@127.0.0.1:3306";
    let server = match steward_sql::Database::connect(admin).await {
        Ok(db) => db,
        Err(e) => {
            common::skip(&format!("MariaDB at {admin} is not reachable: {e}"));
            return;
        }
    };
    let name = format!("steward_examples_{}", unique().to_lowercase());
    server
        .execute_script(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let url = format!("{admin}/{name}");
    let db = steward_sql::Database::connect(&url).await.unwrap();
    db.execute_script(SECRET_SHOP).await.unwrap();
    db.close().await;
    comments_and_literals_as_the_engine_reads_them(
        &url,
        &[
            (
                "How many orders are there?",
                "SELECT COUNT(*) AS n # SSN-BOB-SECRET\nFROM orders /* SSN-BOB-SECRET */ -- SSN-BOB-SECRET",
                "SELECT COUNT(*) AS n\nFROM orders",
            ),
            (
                "How many orders have this code?",
                "SELECT COUNT(*) AS n FROM orders WHERE order_code <> 'it\\'s # kept -- too' AND order_code = 'QZKDLWPRTM'",
                "SELECT COUNT(*) AS n FROM orders WHERE order_code <> 'it\\'s # kept -- too' AND order_code = 'QZKDLWPRTM'",
            ),
            (
                "How many orders are there?",
                "SELECT COUNT(*) AS n FROM orders WHERE ordered_at >= DATE '2024-02-01'",
                "SELECT COUNT(*) AS n FROM orders WHERE ordered_at >= DATE '2024-02-01'",
            ),
        ],
    )
    .await;
    server
        .execute_script(&format!("DROP DATABASE {name}"))
        .await
        .unwrap();
    server.close().await;
}
