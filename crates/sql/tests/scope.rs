//! Row filters, column limits and masks on free SQL, judged by effect on SQLite, PostgreSQL (with
//! `standard_conforming_strings` on and off) and MariaDB: a two-sided corpus by class.
//!
//! - **Attacks**: every query a principal sends is run through `read_as` (the path every surface takes) and
//!   whatever comes back — rows or the error — must hold no value planted in another principal's rows, in a
//!   forbidden column or in a masked column's original.
//! - **Legitimate reads** with odd quoting, backslashes, `TABLE`, set operations, CTEs and window functions must
//!   return exactly the rows the engine returns for the same query filtered by hand.
//! - **Principal values** from a hostile alphabet select exactly the rows whose value equals them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};
use steward_core::Principal;
use steward_sql::{
    Access, AccessFn, Database, Dialect, Guard, GuardPolicy, Mask, Param, Scope, SqlErrorKind,
    cell_text, read_as,
};

const SETUP: &str = "
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(100), email VARCHAR(100), city VARCHAR(100), phone VARCHAR(40));
CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT, owner VARCHAR(200), total INT, note VARCHAR(200));
CREATE TABLE products (id INT PRIMARY KEY, name VARCHAR(100));
INSERT INTO customers VALUES (1, 'Ada', 'ada@example.com', 'Paris', '+33 100'),
  (2, 'CanaryCy', 'canary-cy@leak.test', 'CanaryCity', '+44 CANARYPHONE'),
  (3, 'Bo', 'bo-canary@leak.test', 'Rome', '+39 300');
INSERT INTO orders VALUES (1, 1, 'a', 10, 'mine-1'), (2, 1, 'a', 20, 'mine-2'),
  (3, 2, 'c', 30, 'CANARY-ORDER-3'), (4, 3, 'b', 40, 'CANARY-ORDER-4'), (5, 2, 'c', 50, 'CANARY-ORDER-5');
INSERT INTO products VALUES (1, 'CanaryProduct');
CREATE VIEW all_orders AS SELECT * FROM orders;
CREATE VIEW customer_directory AS SELECT id, name, email, phone FROM customers;
CREATE VIEW orders_again AS SELECT * FROM all_orders;
CREATE VIEW product_names AS SELECT id, name FROM products;
";

/// Owners planted in orders 100…: each hostile value must select exactly its own row.
const HOSTILE_OWNERS: &[&str] = &[
    "x\\' OR 1=1 --",
    "x' OR '1'='1",
    "\\",
    "'",
    "\"",
    "a\\\\'b",
    "-- ",
    "/* */",
    "$$ OR true $$",
    "é ☃ 𝄞",
    "'; DELETE FROM orders; --",
    "`x`",
    "#",
    "?",
    "$1",
];

/// What another principal's rows, a forbidden column or a masked original hold: never in any output.
const CANARIES: &[&str] = &["canary", "leak.test", "example.com", "+33", "+44", "+39"];

struct Engine {
    name: &'static str,
    db: Database,
}

async fn engines() -> Vec<Engine> {
    let mut out = vec![Engine {
        name: "sqlite",
        db: common::scratch_sqlite(SETUP).await,
    }];
    match common::fresh(common::PG_ADMIN, SETUP, false).await {
        Ok(url) => out.push(Engine {
            name: "postgres",
            db: Database::connect(&url).await.unwrap(),
        }),
        Err(e) => common::skip(&format!("PostgreSQL at 127.0.0.1:5432 is not usable: {e}")),
    }
    if let Ok(url) = common::fresh(common::PG_ADMIN, SETUP, false).await {
        // The same tables in a database whose strings take backslash escapes.
        let name = url.rsplit('/').next().unwrap().to_owned();
        let admin = Database::connect(common::PG_ADMIN).await.unwrap();
        admin
            .execute_script(&format!(
                "ALTER DATABASE {name} SET standard_conforming_strings = off"
            ))
            .await
            .unwrap();
        admin.close().await;
        out.push(Engine {
            name: "postgres_scs_off",
            db: Database::connect(&url).await.unwrap(),
        });
    }
    match common::fresh(common::MARIA_ADMIN, SETUP, true).await {
        Ok(url) => out.push(Engine {
            name: "mariadb",
            db: Database::connect(&url).await.unwrap(),
        }),
        Err(e) => common::skip(&format!("MariaDB at 127.0.0.1:3306 is not usable: {e}")),
    }
    for engine in &out {
        if engine.db.dialect() == Dialect::Postgres {
            // Tables of the same names in another schema, which no role lists.
            engine
                .db
                .execute_script(
                    "CREATE SCHEMA other; \
                     CREATE TABLE other.orders AS SELECT * FROM public.orders; \
                     CREATE TABLE other.customers AS SELECT * FROM public.customers; \
                     CREATE SCHEMA s; \
                     CREATE VIEW s.v_safe AS SELECT * FROM public.orders; \
                     CREATE VIEW public.v_safe AS SELECT id, name FROM products; \
                     CREATE VIEW \"x.v_safe\" AS SELECT * FROM orders; \
                     CREATE FUNCTION f_ord() RETURNS SETOF orders LANGUAGE sql AS $$ SELECT * FROM orders $$; \
                     CREATE VIEW v_fn AS SELECT * FROM f_ord(); \
                     CREATE VIEW v_xml AS SELECT query_to_xml('select note from orders', true, false, '') AS x",
                )
                .await
                .unwrap();
        }
        if engine.db.dialect() == Dialect::Mysql {
            engine
                .db
                .execute_script(
                    "CREATE VIEW v_safe AS SELECT id, name FROM products; \
                     CREATE VIEW `x.v_safe` AS SELECT * FROM orders",
                )
                .await
                .unwrap();
        }
        if engine.db.dialect() == Dialect::Sqlite {
            engine
                .db
                .execute_script(
                    "CREATE VIEW v_safe AS SELECT id, name FROM products; \
                     CREATE VIEW [x.v_safe] AS SELECT * FROM orders; \
                     CREATE VIRTUAL TABLE ft USING fts5(note, content='orders', content_rowid='id')",
                )
                .await
                .unwrap();
        }
        let mut tx = engine.db.begin_write().await.unwrap();
        for (i, owner) in HOSTILE_OWNERS.iter().enumerate() {
            let p = engine.db.dialect().placeholder(1);
            tx.execute_exact(
                &format!("INSERT INTO orders (id, customer_id, owner, total, note) VALUES ({}, 99, {p}, 1, 'h')", 100 + i),
                &[Param::Text((*owner).to_owned())],
            )
            .await
            .unwrap();
        }
        tx.commit().await.unwrap();
    }
    out
}

