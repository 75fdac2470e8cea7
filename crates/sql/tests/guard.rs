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

/// Syntax the engines accept that the guard used to refuse (each also runs on its engine in
/// `testdata/guard/legit.sql`).
#[test]
fn syntax_the_engines_accept_is_allowed() {
    let cases: &[(Dialect, &str)] = &[
        (Dialect::Mysql, "SELECT 7 MOD 3"),
        (Dialect::Mysql, "SELECT hours MOD 2 FROM tasks"),
        (
            Dialect::Mysql,
            "SELECT INTERVAL '1:30' HOUR_MINUTE + TIMESTAMP '2024-01-01 00:00:00'",
        ),
        (
            Dialect::Mysql,
            "SELECT DATE_ADD(created, INTERVAL '1:30' HOUR_MINUTE) FROM projects",
        ),
        (
            Dialect::Mysql,
            "SELECT DATE_SUB(created, INTERVAL '1-2' YEAR_MONTH), created + INTERVAL 1 DAY FROM projects",
        ),
        (
            Dialect::Mysql,
            "SELECT EXTRACT(YEAR_MONTH FROM created) FROM projects",
        ),
        (
            Dialect::Mysql,
            "SELECT CAST(name AS CHAR(10) CHARACTER SET utf8mb4) FROM projects",
        ),
        (
            Dialect::Mysql,
            "SELECT CAST(name AS CHAR CHARSET latin1) FROM projects",
        ),
        (
            Dialect::Mysql,
            "SELECT CAST(hours AS DECIMAL(10, 2)) FROM tasks",
        ),
        (
            Dialect::Mysql,
            "SELECT trim FROM labels WHERE trim <> '' ORDER BY trim",
        ),
        (Dialect::Mysql, "SELECT TRIM(name), position FROM projects"),
        (Dialect::Mysql, "SELECT LAST_INSERT_ID()"),
        (
            Dialect::Sqlite,
            "SELECT name FROM projects WHERE status IS NOT 'done'",
        ),
        (
            Dialect::Sqlite,
            "SELECT name FROM projects WHERE status IS 'done' OR status IS NOT NULL",
        ),
        (Dialect::Sqlite, "SELECT trim FROM labels"),
        (
            Dialect::Sqlite,
            "SELECT length(randomblob(16)), zeroblob(1000)",
        ),
        (Dialect::Postgres, "TABLE projects"),
        (
            Dialect::Postgres,
            "TABLE public.projects ORDER BY 1 LIMIT 5",
        ),
        (Dialect::Postgres, "SELECT trim FROM labels"),
        (Dialect::Postgres, "SELECT 1 /* a /* nested */ comment */"),
        (
            Dialect::Postgres,
            "SELECT $$it's; -- not /* code$$, E'a\\'b', U&'\\0041'",
        ),
        (
            Dialect::Postgres,
            "SELECT 'a;b' AS \"x;y\", 1 -- ; DELETE\n",
        ),
        (
            Dialect::Mysql,
            "SELECT 'a\\nb' LIKE '%\\_%', 'x' # comment ; DELETE\n",
        ),
        (Dialect::Mysql, "SELECT '/*! not code */', 1--1"),
        (
            Dialect::Mysql,
            "SELECT name FROM projects WHERE name = \"Apollo\"",
        ),
    ];
    for (dialect, sql) in cases {
        let v = Guard::new(*dialect).check(sql);
        assert!(v.allowed, "{dialect}: refused {sql:?}: {:?}", v.reasons);
    }
}

