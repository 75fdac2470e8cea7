//! The guard corpus per dialect: every destructive or escaping statement refused with the right reason, every
//! ordinary analytic statement allowed, and every gold query of the shared Spider and defog sets allowed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use steward_sql::{Dialect, Guard, StatementClass};

const ALL: [Dialect; 3] = [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql];

/// (SQL, expected reason code) refused in every dialect.
const REFUSED_EVERYWHERE: &[(&str, &str)] = &[
    ("SELECT 1; DROP TABLE x", "multiple_statements"),
    ("SELECT 1;\nDROP TABLE x;", "multiple_statements"),
    ("SELECT * FROM t; COMMIT", "multiple_statements"),
    ("COMMIT", "transaction_control"),
    ("ROLLBACK", "transaction_control"),
    ("BEGIN", "transaction_control"),
    (
        "SELECT 1 -- harmless?\n; DELETE FROM t",
        "multiple_statements",
    ),
    (
        "SELECT 1 /* ; */ ; /**/ DELETE FROM t",
        "multiple_statements",
    ),
    ("DELETE FROM orders", "not_read_only"),
    ("  dElEtE   FROM orders WHERE 1=1", "not_read_only"),
    ("INSERT INTO t VALUES (1)", "not_read_only"),
    ("UPDATE t SET a = 1", "not_read_only"),
    ("DROP TABLE t", "not_read_only"),
    ("CREATE TABLE t (a INT)", "not_read_only"),
    ("ALTER TABLE t ADD COLUMN b INT", "not_read_only"),
    ("SELEC * FROM t", "parse_error"),
    ("", "empty"),
];

#[test]
fn destructive_and_escaping_statements_are_refused_everywhere() {
    for dialect in ALL {
        let guard = Guard::new(dialect);
        for (sql, code) in REFUSED_EVERYWHERE {
            let v = guard.check(sql);
            assert!(!v.allowed, "{dialect}: allowed {sql:?}");
            assert!(
                v.has(code),
                "{dialect}: {sql:?} expected {code}, got {:?}",
                v.reasons
            );
        }
    }
}

#[test]
fn postgres_specific_refusals() {
    let guard = Guard::new(Dialect::Postgres);
    let cases = [
        (
            "WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d",
            "data_modifying_cte",
        ),
        (
            "WITH u AS (UPDATE t SET a = 1 RETURNING a) SELECT count(*) FROM u",
            "data_modifying_cte",
        ),
        (
            "WITH i AS (INSERT INTO t VALUES (1) RETURNING *) SELECT * FROM i",
            "data_modifying_cte",
        ),
        ("SELECT * INTO new_table FROM t", "select_into"),
        ("SELECT * FROM t FOR UPDATE", "locking_read"),
        ("SELECT * FROM t FOR SHARE", "locking_read"),
        (
            "SELECT * FROM t FOR NO KEY UPDATE SKIP LOCKED",
            "locking_read",
        ),
        ("COPY t TO '/tmp/x'", "copy"),
        ("COPY (SELECT 1) TO PROGRAM 'rm -rf /'", "copy"),
        ("SET statement_timeout = 0", "set"),
        (
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
            "set",
        ),
        (
            "SELECT set_config('default_transaction_read_only', 'off', false)",
            "forbidden_function",
        ),
        ("SELECT pg_sleep(100)", "forbidden_function"),
        ("SELECT PG_SLEEP(1)", "forbidden_function"),
        ("SELECT \"pg_sleep\"(1)", "forbidden_function"),
        (
            "SELECT pg_catalog.pg_read_file('/etc/passwd')",
            "forbidden_function",
        ),
        (
            "SELECT * FROM pg_read_file('/etc/passwd')",
            "forbidden_function",
        ),
        ("SELECT lo_export(1, '/tmp/x')", "forbidden_function"),
        (
            "SELECT * FROM dblink('host=evil', 'select 1') AS t(a int)",
            "forbidden_function",
        ),
        (
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity",
            "forbidden_function",
        ),
        ("SELECT nextval('orders_id_seq')", "forbidden_function"),
        (
            "SELECT query_to_xml('delete from t', true, true, '')",
            "forbidden_function",
        ),
        ("SELECT (SELECT pg_sleep(1))", "forbidden_function"),
        (
            "SELECT a FROM t WHERE a IN (SELECT pg_advisory_lock(1))",
            "forbidden_function",
        ),
        ("EXPLAIN ANALYZE SELECT * FROM t", "explain_analyze"),
        ("EXPLAIN (ANALYZE) SELECT * FROM t", "explain_analyze"),
        ("EXPLAIN DELETE FROM t", "not_read_only"),
        ("START TRANSACTION READ WRITE", "transaction_control"),
        ("END", "transaction_control"),
        ("VACUUM", "not_read_only"),
        ("GRANT ALL ON t TO public", "not_read_only"),
        ("LISTEN x", "not_read_only"),
        ("PREPARE p AS DELETE FROM t", "not_read_only"),
        ("CALL do_things()", "not_read_only"),
    ];
    for (sql, code) in cases {
        let v = guard.check(sql);
        assert!(!v.allowed, "allowed {sql:?}");
        assert!(v.has(code), "{sql:?} expected {code}, got {:?}", v.reasons);
    }
    let v = guard.check("WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d");
    assert_eq!(v.class, StatementClass::Write);
}