/// The roles of the corpus.
#[derive(Clone, Copy, Debug)]
enum Role {
    /// The `support` of docs/roles.md: orders and three columns of customers, the principal's rows only.
    Support,
    /// Row filters alone (every table and column otherwise).
    Rows,
    /// Every row, customers' e-mail hashed and phone partly masked.
    Masked,
    /// Orders filtered by a subquery, a filter the planner finds costlier than most conditions.
    Subquery,
}

fn access(role: Role, attributes: BTreeMap<String, Json>) -> AccessFn {
    AccessFn::new(move |_principal: &Principal, dialect: Dialect| {
        let mut scope = Scope::new();
        let mut read = GuardPolicy::default();
        match role {
            Role::Support | Role::Rows => {
                scope.filter(dialect, "orders", "customer_id = {principal.customer_id}", &attributes)?;
                scope.filter(dialect, "customers", "id = {principal.customer_id}", &attributes)?;
                if matches!(role, Role::Support) {
                    read.tables = Some(vec!["orders".into(), "customers".into()]);
                    let columns = vec!["id".to_owned(), "name".into(), "city".into()];
                    read.columns = Some([("customers".to_owned(), columns.clone())].into());
                    scope.columns("customers", columns);
                }
            }
            Role::Subquery => scope.filter(
                dialect,
                "orders",
                "customer_id = {principal.customer_id} OR customer_id IN (SELECT c.id FROM customers c WHERE c.name = 'Nobody')",
                &attributes,
            )?,
            Role::Masked => {
                scope.mask("customers", "email", Mask::Hash);
                scope.mask("customers", "phone", Mask::Partial);
            }
        }
        Ok(Some(Access {
            read,
            scope,
            write: None,
            max_rows: None,
        }))
    })
}

fn ada() -> BTreeMap<String, Json> {
    [("customer_id".to_owned(), json!(1))].into()
}

async fn run_as(engine: &Engine, access: &AccessFn, sql: &str) -> Result<Vec<Vec<String>>, String> {
    let guard = engine.db.guard().await.unwrap();
    let principal = Principal {
        name: "ada".into(),
        role: Some("r".into()),
        attributes: BTreeMap::new(),
    };
    match read_as(
        &engine.db,
        &guard,
        Some(access),
        &principal,
        sql,
        &[],
        &common::limits(1000),
    )
    .await
    {
        Ok((result, _)) => {
            let mut rows = vec![result.columns.iter().map(|c| c.name.clone()).collect()];
            rows.extend(
                result
                    .rows
                    .iter()
                    .map(|r| r.iter().map(cell_text).collect()),
            );
            Ok(rows)
        }
        Err(e) if e.is(SqlErrorKind::Refused) => Err(format!("refused: {}", e.message())),
        Err(e) => Err(format!("error: {e}")),
    }
}

async fn reference(engine: &Engine, sql: &str) -> Vec<Vec<String>> {
    let result = engine
        .db
        .query_read_only(sql, &[], &common::limits(1000))
        .await
        .unwrap_or_else(|e| panic!("{}: reference {sql}: {e}", engine.name));
    let mut rows = vec![
        result
            .columns
            .iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>(),
    ];
    rows.extend(
        result
            .rows
            .iter()
            .map(|r| r.iter().map(cell_text).collect()),
    );
    rows
}

/// The canaries a role must never see: `Rows` may read its own e-mail and phone, `Masked` every row (but
/// never an original e-mail or phone).
fn leaks(role: Role, output: &str) -> Option<&'static str> {
    let lower = output.to_lowercase();
    let canaries: &[&'static str] = match role {
        Role::Support => CANARIES,
        Role::Rows | Role::Subquery => &["canary", "leak.test", "+44", "+39"],
        Role::Masked => &[
            "leak.test",
            "example.com",
            "+33",
            "+44",
            "+39",
            "canaryphone",
        ],
    };
    canaries
        .iter()
        .copied()
        .find(|c| lower.contains(&c.to_lowercase()))
}

fn on(engine: &str, engines: &str) -> bool {
    engines == "all"
        || engines
            .split(',')
            .any(|e| e == engine || (e == "postgres" && engine == "postgres_scs_off"))
}

