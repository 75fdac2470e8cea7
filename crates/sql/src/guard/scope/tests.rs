use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::*;
use crate::guard::{GuardPolicy, ServerSettings};

fn ada(dialect: Dialect) -> Scope {
    let attributes: BTreeMap<String, Json> = [("customer_id".to_owned(), Json::from(1))].into();
    let mut scope = Scope::new();
    scope
        .filter(
            dialect,
            "orders",
            "customer_id = {principal.customer_id}",
            &attributes,
        )
        .unwrap();
    scope.columns("customers", vec!["id".into(), "name".into(), "city".into()]);
    scope
        .filter(
            dialect,
            "customers",
            "id = {principal.customer_id}",
            &attributes,
        )
        .unwrap();
    scope
}

#[test]
fn every_reference_to_a_scoped_table_is_replaced_and_the_rest_is_untouched() {
    let guard = Guard::new(Dialect::Sqlite);
    let sql = "WITH mine AS (SELECT o.id FROM orders AS o) \
               SELECT count(*) FROM mine JOIN (SELECT * FROM orders) x ON x.id = mine.id \
               WHERE EXISTS (SELECT 1 FROM main.orders WHERE orders.id = x.id)";
    let scoped = guard.scoped(sql, &ada(Dialect::Sqlite)).unwrap();
    assert_eq!(
        scoped.sql,
        "WITH mine AS (SELECT o.id FROM  (SELECT * FROM \"orders\" WHERE (customer_id = ?1) LIMIT -1 OFFSET 0)  AS o) \
         SELECT count(*) FROM mine JOIN (SELECT * FROM  (SELECT * FROM \"orders\" WHERE (customer_id = ?2) LIMIT -1 OFFSET 0) AS \"orders\" ) x ON x.id = mine.id \
         WHERE EXISTS (SELECT 1 FROM  (SELECT * FROM \"main\".\"orders\" WHERE (customer_id = ?3) LIMIT -1 OFFSET 0) AS \"orders\"  WHERE orders.id = x.id)"
    );
    assert_eq!(
        scoped.bind(&[]).unwrap(),
        [Param::Int(1), Param::Int(1), Param::Int(1)]
    );
    assert_eq!(
        scoped.filtered,
        [(
            "orders".to_owned(),
            "customer_id = {principal.customer_id}".to_owned()
        )]
    );
}

#[test]
fn quotes_and_backslashes_stay_the_users_text() {
    // Issue 21's example: on PostgreSQL with backslash escapes a re-printed `'x\''` became code.
    let guard = Guard::new(Dialect::Postgres).with_settings(ServerSettings {
        standard_conforming_strings: Some(true),
        ..ServerSettings::unknown()
    });
    let sql = "SELECT 'n' AS n, 'x\\''' || ' UNION ALL SELECT name, email FROM customers -- ' AS a FROM orders";
    let scoped = guard.scoped(sql, &ada(Dialect::Postgres)).unwrap();
    assert!(scoped.sql.starts_with("SELECT 'n' AS n, 'x\\''' || ' UNION ALL SELECT name, email FROM customers -- ' AS a FROM "), "{}", scoped.sql);
    assert!(
        scoped.sql.ends_with(
            "(SELECT * FROM \"orders\" WHERE (customer_id = $1) OFFSET 0) AS \"orders\" "
        ),
        "{}",
        scoped.sql
    );
    let scoped = guard
        .scoped(
            "SELECT E'x\\\\\\'' AS a, $$x\\'$$ AS b FROM orders \"o\"\"x\"",
            &ada(Dialect::Postgres),
        )
        .unwrap();
    assert_eq!(
        scoped.sql,
        "SELECT E'x\\\\\\'' AS a, $$x\\'$$ AS b FROM  (SELECT * FROM \"orders\" WHERE (customer_id = $1) OFFSET 0)  \"o\"\"x\""
    );
}

#[test]
fn table_queries_anywhere_are_scoped() {
    let guard = Guard::new(Dialect::Postgres);
    for sql in [
        "TABLE orders",
        "SELECT * FROM orders WHERE false UNION ALL TABLE orders",
        "SELECT 1 AS id UNION ALL (TABLE public.orders) ORDER BY 1",
    ] {
        let scoped = guard.scoped(sql, &ada(Dialect::Postgres)).unwrap();
        assert!(!scoped.sql.contains("TABLE"), "{sql} -> {}", scoped.sql);
        assert_eq!(
            scoped.sql.matches("OFFSET 0)").count(),
            sql.matches("orders").count(),
            "{}",
            scoped.sql
        );
    }
    for sql in ["TABLE ONLY orders", "TABLE orders *"] {
        assert!(guard.scoped(sql, &ada(Dialect::Postgres)).is_err(), "{sql}");
    }
}