#[test]
fn mysql_specific_refusals() {
    let guard = Guard::new(Dialect::Mysql);
    let cases = [
        ("SELECT LOAD_FILE('/etc/passwd')", "forbidden_function"),
        ("SELECT SLEEP(10)", "forbidden_function"),
        (
            "SELECT BENCHMARK(1000000000, MD5('x'))",
            "forbidden_function",
        ),
        ("SELECT GET_LOCK('x', 10)", "forbidden_function"),
        ("SELECT 1 /*!50000 , SLEEP(10) */", "executable_comment"),
        ("SELECT * FROM t FOR UPDATE", "locking_read"),
        ("SELECT * FROM t LOCK IN SHARE MODE", "locking_read"),
        ("SET GLOBAL read_only = 0", "set"),
        ("LOCK TABLES t WRITE", "not_read_only"),
        ("REPLACE INTO t VALUES (1)", "not_read_only"),
        ("TRUNCATE TABLE t", "not_read_only"),
        (
            "LOAD DATA INFILE '/etc/passwd' INTO TABLE t",
            "not_read_only",
        ),
    ];
    for (sql, code) in cases {
        let v = guard.check(sql);
        assert!(!v.allowed, "allowed {sql:?}");
        assert!(v.has(code), "{sql:?} expected {code}, got {:?}", v.reasons);
    }
    for sql in [
        "SELECT * FROM t INTO OUTFILE '/tmp/x'",
        "SELECT * INTO OUTFILE '/tmp/x' FROM t",
        "SELECT * FROM t INTO DUMPFILE '/tmp/x'",
    ] {
        let v = guard.check(sql);
        assert!(!v.allowed, "allowed {sql:?}: {v:?}");
        assert!(v.has("select_into"), "{sql:?}: {:?}", v.reasons);
    }
}