/// Attacks: (engines, role, SQL). Whatever comes back holds no canary.
const ATTACKS: &[(&str, Role, &str)] = &[
    // 1. Text that a re-printed query turned into code.
    (
        "postgres",
        Role::Support,
        "SELECT 'n' AS n, 'x\\''' || ' UNION ALL SELECT name, email FROM customers -- ' AS a FROM orders",
    ),
    (
        "postgres",
        Role::Support,
        "SELECT E'x\\'' || ' UNION ALL SELECT name, email FROM customers -- ' AS a FROM orders",
    ),
    (
        "postgres",
        Role::Support,
        "SELECT $$x\\'$$ || ' UNION ALL SELECT name, email FROM customers -- ' AS a FROM orders",
    ),
    (
        "postgres",
        Role::Support,
        "SELECT E'x\\\\\\'' || ' UNION ALL SELECT name, email FROM customers -- ' AS a FROM orders",
    ),
    (
        "postgres",
        Role::Support,
        "SELECT $q$ ' $q$ AS a, id FROM orders WHERE note <> ' UNION ALL SELECT id, email FROM customers -- '",
    ),
    (
        "postgres",
        Role::Support,
        "SELECT \"a\\\"\"\" FROM (SELECT 1 AS \"a\\\"\") s, orders",
    ),
    (
        "postgres",
        Role::Support,
        "SELECT U&'\\0027' || ' UNION ALL SELECT name, email FROM customers -- ' AS a FROM orders",
    ),
    (
        "mariadb",
        Role::Support,
        "SELECT 'x\\\\' AS a, ' UNION ALL SELECT name, email FROM customers -- ' AS b FROM orders",
    ),
    (
        "mariadb",
        Role::Support,
        "SELECT \"x\\\\\" AS a, ' UNION ALL SELECT name, email FROM customers -- ' AS b FROM orders",
    ),
    (
        "mariadb",
        Role::Support,
        "SELECT 'x\\'' AS a, ' UNION ALL SELECT name, email FROM customers # ' AS b FROM orders",
    ),
    (
        "mariadb",
        Role::Support,
        "SELECT `a\\``` FROM (SELECT 1 AS `a\\``) s, orders",
    ),
    (
        "mariadb",
        Role::Support,
        "SELECT 1 AS a FROM orders /* ' */ UNION ALL SELECT email FROM customers",
    ),
    (
        "sqlite",
        Role::Support,
        "SELECT 'x''' || ' UNION ALL SELECT name, email FROM customers -- ' AS a FROM orders",
    ),
    (
        "sqlite",
        Role::Support,
        "SELECT [a'] FROM (SELECT 1 AS [a']) s, orders",
    ),
    (
        "all",
        Role::Support,
        "SELECT note /* ' UNION ALL SELECT note FROM orders -- */ FROM orders",
    ),
    (
        "all",
        Role::Support,
        "SELECT note FROM orders -- ' UNION ALL SELECT note FROM orders",
    ),
    (
        "all",
        Role::Rows,
        "SELECT note FROM orders WHERE note <> 'x'' FROM orders' UNION ALL SELECT note FROM orders WHERE 'a' = ' FROM orders'",
    ),
    // 3. Every relation position.
    (
        "postgres",
        Role::Rows,
        "SELECT * FROM orders WHERE false UNION ALL TABLE orders",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT id, customer_id, owner, total, note FROM orders UNION ALL TABLE orders",
    ),
    ("postgres", Role::Rows, "TABLE orders"),
    ("postgres", Role::Rows, "(TABLE public.orders) ORDER BY 1"),
    ("postgres", Role::Rows, "SELECT * FROM (TABLE orders) t"),
    (
        "postgres",
        Role::Rows,
        "WITH x AS (TABLE orders) SELECT * FROM x",
    ),
    ("postgres", Role::Rows, "TABLE ONLY orders"),
    (
        "postgres",
        Role::Rows,
        "SELECT id, email FROM ONLY (customers) WHERE id <= 3",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT count(*), max(note) FROM ONLY/**/(orders)",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT c.email FROM orders o JOIN ONLY (customers) c ON true",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT c.email FROM orders o JOIN ONLY ((customers)) c ON true",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT $1 AS shifted, c.* FROM customers c LEFT JOIN orders o ON false",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT $2 AS shifted, c.* FROM customers c LEFT JOIN orders o ON false",
    ),
    (
        "sqlite",
        Role::Rows,
        "SELECT (SELECT ?) AS shifted, c.* FROM customers c LEFT JOIN orders o ON 0",
    ),
    (
        "sqlite",
        Role::Rows,
        "SELECT ?1 AS shifted, c.* FROM customers c LEFT JOIN orders o ON 0",
    ),
    (
        "sqlite",
        Role::Rows,
        "SELECT :a AS shifted, c.* FROM customers c",
    ),
    (
        "mariadb",
        Role::Rows,
        "SELECT (SELECT ?) AS shifted, c.* FROM customers c LEFT JOIN orders o ON 0",
    ),
    ("postgres", Role::Rows, "SELECT * FROM ONLY orders"),
    ("postgres", Role::Rows, "SELECT * FROM orders *"),
    (
        "postgres",
        Role::Rows,
        "SELECT x.* FROM customers c, LATERAL (SELECT * FROM orders o WHERE o.customer_id <> c.id) x",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT * FROM \"public\".\"orders\"",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT * FROM public . /* x */ orders",
    ),
    ("postgres", Role::Rows, "SELECT * FROM ORDERS"),
    ("postgres", Role::Rows, "SELECT * FROM U&\"\\006frders\""),
    (
        "postgres",
        Role::Rows,
        "SELECT (SELECT string_agg(note, ',') FROM orders) AS n",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT * FROM rows from (generate_series(1,1)) g, orders",
    ),
    ("all", Role::Rows, "SELECT * FROM orders"),
    ("all", Role::Rows, "SELECT * FROM customers"),
    (
        "all",
        Role::Rows,
        "SELECT o.note FROM orders o JOIN orders p ON p.id <> o.id",
    ),
    (
        "all",
        Role::Rows,
        "SELECT note FROM orders UNION SELECT note FROM orders",
    ),
    (
        "all",
        Role::Rows,
        "SELECT (SELECT max(note) FROM orders) AS n",
    ),
    (
        "all",
        Role::Rows,
        "SELECT note FROM orders WHERE id IN (SELECT id FROM orders)",
    ),
    (
        "all",
        Role::Rows,
        "SELECT 1 AS a WHERE EXISTS (SELECT 1 FROM orders WHERE note LIKE 'CANARY%')",
    ),
    (
        "all",
        Role::Rows,
        "WITH RECURSIVE r(n) AS (SELECT note FROM orders UNION SELECT n FROM r) SELECT * FROM r",
    ),
    (
        "all",
        Role::Rows,
        "SELECT * FROM (SELECT * FROM (SELECT * FROM orders) a) b",
    ),
    (
        "all",
        Role::Rows,
        "SELECT count(*) OVER (), note FROM orders",
    ),
    (
        "all",
        Role::Rows,
        "SELECT * FROM customers c JOIN orders o ON 1 = 1",
    ),
    ("all", Role::Rows, "SELECT * FROM orders AS customers"),
    ("all", Role::Rows, "SELECT * FROM customers AS orders"),
    (
        "all",
        Role::Rows,
        "WITH orders AS (SELECT * FROM customers) SELECT * FROM orders",
    ),
    (
        "all",
        Role::Rows,
        "WITH c AS (SELECT * FROM orders) SELECT * FROM c AS orders",
    ),
    ("sqlite", Role::Rows, "SELECT * FROM main.orders"),
    (
        "sqlite",
        Role::Rows,
        "SELECT * FROM \"orders\" INDEXED BY sqlite_autoindex_orders_1",
    ),
    ("sqlite", Role::Rows, "SELECT * FROM [orders]"),
    ("sqlite", Role::Rows, "SELECT * FROM `orders`"),
    ("mariadb", Role::Rows, "SELECT * FROM `orders`"),
    (
        "mariadb",
        Role::Rows,
        "SELECT * FROM orders USE INDEX (PRIMARY)",
    ),
    ("mariadb", Role::Rows, "SELECT * FROM orders PARTITION (p0)"),
    (
        "mariadb",
        Role::Rows,
        "SELECT * FROM orders FOR SYSTEM_TIME ALL",
    ),
    ("mariadb", Role::Rows, "SELECT * FROM (orders)"),
    (
        "mariadb",
        Role::Rows,
        "SELECT * FROM orders o STRAIGHT_JOIN customers c ON 1 = 1",
    ),
    ("mariadb", Role::Rows, "TABLE orders"),
    // Errors raised on rows the filter hides (a predicate evaluated before the filter).
    (
        "all",
        Role::Subquery,
        "SELECT id FROM orders WHERE CAST(note AS int) = 1",
    ),
    (
        "postgres",
        Role::Subquery,
        "SELECT id FROM orders WHERE note::json IS NOT NULL",
    ),
    (
        "sqlite",
        Role::Subquery,
        "SELECT id FROM orders WHERE json(note) IS NOT NULL",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT id FROM orders WHERE CAST(note AS int) = 1",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT id FROM orders o WHERE CAST(o.note AS int) = 1 AND o.total > 0",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT o.id FROM orders o JOIN customers c ON CAST(c.email AS int) = o.id",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT id FROM orders WHERE note::json IS NOT NULL",
    ),
    (
        "mariadb",
        Role::Rows,
        "SELECT id FROM orders WHERE JSON_EXTRACT(note, '$.a') IS NOT NULL",
    ),
    (
        "sqlite",
        Role::Rows,
        "SELECT id FROM orders WHERE json(note) IS NOT NULL",
    ),
    (
        "sqlite",
        Role::Rows,
        "SELECT id FROM orders WHERE json_extract(note, '$') IS NOT NULL",
    ),
    // 5. Catalogs, statistics, plans and views.
    ("all", Role::Rows, "SELECT * FROM all_orders"),
    ("all", Role::Rows, "EXPLAIN SELECT * FROM orders"),
    ("mariadb", Role::Rows, "DESC SELECT * FROM orders"),
    ("mariadb", Role::Rows, "DESCRIBE SELECT note FROM orders"),
    (
        "mariadb",
        Role::Rows,
        "DESC FORMAT=JSON SELECT * FROM orders",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT * FROM pg_stats WHERE tablename = 'orders'",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT most_common_vals::text FROM pg_catalog.pg_stats",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT reltuples FROM pg_class WHERE relname = 'orders'",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT n_live_tup FROM pg_stat_user_tables",
    ),
    ("postgres", Role::Rows, "SELECT pg_relation_size('orders')"),
    (
        "postgres",
        Role::Rows,
        "SELECT pg_stat_get_live_tuples('orders'::regclass)",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT definition FROM pg_views WHERE viewname = 'all_orders'",
    ),
    (
        "mariadb",
        Role::Rows,
        "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_NAME = 'orders'",
    ),
    (
        "mariadb",
        Role::Rows,
        "SELECT CARDINALITY FROM information_schema.STATISTICS WHERE TABLE_NAME = 'orders'",
    ),
    (
        "mariadb",
        Role::Rows,
        "SELECT * FROM mysql.innodb_table_stats",
    ),
    ("sqlite", Role::Rows, "SELECT * FROM sqlite_stat1"),
    ("sqlite", Role::Rows, "SELECT * FROM sqlite_master"),
    // Masks: the original never leaves the engine, whatever reads it.
    (
        "all",
        Role::Masked,
        "SELECT email, phone FROM customer_directory",
    ),
    ("all", Role::Support, "SELECT * FROM customer_directory"),
    ("all", Role::Rows, "SELECT * FROM customer_directory"),
    ("all", Role::Rows, "SELECT * FROM orders_again"),
    ("postgres", Role::Rows, "SELECT note FROM s.v_safe"),
    (
        "postgres",
        Role::Rows,
        "SELECT a.note FROM s.v_safe a, v_safe b",
    ),
    ("postgres", Role::Rows, "SELECT note FROM \"x.v_safe\""),
    (
        "postgres",
        Role::Rows,
        "SELECT v.note FROM v_safe s, \"x.v_safe\" v",
    ),
    ("postgres", Role::Rows, "SELECT note FROM v_fn"),
    ("postgres", Role::Rows, "SELECT x::text FROM v_xml"),
    ("mariadb", Role::Rows, "SELECT note FROM `x.v_safe`"),
    (
        "mariadb",
        Role::Rows,
        "SELECT v.note FROM v_safe s, `x.v_safe` v",
    ),
    ("sqlite", Role::Rows, "SELECT note FROM [x.v_safe]"),
    (
        "sqlite",
        Role::Rows,
        "SELECT v.note FROM v_safe s, \"x.v_safe\" v",
    ),
    ("sqlite", Role::Rows, "SELECT note FROM ft"),
    (
        "sqlite",
        Role::Rows,
        "SELECT note FROM ft WHERE ft MATCH 'CANARY'",
    ),
    (
        "all",
        Role::Masked,
        "SELECT * FROM orders_again o JOIN customer_directory c ON c.id = o.customer_id",
    ),
    ("postgres", Role::Rows, "SELECT note FROM other.orders"),
    (
        "postgres",
        Role::Masked,
        "SELECT email FROM other.customers",
    ),
    ("postgres", Role::Support, "SELECT note FROM other.orders"),
    ("all", Role::Masked, "SELECT email, phone FROM customers"),
    ("all", Role::Masked, "SELECT * FROM customers"),
    (
        "all",
        Role::Masked,
        "SELECT id FROM customers WHERE email LIKE '%leak%'",
    ),
    (
        "all",
        Role::Masked,
        "SELECT max(email), min(phone) FROM customers",
    ),
    (
        "all",
        Role::Masked,
        "SELECT c.email FROM orders o JOIN customers c ON c.id = o.customer_id",
    ),
    (
        "all",
        Role::Masked,
        "SELECT (SELECT email FROM customers WHERE id = 2) AS e",
    ),
    (
        "all",
        Role::Masked,
        "WITH x AS (SELECT * FROM customers) SELECT * FROM x",
    ),
    (
        "postgres",
        Role::Masked,
        "SELECT CAST(email AS int) FROM customers",
    ),
    ("postgres", Role::Masked, "TABLE customers"),
];

