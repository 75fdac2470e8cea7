//! Type fidelity per engine, through the public API: every value comes back as the engine's client prints it or in
//! the documented JSON rendering (numbers, booleans, JSON, exact decimals as strings, binary data as `\x` hex),
//! both for SQL as written (`Database::query`) and for SQL with bound parameters (`Database::query_read_only`),
//! and every cell is cut to the byte cap. The decode module's own tests pin each wire format separately.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use serde_json::{Value, json};
use steward_sql::{Database, Param, QueryLimits, QueryResult};

/// The first row of `sql` run as written, by column name.
async fn row(db: &Database, sql: &str) -> Vec<(String, Value)> {
    let result = db
        .query(&db.guard().await.unwrap(), sql, &QueryLimits::default())
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    first(result)
}

/// The first row of `sql` with one bound parameter, which `sql` must compare with 1 (`$1 = 1` or `? = 1`).
async fn bound_row(db: &Database, sql: &str) -> Vec<(String, Value)> {
    let result = db
        .query_read_only(sql, &[Param::Int(1)], &QueryLimits::default())
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    first(result)
}

fn first(result: QueryResult) -> Vec<(String, Value)> {
    assert!(!result.truncated);
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

/// Checks each `(column, value)` in both rows: as written and with a bound parameter.
fn check(rows: &[Vec<(String, Value)>; 2], expected: &[(&str, Value)]) {
    for (path, row) in ["as written", "bound"].iter().zip(rows) {
        for (column, value) in expected {
            assert_eq!(get(row, column), value, "{column} ({path})");
        }
    }
}

#[tokio::test]
async fn sqlite_values_keep_their_storage_class() {
    let db = common::scratch_sqlite(
        "CREATE TABLE t (i INTEGER, big INTEGER, r REAL, d NUMERIC, s TEXT, day DATE, b BLOB, flag BOOLEAN, n TEXT,
                         inf REAL, bad TEXT, empty BLOB);
         INSERT INTO t VALUES (42, 9223372036854775807, 2.5, 1234.56, 'café ☕', '2026-11-21', x'00FF10', 1, NULL,
                               -9e999, CAST(x'ff00' AS TEXT), x'');",
    )
    .await;
    let rows = [
        row(&db, "SELECT * FROM t").await,
        bound_row(&db, "SELECT * FROM t WHERE ? = 1").await,
    ];
    check(
        &rows,
        &[
            ("i", json!(42)),
            ("big", json!(9223372036854775807i64)),
            ("r", json!(2.5)),
            ("d", json!(1234.56)),
            ("s", json!("café ☕")),
            ("day", json!("2026-11-21")),
            ("b", json!("\\x00ff10")),
            ("flag", json!(1)),
            ("n", Value::Null),
            ("inf", json!("-Inf")),
            ("bad", json!("\\xff00")),
            ("empty", json!("\\x")),
        ],
    );
}

