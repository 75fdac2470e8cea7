//! The guard's unit tests: classes, reasons, allowlists.

use std::collections::BTreeMap;

use super::*;

fn check(dialect: Dialect, sql: &str) -> GuardVerdict {
    Guard::new(dialect).check(sql)
}

#[test]
fn plain_select_is_read_with_tables() {
    let v = check(
        Dialect::Postgres,
        "WITH t AS (SELECT * FROM orders) SELECT c.name FROM t JOIN public.customers c ON c.id = t.customer_id",
    );
    assert!(v.allowed, "{v:?}");
    assert_eq!(v.class, StatementClass::Read);
    assert_eq!(v.tables, ["orders", "public.customers"]);
}

#[test]
fn refusals_carry_their_code() {
    let cases: &[(Dialect, &str, &str, StatementClass)] = &[
        (
            Dialect::Postgres,
            "WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d",
            "data_modifying_cte",
            StatementClass::Write,
        ),
        (
            Dialect::Sqlite,
            "SELECT 1; DROP TABLE x",
            "multiple_statements",
            StatementClass::Ddl,
        ),
        (
            Dialect::Postgres,
            "COMMIT",
            "transaction_control",
            StatementClass::Admin,
        ),
        (
            Dialect::Postgres,
            "SELECT * INTO backup FROM orders",
            "select_into",
            StatementClass::Read,
        ),
        (
            Dialect::Postgres,
            "SELECT * FROM orders FOR UPDATE",
            "locking_read",
            StatementClass::Read,
        ),
        (
            Dialect::Postgres,
            "SELECT pg_sleep(10)",
            "forbidden_function",
            StatementClass::Read,
        ),
        (
            Dialect::Postgres,
            "SELECT pg_catalog.pg_read_file('/etc/passwd')",
            "forbidden_function",
            StatementClass::Read,
        ),
        (
            Dialect::Postgres,
            "EXPLAIN ANALYZE SELECT 1",
            "explain_analyze",
            StatementClass::Read,
        ),
        (
            Dialect::Postgres,
            "SET statement_timeout = 0",
            "set",
            StatementClass::Admin,
        ),
        (
            Dialect::Sqlite,
            "ATTACH DATABASE '/tmp/x.db' AS x",
            "attach",
            StatementClass::Admin,
        ),
        (
            Dialect::Sqlite,
            "PRAGMA query_only = 0",
            "pragma",
            StatementClass::Admin,
        ),
        (
            Dialect::Mysql,
            "SELECT LOAD_FILE('/etc/passwd')",
            "forbidden_function",
            StatementClass::Read,
        ),
        (
            Dialect::Mysql,
            "SELECT 1 /*! ; DROP TABLE x */",
            "executable_comment",
            StatementClass::Read,
        ),
        (
            Dialect::Sqlite,
            "DeLeTe FROM orders",
            "not_read_only",
            StatementClass::Write,
        ),
        (
            Dialect::Sqlite,
            "SELEC 1",
            "parse_error",
            StatementClass::Other,
        ),
        (Dialect::Sqlite, "  ", "empty", StatementClass::Other),
    ];
    for (dialect, sql, code, class) in cases {
        let v = check(*dialect, sql);
        assert!(!v.allowed, "{sql} was allowed");
        assert!(v.has(code), "{sql}: expected {code}, got {:?}", v.reasons);
        assert_eq!(v.class, *class, "{sql}");
    }
}

#[test]
fn aliases_are_collected() {
    let v = check(
        Dialect::Sqlite,
        "SELECT COUNT(*) FROM Track t JOIN Genre g ON g.GenreId = t.GenreId WHERE g.Nme = 'Rock'",
    );
    assert_eq!(
        v.aliases,
        vec![
            ("t".to_owned(), "Track".to_owned()),
            ("g".to_owned(), "Genre".to_owned())
        ]
    );
}

#[test]
fn allowlists() {
    let mut columns = BTreeMap::new();
    columns.insert(
        "customers".to_owned(),
        vec!["id".to_owned(), "name".to_owned()],
    );
    let guard = Guard::new(Dialect::Sqlite).with_policy(GuardPolicy {
        tables: Some(vec!["customers".into(), "orders".into()]),
        columns: Some(columns),
    });
    assert!(
        guard
            .check("SELECT id, name AS n FROM customers ORDER BY n")
            .allowed
    );
    let v = guard.check("SELECT email FROM customers");
    assert!(v.has("column_not_allowed"), "{v:?}");
    assert!(
        guard
            .check("SELECT * FROM customers")
            .has("column_not_allowed")
    );
    let v = guard.check("SELECT * FROM salaries");
    assert!(v.has("table_not_allowed"), "{v:?}");
    // orders has no column list: anything goes there.
    assert!(
        guard
            .check("SELECT o.total, c.name FROM orders o JOIN customers c ON c.id = o.customer_id")
            .allowed
    );
}