/// Legitimate reads: (engines, role, SQL, the same query filtered by hand).
const LEGIT: &[(&str, Role, &str, &str)] = &[
    (
        "all",
        Role::Support,
        "SELECT id FROM orders ORDER BY id",
        "SELECT id FROM orders WHERE customer_id = 1 ORDER BY id",
    ),
    (
        "all",
        Role::Support,
        "SELECT 'it''s' AS a, count(*) AS n FROM orders",
        "SELECT 'it''s' AS a, count(*) AS n FROM orders WHERE customer_id = 1",
    ),
    (
        "all",
        Role::Support,
        "SELECT * FROM customers",
        "SELECT id, name, city FROM customers WHERE id = 1",
    ),
    (
        "all",
        Role::Support,
        "SELECT c.name, o.id FROM orders o JOIN customers c ON c.id = o.customer_id ORDER BY o.id",
        "SELECT c.name, o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.customer_id = 1 AND c.id = 1 ORDER BY o.id",
    ),
    (
        "all",
        Role::Support,
        "WITH x AS (SELECT * FROM orders) SELECT count(*) AS n, sum(total) AS t FROM x",
        "SELECT count(*) AS n, sum(total) AS t FROM orders WHERE customer_id = 1",
    ),
    (
        "all",
        Role::Support,
        "SELECT id, row_number() OVER (ORDER BY id DESC) AS r FROM orders ORDER BY id",
        "SELECT id, row_number() OVER (ORDER BY id DESC) AS r FROM orders WHERE customer_id = 1 ORDER BY id",
    ),
    (
        "all",
        Role::Support,
        "SELECT id FROM orders UNION SELECT id FROM orders ORDER BY 1",
        "SELECT id FROM orders WHERE customer_id = 1 ORDER BY 1",
    ),
    (
        "all",
        Role::Support,
        "SELECT id /* ' FROM orders */ FROM orders -- '\nORDER BY id",
        "SELECT id FROM orders WHERE customer_id = 1 ORDER BY id",
    ),
    (
        "all",
        Role::Support,
        "SELECT\n\tid\nFROM\n\torders\nWHERE total > 5\nORDER BY id",
        "SELECT id FROM orders WHERE total > 5 AND customer_id = 1 ORDER BY id",
    ),
    (
        "all",
        Role::Support,
        "SELECT o.id FROM orders o WHERE o.id IN (SELECT id FROM orders) ORDER BY 1",
        "SELECT id FROM orders WHERE customer_id = 1 ORDER BY 1",
    ),
    (
        "all",
        Role::Support,
        "SELECT count(*) AS n FROM orders WHERE note <> 'x FROM orders'",
        "SELECT count(*) AS n FROM orders WHERE customer_id = 1",
    ),
    (
        "postgres",
        Role::Support,
        "TABLE orders",
        "SELECT * FROM orders WHERE customer_id = 1",
    ),
    (
        "postgres",
        Role::Support,
        "SELECT * FROM orders WHERE false UNION ALL TABLE orders",
        "SELECT * FROM orders WHERE customer_id = 1",
    ),
    (
        "postgres",
        Role::Support,
        "SELECT \"o\".\"id\", $$it's$$ AS q FROM \"orders\" \"o\" ORDER BY 1",
        "SELECT id, 'it''s' AS q FROM orders WHERE customer_id = 1 ORDER BY 1",
    ),
    (
        "postgres",
        Role::Support,
        "SELECT E'a\\\\b' AS p, count(*) AS n FROM public.orders",
        "SELECT E'a\\\\b' AS p, count(*) AS n FROM orders WHERE customer_id = 1",
    ),
    (
        "postgres",
        Role::Support,
        "SELECT id FROM orders EXCEPT SELECT 2 ORDER BY 1",
        "SELECT 1 AS id",
    ),
    (
        "postgres",
        Role::Support,
        "SELECT x.id FROM customers c, LATERAL (SELECT id FROM orders o WHERE o.customer_id = c.id) x ORDER BY 1",
        "SELECT id FROM orders WHERE customer_id = 1 ORDER BY 1",
    ),
    (
        "mariadb",
        Role::Support,
        "SELECT 'C:\\\\temp\\\\' AS p, count(*) AS n FROM orders",
        "SELECT 'C:\\\\temp\\\\' AS p, count(*) AS n FROM orders WHERE customer_id = 1",
    ),
    (
        "mariadb",
        Role::Support,
        "SELECT `o`.`id` FROM `orders` `o` ORDER BY 1",
        "SELECT id FROM orders WHERE customer_id = 1 ORDER BY 1",
    ),
    (
        "mariadb",
        Role::Support,
        "SELECT id FROM orders # '\nORDER BY id",
        "SELECT id FROM orders WHERE customer_id = 1 ORDER BY id",
    ),
    (
        "sqlite",
        Role::Support,
        "SELECT \"o\".\"id\", [o].id FROM \"orders\" \"o\" ORDER BY 1",
        "SELECT id, id FROM orders WHERE customer_id = 1 ORDER BY 1",
    ),
    (
        "sqlite",
        Role::Support,
        "SELECT 'C:\\temp\\' AS p, count(*) AS n FROM main.orders",
        "SELECT 'C:\\temp\\' AS p, count(*) AS n FROM orders WHERE customer_id = 1",
    ),
    (
        "all",
        Role::Masked,
        "SELECT count(DISTINCT email) AS n FROM customers",
        "SELECT count(DISTINCT email) AS n FROM customers",
    ),
    (
        "all",
        Role::Masked,
        "SELECT count(*) AS n FROM customers WHERE email = 'canary-cy@leak.test'",
        "SELECT 0 AS n",
    ),
    (
        "all",
        Role::Masked,
        "SELECT count(*) AS n FROM customers WHERE phone IS NOT NULL GROUP BY phone ORDER BY 1",
        "SELECT 3 AS n",
    ),
    (
        "all",
        Role::Support,
        "SELECT o.id FROM (orders o JOIN customers c ON c.id = o.customer_id) ORDER BY 1",
        "SELECT id FROM orders WHERE customer_id = 1 ORDER BY 1",
    ),
    // A guess hashed by the reader matches nothing: the hash is keyed.
    (
        "postgres",
        Role::Masked,
        "SELECT count(*) AS n FROM customers WHERE email = encode(sha256(convert_to('ada@example.com', 'UTF8')), 'hex')",
        "SELECT 0 AS n",
    ),
    (
        "mariadb",
        Role::Masked,
        "SELECT count(*) AS n FROM customers WHERE email = SHA2('ada@example.com', 256)",
        "SELECT 0 AS n",
    ),
    (
        "sqlite",
        Role::Masked,
        "SELECT count(*) AS n FROM customers WHERE email = steward_mask_hash('ada@example.com')",
        "SELECT 0 AS n",
    ),
    (
        "all",
        Role::Masked,
        "SELECT count(*) AS n FROM customers a JOIN customers b ON a.email = b.email",
        "SELECT 3 AS n",
    ),
    // Table functions, DUAL and the home schema are not other relations.
    (
        "postgres",
        Role::Rows,
        "SELECT g.d, count(o.id) AS n FROM generate_series(1, 3) AS g(d) LEFT JOIN orders o ON o.id = g.d GROUP BY g.d ORDER BY 1",
        "SELECT g.d, count(o.id) AS n FROM generate_series(1, 3) AS g(d) LEFT JOIN (SELECT * FROM orders WHERE customer_id = 1) o ON o.id = g.d GROUP BY g.d ORDER BY 1",
    ),
    (
        "sqlite",
        Role::Rows,
        "SELECT j.value, count(o.id) AS n FROM json_each('[1,2,3]') j LEFT JOIN orders o ON o.id = j.value GROUP BY 1 ORDER BY 1",
        "SELECT j.value, count(o.id) AS n FROM json_each('[1,2,3]') j LEFT JOIN (SELECT * FROM orders WHERE customer_id = 1) o ON o.id = j.value GROUP BY 1 ORDER BY 1",
    ),
    (
        "mariadb",
        Role::Rows,
        "SELECT 1 AS a FROM DUAL",
        "SELECT 1 AS a",
    ),
    (
        "postgres",
        Role::Rows,
        "SELECT count(*) AS n FROM public.orders",
        "SELECT count(*) AS n FROM orders WHERE customer_id = 1",
    ),
    (
        "sqlite",
        Role::Support,
        "SELECT value FROM json_each('[1,2,3]') ORDER BY 1",
        "SELECT 1 AS value UNION ALL SELECT 2 UNION ALL SELECT 3",
    ),
    (
        "postgres",
        Role::Support,
        "SELECT g FROM generate_series(1, 3) AS g ORDER BY 1",
        "SELECT 1 AS g UNION ALL SELECT 2 UNION ALL SELECT 3",
    ),
    // A view that reads no scoped table may be read.
    (
        "all",
        Role::Rows,
        "SELECT count(*) AS n FROM v_safe",
        "SELECT count(*) AS n FROM products",
    ),
    (
        "all",
        Role::Rows,
        "SELECT id FROM product_names ORDER BY id",
        "SELECT id FROM products ORDER BY id",
    ),
    (
        "all",
        Role::Masked,
        "SELECT p.id FROM product_names p ORDER BY 1",
        "SELECT id FROM products ORDER BY 1",
    ),
];

