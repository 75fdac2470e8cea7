//! The business tools on a PostgreSQL database whose own settings differ from the driver's: `DateStyle`
//! `SQL, DMY` and a time zone far from UTC. The tools read dates in their stable ISO form, so what the model is
//! told stays right.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::json;
use steward_sql::Database;
use support::*;

#[tokio::test]
async fn dates_read_right_under_the_database_s_date_style() {
    let url = match sql_common::fresh(sql_common::PG_ADMIN, "", false).await {
        Ok(url) => url,
        Err(e) => {
            sql_common::skip(&format!("PostgreSQL is not usable: {e}"));
            return;
        }
    };
    let db = Database::connect(&url).await.unwrap();
    steward_domains::demo::create(&db, config(), &|_, _| {})
        .await
        .unwrap();
    let name = url.rsplit('/').next().unwrap();
    db.execute_script(&format!(
        "ALTER DATABASE {name} SET datestyle = 'SQL, DMY'; ALTER DATABASE {name} SET timezone = 'Pacific/Kiritimati'"
    ))
    .await
    .unwrap();
    db.close().await;
    // A new connection takes the database's settings: model SQL sees them, as psql would.
    let db = std::sync::Arc::new(Database::connect(&url).await.unwrap());
    let style = db
        .query_read_only(
            "SELECT current_setting('DateStyle')",
            &[],
            &Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(style.rows[0][0], json!("SQL, DMY"));
    let tools = toolbox(db.clone()).await;
    let out = call(
        &tools,
        "o1",
        "get_order",
        json!({"order_code": "QZKDLWPRTM"}),
    )
    .await
    .unwrap();
    assert!(
        out.content.contains("Ordered on 2026-11-18"),
        "{}",
        out.content
    );
    assert!(out.content.contains("(ETA) 2026-11-23"), "{}", out.content);
    let out = call(
        &tools,
        "e1",
        "list_expenses",
        json!({"from": "2026-01-01", "to": "2026-06-30", "limit": 5}),
    )
    .await
    .unwrap();
    assert!(
        out.content.lines().all(|l| l.contains(" 2026-0")),
        "{}",
        out.content
    );
    // Read without parameters, the inbox's due dates too.
    let out = call(&tools, "t1", "get_inbox_tasks", json!({}))
        .await
        .unwrap();
    assert!(out.content.contains("due 2026-"), "{}", out.content);
    assert!(!out.content.contains("/2026"), "{}", out.content);
}
