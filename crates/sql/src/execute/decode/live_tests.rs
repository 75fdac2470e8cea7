//! The decoders against the real engines, through both wire formats of each: the text format of a query as
//! written (`sqlx::raw_sql`, after the statement was prepared once, as the executor does) and the binary format
//! of a prepared statement with a bound parameter. PostgreSQL and MariaDB are expected on 127.0.0.1 (see the
//! test databases of docs/testing.md); without them these tests print SKIPPED, and fail under `CI=true`.

use serde_json::{Value, json};
use sqlx::{Connection, Executor as _};

const PG: &str = "postgres://postgres@127.0.0.1:5432/test";
const MARIA: &str = "mysql://root@127.0.0.1:3306/test";
const MAX: usize = 1_000_000;

fn skip(what: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("{what} (CI=true: required)");
    }
    eprintln!("SKIPPED: {what}");
}

/// An expression, what it renders to from text, and from binary when that differs (documented differences).
struct Case {
    sql: &'static str,
    text: Value,
    binary: Option<Value>,
}

fn same(sql: &'static str, value: Value) -> Case {
    Case {
        sql,
        text: value,
        binary: None,
    }
}

fn differ(sql: &'static str, text: Value, binary: Value) -> Case {
    Case {
        sql,
        text,
        binary: Some(binary),
    }
}

async fn pg_both(
    conn: &mut sqlx::PgConnection,
    expr: &str,
    max: usize,
) -> ((Value, bool), (Value, bool)) {
    let text_sql = format!("SELECT {expr} AS v");
    // The executor prepares the statement before running its text: the driver then knows every type.
    conn.prepare(sqlx::SqlSafeStr::into_sql_str(sqlx::AssertSqlSafe(
        text_sql.clone(),
    )))
    .await
    .unwrap_or_else(|e| panic!("{expr}: {e}"));
    let rows = sqlx::raw_sql(sqlx::AssertSqlSafe(text_sql))
        .fetch_all(&mut *conn)
        .await
        .unwrap_or_else(|e| panic!("{expr}: {e}"));
    let text = super::postgres(&rows[0], 0, max);
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {expr} AS v WHERE $1::int4 = 1"
    )))
    .bind(1i32)
    .fetch_all(&mut *conn)
    .await
    .unwrap_or_else(|e| panic!("{expr} (binary): {e}"));
    let binary = super::postgres(&rows[0], 0, max);
    (text, binary)
}