#[tokio::test]
async fn attacks_get_no_other_principals_row_no_forbidden_column_and_no_masked_value() {
    let engines = engines().await;
    let mut held = 0;
    for engine in &engines {
        for (on_engines, role, sql) in ATTACKS {
            if !on(engine.name, on_engines) {
                continue;
            }
            let out = run_as(engine, &access(*role, ada()), sql).await;
            let shown = match &out {
                Ok(rows) => format!("{rows:?}"),
                Err(e) => e.clone(),
            };
            if std::env::var_os("SCOPE_SHOW").is_some() {
                eprintln!(
                    "{}: {sql}\n    -> {}",
                    engine.name,
                    shown.chars().take(160).collect::<String>()
                );
            }
            if let Some(canary) = leaks(*role, &shown) {
                panic!(
                    "{}: {role:?}: {sql}\nleaked `{canary}`: {shown}",
                    engine.name
                );
            }
            held += 1;
        }
    }
    assert!(held >= ATTACKS.len(), "{held}");
}

#[tokio::test]
async fn legitimate_reads_get_exactly_the_principals_rows() {
    let engines = engines().await;
    for engine in &engines {
        for (on_engines, role, sql, by_hand) in LEGIT {
            if !on(engine.name, on_engines) {
                continue;
            }
            let got = run_as(engine, &access(*role, ada()), sql)
                .await
                .unwrap_or_else(|e| panic!("{}: {role:?}: {sql}: {e}", engine.name));
            let mut expected = reference(engine, by_hand).await;
            let mut got = got;
            if !sql.contains("ORDER BY") {
                got[1..].sort();
                expected[1..].sort();
            }
            assert_eq!(
                &got[1..],
                &expected[1..],
                "{}: {role:?}: {sql}\nvs {by_hand}",
                engine.name
            );
        }
    }
}

