//! The demo database: deterministic from its seed, with the source material's examples in it, on every engine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chrono::NaiveDate;
use steward_domains::demo::{self, DemoConfig, IN_TRANSIT_ORDER, TABLES};
use steward_sql::{Database, QueryLimits};

fn config(seed: u64) -> DemoConfig {
    DemoConfig {
        seed,
        scale: 1,
        today: NaiveDate::from_ymd_opt(2026, 11, 21).unwrap(),
    }
}

async fn sqlite(name: &str) -> Database {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{name}-{}.sqlite", std::process::id()));
    let _ = std::fs::remove_file(&path);
    Database::connect(&format!("sqlite://{}?mode=rwc", path.display()))
        .await
        .unwrap()
}

async fn dump(db: &Database) -> Vec<String> {
    let mut out = Vec::new();
    for table in TABLES {
        let order = if *table == "tool_calls" {
            "run_id"
        } else {
            "id"
        };
        let rows = db
            .query_read_only(
                &format!("SELECT * FROM {table} ORDER BY {order}"),
                &[],
                &QueryLimits {
                    max_rows: 1_000_000,
                    max_bytes: usize::MAX,
                    ..QueryLimits::default()
                },
            )
            .await
            .unwrap();
        out.push(format!(
            "{table}: {}",
            serde_json::to_string(&rows.rows).unwrap()
        ));
    }
    out
}

#[tokio::test]
async fn the_same_seed_gives_the_same_data_and_another_seed_does_not() {
    let (a, b, c) = (
        sqlite("demo-a").await,
        sqlite("demo-b").await,
        sqlite("demo-c").await,
    );
    let summary = demo::create(&a, config(7), &|_, _| {}).await.unwrap();
    demo::create(&b, config(7), &|_, _| {}).await.unwrap();
    demo::create(&c, config(8), &|_, _| {}).await.unwrap();
    let (da, db_, dc) = (dump(&a).await, dump(&b).await, dump(&c).await);
    assert_eq!(da, db_);
    assert_ne!(da, dc);
    let count = |t: &str| {
        summary
            .rows
            .iter()
            .find(|(n, _)| n == t)
            .map(|(_, n)| *n)
            .unwrap_or(0)
    };
    assert_eq!(count("orders"), 1000);
    assert_eq!(count("expenses"), 2000);
    assert_eq!(count("tasks"), 30);
    assert!(count("order_items") > 1000);
    assert_eq!(summary.in_transit_order, IN_TRANSIT_ORDER);
}

#[tokio::test]
async fn the_source_materials_examples_are_there() {
    let db = sqlite("demo-examples").await;
    demo::create(&db, config(1), &|_, _| {}).await.unwrap();
    let q = |sql: &'static str| {
        let db = &db;
        async move {
            db.query_read_only(sql, &[], &QueryLimits::default())
                .await
                .unwrap()
                .rows
        }
    };
    let order = q("SELECT o.status, s.eta, s.last_location, c.name FROM orders o JOIN shipments s ON s.order_id = o.id JOIN customers c ON c.id = o.customer_id WHERE o.order_code = 'QZKDLWPRTM'").await;
    assert_eq!(order[0][0], "IN TRANSIT");
    assert_eq!(order[0][1], "2026-11-23");
    assert_eq!(order[0][2], "Leipzig hub");
    assert_eq!(order[0][3], "Ada Lovelace");
    let inbox =
        q("SELECT title FROM tasks WHERE project_id IS NULL AND status = 'OPEN' ORDER BY id").await;
    let titles: Vec<&str> = inbox.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert!(titles.iter().any(|t| t.contains("birthday")), "{titles:?}");
    assert!(
        titles.iter().any(|t| t.contains("personal website")),
        "{titles:?}"
    );
    let coffee = q("SELECT COUNT(*) FROM expenses e JOIN expense_categories c ON c.id = e.category_id WHERE c.name = 'Coffee'").await;
    assert!(coffee[0][0].as_i64().unwrap() > 300, "{coffee:?}");
    let span = q("SELECT MIN(spent_on), MAX(spent_on) FROM expenses").await;
    assert!(span[0][0].as_str().unwrap() >= "2025-05-21", "{span:?}");
    assert!(span[0][1].as_str().unwrap() <= "2026-11-21", "{span:?}");
    let codes = q("SELECT COUNT(*) FROM orders WHERE length(order_code) = 10 AND order_code = upper(order_code)").await;
    assert_eq!(codes[0][0], 1000);
    // In-transit orders always have an ETA from today on.
    let late = q("SELECT COUNT(*) FROM orders o JOIN shipments s ON s.order_id = o.id WHERE o.status = 'IN TRANSIT' AND (s.eta IS NULL OR s.eta < '2026-11-21')").await;
    assert_eq!(late[0][0], 0);
}