#[test]
fn sqlite_specific_refusals() {
    let guard = Guard::new(Dialect::Sqlite);
    let cases = [
        ("ATTACH DATABASE '/tmp/evil.db' AS evil", "attach"),
        ("ATTACH '/tmp/evil.db' AS evil", "attach"),
        ("DETACH DATABASE evil", "attach"),
        ("PRAGMA query_only = OFF", "pragma"),
        ("PRAGMA writable_schema = 1", "pragma"),
        (
            "SELECT load_extension('/tmp/evil.so')",
            "forbidden_function",
        ),
        ("SELECT writefile('/tmp/x', 'data')", "forbidden_function"),
        ("SELECT readfile('/etc/passwd')", "forbidden_function"),
        ("VACUUM INTO '/tmp/copy.db'", "not_read_only"),
        ("REPLACE INTO t VALUES (1)", "not_read_only"),
        ("INSERT OR REPLACE INTO t VALUES (1)", "not_read_only"),
        ("WITH x AS (SELECT 1) DELETE FROM t", "not_read_only"),
    ];
    for (sql, code) in cases {
        let v = guard.check(sql);
        assert!(!v.allowed, "allowed {sql:?}");
        assert!(
            v.has(code) || v.has("data_modifying_cte"),
            "{sql:?} expected {code}, got {:?}",
            v.reasons
        );
    }
}

/// Ordinary analytic SQL, allowed in every dialect.
const ANALYTIC: &[&str] = &[
    "SELECT 1",
    "VALUES (1, 'a'), (2, 'b')",
    "SELECT name, SUM(total) AS spent FROM orders GROUP BY name HAVING SUM(total) > 100 ORDER BY spent DESC LIMIT 10",
    "SELECT id, total, SUM(total) OVER (PARTITION BY customer_id ORDER BY placed_at ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running FROM orders",
    "SELECT id, RANK() OVER (ORDER BY total DESC), LAG(total) OVER (ORDER BY id) FROM orders",
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 10) SELECT x FROM n",
    "WITH a AS (SELECT 1 AS v), b AS (SELECT v + 1 AS w FROM a) SELECT * FROM a JOIN b ON b.w = a.v + 1",
    "SELECT * FROM (SELECT customer_id, COUNT(*) AS n FROM orders GROUP BY customer_id) s WHERE n > (SELECT AVG(n) FROM (SELECT COUNT(*) AS n FROM orders GROUP BY customer_id) t)",
    "SELECT CASE WHEN total > 100 THEN 'big' WHEN total > 10 THEN 'medium' ELSE 'small' END AS size, COUNT(*) FROM orders GROUP BY 1",
    "SELECT CAST(total AS INTEGER), COALESCE(note, ''), NULLIF(a, 0) FROM orders",
    "SELECT a FROM t UNION SELECT b FROM u EXCEPT SELECT c FROM v",
    "SELECT a FROM t INTERSECT SELECT b FROM u",
    "SELECT EXISTS (SELECT 1 FROM orders WHERE customer_id = c.id) FROM customers c",
    "SELECT * FROM orders WHERE status IN ('PAID', 'SHIPPED') AND placed_at BETWEEN '2024-01-01' AND '2024-12-31'",
    "SELECT * FROM orders o LEFT JOIN customers c ON c.id = o.customer_id WHERE c.id IS NULL",
    "SELECT COUNT(DISTINCT customer_id) FROM orders",
    "SELECT name FROM customers WHERE name LIKE 'A%' ORDER BY name",
    "EXPLAIN SELECT * FROM orders",
    "SELECT \"select\", \"delete\" FROM \"update\"",
    "SELECT 'DROP TABLE x; DELETE FROM y' AS harmless_text",
    "SELECT 1 -- ; DELETE FROM t",
    "/* leading comment */ SELECT 1",
];

#[test]
fn ordinary_analytic_sql_is_allowed_everywhere() {
    for dialect in ALL {
        let guard = Guard::new(dialect);
        for sql in ANALYTIC {
            let sql = if dialect == Dialect::Mysql {
                sql.replace('"', "`")
            } else {
                (*sql).to_owned()
            };
            let v = guard.check(&sql);
            assert!(v.allowed, "{dialect}: refused {sql:?}: {:?}", v.reasons);
            assert_eq!(v.class, StatementClass::Read);
        }
    }
}