/// A random string over an alphabet of quotes, backslashes, comment starters, NUL and non-ASCII.
fn hostile(rng: &mut fastrand::Rng) -> String {
    const ALPHABET: &[&str] = &[
        "'",
        "\\",
        "\"",
        "`",
        "-",
        "--",
        "/*",
        "*/",
        "#",
        ";",
        " ",
        "OR",
        "1=1",
        "$$",
        "$1",
        "?",
        "\0",
        "é",
        "☃",
        "x",
        "a",
        "UNION SELECT",
        "\n",
    ];
    (0..rng.usize(1..8))
        .map(|_| ALPHABET[rng.usize(..ALPHABET.len())])
        .collect()
}

#[tokio::test]
async fn hostile_principal_values_select_exactly_their_rows() {
    let engines = engines().await;
    let mut rng = fastrand::Rng::with_seed(21);
    let mut values: Vec<String> = HOSTILE_OWNERS.iter().map(|s| (*s).to_owned()).collect();
    values.extend((0..60).map(|_| hostile(&mut rng)));
    for engine in &engines {
        for value in &values {
            let attributes: BTreeMap<String, Json> = [("owner".to_owned(), json!(value))].into();
            let access = AccessFn::new(move |_p: &Principal, dialect: Dialect| {
                let mut scope = Scope::new();
                scope.filter(dialect, "orders", "owner = {principal.owner}", &attributes)?;
                Ok(Some(Access {
                    read: GuardPolicy::default(),
                    scope,
                    write: None,
                    max_rows: None,
                }))
            });
            // The engine's own answer: the rows whose owner equals the value, bound as a parameter.
            let by_hand = format!(
                "SELECT id FROM orders WHERE owner = {} ORDER BY id",
                engine.db.dialect().placeholder(1)
            );
            let expected: Option<Vec<String>> = engine
                .db
                .query_read_only(
                    &by_hand,
                    &[Param::Text(value.clone())],
                    &common::limits(1000),
                )
                .await
                .ok()
                .map(|r| r.rows.iter().map(|row| cell_text(&row[0])).collect());
            match run_as(engine, &access, "SELECT id FROM orders ORDER BY id").await {
                Ok(rows) => {
                    let ids: Vec<String> = rows[1..].iter().map(|r| r[0].clone()).collect();
                    assert_eq!(Some(ids), expected, "{}: owner {value:?}", engine.name);
                }
                // PostgreSQL text cannot hold NUL: the value is refused, nothing is read.
                Err(e) if value.contains('\0') && engine.name.starts_with("postgres") => {
                    assert!(!e.contains("mine-"), "{e}");
                }
                Err(e) => panic!("{}: owner {value:?}: {e}", engine.name),
            }
        }
    }
}

