//! A cell far larger than the byte cap comes back cut at the cap, flagged as truncated, on every engine and
//! through both protocols; the pool answers the next query as usual. (How much memory such a cell costs is a
//! benchmark's business: `cargo run -p steward-sql --example huge_cell`, see docs/benchmarks.md.)
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use serde_json::{Value, json};
use steward_sql::{Database, QueryLimits, QueryResult};

/// 200 MB: the size of the PostgreSQL cell.
const HUGE: usize = 200_000_000;

async fn connect(url: &str, name: &str) -> Option<Database> {
    match Database::connect(url).await {
        Ok(db) => Some(db),
        Err(e) => {
            common::skip(&format!("{name} is not usable: {e}"));
            None
        }
    }
}

/// One row whose first cell is `cap` bytes of `x` (the beginning of the value), flagged as truncated.
fn assert_cut(result: &QueryResult, cap: usize, what: &str) {
    assert!(result.truncated, "{what}: not flagged as truncated");
    assert_eq!(result.rows.len(), 1, "{what}: one row");
    let Some(Value::String(cell)) = result.rows[0].first() else {
        panic!(
            "{what}: the first cell is not text: {:?}",
            result.rows[0].first()
        );
    };
    assert_eq!(cell.len(), cap, "{what}: cut at the byte cap");
    assert!(
        cell.bytes().all(|b| b == b'x'),
        "{what}: the value's beginning"
    );
}

#[tokio::test]
async fn a_postgres_cell_of_200_mb_is_cut_at_the_byte_cap() {
    let Some(db) = connect(common::PG_ADMIN, "PostgreSQL at 127.0.0.1:5432").await else {
        return;
    };
    let limits = QueryLimits::default();
    let sql = format!("SELECT repeat('x', {HUGE}) AS big, 7 AS after");
    let text = db.query_read_only(&sql, &[], &limits).await.unwrap();
    assert_cut(&text, limits.max_bytes, "text protocol");
    assert_eq!(text.columns.len(), 2);
    let prepared = db.query_prepared(&sql, &[], &limits).await.unwrap();
    assert_cut(&prepared, limits.max_bytes, "prepared statement");
    // Rows after a cut cell are not read: one row comes back.
    let many = db
        .query_read_only(
            "SELECT repeat('x', 20000000) FROM generate_series(1, 5)",
            &[],
            &limits,
        )
        .await
        .unwrap();
    assert_cut(&many, limits.max_bytes, "several huge rows");
    // A smaller cap cuts earlier; the cell is cut at a character boundary.
    let small = QueryLimits {
        max_bytes: 10,
        ..QueryLimits::default()
    };
    let cut = db
        .query_read_only("SELECT repeat('é', 1000000)", &[], &small)
        .await
        .unwrap();
    assert!(cut.truncated);
    assert_eq!(cut.rows[0][0], json!("ééééé"));
    // The connection that read the huge row is not reused as is; the pool answers the next query.
    let next = db
        .query_read_only("SELECT 1 AS one", &[], &limits)
        .await
        .unwrap();
    assert_eq!(next.rows, vec![vec![json!(1)]]);
    assert!(!next.truncated);
    db.close().await;
}

#[tokio::test]
async fn a_mariadb_row_whose_first_cell_is_16_mib_is_not_lost() {
    let Some(db) = connect(common::MARIA_ADMIN, "MariaDB at 127.0.0.1:3306").await else {
        return;
    };
    let limits = QueryLimits::default();
    let packet = db
        .query_read_only("SELECT @@max_allowed_packet", &[], &limits)
        .await
        .unwrap()
        .rows[0][0]
        .as_u64()
        .unwrap();
    // The server builds a value of at most `max_allowed_packet` bytes (else REPEAT gives NULL). 16 MiB, its
    // default, is exactly the size whose length prefix the text protocol's reader in sqlx takes for the end of
    // the result.
    let size = 1 << 24;
    if packet < size {
        common::skip(&format!(
            "MariaDB's max_allowed_packet is {packet}, below 16 MiB"
        ));
        return;
    }
    let sql = format!("SELECT REPEAT('x', {size}) AS big, 7 AS after");
    let text = db.query_read_only(&sql, &[], &limits).await.unwrap();
    assert_cut(&text, limits.max_bytes, "text protocol");
    assert_eq!(text.rows[0][1], json!(7));
    let prepared = db.query_prepared(&sql, &[], &limits).await.unwrap();
    assert_cut(&prepared, limits.max_bytes, "prepared statement");
    let next = db
        .query_read_only("SELECT 1 AS one", &[], &limits)
        .await
        .unwrap();
    assert_eq!(next.rows, vec![vec![json!(1)]]);
    db.close().await;
}

#[tokio::test]
async fn a_huge_sqlite_cell_is_cut_at_the_byte_cap() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    let limits = QueryLimits::default();
    let text = db
        .query_read_only("SELECT printf('%.*c', 20000000, 'x')", &[], &limits)
        .await
        .unwrap();
    assert_cut(&text, limits.max_bytes, "text");
    // A blob is hex: `\x` and two digits a byte, cut to whole bytes within the cap.
    let blob = db
        .query_read_only("SELECT zeroblob(20000000)", &[], &limits)
        .await
        .unwrap();
    assert!(blob.truncated);
    let cell = blob.rows[0][0].as_str().unwrap();
    assert!(cell.starts_with("\\x00"));
    assert!(cell.len() <= limits.max_bytes && cell.len() + 2 > limits.max_bytes);
    db.close().await;
}