#[tokio::test]
async fn sqlite_columns_without_a_known_type_report_the_value_type() {
    let db = common::scratch_sqlite(
        "CREATE TABLE t (d NUMERIC(12,2), s TEXT); INSERT INTO t VALUES (388.6, 'x');",
    )
    .await;
    let result = db
        .query(
            &db.guard().await.unwrap(),
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
            feeling mood_{table}, nothing text, addr inet, mac macaddr, cash money, flags bit(4), spot point,
            span2 int4range, grid int4[][], lsn pg_lsn, words tsvector, nan float8, zero numeric(5,3));
         INSERT INTO {table} VALUES (12345678.9000, 0.1, '2026-11-21', '2026-11-21 09:30:15.25', '2026-11-21 09:30:00+01',
            '23:59:59', '1 year 2 mons 3 days 04:05:06', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{{\"a\": [1, 2.5, null]}}',
            '\\x000102', true, 9007199254740993, 0.1, ARRAY['x', 'y z'], ARRAY[1, NULL, 3], 'happy', NULL,
            '192.168.0.1/24', '08:00:2b:01:02:03', 12.5, B'1010', '(1.5,-2)', '[1,5)', '{{{{1,2}},{{3,4}}}}', '16/B374D848',
            'a fat cat', 'NaN', 0);"
    ))
    .await
    .unwrap();
    let rows = [
        row(&db, &format!("SELECT * FROM {table}")).await,
        bound_row(&db, &format!("SELECT * FROM {table} WHERE $1 = 1")).await,
    ];
    check(
        &rows,
        &[
            ("amount", json!("12345678.9000")),
            ("tiny", json!("0.1")),
            ("day", json!("2026-11-21")),
            ("at", json!("2026-11-21 09:30:15.25")),
            ("at_tz", json!("2026-11-21 08:30:00+00")),
            ("t", json!("23:59:59")),
            ("span", json!("1 year 2 mons 3 days 04:05:06")),
            ("id", json!("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")),
            ("doc", json!({"a": [1, 2.5, null]})),
            ("bin", json!("\\x000102")),
            ("ok", json!(true)),
            ("big", json!(9007199254740993i64)),
            ("f", json!(0.1)),
            ("tags", json!("{x,\"y z\"}")),
            ("nums", json!("{1,NULL,3}")),
            ("feeling", json!("happy")),
            ("nothing", Value::Null),
            ("addr", json!("192.168.0.1/24")),
            ("mac", json!("08:00:2b:01:02:03")),
            ("cash", json!("$12.50")),
            ("flags", json!("1010")),
            ("spot", json!("(1.5,-2)")),
            ("span2", json!("[1,5)")),
            ("grid", json!("{{1,2},{3,4}}")),
            ("lsn", json!("16/B374D848")),
            ("words", json!("'a' 'cat' 'fat'")),
            ("nan", json!("NaN")),
            ("zero", json!("0.000")),
        ],
    );
    let sql = "SELECT -12.30::numeric(6,2) AS neg, 0::numeric AS zero, 0.00010::numeric AS small, \
         123456789012345678901234567890.123::numeric AS huge, 'NaN'::numeric AS nan, 10000::numeric AS tenk, \
         -0.5 AS half, 100000000.00000001 AS long_frac, 'Infinity'::numeric AS inf, ARRAY[1.50, 2.000] AS scales";
    let rows = [
        row(&db, sql).await,
        bound_row(&db, &format!("{sql} WHERE $1 = 1")).await,
    ];
    check(
        &rows,
        &[
            ("neg", json!("-12.30")),
            ("zero", json!("0")),
            ("small", json!("0.00010")),
            ("huge", json!("123456789012345678901234567890.123")),
            ("nan", json!("NaN")),
            ("tenk", json!("10000")),
            ("half", json!("-0.5")),
            ("long_frac", json!("100000000.00000001")),
            ("inf", json!("Infinity")),
            ("scales", json!("{1.50,2.000}")),
        ],
    );
    // Expressions keep their types too.
    let r = row(&db, "SELECT SUM(unit_price) AS total, AVG(milliseconds)::numeric(10,2) AS avg_ms, COUNT(*) AS n FROM track").await;
    assert_eq!(get(&r, "total"), &json!("3680.97"));
    assert_eq!(get(&r, "n"), &json!(3503));
}

#[tokio::test]
async fn postgres_infinity_bc_and_midnight_come_back_as_written() {
    let Some(db) = common::chinook_postgres().await else {
        return;
    };
    let sql = "SELECT 'infinity'::date AS d_inf, '-infinity'::timestamp AS ts_ninf, 'infinity'::timestamptz AS tz_inf, \
         '0044-03-15 BC'::date AS ides, '0044-03-15 12:00:00.5 BC'::timestamp AS ides_noon, '24:00'::time AS midnight, \
         '-1 days +02:00'::interval AS mixed, '12:34:56.789+05:30'::timetz AS tz_time, '10000-01-01'::date AS far";
    let rows = [
        row(&db, sql).await,
        bound_row(&db, &format!("{sql} WHERE $1 = 1")).await,
    ];
    check(
        &rows,
        &[
            ("d_inf", json!("infinity")),
            ("ts_ninf", json!("-infinity")),
            ("tz_inf", json!("infinity")),
            ("ides", json!("0044-03-15 BC")),
            ("ides_noon", json!("0044-03-15 12:00:00.5 BC")),
            ("midnight", json!("24:00:00")),
            ("mixed", json!("-1 days +02:00:00")),
            ("tz_time", json!("12:34:56.789+05:30")),
            ("far", json!("10000-01-01")),
        ],
    );
}

