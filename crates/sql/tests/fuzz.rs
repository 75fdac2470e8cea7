//! Property tests with random input: the text the engine runs is byte for byte the text the guard checked
//! (PostgreSQL and MariaDB report it back themselves), literals full of quotes, backslashes, comments and
//! dollar quotes come back as written, random SQL changes nothing and crashes nothing, and random tool
//! arguments from a model never panic a tool. Seeds are fixed, so a failure repeats.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use serde_json::{Value, json};
use steward_core::{ToolCall, ToolContext, Toolbox};
use steward_sql::{Database, Dialect, Guard, QueryLimits, SqlToolkit, cell_text};

/// Pieces that confuse lexers: quotes, escapes, comment starts, dollar quotes, statement ends.
const TRICKY: &[&str] = &[
    "'",
    "''",
    "\"",
    "\\",
    "\\'",
    "\\\\",
    "`",
    "$",
    "$$",
    "$a$",
    "--",
    "-- ",
    "/*",
    "*/",
    "#",
    ";",
    "\n",
    "\r\n",
    "\t",
    " ",
    "E'",
    "U&",
    "N'",
    "x'",
    "?",
    ":",
    "%",
    "é",
    "日本",
    "🙂",
    "\u{2028}",
    "a",
    "B",
    "0",
    "SELECT",
    "DROP TABLE canary",
    "pg_sleep(3)",
    "LOAD_FILE('/etc/passwd')",
    "*/ SELECT 1; --",
];

fn tricky(rng: &mut fastrand::Rng, pieces: std::ops::Range<usize>) -> String {
    let pieces = rng.usize(pieces);
    (0..pieces)
        .map(|_| TRICKY[rng.usize(..TRICKY.len())])
        .collect()
}

/// A literal that means `text` in the dialect, in one of the engine's quoting styles.
fn literal(rng: &mut fastrand::Rng, dialect: Dialect, text: &str) -> String {
    match (dialect, rng.u8(..3)) {
        // Dollar quotes with a tag the text does not contain.
        (Dialect::Postgres, 0) => {
            let mut tag = String::from("q");
            while text.contains(&format!("${tag}$")) || text.ends_with('$') && tag.is_empty() {
                tag.push('q');
            }
            format!("${tag}${text}${tag}$")
        }
        // E'' strings: backslash escapes.
        (Dialect::Postgres, 1) => format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "\\'")),
        // MySQL/MariaDB strings take backslash escapes unless NO_BACKSLASH_ESCAPES.
        (Dialect::Mysql, _) => format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''")),
        // Standard strings: quotes doubled, backslashes literal.
        _ => format!("'{}'", text.replace('\'', "''")),
    }
}

/// SQL that asks the engine for the text it is running: `(query, value)` columns.
fn self_reporting(dialect: Dialect, literal: &str) -> String {
    match dialect {
        Dialect::Postgres => format!("SELECT current_query() AS q, {literal} AS v"),
        _ => format!(
            "SELECT (SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()) AS q, {literal} AS v"
        ),
    }
}

#[tokio::test]
async fn the_engine_runs_the_text_the_guard_checked() {
    let mut engines = Vec::new();
    if let Some(db) = common::chinook_postgres().await {
        engines.push(db);
    }
    if let Some(db) = common::chinook_mariadb().await {
        engines.push(db);
    }
    for db in engines {
        let dialect = db.dialect();
        // The processlist is a sensitive catalog a policy may close; this test needs it.
        let guard = db_guard(&db).await;
        let mut rng = fastrand::Rng::with_seed(8);
        let (mut ran, mut refused) = (0, 0);
        for round in 0..300 {
            let text = tricky(&mut rng, 1..12);
            if text.contains('\0') {
                continue;
            }
            let lit = literal(&mut rng, dialect, &text);
            let mut sql = self_reporting(dialect, &lit);
            // Comments around and after the statement are part of the text too (PostgreSQL nests `/*`).
            match round % 3 {
                1 => {
                    sql = format!(
                        "/* {} */ {sql}",
                        text.replace("*/", "* /").replace("/*", "/ *")
                    )
                }
                2 => sql = format!("{sql} -- {}", text.replace(['\n', '\r'], " ")),
                _ => {}
            }
            let verdict = guard.check(&sql);
            if !verdict.allowed {
                refused += 1;
                continue;
            }
            let result = db
                .query(&guard, &sql, &QueryLimits::default())
                .await
                .unwrap_or_else(|e| panic!("{dialect}: {sql:?} -> {e}"));
            // MariaDB keeps the processlist in 3-byte UTF-8 (a character beyond it reads back as one `?`
            // per byte), without the spaces and `;` that end the text.
            let reported = if dialect == Dialect::Mysql {
                sql.trim_end_matches(|c: char| c.is_ascii_whitespace() || c == ';')
                    .chars()
                    .map(|c| {
                        if c.len_utf8() == 4 {
                            "????".to_owned()
                        } else {
                            c.to_string()
                        }
                    })
                    .collect()
            } else {
                sql.clone()
            };
            assert_eq!(
                cell_text(&result.rows[0][0]),
                reported,
                "{dialect}: the engine ran another text"
            );
            assert_eq!(cell_text(&result.rows[0][1]), text, "{dialect}: {sql:?}");
            ran += 1;
        }
        // The property is only worth something if most cases ran.
        assert!(ran > 200, "{dialect}: only {ran} ran, {refused} refused");
    }
}