#[test]
fn unicode_escaped_names_are_checked_decoded() {
    let guard = Guard::new(Dialect::Postgres);
    for sql in [
        r#"SELECT U&"pg\005fsleep"(3)"#,
        r#"SELECT u&"PG\005FSLEEP"(3)"#,
        r#"SELECT U&"pg!005fsleep" UESCAPE '!' (3)"#,
        r#"SELECT U&"pg\+00005fsleep"(3)"#,
        r#"SELECT * FROM pg_catalog.U&"pg\005fsleep"(3)"#,
    ] {
        let v = guard.check(sql);
        assert!(v.has("forbidden_function"), "{sql}: {:?}", v.reasons);
        assert!(
            v.explanation().contains("`pg_sleep`"),
            "{sql}: {}",
            v.explanation()
        );
    }
    let v = guard.check(r#"SELECT * FROM U&"pg\005fauthid""#);
    assert!(v.has("sensitive_catalog"), "{:?}", v.reasons);
}

#[test]
fn function_families_are_refused() {
    let cases: &[(Dialect, &str)] = &[
        (
            Dialect::Postgres,
            "SELECT * FROM ts_stat('SELECT to_tsvector(x) FROM t')",
        ),
        (
            Dialect::Postgres,
            "SELECT ts_rewrite('a'::tsquery, 'SELECT q, s FROM aliases')",
        ),
        (
            Dialect::Postgres,
            "SELECT query_to_xml_and_xmlschema('SELECT 1', true, true, '')",
        ),
        (
            Dialect::Postgres,
            "SELECT cursor_to_xml('c', 1, true, true, '')",
        ),
        (Dialect::Postgres, "SELECT * FROM crosstab('SELECT 1')"),
        (Dialect::Postgres, "SELECT dblink_connect('host=evil')"),
        (Dialect::Postgres, "SELECT pg_stat_reset_shared('bgwriter')"),
        (
            Dialect::Postgres,
            "SELECT pg_log_backend_memory_contexts(1)",
        ),
        (Dialect::Postgres, "SELECT pg_cancel_backend(1)"),
        (Dialect::Postgres, "SELECT pg_reload_conf()"),
        (
            Dialect::Postgres,
            "SELECT pg_create_logical_replication_slot('s', 'test_decoding')",
        ),
        (
            Dialect::Postgres,
            "SELECT * FROM pg_logical_slot_get_changes('s', NULL, NULL)",
        ),
        (Dialect::Postgres, "SELECT pg_switch_wal()"),
        (Dialect::Postgres, "SELECT pg_wal_replay_pause()"),
        (Dialect::Postgres, "SELECT lo_get(1)"),
        (Dialect::Postgres, "SELECT pg_ls_dir('.')"),
        (Dialect::Postgres, "SELECT pg_notify('c', 'x')"),
        (Dialect::Postgres, "SELECT txid_current()"),
        (Dialect::Mysql, "SELECT MASTER_POS_WAIT('log', 4, 3)"),
        (Dialect::Mysql, "SELECT RELEASE_ALL_LOCKS()"),
        (Dialect::Mysql, "SELECT LAST_INSERT_ID(5)"),
        (Dialect::Mysql, "SELECT sys_exec('id')"),
        (Dialect::Mysql, "SELECT `sleep`(3)"),
        (Dialect::Mysql, "SELECT SLEEP /* x */ (3)"),
        (Dialect::Sqlite, "SELECT edit('x')"),
        (Dialect::Sqlite, "SELECT fts3_tokenizer('simple')"),
        (Dialect::Sqlite, "SELECT randomblob(1000000000)"),
        (Dialect::Sqlite, "SELECT zeroblob(1000 * 1000 * 1000)"),
        (Dialect::Sqlite, "SELECT * FROM fsdir('/')"),
    ];
    for (dialect, sql) in cases {
        let v = Guard::new(*dialect).check(sql);
        assert!(
            v.has("forbidden_function"),
            "{dialect}: {sql:?}: {:?}",
            v.reasons
        );
    }
    let v = Guard::new(Dialect::Mysql).check("SELECT @v := 1");
    assert!(v.has("variable_assignment"), "{:?}", v.reasons);
}

#[test]
fn sensitive_catalogs_are_refused_unless_allowed() {
    let cases: &[(Dialect, &str)] = &[
        (Dialect::Postgres, "SELECT * FROM pg_authid"),
        (
            Dialect::Postgres,
            "SELECT usename, passwd FROM PG_CATALOG.PG_SHADOW",
        ),
        (Dialect::Postgres, "SELECT * FROM \"pg_user_mappings\""),
        (Dialect::Postgres, "SELECT * FROM pg_hba_file_rules"),
        (Dialect::Postgres, "SELECT * FROM pg_ident_file_mappings"),
        (Dialect::Postgres, "SELECT * FROM pg_file_settings"),
        (Dialect::Postgres, "SELECT query FROM pg_stat_activity"),
        (Dialect::Postgres, "SELECT * FROM pg_largeobject"),
        (Dialect::Postgres, "SELECT * FROM pg_statistic"),
        (Dialect::Postgres, "SELECT * FROM pg_stat_statements"),
        (
            Dialect::Postgres,
            "SELECT * FROM information_schema.user_mapping_options",
        ),
        (Dialect::Postgres, "TABLE pg_authid"),
        (Dialect::Postgres, "SELECT 1 UNION TABLE pg_shadow"),
        (
            Dialect::Postgres,
            "SELECT * FROM (SELECT * FROM pg_authid) a",
        ),
        (Dialect::Mysql, "SELECT * FROM mysql.user"),
        (Dialect::Mysql, "SELECT * FROM `mysql`.`global_priv`"),
        (
            Dialect::Mysql,
            "SELECT * FROM information_schema.PROCESSLIST",
        ),
        (
            Dialect::Mysql,
            "SELECT * FROM INFORMATION_SCHEMA.processlist",
        ),
        (
            Dialect::Mysql,
            "SELECT * FROM performance_schema.events_statements_history",
        ),
        (Dialect::Mysql, "SELECT * FROM sys.session"),
        (Dialect::Sqlite, "SELECT * FROM sqlite_dbpage"),
    ];
    for (dialect, sql) in cases {
        let v = Guard::new(*dialect).check(sql);
        assert!(!v.allowed, "{dialect}: allowed {sql:?}");
        assert!(
            v.has("sensitive_catalog"),
            "{dialect}: {sql:?}: {:?}",
            v.reasons
        );
        let open = Guard::new(*dialect)
            .allow_sensitive_catalogs(true)
            .check(sql);
        assert!(
            !open.has("sensitive_catalog"),
            "{dialect}: {sql:?}: {:?}",
            open.reasons
        );
    }
    let open = Guard::new(Dialect::Postgres).allow_sensitive_catalogs(true);
    assert!(
        open.check("SELECT * FROM pg_stat_get_activity(NULL)")
            .allowed
    );
    assert!(
        !Guard::new(Dialect::Postgres)
            .check("SELECT * FROM pg_stat_get_activity(NULL)")
            .allowed
    );
    // Ordinary catalogs stay readable.
    for sql in [
        "SELECT relname FROM pg_class",
        "SELECT * FROM information_schema.columns",
        "SELECT rolname FROM pg_roles",
    ] {
        assert!(Guard::new(Dialect::Postgres).check(sql).allowed, "{sql}");
    }
    assert!(
        Guard::new(Dialect::Mysql)
            .check("SELECT * FROM information_schema.TABLES")
            .allowed
    );
    assert!(
        Guard::new(Dialect::Mysql)
            .check("SELECT * FROM users")
            .allowed
    );
}

#[test]
fn text_that_reads_differently_under_unknown_settings_is_refused_offline() {
    use steward_sql::ServerSettings;
    let my = Guard::new(Dialect::Mysql);
    let v = my.check(r"SELECT 'a\'b'");
    assert!(v.has("ambiguous_text"), "{:?}", v.reasons);
    assert!(v.explanation().contains("''"), "{}", v.explanation());
    // The same text on a server whose settings are known.
    let escapes = Guard::new(Dialect::Mysql)
        .with_settings(ServerSettings::mysql("STRICT_TRANS_TABLES", true));
    assert!(escapes.check(r"SELECT 'a\'b'").allowed);
    let literal = Guard::new(Dialect::Mysql)
        .with_settings(ServerSettings::mysql("NO_BACKSLASH_ESCAPES", true));
    assert!(!literal.check(r"SELECT 'a\'b'").allowed);
    assert!(literal.check(r"SELECT 'C:\'").allowed);
    // A backslash that does not move a string's end is fine.
    assert!(my.check(r"SELECT 'a\nb' LIKE '%\_%'").allowed);
    // PostgreSQL: standard_conforming_strings.
    let pg = Guard::new(Dialect::Postgres);
    let v = pg.check(r"SELECT 'C:\'");
    assert!(v.has("ambiguous_text"), "{:?}", v.reasons);
    assert!(v.explanation().contains("E'"), "{}", v.explanation());
    assert!(pg.check(r"SELECT 'C:\path', E'a\'b'").allowed);
    let on = Guard::new(Dialect::Postgres).with_settings(ServerSettings::postgres(true));
    assert!(on.check(r"SELECT 'C:\'").allowed);
    let off = Guard::new(Dialect::Postgres).with_settings(ServerSettings::postgres(false));
    assert!(
        off.check(r"SELECT '\''; DELETE FROM t; --'")
            .has("multiple_statements")
    );
    assert!(
        on.check(r"SELECT '\'; DELETE FROM t; --'")
            .has("multiple_statements")
    );
    // ANSI_QUOTES unknown: "…" is checked both as a string and as a name.
    for sql in [r#"SELECT "sleep"(3)"#, r#"SELECT * FROM "mysql"."user""#] {
        let v = my.check(sql);
        assert!(!v.allowed, "allowed {sql}");
    }
    let ansi = Guard::new(Dialect::Mysql).with_settings(ServerSettings::mysql("ANSI_QUOTES", true));
    assert!(
        ansi.check(r#"SELECT * FROM "mysql"."user""#)
            .has("sensitive_catalog")
    );
    assert!(my.check(r#"SELECT name FROM t WHERE name = "Bob""#).allowed);
}

#[test]
fn executable_comments_hints_and_explain_analyse_are_refused() {
    let my = Guard::new(Dialect::Mysql);
    for (sql, code) in [
        ("SELECT 1 /*!50000 UNION SELECT 2 */", "executable_comment"),
        ("SELECT 1 /*M!100000 , SLEEP(3) */", "executable_comment"),
        ("SELECT /*+ SET_VAR(sql_mode = '') */ 1", "optimizer_hint"),
        ("SELECT 1 /*!", "executable_comment"),
    ] {
        let v = my.check(sql);
        assert!(!v.allowed && v.has(code), "{sql}: {:?}", v.reasons);
    }
    let pg = Guard::new(Dialect::Postgres);
    for sql in [
        "EXPLAIN (ANALYSE) SELECT 1",
        "EXPLAIN (ANALYZE TRUE, VERBOSE) SELECT 1",
        "EXPLAIN ANALYSE SELECT 1",
        "EXPLAIN VERBOSE ANALYZE SELECT 1",
    ] {
        let v = pg.check(sql);
        assert!(v.has("explain_analyze"), "{sql}: {:?}", v.reasons);
    }
    assert!(pg.check("EXPLAIN (VERBOSE, COSTS OFF) SELECT 1").allowed);
}

#[test]
fn hostile_sizes_get_a_clear_refusal_on_a_small_stack() {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let cases = [
                (format!("SELECT 1{}", "+1".repeat(200_000)), "too_deep"),
                (
                    format!("SELECT 1{}", " UNION ALL SELECT 1".repeat(50_000)),
                    "too_deep",
                ),
                (
                    format!("SELECT {}1{}", "(".repeat(10_000), ")".repeat(10_000)),
                    "too_deep",
                ),
                (format!("SELECT '{}'", "x".repeat(10_000_000)), "too_long"),
            ];
            for dialect in ALL {
                for (sql, code) in &cases {
                    let v = Guard::new(dialect).check(sql);
                    assert!(!v.allowed && v.has(code), "{dialect}: {:?}", v.reasons);
                }
            }
        })
        .unwrap()
        .join()
        .unwrap();
}