#[tokio::test]
async fn mariadb_types_render_faithfully() {
    let Some(db) = common::chinook_mariadb().await else {
        return;
    };
    let table = format!("types_{}", common::unique());
    db.execute_script(&format!(
        "SET SESSION sql_mode = '';
         CREATE TABLE {table} (
            amount DECIMAL(14,4), day DATE, at DATETIME(6), ts TIMESTAMP NULL, t TIME, doc JSON, bin BLOB, flag TINYINT(1),
            big BIGINT UNSIGNED, f DOUBLE, kind ENUM('a','b'), bits BIT(8), yr YEAR, id UUID, nothing VARCHAR(10),
            zero_day DATE, part_day DATE, long_time TIME, neg_time TIME, tags SET('x','y','z'), geo GEOMETRY,
            zero DECIMAL(5,3), small TINYINT UNSIGNED, word VARBINARY(10));
         INSERT INTO {table} VALUES (12345678.9000, '2026-11-21', '2026-11-21 09:30:15.250000', '2026-11-21 08:30:00', '23:59:59',
            '{{\"a\": [1, 2.5]}}', x'000102', 1, 18446744073709551615, 0.1, 'b', b'00000101', 2026,
            'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', NULL, '0000-00-00', '2024-00-00', '838:59:59', '-01:00:00', 'x,z',
            ST_GeomFromText('POINT(1 2)'), 0, 255, 'abc');"
    ))
    .await
    .unwrap();
    let rows = [
        row(&db, &format!("SELECT * FROM {table}")).await,
        bound_row(&db, &format!("SELECT * FROM {table} WHERE ? = 1")).await,
    ];
    check(
        &rows,
        &[
            ("amount", json!("12345678.9000")),
            ("day", json!("2026-11-21")),
            ("at", json!("2026-11-21 09:30:15.250000")),
            ("ts", json!("2026-11-21 08:30:00")),
            ("t", json!("23:59:59")),
            // MariaDB stores JSON as text; it is shown as the text it is.
            ("doc", json!("{\"a\": [1, 2.5]}")),
            ("bin", json!("\\x000102")),
            ("flag", json!(1)),
            ("big", json!(18446744073709551615u64)),
            ("f", json!(0.1)),
            ("kind", json!("b")),
            ("bits", json!(5)),
            ("yr", json!(2026)),
            ("id", json!("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")),
            ("nothing", Value::Null),
            ("zero_day", json!("0000-00-00")),
            ("part_day", json!("2024-00-00")),
            ("long_time", json!("838:59:59")),
            ("neg_time", json!("-01:00:00")),
            ("tags", json!("x,z")),
            (
                "geo",
                json!("\\x000000000101000000000000000000f03f0000000000000040"),
            ),
            ("zero", json!("0.000")),
            ("small", json!(255)),
            ("word", json!("abc")),
        ],
    );
    let r = row(
        &db,
        "SELECT SUM(UnitPrice) AS total, COUNT(*) AS n FROM Track",
    )
    .await;
    assert_eq!(get(&r, "total"), &json!("3680.97"));
    assert_eq!(get(&r, "n"), &json!(3503));
}

/// A result with one huge cell, under a small byte cap.
async fn capped(db: &Database, sql: &str) -> QueryResult {
    let limits = QueryLimits {
        max_bytes: 1000,
        ..QueryLimits::default()
    };
    db.query(&db.guard().await.unwrap(), sql, &limits)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn assert_cut(result: &QueryResult, rows: usize) {
    assert!(result.truncated);
    assert_eq!(result.rows.len(), rows);
    let cell = result.rows[0][1].as_str().unwrap();
    assert_eq!(result.rows[0][0], json!(1));
    // The first cell of the first row is cut too, at a character boundary, within the cap.
    assert!(cell.len() <= 1000 && cell.len() >= 990, "{}", cell.len());
    assert!(cell.chars().all(|c| c == 'é'));
}

#[tokio::test]
async fn huge_cells_are_cut_to_the_byte_cap() {
    let db = common::scratch_sqlite("CREATE TABLE t (n INTEGER);").await;
    let result = capped(&db, "SELECT 1 AS n, printf('%.*c', 1000000, 'x') AS s").await;
    assert!(result.truncated);
    assert_eq!(result.rows[0][1].as_str().unwrap().len(), 998);
    let result = capped(
        &db,
        "SELECT 1 AS n, replace(printf('%.*c', 100000, 'x'), 'x', 'é') AS s",
    )
    .await;
    assert_cut(&result, 1);
    if let Some(db) = common::chinook_postgres().await {
        let result = capped(&db, "SELECT 1 AS n, repeat('é', 1000000) AS s").await;
        assert_cut(&result, 1);
        // A later row that does not fit whole is left out.
        let result = capped(
            &db,
            "SELECT n, repeat('é', 400) AS s FROM generate_series(1, 5) AS n",
        )
        .await;
        assert!(result.truncated);
        assert_eq!(result.rows.len(), 1);
    }
    if let Some(db) = common::chinook_mariadb().await {
        let result = capped(&db, "SELECT 1 AS n, REPEAT('é', 1000000) AS s").await;
        assert_cut(&result, 1);
    }
}