/// The guard for a live database, with the processlist readable.
async fn db_guard(db: &Database) -> Guard {
    db.guard().await.unwrap().allow_sensitive_catalogs(true)
}

#[tokio::test]
async fn sqlite_reads_literals_as_written() {
    let db = Database::connect("sqlite::memory:").await.unwrap();
    let guard = Guard::new(Dialect::Sqlite);
    let mut rng = fastrand::Rng::with_seed(9);
    let mut ran = 0;
    for _ in 0..300 {
        let text = tricky(&mut rng, 1..12);
        let sql = format!(
            "SELECT {} AS v -- {}",
            literal(&mut rng, Dialect::Sqlite, &text),
            text.replace(['\n', '\r'], " ")
        );
        if !guard.check(&sql).allowed {
            continue;
        }
        let result = db
            .query(&guard, &sql, &QueryLimits::default())
            .await
            .unwrap();
        assert_eq!(cell_text(&result.rows[0][0]), text, "{sql:?}");
        ran += 1;
    }
    assert!(ran > 200, "only {ran} ran");
}

/// Words random SQL is made of.
const WORDS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "canary",
    "n",
    "1",
    "0",
    "'x'",
    "(",
    ")",
    ",",
    ";",
    "*",
    "+",
    "-",
    "=",
    "<",
    "AND",
    "OR",
    "NOT",
    "NULL",
    "WITH",
    "AS",
    "UNION",
    "ALL",
    "INSERT",
    "INTO",
    "VALUES",
    "DELETE",
    "UPDATE",
    "SET",
    "DROP",
    "TABLE",
    "CREATE",
    "ATTACH",
    "PRAGMA",
    "COPY",
    "TO",
    "'/tmp/x'",
    "--",
    "/*",
    "*/",
    "'",
    "\"",
    "\\",
    "$$",
    "`",
    "#",
    "/*!",
    "/*M!",
    "CASE",
    "WHEN",
    "THEN",
    "END",
    "GROUP",
    "BY",
    "ORDER",
    "LIMIT",
    "OFFSET",
    "JOIN",
    "ON",
    "count(",
    "sum(",
    "pg_sleep(",
    "sleep(",
    "load_extension(",
    "||",
    "::",
    "E'",
    "U&\"",
    "\"pg_sleep\"",
    "RETURNING",
    "FOR",
    "UPDATE",
    "LOCK",
    "SHARE",
    "EXPLAIN",
    "ANALYZE",
];

fn random_sql(rng: &mut fastrand::Rng) -> String {
    let n = rng.usize(1..40);
    let mut out = String::from(if rng.bool() { "SELECT " } else { "" });
    for _ in 0..n {
        out.push_str(WORDS[rng.usize(..WORDS.len())]);
        if rng.u8(..4) > 0 {
            out.push(' ');
        }
    }
    out
}

#[test]
fn random_sql_never_panics_the_guard() {
    let mut rng = fastrand::Rng::with_seed(1);
    for dialect in [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql] {
        let guard = Guard::new(dialect);
        for _ in 0..5_000 {
            let sql = if rng.bool() {
                random_sql(&mut rng)
            } else {
                tricky(&mut rng, 1..30)
            };
            let verdict = guard.check(&sql);
            assert_eq!(verdict.allowed, verdict.reasons.is_empty(), "{sql:?}");
        }
    }
}

#[tokio::test]
async fn random_sql_changes_nothing_on_any_engine() {
    let mut engines: Vec<Database> = Vec::new();
    engines.push(common::scratch_sqlite("").await);
    for url in [
        common::chinook_postgres_url(),
        common::chinook_mariadb_url(),
    ]
    .into_iter()
    .flatten()
    {
        engines.push(Database::connect(&url).await.unwrap());
    }
    for db in engines {
        let canary = format!("canary_{}", common::unique());
        db.execute_script(&format!(
            "CREATE TABLE {canary} (n INTEGER); INSERT INTO {canary} VALUES (1), (2), (3)"
        ))
        .await
        .unwrap();
        let guard = db.guard().await.unwrap();
        let mut rng = fastrand::Rng::with_seed(2);
        for _ in 0..300 {
            let sql = random_sql(&mut rng).replace("canary", &canary);
            // Refused, failed or answered: all fine, as long as nothing panics and nothing changes.
            let _ = db.query(&guard, &sql, &QueryLimits::default()).await;
        }
        let count = db
            .query_read_only(
                &format!("SELECT count(*), sum(n) FROM {canary}"),
                &[],
                &QueryLimits::default(),
            )
            .await
            .unwrap();
        assert_eq!(
            count.rows[0].iter().map(cell_text).collect::<Vec<_>>(),
            ["3", "6"],
            "{}",
            db.dialect()
        );
        db.execute_script(&format!("DROP TABLE {canary}"))
            .await
            .unwrap();
    }
}