/// Runs `f` on a thread with tokio's worker stack size (2 MiB).
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

type Shape = fn(usize) -> String;

/// Shapes of SQL that nest or chain, each as a function of its size.
fn shapes() -> Vec<(&'static str, Shape)> {
    vec![
        ("sum", |n| format!("SELECT 1{}", "+1".repeat(n))),
        ("union", |n| {
            format!("SELECT 1{}", " UNION ALL SELECT 1".repeat(n))
        }),
        ("parens", |n| {
            format!("SELECT {}1{}", "(".repeat(n), ")".repeat(n))
        }),
        ("and", |n| {
            format!("SELECT 1 WHERE 1 = 1{}", " AND 1 = 1".repeat(n))
        }),
        ("or in", |n| {
            format!("SELECT 1 WHERE 1 IN (1){}", " OR 1 IN (1)".repeat(n))
        }),
        ("not", |n| format!("SELECT {}TRUE", "NOT ".repeat(n))),
        ("minus", |n| format!("SELECT {}1", "- ".repeat(n))),
        ("concat", |n| format!("SELECT 'a'{}", " || 'a'".repeat(n))),
        ("abs", |n| {
            format!("SELECT {}1{}", "abs(".repeat(n), ")".repeat(n))
        }),
        ("case", |n| {
            format!(
                "SELECT {}1{}",
                "CASE WHEN TRUE THEN ".repeat(n),
                " END".repeat(n)
            )
        }),
        ("subquery", |n| {
            format!("SELECT {}1{}", "(SELECT ".repeat(n), ")".repeat(n))
        }),
        ("distinct", |n| {
            format!("SELECT 1{}", " IS DISTINCT FROM 1".repeat(n))
        }),
        ("cast", |n| format!("SELECT 1{}", "::int".repeat(n))),
    ]
}

#[test]
fn every_accepted_depth_is_safe_to_walk_print_and_drop_on_a_small_stack() {
    on_small_stack(|| {
        for dialect in [Dialect::Postgres, Dialect::Mysql, Dialect::Sqlite] {
            let guard = Guard::new(dialect);
            let accepted = |sql: &str| {
                bounds::depth(sql, &lex::lex(sql, guard.default_mode()).tokens).is_none()
            };
            for (name, shape) in shapes() {
                // The largest size the bounds accept (above it they refuse before parsing).
                let (mut low, mut high) = (1usize, 2_048usize);
                while low + 1 < high {
                    let mid = (low + high) / 2;
                    if accepted(&shape(mid)) {
                        low = mid;
                    } else {
                        high = mid;
                    }
                }
                let n = low;
                let sql = shape(n);
                let v = guard.check(&sql);
                assert!(n >= 30, "{dialect} {name}: only {n} levels accepted");
                assert!(v.allowed || !v.reasons.is_empty(), "{dialect} {name}");
                // The tree of the deepest accepted text is walked, printed and dropped here.
                if v.allowed
                    && let Ok(statements) = parse::parse(dialect, &sql)
                {
                    let mut walker = Walker::new(Context {
                        dialect,
                        catalog: None,
                        allow_sensitive: false,
                        current_database: None,
                    });
                    let _ = statements.visit(&mut walker);
                    assert!(!format!("{statements:?}").is_empty(), "{dialect} {name}");
                    assert!(
                        statements.iter().all(|s| !s.to_string().is_empty()),
                        "{dialect} {name}"
                    );
                    drop(statements);
                }
            }
        }
    });
}

#[test]
fn hostile_sizes_are_refused_on_a_small_stack() {
    on_small_stack(|| {
        let cases = [
            (
                "sum",
                format!("SELECT 1{}", "+1".repeat(200_000)),
                "too_deep",
            ),
            (
                "union",
                format!("SELECT 1{}", " UNION ALL SELECT 1".repeat(50_000)),
                "too_deep",
            ),
            (
                "parens",
                format!("SELECT {}1{}", "(".repeat(10_000), ")".repeat(10_000)),
                "too_deep",
            ),
            (
                "string",
                format!("SELECT '{}'", "x".repeat(10_000_000)),
                "too_long",
            ),
        ];
        for dialect in [Dialect::Postgres, Dialect::Mysql, Dialect::Sqlite] {
            for (name, sql, code) in &cases {
                let v = Guard::new(dialect).check(sql);
                assert!(
                    !v.allowed && v.has(code),
                    "{dialect} {name}: {:?}",
                    v.reasons
                );
                assert!(v.explanation().contains("simplify") || *code == "too_long");
            }
        }
    });
}
