//! Row filters and column allowlists from a role, as a user writes them in `steward.yaml`, on SQLite,
//! PostgreSQL and MariaDB: two principals see disjoint rows through free SQL (`sql run`), `query_table` and a
//! declarative SQL tool, aggregates and joins included, and what their role does not list is refused. What
//! each should see is asked of the engine itself through its own client (`sqlite3`, `psql`, `mariadb`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;

use common::*;

/// One engine's demo database and how to ask its own client.
struct Engine {
    url: String,
    client: Box<dyn Fn(&str) -> String>,
    _cleanup: Option<ServerDb>,
}

fn demo(url: &str) {
    let out = steward(&["demo", "--db", url], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

fn sqlite() -> Engine {
    let path = format!("{}/demo.sqlite", scratch_dir("rows"));
    demo(&path);
    let db = path.clone();
    Engine {
        url: format!("sqlite://{path}"),
        client: Box::new(move |sql| sqlite3(&db, sql)),
        _cleanup: None,
    }
}

fn postgres() -> Option<Engine> {
    if !postgres_up() {
        return None;
    }
    let name = fresh_name("rows");
    let (url, cleanup) = ServerDb::postgres(&name);
    demo(&url);
    Some(Engine {
        url,
        client: Box::new(move |sql| {
            client(
                "psql",
                &[
                    "-h",
                    "127.0.0.1",
                    "-U",
                    "postgres",
                    "-d",
                    &name,
                    "-At",
                    "-c",
                    sql,
                ],
            )
        }),
        _cleanup: Some(cleanup),
    })
}

fn mariadb() -> Option<Engine> {
    if !mariadb_up() {
        return None;
    }
    let name = fresh_name("rows");
    let (url, cleanup) = ServerDb::mariadb(&name);
    demo(&url);
    Some(Engine {
        url,
        client: Box::new(move |sql| {
            client(
                "mariadb",
                &[
                    "-h",
                    "127.0.0.1",
                    "-u",
                    "root",
                    "-N",
                    "-B",
                    "-D",
                    &name,
                    "-e",
                    sql,
                ],
            )
        }),
        _cleanup: Some(cleanup),
    })
}

fn config(url: &str) -> String {
    let path = format!("{}/steward.yaml", scratch_dir("rows-config"));
    std::fs::write(
        &path,
        format!(
            r#"databases:
  shop: "{url}"
tools:
  my_orders:
    kind: sql
    database: shop
    description: The orders, newest first.
    statement: SELECT id FROM orders ORDER BY id
    max_rows: 1000
  customer_emails:
    kind: sql
    database: shop
    description: Customers' emails.
    statement: SELECT c.name, c.email FROM customers AS c JOIN orders o ON o.customer_id = c.id
agents:
  desk:
    instructions: Answer questions about the customer's orders with SQL.
    tools: [run_sql, query_table, my_orders, current_date]
roles:
  support:
    agents: [orders, desk]
    tools: [get_order, find_orders, run_sql, query_table, my_orders, customer_emails, current_date]
    sql:
      read: {{orders: "*", order_items: "*", shipments: "*", customers: [id, name, city]}}
      rows:
        orders: "customer_id = {{principal.customer_id}}"
        order_items: "order_id IN (SELECT id FROM orders WHERE customer_id = {{principal.customer_id}})"
        shipments: "order_id IN (SELECT id FROM orders WHERE customer_id = {{principal.customer_id}})"
        customers: "id = {{principal.customer_id}}"
      masks: {{customers.country: partial}}
principals:
  ada: {{role: support, customer_id: 1}}
  cy: {{role: support, customer_id: 2}}
"#
        ),
    )
    .unwrap();
    path
}

/// `steward sql run` as `who`, rows as CSV lines without the header.
fn sql_as(config: &str, who: &str, sql: &str) -> Result<Vec<String>, String> {
    let out = steward(
        &[
            "sql",
            "run",
            "-c",
            config,
            "--principal",
            who,
            "-f",
            "csv",
            "-n",
            "5000",
            sql,
        ],
        &[],
        "",
    );
    if out.status.code() == Some(0) {
        Ok(text(&out.stdout)
            .lines()
            .skip(1)
            .map(str::to_owned)
            .collect())
    } else {
        Err(text(&out.stderr))
    }
}

fn tool_as(config: &str, who: &str, tool: &str, args: &str) -> Vec<String> {
    let out = steward(
        &[
            "tools",
            "call",
            "-c",
            config,
            "--principal",
            who,
            "-f",
            "csv",
            tool,
            args,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{tool}: {}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .skip(1)
        .map(str::to_owned)
        .collect()
}

fn ids(lines: &[String]) -> BTreeSet<i64> {
    lines.iter().map(|l| l.trim().parse().unwrap()).collect()
}

fn check(engine: &Engine) {
    let config = config(&engine.url);
    let client = &engine.client;
    let mut seen = Vec::new();
    for (who, customer) in [("ada", 1), ("cy", 2)] {
        let expected: BTreeSet<i64> = client(&format!(
            "SELECT id FROM orders WHERE customer_id = {customer} ORDER BY id"
        ))
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
        assert!(!expected.is_empty());
        // Free SQL, a subquery, a CTE: the same rows.
        for sql in [
            "SELECT id FROM orders",
            "SELECT o.id FROM orders o WHERE o.id IN (SELECT id FROM orders)",
            "WITH x AS (SELECT * FROM orders) SELECT id FROM x",
        ] {
            assert_eq!(
                ids(&sql_as(&config, who, sql).unwrap()),
                expected,
                "{who}: {sql}"
            );
        }
        // Aggregates and joins count only the principal's rows.
        let count = sql_as(&config, who, "SELECT count(*) FROM orders").unwrap();
        assert_eq!(count, [expected.len().to_string()], "{who}");
        let joined = sql_as(
            &config,
            who,
            "SELECT c.name, count(*) FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.name",
        )
        .unwrap();
        assert_eq!(joined.len(), 1, "{who}: one customer only: {joined:?}");
        let name = client(&format!("SELECT name FROM customers WHERE id = {customer}"));
        assert_eq!(joined[0], format!("{name},{}", expected.len()));
        // query_table and a declarative tool: the same rows.
        let table = tool_as(
            &config,
            who,
            "query_table",
            r#"{"table": "orders", "columns": ["id"], "limit": 500}"#,
        );
        assert_eq!(ids(&table), expected, "{who}: query_table");
        assert_eq!(
            ids(&tool_as(&config, who, "my_orders", "{}")),
            expected,
            "{who}: my_orders"
        );
        // The demo's own tools filter too, and say so.
        let other = if customer == 1 { 2 } else { 1 };
        let theirs = client(&format!(
            "SELECT order_code FROM orders WHERE customer_id = {other} ORDER BY id LIMIT 1"
        ));
        let out = steward(
            &[
                "tools",
                "call",
                "-c",
                &config,
                "--principal",
                who,
                "get_order",
                &format!(r#"{{"order_code": "{theirs}"}}"#),
            ],
            &[],
            "",
        );
        let shown = text(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{who}: {shown}");
        assert!(
            shown.starts_with("Rows were filtered by access policy"),
            "{shown}"
        );
        assert!(
            shown.contains(&format!("There is no order with code {theirs}")),
            "{shown}"
        );
        let mine = client(&format!(
            "SELECT order_code FROM orders WHERE customer_id = {customer} ORDER BY id LIMIT 1"
        ));
        let out = steward(
            &[
                "tools",
                "call",
                "-c",
                &config,
                "--principal",
                who,
                "get_order",
                &format!(r#"{{"order_code": "{mine}"}}"#),
            ],
            &[],
            "",
        );
        assert_eq!(out.status.code(), Some(0), "{who}: {}", text(&out.stdout));
        assert!(text(&out.stdout).contains(&format!("Order {mine}:")));
        // Columns outside the role through query_table and a declared tool are refused too: query_table offers
        // the principal only the tables and columns it may read, so its schema refuses the others (without
        // naming them).
        for (tool, args) in [
            (
                "query_table",
                r#"{"table": "customers", "columns": ["name", "email"]}"#,
            ),
            ("query_table", r#"{"table": "products"}"#),
            ("customer_emails", "{}"),
        ] {
            let out = steward(
                &[
                    "tools",
                    "call",
                    "-c",
                    &config,
                    "--principal",
                    who,
                    tool,
                    args,
                ],
                &[],
                "",
            );
            let shown = text(&out.stdout);
            assert_eq!(out.status.code(), Some(1), "{who}: {tool} {args}: {shown}");
            let refused = if tool == "query_table" {
                shown.contains("is not one of the allowed values")
                    && !shown.contains("email\",")
                    && !shown.contains("\"products\",")
            } else {
                shown.contains("may not be read")
            };
            assert!(refused, "{who}: {tool}: {shown}");
        }
        // Order items follow their orders.
        let items = sql_as(&config, who, "SELECT count(*) FROM order_items").unwrap();
        let expected_items = client(&format!(
            "SELECT count(*) FROM order_items WHERE order_id IN (SELECT id FROM orders WHERE customer_id = {customer})"
        ));
        assert_eq!(items, [expected_items], "{who}");
        // `*` reads only the allowed columns of the principal's own row.
        let star = sql_as(&config, who, "SELECT * FROM customers").unwrap();
        let name = client(&format!("SELECT name FROM customers WHERE id = {customer}"));
        let city = client(&format!("SELECT city FROM customers WHERE id = {customer}"));
        // The masked country: its first letter and `***`.
        let country = client(&format!(
            "SELECT substr(country, 1, 1) FROM customers WHERE id = {customer}"
        ));
        let country = if country.is_empty() {
            String::new()
        } else {
            format!("{country}***")
        };
        assert_eq!(
            star,
            [format!("{customer},{name},{city},{country}")],
            "{who}"
        );
        let full = client(&format!(
            "SELECT country FROM customers WHERE id = {customer}"
        ));
        assert!(full.len() > 1 && !star[0].contains(&full), "{star:?}");
        // What the role does not list is refused, with the reason.
        for (sql, why) in [
            (
                "SELECT email FROM customers",
                "Column `email` may not be read",
            ),
            (
                "SELECT c.email FROM orders o JOIN customers c ON c.id = o.customer_id",
                "may not be read",
            ),
            (
                "SELECT name FROM products",
                "Table `products` may not be read",
            ),
            (
                "WITH x AS (SELECT email FROM customers) SELECT * FROM x",
                "Column `email` may not be read",
            ),
            (
                "SELECT (SELECT max(email) FROM customers) AS e",
                "Column `email` may not be read",
            ),
        ] {
            let error = sql_as(&config, who, sql).unwrap_err();
            assert!(error.contains(why), "{who}: {sql}: {error}");
        }
        seen.push(expected);
    }
    assert!(seen[0].is_disjoint(&seen[1]));
    attacks_hold(engine, &config);
    // Without a principal, every row.
    let all = sql_as(&config, "ada", "SELECT count(*) FROM orders").unwrap();
    let out = steward(
        &[
            "sql",
            "run",
            "-c",
            &config,
            "-f",
            "csv",
            "SELECT count(*) FROM orders",
        ],
        &[],
        "",
    );
    let total: usize = text(&out.stdout).lines().nth(1).unwrap().parse().unwrap();
    assert!(total > all[0].parse::<usize>().unwrap());
    assert_eq!(total.to_string(), client("SELECT count(*) FROM orders"));
}

/// Issue 21's attacks and their variants, through `sql run` and `tools call run_sql`: whatever comes back (rows
/// or the error) holds no e-mail (a forbidden column) and no other customer's name.
const ATTACKS: &[&str] = &[
    r#"SELECT 'n' AS n, 'x\''' || ' UNION ALL SELECT name, email FROM customers -- ' AS a"#,
    r#"SELECT 'n' AS n, 'x\''' || ' UNION ALL SELECT name, email FROM customers -- ' AS a FROM orders"#,
    r#"SELECT 'x\\' AS a, ' UNION ALL SELECT name, email FROM customers -- ' AS b FROM orders"#,
    r#"SELECT "x\\" AS a, ' UNION ALL SELECT name, email FROM customers -- ' AS b FROM orders"#,
    r#"SELECT $$x\'$$ || ' UNION ALL SELECT name, email FROM customers -- ' AS a FROM orders"#,
    r#"SELECT E'x\\\'' || ' UNION ALL SELECT name, email FROM customers -- ' AS a FROM orders"#,
    r#"SELECT `a\``` FROM (SELECT 1 AS `a\``) s, customers"#,
    r#"SELECT "a\""" FROM (SELECT 1 AS "a\"") s, customers"#,
    "SELECT * FROM orders WHERE false UNION ALL TABLE orders",
    "SELECT id, name, city FROM customers UNION ALL TABLE customers",
    "TABLE customers",
    "SELECT name FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)",
    "WITH RECURSIVE r AS (SELECT id, name FROM customers UNION SELECT c.id, c.name FROM customers c JOIN r ON c.id = r.id + 1) SELECT name FROM r",
    "SELECT name FROM customers AS orders",
    "SELECT (SELECT group_concat(name) FROM customers) AS n",
    "SELECT string_agg(name, ',') FROM customers",
    "SELECT reltuples FROM pg_class WHERE relname = 'customers'",
    "SELECT most_common_vals::text FROM pg_stats WHERE tablename = 'customers'",
    "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_NAME = 'customers'",
];

fn attacks_hold(engine: &Engine, config: &str) {
    let client = &engine.client;
    let emails: Vec<String> = client("SELECT email FROM customers")
        .lines()
        .map(str::to_owned)
        .collect();
    let others: Vec<String> = client(
        "SELECT name FROM customers WHERE name <> (SELECT name FROM customers WHERE id = 1)",
    )
    .lines()
    .map(str::to_owned)
    .collect();
    assert!(emails.len() > 10 && others.len() > 10);
    for sql in ATTACKS {
        let by_sql_run = match sql_as(config, "ada", sql) {
            Ok(rows) => rows.join("\n"),
            Err(e) => e,
        };
        let arguments = serde_json::json!({ "sql": sql }).to_string();
        let out = steward(
            &[
                "tools",
                "call",
                "-c",
                config,
                "--principal",
                "ada",
                "run_sql",
                &arguments,
            ],
            &[],
            "",
        );
        let by_tool = format!("{}{}", text(&out.stdout), text(&out.stderr));
        for shown in [&by_sql_run, &by_tool] {
            let leak = emails
                .iter()
                .chain(&others)
                .find(|v| shown.contains(v.as_str()));
            assert!(
                leak.is_none(),
                "{}: {sql}\nleaked {leak:?}:\n{shown}",
                engine.url
            );
        }
    }
}

#[test]
fn row_filters_hold_on_sqlite() {
    check(&sqlite());
}

#[test]
fn row_filters_hold_on_postgres() {
    if let Some(engine) = postgres() {
        check(&engine);
    }
}

#[test]
fn row_filters_hold_on_mariadb() {
    if let Some(engine) = mariadb() {
        check(&engine);
    }
}

#[tokio::test]
async fn the_model_sees_only_the_principals_rows_and_is_told_they_were_filtered() {
    let engine = sqlite();
    let config = config(&engine.url);
    let expected = (engine.client)("SELECT count(*) FROM orders WHERE customer_id = 1");
    let server = mock_openai(vec![
        tool_reply(
            "c1",
            "run_sql",
            r#"{"sql": "SELECT count(*) AS n FROM orders"}"#,
        ),
        text_reply("You have some orders."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &[
            "ask",
            "-c",
            &config,
            "--principal",
            "ada",
            "-a",
            "desk",
            "--no-store",
            "How many orders do I have?",
        ],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bodies = bodies(&server).await;
    let messages = bodies[1]["messages"].as_array().unwrap();
    let observation = messages.last().unwrap()["content"].as_str().unwrap();
    // Marked as data, and saying the rows were filtered.
    assert!(
        observation.starts_with(
            "<data source=\"run_sql\">\nRows were filtered by access policy: you see only the rows of orders"
        ),
        "{observation}"
    );
    assert!(observation.ends_with("\n</data>"), "{observation}");
    assert!(
        observation.contains(&format!("\n{expected}"))
            || observation.contains(&format!(" {expected}")),
        "{observation}"
    );
}