/// A random JSON value, sometimes huge, deep, or of an unexpected type.
fn random_json(rng: &mut fastrand::Rng, depth: u32) -> Value {
    match rng.u8(..10) {
        0 => Value::Null,
        1 => json!(rng.bool()),
        2 => json!(rng.i64(..)),
        3 => json!([1e308, -1e308, 0.5, f64::MIN_POSITIVE][rng.usize(..4)]),
        4 | 5 => json!(tricky(rng, 0..20)),
        6 if depth < 4 => Value::Array(
            (0..rng.usize(0..5))
                .map(|_| random_json(rng, depth + 1))
                .collect(),
        ),
        7 if depth < 4 => Value::Object(
            (0..rng.usize(0..5))
                .map(|_| {
                    (
                        WORDS[rng.usize(..WORDS.len())].to_owned(),
                        random_json(rng, depth + 1),
                    )
                })
                .collect(),
        ),
        _ => json!(["Track", "Genre", "Name", "eq", "like", "in", "is_null", ""][rng.usize(..8)]),
    }
}

/// Chinook names a model would use, and some it should not.
const NAMES: &[&str] = &[
    "Track",
    "Genre",
    "Album",
    "Invoice",
    "Name",
    "TrackId",
    "GenreId",
    "Milliseconds",
    "UnitPrice",
    "Composer",
    "Total",
    "InvoiceDate",
    "track",
    "Nme",
    "",
    "Track; DROP TABLE Genre",
];

fn name(rng: &mut fastrand::Rng) -> Value {
    json!(NAMES[rng.usize(..NAMES.len())])
}

/// Arguments shaped as the tool expects, with random values in them.
fn plausible(rng: &mut fastrand::Rng, tool: &str) -> Value {
    match tool {
        "run_sql" => json!({"sql": if rng.bool() { random_sql(rng) } else { tricky(rng, 1..20) }}),
        "describe_tables" => {
            json!({"tables": (0..rng.usize(0..4)).map(|_| name(rng)).collect::<Vec<_>>()})
        }
        "query_table" => {
            let ops = [
                "eq", "ne", "lt", "le", "gt", "ge", "like", "in", "is_null", "nope",
            ];
            let filters: Vec<Value> = (0..rng.usize(0..3))
                .map(|_| {
                    json!({
                        "column": name(rng),
                        "op": ops[rng.usize(..ops.len())],
                        "value": random_json(rng, 1),
                    })
                })
                .collect();
            let mut args = json!({
                "table": name(rng),
                "columns": (0..rng.usize(0..3)).map(|_| name(rng)).collect::<Vec<_>>(),
                "filters": filters,
                "order_by": [{"column": name(rng), "descending": rng.bool()}],
            });
            if rng.bool() {
                args["limit"] = random_json(rng, 3);
            }
            args
        }
        _ => json!({}),
    }
}

#[tokio::test]
async fn random_tool_arguments_never_panic_a_tool() {
    let Some(db) = common::chinook_sqlite().await else {
        return;
    };
    let kit = SqlToolkit::new(Arc::new(db)).await.unwrap();
    let mut tools = Toolbox::new();
    for tool in kit.tools() {
        tools.add(tool).unwrap();
    }
    let names: Vec<String> = tools.names().map(str::to_owned).collect();
    let mut rng = fastrand::Rng::with_seed(3);
    let mut called = 0;
    for i in 0..2_000 {
        let name = &names[rng.usize(..names.len())];
        // Arguments of the right shape with random values, random JSON, or text that is not JSON at all.
        let raw = match rng.u8(..4) {
            0 | 1 => plausible(&mut rng, name).to_string(),
            2 => random_json(&mut rng, 0).to_string(),
            _ => tricky(&mut rng, 0..20),
        };
        let call = ToolCall::new(format!("c{i}"), name, raw);
        let Ok((tool, args)) = tools.check(&call) else {
            continue;
        };
        called += 1;
        // An error is a fine answer; a panic fails the test.
        let _ = tool.call(&ToolContext::default(), args).await;
    }
    assert!(called > 500, "only {called} calls passed validation");
}