#[tokio::test]
async fn random_literals_come_back_as_the_engine_reads_them_and_rows_stay_filtered() {
    let engines = engines().await;
    let mut rng = fastrand::Rng::with_seed(8);
    for engine in &engines {
        let dialect = engine.db.dialect();
        let guard: Guard = engine.db.guard().await.unwrap();
        let mut compared = 0;
        for _ in 0..150 {
            let body = hostile(&mut rng).replace('\0', "");
            let literal = match dialect {
                Dialect::Postgres if rng.bool() => format!("$x${}$x$", body.replace('$', "")),
                Dialect::Postgres => {
                    format!("E'{}'", body.replace('\\', "\\\\").replace('\'', "\\'"))
                }
                Dialect::Mysql => format!("'{}'", body.replace('\\', "\\\\").replace('\'', "''")),
                _ => format!("'{}'", body.replace('\'', "''")),
            };
            let sql = format!(
                "SELECT {literal} AS v, count(*) AS n FROM orders /* {} */",
                body.replace("*/", "").replace("/*", "")
            );
            if !guard.check(&format!("SELECT {literal} AS v")).allowed {
                continue;
            }
            let got = run_as(engine, &access(Role::Support, ada()), &sql)
                .await
                .unwrap_or_else(|e| panic!("{}: {sql}: {e}", engine.name));
            let expected = reference(
                engine,
                &format!("SELECT {literal} AS v, count(*) AS n FROM orders WHERE customer_id = 1"),
            )
            .await;
            assert_eq!(got[1..], expected[1..], "{}: {sql}", engine.name);
            compared += 1;
        }
        assert!(compared > 50, "{}: {compared}", engine.name);
    }
}

