//! Type fidelity per engine: exact decimals, ISO-8601 dates and times, UUIDs, JSON, blobs as their size,
//! booleans, big integers, NULLs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use serde_json::{Value, json};
use steward_sql::{Database, Guard, QueryLimits};

async fn row(db: &Database, sql: &str) -> Vec<(String, Value)> {
    let result = db
        .query(&Guard::new(db.dialect()), sql, &QueryLimits::default())
        .await
        .unwrap();
    result
        .columns
        .iter()
        .map(|c| c.name.clone())
        .zip(result.rows[0].clone())
        .collect()
}

fn get<'a>(row: &'a [(String, Value)], name: &str) -> &'a Value {
    &row.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no column {name} in {row:?}"))
        .1
}

#[tokio::test]
async fn sqlite_values_keep_their_storage_class() {
    let db = common::scratch_sqlite(
        "CREATE TABLE t (i INTEGER, big INTEGER, r REAL, d NUMERIC, s TEXT, day DATE, b BLOB, flag BOOLEAN, n TEXT);
         INSERT INTO t VALUES (42, 9223372036854775807, 2.5, 1234.56, 'café ☕', '2026-11-21', x'00FF10', 1, NULL);",
    )
    .await;
    let r = row(&db, "SELECT * FROM t").await;
    assert_eq!(get(&r, "i"), &json!(42));
    assert_eq!(get(&r, "big"), &json!(9223372036854775807i64));
    assert_eq!(get(&r, "r"), &json!(2.5));
    assert_eq!(get(&r, "d"), &json!(1234.56));
    assert_eq!(get(&r, "s"), &json!("café ☕"));
    assert_eq!(get(&r, "day"), &json!("2026-11-21"));
    assert_eq!(get(&r, "b"), &json!("<blob 3 bytes>"));
    assert_eq!(get(&r, "flag"), &json!(1));
    assert_eq!(get(&r, "n"), &Value::Null);
}

#[tokio::test]
async fn sqlite_columns_without_a_known_type_report_the_value_type() {
    let db = common::scratch_sqlite(
        "CREATE TABLE t (d NUMERIC(12,2), s TEXT); INSERT INTO t VALUES (388.6, 'x');",
    )
    .await;
    let result = db
        .query(
            &Guard::new(db.dialect()),
            "SELECT d, s, COUNT(*) OVER () AS n, NULL AS empty FROM t",
            &QueryLimits::default(),
        )
        .await
        .unwrap();
    let types: Vec<&str> = result
        .columns
        .iter()
        .map(|c| c.type_name.as_str())
        .collect();
    // NUMERIC and expressions have no type sqlx maps; the first value's storage class stands in. A NULL stays NULL.
    assert_eq!(types, ["REAL", "TEXT", "INTEGER", "NULL"]);
}