#[tokio::test]
async fn postgres_values_through_text_and_binary() {
    let Ok(mut conn) = sqlx::PgConnection::connect(PG).await else {
        skip("PostgreSQL at 127.0.0.1:5432 is not reachable");
        return;
    };
    let mut tx = conn.begin().await.unwrap();
    sqlx::raw_sql(
        "CREATE TYPE live_mood AS ENUM ('happy', 'sad');
         CREATE DOMAIN live_posint AS int4 CHECK (VALUE > 0);
         CREATE DOMAIN live_label AS text;
         CREATE TYPE live_pair AS (n live_posint, label text);",
    )
    .execute(&mut *tx)
    .await
    .unwrap();
    let cases = [
        same("true", json!(true)),
        same("32767::int2", json!(32767)),
        same("(-2147483648)::int4", json!(-2147483648i64)),
        same("9223372036854775807::int8", json!(i64::MAX)),
        same("4294967295::oid", json!(4294967295u32)),
        same("0.1::float4", json!(0.1)),
        same("1e300::float8", json!(1e300)),
        same("'NaN'::float8", json!("NaN")),
        same("'-Infinity'::float4", json!("-Infinity")),
        same("CAST(0 AS numeric(5,3))", json!("0.000")),
        same("(-12.30)::numeric(6,2)", json!("-12.30")),
        same("1e-20::numeric", json!("0.00000000000000000001")),
        same("'NaN'::numeric", json!("NaN")),
        same("'-Infinity'::numeric", json!("-Infinity")),
        same("'{1.50,2.000,NULL}'::numeric[]", json!("{1.50,2.000,NULL}")),
        same("12.34::money", json!("$12.34")),
        same("(-1234567.89)::money", json!("-$1,234,567.89")),
        same("'café ☕'::text", json!("café ☕")),
        same("''::text", json!("")),
        same("'x'::char(3)", json!("x  ")),
        same("'é'::\"char\"", json!("\\303")),
        same("'\\x00ff'::bytea", json!("\\x00ff")),
        same("''::bytea", json!("\\x")),
        same("'2024-01-02'::date", json!("2024-01-02")),
        same("'infinity'::date", json!("infinity")),
        same("'-infinity'::date", json!("-infinity")),
        same("'0044-03-15 BC'::date", json!("0044-03-15 BC")),
        same("'10000-01-01'::date", json!("10000-01-01")),
        same("'24:00'::time", json!("24:00:00")),
        same("'12:34:56.789'::time", json!("12:34:56.789")),
        same("'12:34:56.789+05:30'::timetz", json!("12:34:56.789+05:30")),
        same("'12:00-03:25:30'::timetz", json!("12:00:00-03:25:30")),
        same(
            "'2024-01-02 03:04:05.123456'::timestamp",
            json!("2024-01-02 03:04:05.123456"),
        ),
        same("'infinity'::timestamp", json!("infinity")),
        same(
            "'0044-03-15 12:00:00.5 BC'::timestamp",
            json!("0044-03-15 12:00:00.5 BC"),
        ),
        same(
            "'2024-01-02 03:04:05+02'::timestamptz",
            json!("2024-01-02 01:04:05+00"),
        ),
        same("'-infinity'::timestamptz", json!("-infinity")),
        same(
            "'0044-03-15 12:00:00+00 BC'::timestamptz",
            json!("0044-03-15 12:00:00+00 BC"),
        ),
        same("interval '-1 days +02:00'", json!("-1 days +02:00:00")),
        same("interval '1 year -1 mons'", json!("11 mons")),
        same("interval '-1.5 seconds'", json!("-00:00:01.5")),
        same("interval '100 hours'", json!("100:00:00")),
        same(
            "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
            json!("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
        ),
        same(
            "'{\"b\": 1, \"a\": [1, 2.5, null]}'::json",
            json!({"b": 1, "a": [1, 2.5, null]}),
        ),
        same("'{\"a\": {\"b\": true}}'::jsonb", json!({"a": {"b": true}})),
        same("'null'::jsonb", json!("null")),
        same(
            "'{\"a\": 1, \"a\": 2}'::json",
            json!("{\"a\": 1, \"a\": 2}"),
        ),
        same("'{\"a\": 1, \"a\": 2}'::jsonb", json!({"a": 2})),
        same("'\"text\"'::json", json!("\"text\"")),
        same("'[1, 2.5]'::jsonb", json!([1, 2.5])),
        same(
            "'{\"a\": 0.10000000000000000001}'::jsonb",
            json!("{\"a\": 0.10000000000000000001}"),
        ),
        same("'<a>x</a>'::xml", json!("<a>x</a>")),
        same("'::ffff:1.2.3.4'::inet", json!("::ffff:1.2.3.4")),
        same("'10.1.2.3/24'::inet", json!("10.1.2.3/24")),
        same("'2001:db8::/32'::cidr", json!("2001:db8::/32")),
        same("'08:00:2b:01:02:03'::macaddr", json!("08:00:2b:01:02:03")),
        same(
            "'08:00:2b:01:02:03:04:05'::macaddr8",
            json!("08:00:2b:01:02:03:04:05"),
        ),
        same("B'0101'", json!("0101")),
        same("'10110'::varbit", json!("10110")),
        same("point(1.5, 2)", json!("(1.5,2)")),
        same("lseg '[(1,2),(3,4)]'", json!("[(1,2),(3,4)]")),
        same("box '(1,2),(3,4)'", json!("(3,4),(1,2)")),
        same("path '((1,2),(3,4))'", json!("((1,2),(3,4))")),
        same("path '[(1,2),(3,4)]'", json!("[(1,2),(3,4)]")),
        same(
            "polygon '((1,2),(3,4),(5,6))'",
            json!("((1,2),(3,4),(5,6))"),
        ),
        same("line '{1,2,3}'", json!("{1,2,3}")),
        same("circle '<(1,2),3>'", json!("<(1,2),3>")),
        same("'[1,5)'::int4range", json!("[1,5)")),
        same("'empty'::int4range", json!("empty")),
        same("'(,)'::numrange", json!("(,)")),
        same(
            "'[\"2020-01-01 00:00\",\"2020-02-01 10:00\")'::tsrange",
            json!("[\"2020-01-01 00:00:00\",\"2020-02-01 10:00:00\")"),
        ),
        same(
            "'[2024-01-01,2024-02-01)'::daterange",
            json!("[2024-01-01,2024-02-01)"),
        ),
        same("'{1,NULL,3}'::int[]", json!("{1,NULL,3}")),
        same("'{{1,2},{3,4}}'::int[]", json!("{{1,2},{3,4}}")),
        same("'[0:1]={a,b}'::text[]", json!("[0:1]={a,b}")),
        same(
            "array['a b', '', 'NULL', 'x\"y', 'back\\slash', null]",
            json!(r#"{"a b","","NULL","x\"y","back\\slash",NULL}"#),
        ),
        same(
            "array[box '(1,2),(3,4)', box '(5,6),(0,0)']",
            json!("{(3,4),(1,2);(5,6),(0,0)}"),
        ),
        same("'{t,f}'::bool[]", json!("{t,f}")),
        same(
            "'{1.5,NaN,Infinity}'::float8[]",
            json!("{1.5,NaN,Infinity}"),
        ),
        same("'{\"\\\\x0102\"}'::bytea[]", json!(r#"{"\\x0102"}"#)),
        same("'{}'::int[]", json!("{}")),
        same("row(1, 'a b', null, '')", json!(r#"(1,"a b",,"")"#)),
        same("row(1, 'x\"y', 'a\\b')", json!(r#"(1,"x""y","a\\b")"#)),
        same(
            "'a:1A fat:2B,4C cat:5'::tsvector",
            json!("'a':1A 'cat':5 'fat':2B,4C"),
        ),
        same("'16/B374D848'::pg_lsn", json!("16/B374D848")),
        same("'$.a'::jsonpath", json!("$.\"a\"")),
        same("'happy'::live_mood", json!("happy")),
        same("'{happy,sad}'::live_mood[]", json!("{happy,sad}")),
        same("5::live_posint", json!(5)),
        same("'a label'::live_label", json!("a label")),
        same("row(3, 'x y')::live_pair", json!("(3,\"x y\")")),
        // No session in binary: reg* types come as their OID, tsquery as its bytes.
        differ("'pg_class'::regclass", json!("pg_class"), json!("1259")),
        differ("'int4'::regtype", json!("integer"), json!("23")),
        same("NULL::int4", Value::Null),
        same("NULL::text", Value::Null),
    ];
    let mut failures = Vec::new();
    for case in &cases {
        let ((text, text_cut), (binary, binary_cut)) = pg_both(&mut tx, case.sql, MAX).await;
        let want_binary = case.binary.as_ref().unwrap_or(&case.text);
        if text != case.text || text_cut {
            failures.push(format!("{} (text): {text} != {}", case.sql, case.text));
        }
        if &binary != want_binary || binary_cut {
            failures.push(format!("{} (binary): {binary} != {want_binary}", case.sql));
        }
    }
    // The session's settings shape the text (the engine's own), not the binary form (ISO, UTC).
    sqlx::raw_sql("SET LOCAL datestyle = 'SQL, DMY'; SET LOCAL timezone = 'America/New_York'")
        .execute(&mut *tx)
        .await
        .unwrap();
    let ((text, _), (binary, _)) =
        pg_both(&mut tx, "'2024-03-04 15:00:00+00'::timestamptz", MAX).await;
    assert_eq!(text, json!("04/03/2024 10:00:00 EST"));
    assert_eq!(binary, json!("2024-03-04 15:00:00+00"));
    // aclitem has no binary form (the engine refuses it in a prepared statement), and the driver cannot
    // prepare a statement that returns a multirange (it does not know type kind `m`): text only.
    let text = pg_text_only(&mut tx, "'postgres=arwdDxt/postgres'::aclitem").await;
    assert_eq!(text, (json!("postgres=arwdDxt/postgres"), false));
    let text = pg_text_only(&mut tx, "'{[1,3),[5,7)}'::int4multirange").await;
    assert_eq!(text, (json!("{[1,3),[5,7)}"), false));
    // Huge cells are cut to the budget, at a character boundary, in both formats.
    let (text, binary) = pg_both(&mut tx, "repeat('é', 100000)", 5).await;
    assert_eq!(text, (json!("éé"), true));
    assert_eq!(binary, (json!("éé"), true));
    let (text, binary) = pg_both(&mut tx, "decode(repeat('ab', 100000), 'hex')", 8).await;
    assert_eq!(text, (json!("\\xababab"), true));
    assert_eq!(binary, (json!("\\xababab"), true));
    tx.rollback().await.unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

async fn pg_text_only(conn: &mut sqlx::PgConnection, expr: &str) -> (Value, bool) {
    let rows = sqlx::raw_sql(sqlx::AssertSqlSafe(format!("SELECT {expr} AS v")))
        .fetch_all(&mut *conn)
        .await
        .unwrap();
    super::postgres(&rows[0], 0, MAX)
}

#[tokio::test]
async fn mariadb_values_through_text_and_binary() {
    let Ok(mut conn) = sqlx::MySqlConnection::connect(MARIA).await else {
        skip("MariaDB at 127.0.0.1:3306 is not reachable");
        return;
    };
    sqlx::raw_sql(
        "SET SESSION sql_mode = '';
         CREATE TEMPORARY TABLE live (
            ti TINYINT, tu TINYINT UNSIGNED, bu BIGINT UNSIGNED, flag BOOLEAN, f FLOAT, d DOUBLE, dec3 DECIMAL(5,3),
            bits BIT(12), wide BIT(64), yr YEAR, yr0 YEAR, day DATE, zero DATE, part DATE, t TIME, neg TIME, t6 TIME(6),
            t3 TIME(3), dt DATETIME, dt6 DATETIME(6), dt3 DATETIME(3), zdt DATETIME, ts TIMESTAMP NULL, kind ENUM('a','b c'),
            tags SET('x','y','z'), doc JSON, blb BLOB, bin BINARY(4), vb VARBINARY(10), geo GEOMETRY, id UUID, ip INET6,
            s VARCHAR(20), e VARCHAR(5), n INT);
         INSERT INTO live VALUES (-128, 255, 18446744073709551615, 1, 1.2345678, 1e300, 0, b'101', b'1111111111111111111111111111111111111111111111111111111111111111',
            2024, 0, '2024-01-02', '0000-00-00', '2024-00-00', '838:59:59', '-01:00:00', '12:00:00.5', '12:00:00.5',
            '2024-01-02 03:04:05', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.250', '0000-00-00 00:00:00',
            '2024-01-02 03:04:05', 'b c', 'x,z', '{\"a\": [1, 2.5]}', x'00ff', 'ab', 'abc', ST_GeomFromText('POINT(1 2)'),
            'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '::1', 'café ☕', '', NULL);",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let geo = "\\x000000000101000000000000000000f03f0000000000000040";
    let cases = [
        same("ti", json!(-128)),
        same("tu", json!(255)),
        same("bu", json!(18446744073709551615u64)),
        same("flag", json!(1)),
        // The text protocol has the server's six significant digits; the binary one the float itself.
        differ("f", json!(1.23457), json!(1.2345678)),
        same("d", json!(1e300)),
        same("dec3", json!("0.000")),
        same("CAST(0 AS DECIMAL(5,3))", json!("0.000")),
        same("bits", json!(5)),
        same("wide", json!(18446744073709551615u64)),
        same("yr", json!(2024)),
        same("yr0", json!(0)),
        same("day", json!("2024-01-02")),
        same("zero", json!("0000-00-00")),
        same("part", json!("2024-00-00")),
        same("t", json!("838:59:59")),
        same("neg", json!("-01:00:00")),
        same("t6", json!("12:00:00.500000")),
        differ("t3", json!("12:00:00.500"), json!("12:00:00.500000")),
        same("dt", json!("2024-01-02 03:04:05")),
        same("dt6", json!("2024-01-02 03:04:05.123456")),
        differ(
            "dt3",
            json!("2024-01-02 03:04:05.250"),
            json!("2024-01-02 03:04:05.250000"),
        ),
        same("zdt", json!("0000-00-00 00:00:00")),
        same("ts", json!("2024-01-02 03:04:05")),
        same("kind", json!("b c")),
        same("tags", json!("x,z")),
        // MariaDB's JSON is LONGTEXT: the stored text.
        same("doc", json!("{\"a\": [1, 2.5]}")),
        same("blb", json!("\\x00ff")),
        same("bin", json!("\\x61620000")),
        same("vb", json!("abc")),
        same("geo", json!(geo)),
        same("id", json!("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")),
        same("ip", json!("::1")),
        same("s", json!("café ☕")),
        same("e", json!("")),
        same("n", Value::Null),
        same("CONVERT('abc' USING binary)", json!("abc")),
    ];
    let mut failures = Vec::new();
    for case in &cases {
        let text_sql = format!("SELECT {} AS v FROM live", case.sql);
        let rows = sqlx::raw_sql(sqlx::AssertSqlSafe(text_sql))
            .fetch_all(&mut conn)
            .await
            .unwrap();
        let text = super::mysql(&rows[0], 0, MAX);
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {} AS v FROM live WHERE ? = 1",
            case.sql
        )))
        .bind(1i32)
        .fetch_all(&mut conn)
        .await
        .unwrap();
        let binary = super::mysql(&rows[0], 0, MAX);
        let want_binary = case.binary.as_ref().unwrap_or(&case.text);
        if text != (case.text.clone(), false) {
            failures.push(format!("{} (text): {} != {}", case.sql, text.0, case.text));
        }
        if binary != (want_binary.clone(), false) {
            failures.push(format!(
                "{} (binary): {} != {want_binary}",
                case.sql, binary.0
            ));
        }
    }
    let rows = sqlx::raw_sql("SELECT REPEAT('é', 100000) AS v")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(super::mysql(&rows[0], 0, 5), (json!("éé"), true));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn sqlite_values_by_storage_class() {
    let mut conn = sqlx::SqliteConnection::connect("sqlite::memory:")
        .await
        .unwrap();
    let rows = sqlx::query(
        "SELECT 9223372036854775807, 0.1, 9e999, -9e999, x'00ff', x'', 'café', '', CAST(x'ff' AS TEXT), NULL, \
         printf('%.*c', 100000, 'x')",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let cells: Vec<(Value, bool)> = (0..10).map(|i| super::sqlite(&rows[0], i, MAX)).collect();
    assert_eq!(
        cells,
        [
            json!(i64::MAX),
            json!(0.1),
            json!("Inf"),
            json!("-Inf"),
            json!("\\x00ff"),
            json!("\\x"),
            json!("café"),
            json!(""),
            json!("\\xff"),
            Value::Null,
        ]
        .map(|v| (v, false))
    );
    assert_eq!(super::sqlite(&rows[0], 10, 3), (json!("xxx"), true));
}