#[test]
fn what_cannot_be_placed_is_refused() {
    let guard = Guard::new(Dialect::Postgres);
    for sql in [
        "WITH orders AS (SELECT 1 AS id) SELECT * FROM orders",
        "SELECT * FROM ONLY orders",
        "EXPLAIN SELECT * FROM orders",
        "SELECT reltuples FROM pg_class WHERE relname = 'orders'",
        "SELECT * FROM pg_stats WHERE tablename = 'orders'",
        "SELECT n_live_tup FROM pg_stat_user_tables",
        "SELECT pg_relation_size('orders')",
    ] {
        assert!(guard.scoped(sql, &ada(Dialect::Postgres)).is_err(), "{sql}");
    }
    let mysql = Guard::new(Dialect::Mysql);
    for sql in [
        "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_NAME = 'orders'",
        "SELECT CARDINALITY FROM information_schema.STATISTICS",
    ] {
        assert!(mysql.scoped(sql, &ada(Dialect::Mysql)).is_err(), "{sql}");
    }
    let sqlite = Guard::new(Dialect::Sqlite);
    for sql in [
        "SELECT * FROM sqlite_stat1",
        "SELECT seq FROM sqlite_sequence",
    ] {
        assert!(sqlite.scoped(sql, &ada(Dialect::Sqlite)).is_err(), "{sql}");
    }
}

#[test]
fn columns_outside_the_scope_are_refused_and_wildcards_see_only_allowed_ones() {
    let guard = Guard::new(Dialect::Postgres).with_policy(GuardPolicy {
        tables: Some(vec!["orders".into(), "customers".into()]),
        columns: Some(
            [(
                "customers".to_owned(),
                vec!["id".into(), "name".into(), "city".into()],
            )]
            .into(),
        ),
    });
    let refused = guard
        .scoped("SELECT email FROM customers", &ada(Dialect::Postgres))
        .unwrap_err();
    assert!(
        refused
            .reasons
            .iter()
            .any(|r| r.message.contains("Column `email` may not be read"))
    );
    let scoped = guard
        .scoped("SELECT * FROM customers", &ada(Dialect::Postgres))
        .unwrap();
    assert_eq!(
        scoped.sql,
        "SELECT * FROM  (SELECT \"id\", \"name\", \"city\" FROM \"customers\" WHERE (id = $1) OFFSET 0) AS \"customers\" "
    );
}

#[test]
fn hostile_values_are_parameters() {
    let attributes: BTreeMap<String, Json> =
        [("dept".to_owned(), Json::from("x\\' OR 1=1 --"))].into();
    let mut scope = Scope::new();
    scope
        .filter(
            Dialect::Mysql,
            "expenses",
            "department = {principal.dept}",
            &attributes,
        )
        .unwrap();
    let scoped = Guard::new(Dialect::Mysql)
        .scoped(
            "SELECT count(*) FROM expenses WHERE amount > ? AND note = ?",
            &scope,
        )
        .unwrap();
    assert!(
        scoped.sql.contains("WHERE (department = ?)"),
        "{}",
        scoped.sql
    );
    assert!(!scoped.sql.contains("OR 1=1"));
    // The principal's value binds before the text's own placeholders, which come after it.
    assert_eq!(
        scoped
            .bind(&[Param::Int(5), Param::Text("n".into())])
            .unwrap(),
        [
            Param::Text("x\\' OR 1=1 --".into()),
            Param::Int(5),
            Param::Text("n".into())
        ]
    );
}

#[test]
fn masks_select_the_masked_value_under_the_columns_name() {
    let mut scope = Scope::new();
    scope.columns("customers", vec!["id".into(), "email".into()]);
    scope.mask("customers", "email", Mask::Hash);
    let scoped = Guard::new(Dialect::Postgres)
        .scoped("SELECT count(DISTINCT email) FROM customers", &scope)
        .unwrap();
    // The key is bound, never written into the text.
    assert_eq!(
        scoped.bind(&[]).unwrap(),
        [Param::Text(crate::guard::mask::mask_key().to_owned())]
    );
    assert!(
        scoped.sql.contains(
            "encode(sha256(convert_to(CAST($1 AS text) || CAST(\"email\" AS text), 'UTF8')), 'hex') AS \"email\" FROM \"customers\""
        ),
        "{}",
        scoped.sql
    );
}