/// Probes that raise an error on a chosen row: (engines, probe with `{}` for the value). A hidden row's value
/// and a value no row has must give the same outcome, or the error would tell that the hidden row exists.
const ORACLES: &[(&str, &str)] = &[
    (
        "postgres",
        "SELECT id FROM orders WHERE CASE WHEN note = '{}' THEN 1 / 0 ELSE 0 END = 0",
    ),
    (
        "postgres",
        "SELECT id FROM orders WHERE CASE WHEN note = '{}' THEN CAST(note AS int) ELSE 0 END = 0",
    ),
    (
        "postgres",
        "SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE CASE WHEN o.note = '{}' THEN 1 / 0 ELSE 0 END = 0",
    ),
    (
        "postgres",
        "SELECT count(*) FROM orders GROUP BY customer_id HAVING max(CASE WHEN note = '{}' THEN 1 / 0 ELSE 0 END) = 0",
    ),
    (
        "postgres",
        "SELECT id FROM orders WHERE CASE WHEN note = '{}' THEN CAST(note AS int) ELSE 0 END = 0 AND total > 0",
    ),
    (
        "mariadb",
        "SELECT id FROM orders WHERE CASE WHEN note = '{}' THEN total + 18446744073709551615 ELSE 0 END = 0",
    ),
    (
        "mariadb",
        "SELECT id FROM orders WHERE CASE WHEN note = '{}' THEN EXP(1000) ELSE 0 END = 0",
    ),
    (
        "sqlite",
        "SELECT id FROM orders WHERE CASE WHEN note = '{}' THEN json('x') ELSE 1 END IS NOT NULL",
    ),
    (
        "sqlite",
        "SELECT id FROM orders WHERE CASE WHEN note = '{}' THEN abs(-9223372036854775807 - 1) ELSE 1 END = 1",
    ),
];

#[tokio::test]
async fn errors_raised_on_hidden_rows_do_not_tell_that_they_exist() {
    let engines = engines().await;
    let mut probed = 0;
    for engine in &engines {
        for (on_engines, probe) in ORACLES {
            if !on(engine.name, on_engines) {
                continue;
            }
            for role in [Role::Rows, Role::Subquery] {
                let access = access(role, ada());
                let hidden = run_as(engine, &access, &probe.replace("{}", "CANARY-ORDER-3")).await;
                let absent = run_as(engine, &access, &probe.replace("{}", "NO-SUCH-ORDER")).await;
                assert_eq!(hidden, absent, "{}: {role:?}: {probe}", engine.name);
            }
            // Unscoped, the same probe does tell (so the probe can fail).
            let unscoped = engine
                .db
                .query_read_only(
                    &probe.replace("{}", "CANARY-ORDER-3"),
                    &[],
                    &common::limits(100),
                )
                .await;
            assert!(
                unscoped.is_err(),
                "{}: {probe} does not raise an error on the hidden row",
                engine.name
            );
            probed += 1;
        }
    }
    assert!(probed >= 2);
}

/// Counts of every row that a limited role may not read: sequences, sizes, the last statement's row count,
/// plans. Each is refused (the canary check cannot see a bare number).
const COUNTS: &[(&str, &str)] = &[
    ("postgres", "SELECT last_value FROM order_numbers"),
    ("postgres", "SELECT last_value FROM public.order_numbers"),
    ("postgres", "SELECT pg_sequence_last_value('order_numbers')"),
    ("postgres", "SELECT pg_database_size(current_database())"),
    ("postgres", "SELECT pg_total_relation_size('orders')"),
    ("mariadb", "SELECT FOUND_ROWS()"),
    ("mariadb", "SELECT ROW_COUNT()"),
    ("mariadb", "DESC SELECT * FROM orders"),
    ("sqlite", "SELECT * FROM pragma_page_count"),
    ("sqlite", "SELECT page_count FROM pragma_page_count()"),
    ("sqlite", "SELECT seq FROM sqlite_sequence"),
    ("all", "EXPLAIN SELECT * FROM orders"),
];

#[tokio::test]
async fn limited_roles_get_no_count_of_every_row() {
    let engines = engines().await;
    for engine in &engines {
        if engine.name.starts_with("postgres") {
            engine
                .db
                .execute_script("CREATE SEQUENCE IF NOT EXISTS order_numbers; SELECT setval('order_numbers', 5)")
                .await
                .unwrap();
        }
        for (on_engines, sql) in COUNTS {
            if !on(engine.name, on_engines) {
                continue;
            }
            let out = run_as(engine, &access(Role::Rows, ada()), sql).await;
            assert!(
                out.as_ref().is_err_and(|e| e.starts_with("refused")),
                "{}: {sql}: {out:?}",
                engine.name
            );
        }
    }
}

#[tokio::test]
async fn what_cannot_follow_a_derived_table_is_refused_with_a_reason_the_user_can_act_on() {
    let engines = engines().await;
    for engine in &engines {
        if engine.name != "mariadb" {
            continue;
        }
        for sql in [
            "SELECT id FROM orders USE INDEX (PRIMARY)",
            "SELECT id FROM orders FORCE INDEX (PRIMARY) WHERE id > 0",
        ] {
            let out = run_as(engine, &access(Role::Rows, ada()), sql).await;
            assert!(
                out.as_ref()
                    .is_err_and(|e| e.contains("cannot take index hints")),
                "{sql}: {out:?}"
            );
        }
    }
}
