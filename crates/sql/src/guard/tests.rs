//! The guard's unit tests: classes, reasons, allowlists.

use std::collections::BTreeMap;

use super::*;

fn check(dialect: Dialect, sql: &str) -> Verdict {
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