#[test]
fn dialect_specific_analytics_are_allowed() {
    let pg = Guard::new(Dialect::Postgres);
    for sql in [
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY total) FROM orders",
        "SELECT date_trunc('month', placed_at) AS m, SUM(total) FROM orders GROUP BY 1 ORDER BY 1",
        "SELECT placed_at::date, total::numeric(10,2) FROM orders",
        "SELECT EXTRACT(YEAR FROM placed_at), AGE(now(), placed_at) FROM orders",
        "SELECT * FROM orders WHERE placed_at >= CURRENT_DATE - INTERVAL '30 days'",
        "SELECT DISTINCT ON (customer_id) customer_id, total FROM orders ORDER BY customer_id, placed_at DESC",
        "SELECT array_agg(name ORDER BY name), string_agg(name, ', ') FROM customers",
        "SELECT * FROM generate_series(1, 10) AS g(n)",
        "SELECT name FROM customers WHERE name ILIKE '%ada%' ORDER BY name NULLS LAST",
        "SELECT COUNT(*) FILTER (WHERE total > 10) FROM orders",
        "SELECT data->>'sku', data->'dims' FROM products WHERE data ? 'sku'",
        "SELECT * FROM orders FETCH FIRST 5 ROWS ONLY",
        "SELECT to_char(placed_at, 'YYYY-MM') FROM orders",
    ] {
        let v = pg.check(sql);
        assert!(v.allowed, "postgres refused {sql:?}: {:?}", v.reasons);
    }
    let sqlite = Guard::new(Dialect::Sqlite);
    for sql in [
        "SELECT strftime('%Y-%m', placed_at), SUM(total) FROM orders GROUP BY 1",
        "SELECT date('now', '-30 days'), julianday('now') - julianday(placed_at) FROM orders",
        "SELECT group_concat(name, ', ') FROM customers",
        "SELECT name FROM customers WHERE name GLOB 'A*'",
        "SELECT IIF(total > 10, 'big', 'small') FROM orders",
        "EXPLAIN QUERY PLAN SELECT * FROM orders",
    ] {
        let v = sqlite.check(sql);
        assert!(v.allowed, "sqlite refused {sql:?}: {:?}", v.reasons);
    }
    let mysql = Guard::new(Dialect::Mysql);
    for sql in [
        "SELECT DATE_FORMAT(placed_at, '%Y-%m'), SUM(total) FROM orders GROUP BY 1",
        "SELECT `name`, GROUP_CONCAT(`sku` ORDER BY `sku` SEPARATOR ', ') FROM items GROUP BY `name`",
        "SELECT * FROM orders WHERE placed_at > NOW() - INTERVAL 30 DAY",
        "SELECT IFNULL(note, ''), IF(total > 10, 'big', 'small') FROM orders",
        "SELECT * FROM orders LIMIT 10, 20",
        "SELECT JSON_EXTRACT(data, '$.sku') FROM products",
    ] {
        let v = mysql.check(sql);
        assert!(v.allowed, "mysql refused {sql:?}: {:?}", v.reasons);
    }
}

#[test]
fn every_shared_gold_query_is_allowed() {
    let Some(data) = common::shared_data() else {
        return;
    };
    let spider: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("spider-slice/dev.json")).unwrap())
            .unwrap();
    let guard = Guard::new(Dialect::Sqlite);
    let mut checked = 0;
    for item in spider.as_array().unwrap() {
        let sql = item["query"].as_str().unwrap();
        let v = guard.check(sql);
        assert!(v.allowed, "spider gold refused: {sql}\n{:?}", v.reasons);
        checked += 1;
    }
    assert_eq!(checked, 259);
    let guard = Guard::new(Dialect::Postgres);
    let mut defog = 0;
    for (_, _, sql) in common::defog_gold(&data) {
        let v = guard.check(&sql);
        assert!(v.allowed, "defog gold refused: {sql}\n{:?}", v.reasons);
        defog += 1;
    }
    assert!(defog >= 250, "{defog}");
}