#[test]
fn a_filter_needing_a_missing_attribute_is_an_error() {
    let error = Scope::new()
        .filter(
            Dialect::Sqlite,
            "orders",
            "customer_id = {principal.customer_id}",
            &BTreeMap::new(),
        )
        .unwrap_err();
    assert!(
        error.contains("needs the principal's `customer_id`"),
        "{error}"
    );
}

#[test]
fn writes_change_only_allowed_tables_columns_and_rows() {
    let guard = Guard::new(Dialect::Postgres);
    let scope = ada(Dialect::Postgres);
    let write: BTreeMap<String, Option<Vec<String>>> =
        [("orders".to_owned(), Some(vec!["status".to_owned()]))].into();
    let scoped = guard
        .scoped_write(
            "UPDATE orders SET status = $1 WHERE id = $2 -- why",
            &scope,
            Some(&write),
        )
        .unwrap();
    assert_eq!(
        scoped.sql,
        "UPDATE orders SET status = $1 WHERE (customer_id = $3) AND ( id = $2)  -- why"
    );
    assert_eq!(
        scoped
            .bind(&[Param::Text("paid".into()), Param::Int(9)])
            .unwrap(),
        [Param::Text("paid".into()), Param::Int(9), Param::Int(1)]
    );
    let scoped = guard
        .scoped_write("DELETE FROM orders", &scope, None)
        .unwrap();
    assert_eq!(scoped.sql, "DELETE FROM orders WHERE (customer_id = $1) ");
    let scoped = guard
        .scoped_write("DELETE FROM orders RETURNING id", &scope, None)
        .unwrap();
    assert_eq!(
        scoped.sql,
        "DELETE FROM orders WHERE (customer_id = $1)  RETURNING id"
    );
    let refused = guard
        .scoped_write(
            "UPDATE orders SET total = 0 WHERE id = $1",
            &scope,
            Some(&write),
        )
        .unwrap_err();
    assert!(
        refused[0]
            .message
            .contains("Column `total` of `orders` may not be set"),
        "{refused:?}"
    );
    let refused = guard
        .scoped_write("DELETE FROM products", &scope, Some(&write))
        .unwrap_err();
    assert!(
        refused[0]
            .message
            .contains("Table `products` may not be changed"),
        "{refused:?}"
    );
    let refused = guard
        .scoped_write("INSERT INTO orders (status) VALUES ($1)", &scope, None)
        .unwrap_err();
    assert!(
        refused[0]
            .message
            .contains("this role may not insert into it"),
        "{refused:?}"
    );
    let scoped = guard
        .scoped_write("INSERT INTO notes (body) VALUES ($1)", &scope, None)
        .unwrap();
    assert_eq!(scoped.sql, "INSERT INTO notes (body) VALUES ($1)");
    // MySQL: positional, the value before the WHERE's own placeholder.
    let scoped = Guard::new(Dialect::Mysql)
        .scoped_write(
            "UPDATE orders SET status = ? WHERE id = ?",
            &ada(Dialect::Mysql),
            None,
        )
        .unwrap();
    assert_eq!(
        scoped.sql,
        "UPDATE orders SET status = ? WHERE (customer_id = ?) AND ( id = ?) "
    );
    assert_eq!(
        scoped
            .bind(&[Param::Text("paid".into()), Param::Int(9)])
            .unwrap(),
        [Param::Text("paid".into()), Param::Int(1), Param::Int(9)]
    );
}

#[test]
fn previews_get_returning_inserted() {
    let guard = Guard::new(Dialect::Postgres);
    assert_eq!(
        guard
            .returning_all("UPDATE t SET a = 'it''s' WHERE b = $1")
            .unwrap(),
        "UPDATE t SET a = 'it''s' WHERE b = $1 RETURNING * "
    );
    assert_eq!(
        guard
            .returning_all("DELETE FROM t WHERE b = $1 RETURNING id, b -- x")
            .unwrap(),
        "DELETE FROM t WHERE b = $1  RETURNING *  -- x"
    );
}

#[test]
fn rows_only_keeps_filters_and_drops_column_limits() {
    let scope = ada(Dialect::Sqlite).rows_only();
    let scoped = Guard::new(Dialect::Sqlite)
        .scoped(
            "SELECT c.email FROM orders o JOIN customers c ON c.id = o.customer_id",
            &scope,
        )
        .unwrap();
    assert!(
        scoped.sql.contains(
            "JOIN  (SELECT * FROM \"customers\" WHERE (id = ?2) LIMIT -1 OFFSET 0)  c ON"
        ),
        "{}",
        scoped.sql
    );
}