#[tokio::test]
async fn postgres_types_render_faithfully() {
    let Some(db) = common::chinook_postgres().await else {
        return;
    };
    let table = format!("types_{}", common::unique());
    db.execute_script(&format!(
        "CREATE TYPE mood_{table} AS ENUM ('happy', 'sad');
         CREATE TABLE {table} (
            amount numeric(14,4), tiny numeric, day date, at timestamp, at_tz timestamptz, t time, span interval,
            id uuid, doc jsonb, bin bytea, ok boolean, big bigint, f double precision, tags text[], nums int4[],
            feeling mood_{table}, nothing text);
         INSERT INTO {table} VALUES (12345678.9000, 0.1, '2026-11-21', '2026-11-21 09:30:15.25', '2026-11-21 09:30:00+01',
            '23:59:59', '1 year 2 mons 3 days 04:05:06', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{{\"a\": [1, 2.5, null]}}',
            '\\x000102', true, 9007199254740993, 0.1, ARRAY['x', 'y'], ARRAY[1, 2], 'happy', NULL);"
    ))
    .await
    .unwrap();
    let r = row(&db, &format!("SELECT * FROM {table}")).await;
    assert_eq!(
        get(&r, "amount"),
        &json!("12345678.9000"),
        "exact decimal with its scale"
    );
    assert_eq!(get(&r, "tiny"), &json!("0.1"));
    assert_eq!(get(&r, "day"), &json!("2026-11-21"));
    assert_eq!(get(&r, "at"), &json!("2026-11-21T09:30:15.250"));
    assert_eq!(get(&r, "at_tz"), &json!("2026-11-21T08:30:00+00:00"));
    assert_eq!(get(&r, "t"), &json!("23:59:59"));
    assert_eq!(get(&r, "span"), &json!("1 year 2 mons 3 days 04:05:06"));
    assert_eq!(
        get(&r, "id"),
        &json!("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    );
    assert_eq!(get(&r, "doc"), &json!({"a": [1, 2.5, null]}));
    assert_eq!(get(&r, "bin"), &json!("<blob 3 bytes>"));
    assert_eq!(get(&r, "ok"), &json!(true));
    assert_eq!(
        get(&r, "big"),
        &json!(9007199254740993i64),
        "beyond f64's exact integers"
    );
    assert_eq!(get(&r, "f"), &json!(0.1));
    assert_eq!(get(&r, "tags"), &json!(["x", "y"]));
    assert_eq!(get(&r, "nums"), &json!([1, 2]));
    assert_eq!(get(&r, "feeling"), &json!("happy"));
    assert_eq!(get(&r, "nothing"), &Value::Null);
    let r = row(
        &db,
        "SELECT -12.30::numeric(6,2) AS neg, 0::numeric AS zero, 0.00010::numeric AS small, \
         123456789012345678901234567890.123::numeric AS huge, 'NaN'::numeric AS nan, 10000::numeric AS tenk, \
         -0.5 AS half, 100000000.00000001 AS long_frac",
    )
    .await;
    for (column, expected) in [
        ("neg", "-12.30"),
        ("zero", "0"),
        ("small", "0.00010"),
        ("huge", "123456789012345678901234567890.123"),
        ("nan", "NaN"),
        ("tenk", "10000"),
        ("half", "-0.5"),
        ("long_frac", "100000000.00000001"),
    ] {
        assert_eq!(get(&r, column), &json!(expected), "{column}");
    }
    // Expressions keep their types too.
    let r = row(&db, "SELECT SUM(unit_price) AS total, AVG(milliseconds)::numeric(10,2) AS avg_ms, COUNT(*) AS n FROM track").await;
    assert_eq!(get(&r, "total"), &json!("3680.97"));
    assert_eq!(get(&r, "n"), &json!(3503));
}

#[tokio::test]
async fn mariadb_types_render_faithfully() {
    let Some(db) = common::chinook_mariadb().await else {
        return;
    };
    let table = format!("types_{}", common::unique());
    db.execute_script(&format!(
        "CREATE TABLE {table} (
            amount DECIMAL(14,4), day DATE, at DATETIME(3), ts TIMESTAMP NULL, t TIME, doc JSON, bin BLOB, flag TINYINT(1),
            big BIGINT UNSIGNED, f DOUBLE, kind ENUM('a','b'), bits BIT(8), yr YEAR, id UUID, nothing VARCHAR(10));
         INSERT INTO {table} VALUES (12345678.9000, '2026-11-21', '2026-11-21 09:30:15.250', '2026-11-21 08:30:00', '23:59:59',
            '{{\"a\": [1, 2.5]}}', x'000102', 1, 18446744073709551615, 0.1, 'b', b'00000101', 2026,
            'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', NULL);"
    ))
    .await
    .unwrap();
    let r = row(&db, &format!("SELECT * FROM {table}")).await;
    assert_eq!(get(&r, "amount"), &json!("12345678.9000"));
    assert_eq!(get(&r, "day"), &json!("2026-11-21"));
    assert_eq!(get(&r, "at"), &json!("2026-11-21T09:30:15.250"));
    assert!(
        get(&r, "ts").as_str().unwrap().starts_with("2026-11-21T"),
        "{:?}",
        get(&r, "ts")
    );
    assert_eq!(get(&r, "t"), &json!("23:59:59"));
    // MariaDB stores JSON as text; it is shown as the text it is.
    assert_eq!(get(&r, "doc"), &json!("{\"a\": [1, 2.5]}"));
    assert_eq!(get(&r, "bin"), &json!("<blob 3 bytes>"));
    assert_eq!(get(&r, "flag"), &json!(1));
    assert_eq!(get(&r, "big"), &json!(18446744073709551615u64));
    assert_eq!(get(&r, "f"), &json!(0.1));
    assert_eq!(get(&r, "kind"), &json!("b"));
    assert_eq!(get(&r, "bits"), &json!(5));
    assert_eq!(get(&r, "yr"), &json!(2026));
    assert_eq!(
        get(&r, "id"),
        &json!("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    );
    assert_eq!(get(&r, "nothing"), &Value::Null);
    let r = row(
        &db,
        "SELECT SUM(UnitPrice) AS total, COUNT(*) AS n FROM Track",
    )
    .await;
    assert_eq!(get(&r, "total"), &json!("3680.97"));
    assert_eq!(get(&r, "n"), &json!(3503));
}