/// A random literal for `dialect` whose text is full of quotes, backslashes, comment starts and table
/// references, written so that the engine reads it as one literal.
fn literal(rng: &mut fastrand::Rng, dialect: Dialect) -> String {
    const BITS: &[&str] = &[
        "'",
        "\\",
        "\"",
        "--",
        "/*",
        "*/",
        " FROM orders ",
        "TABLE orders",
        "$",
        "$$",
        ";",
        "x",
        " ",
        "\n",
        "é",
    ];
    let body: String = (0..rng.usize(0..8))
        .map(|_| BITS[rng.usize(..BITS.len())])
        .collect();
    match dialect {
        Dialect::Postgres => match rng.u8(0..3) {
            0 => format!("'{}'", body.replace('\'', "''")),
            1 => format!("E'{}'", body.replace('\\', "\\\\").replace('\'', "\\'")),
            _ => format!("$q${}$q$", body.replace("$q$", "")),
        },
        _ => format!("'{}'", body.replace('\'', "''")),
    }
}

/// A random comment.
fn comment(rng: &mut fastrand::Rng) -> String {
    match rng.u8(0..3) {
        0 => " /* ' FROM orders TABLE orders \" */ ".to_owned(),
        1 => " -- ' TABLE orders\n".to_owned(),
        _ => " ".to_owned(),
    }
}

#[test]
fn the_run_text_is_the_users_text_outside_the_generated_spans() {
    let mut rng = fastrand::Rng::with_seed(2026);
    for dialect in [Dialect::Sqlite, Dialect::Postgres] {
        let guard = Guard::new(dialect).with_settings(ServerSettings {
            standard_conforming_strings: Some(true),
            ..ServerSettings::unknown()
        });
        let scope = ada(dialect);
        let mut scoped_ok = 0;
        for _ in 0..400 {
            // (user text, expected text) built piece by piece; a reference's replacement is numbered in order.
            let mut user = String::new();
            let mut expected = String::new();
            let mut n = 0;
            let push = |user: &mut String, expected: &mut String, text: &str| {
                user.push_str(text);
                expected.push_str(text);
            };
            let reference = |user: &mut String,
                             expected: &mut String,
                             rng: &mut fastrand::Rng,
                             n: &mut usize| {
                *n += 1;
                let p = if dialect == Dialect::Postgres {
                    format!("${n}")
                } else {
                    format!("?{n}")
                };
                let fence = if dialect == Dialect::Postgres {
                    " OFFSET 0"
                } else {
                    " LIMIT -1 OFFSET 0"
                };
                let derived =
                    format!("(SELECT * FROM \"orders\" WHERE (customer_id = {p}){fence})");
                match rng.u8(0..3) {
                    0 => {
                        user.push_str("orders");
                        expected.push_str(&format!(" {derived} AS \"orders\" "));
                    }
                    1 => {
                        user.push_str("orders AS o");
                        expected.push_str(&format!(" {derived}  AS o"));
                    }
                    _ => {
                        user.push_str("\"orders\" o");
                        expected.push_str(&format!(" {derived}  o"));
                    }
                }
            };
            let parts = rng.usize(1..4);
            for i in 0..parts {
                if i > 0 {
                    push(&mut user, &mut expected, " UNION ALL ");
                }
                if dialect == Dialect::Postgres && i > 0 && rng.bool() {
                    n += 1;
                    user.push_str("TABLE orders");
                    expected.push_str(&format!(
                        " SELECT * FROM (SELECT * FROM \"orders\" WHERE (customer_id = ${n}) OFFSET 0) AS \"orders\" "
                    ));
                    continue;
                }
                let lit = literal(&mut rng, dialect);
                let c = comment(&mut rng);
                push(
                    &mut user,
                    &mut expected,
                    &format!("SELECT id, customer_id, {lit}{c}, note, total FROM "),
                );
                reference(&mut user, &mut expected, &mut rng, &mut n);
                if rng.bool() {
                    let lit = literal(&mut rng, dialect);
                    push(&mut user, &mut expected, &format!(" WHERE note <> {lit}"));
                }
            }
            let c = comment(&mut rng);
            push(&mut user, &mut expected, &c);
            match guard.scoped(&user, &scope) {
                Ok(scoped) => {
                    assert_eq!(scoped.sql, expected, "{dialect}: {user}");
                    assert_eq!(scoped.bind(&[]).unwrap().len(), n);
                    scoped_ok += 1;
                }
                Err(v) => assert!(!v.allowed, "{user}"),
            }
        }
        assert!(scoped_ok > 300, "{dialect}: only {scoped_ok} of 400 scoped");
    }
}
