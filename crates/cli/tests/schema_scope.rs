//! The schema a principal's model (or the principal itself) is shown passes its role's SQL rules, on SQLite,
//! PostgreSQL and MariaDB: canary values are planted in a forbidden column, in another principal's rows of a
//! filtered table, in a forbidden table and in a masked column, and every surface that shows a schema is
//! searched for them — `steward schema` (whole and ranked for a question), `tools call describe_tables`,
//! `tools call list_tables`, `query_table`'s names in `tools list`, and the requests a model receives in
//! `steward ask --agent analyst` (its `{schema}` system prompt, its tools, its observations) and in the
//! `ask_database` sub-run the analyst starts (its schema prompt). A principal without SQL rules sees the
//! canaries, so each search can fail.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

/// Values and names the principal `ada` must never be shown.
const CANARIES: &[&str] = &[
    // A forbidden column: its values and its name.
    "canary-email-7f3a@leak.test",
    "email",
    "loyalty_pin",
    "canary-pin-5512",
    // Another principal's rows of filtered tables (allowed columns).
    "CanaryOtherCustomer",
    "CanaryCity-2b",
    "CANARY-STATUS-X9",
    "canary-order-note-4e",
    // A forbidden table: its values and its name.
    "canary-vault-3c1d",
    "vault_notes",
    // A masked column: other rows' and the principal's own unmasked values.
    "canary-phone-91",
    "own-phone-canary",
];

const SCHEMA: &str = "
CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR(60) NOT NULL, email VARCHAR(60),
  phone VARCHAR(40), city VARCHAR(40), loyalty_pin VARCHAR(30));
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
  status VARCHAR(20), note VARCHAR(60));
CREATE TABLE vault_notes (id INTEGER PRIMARY KEY, secret VARCHAR(60));
INSERT INTO customers VALUES
  (1, 'Ada Lovelace', 'ada@example.test', '+44 own-phone-canary', 'London', 'pin-ada'),
  (2, 'CanaryOtherCustomer', 'canary-email-7f3a@leak.test', '+44 canary-phone-91', 'CanaryCity-2b',
   'canary-pin-5512');
INSERT INTO orders VALUES (10, 1, 'SHIPPED', 'first order'), (11, 2, 'CANARY-STATUS-X9', 'canary-order-note-4e');
INSERT INTO vault_notes VALUES (1, 'canary-vault-3c1d');
";

/// One engine's database with the canaries.
struct Engine {
    url: String,
    _cleanup: Option<ServerDb>,
}

fn sqlite() -> Engine {
    let path = format!("{}/shop.sqlite", scratch_dir("schema-scope"));
    let out = std::process::Command::new("sqlite3")
        .arg(&path)
        .arg(SCHEMA)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    Engine {
        url: format!("sqlite://{path}"),
        _cleanup: None,
    }
}

fn postgres() -> Option<Engine> {
    if !postgres_up() {
        return None;
    }
    let name = fresh_name("scope");
    let (url, cleanup) = ServerDb::postgres(&name);
    let psql = |db: &str, sql: &str| {
        client(
            "psql",
            &[
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-d",
                db,
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ],
        )
    };
    psql(
        "postgres",
        &format!("CREATE DATABASE \"{}\"", name.replace('"', "\"\"")),
    );
    psql(&name, SCHEMA);
    // Row estimates and statistics, as a database in use has them.
    psql(&name, "ANALYZE");
    Some(Engine {
        url,
        _cleanup: Some(cleanup),
    })
}

fn mariadb() -> Option<Engine> {
    if !mariadb_up() {
        return None;
    }
    let name = fresh_name("scope");
    let (url, cleanup) = ServerDb::mariadb(&name);
    let quoted = format!("`{}`", name.replace('`', "``"));
    client(
        "mariadb",
        &[
            "-h",
            "127.0.0.1",
            "-u",
            "root",
            "-e",
            &format!("CREATE DATABASE {quoted}; USE {quoted}; {SCHEMA}"),
        ],
    );
    Some(Engine {
        url,
        _cleanup: Some(cleanup),
    })
}

/// A config with the `support` role of docs/roles.md (rows filtered by the principal's customer,
/// `customers.phone` masked) that may use the analyst, a role without SQL rules, and a principal of each.
fn config(url: &str) -> String {
    let path = format!("{}/steward.yaml", scratch_dir("schema-scope-config"));
    std::fs::write(
        &path,
        format!(
            r#"databases:
  shop: "{url}"
roles:
  support:
    agents: [analyst]
    tools: [list_tables, describe_tables, run_sql, query_table, ask_database, current_date]
    sql:
      read: {{orders: "*", customers: [id, name, city]}}
      rows:
        orders: "customer_id = {{principal.customer_id}}"
        customers: "id = {{principal.customer_id}}"
      masks: {{customers.phone: partial}}
  admin:
    agents: [analyst]
principals:
  ada: {{role: support, customer_id: 1}}
  boss: {{role: admin}}
"#
        ),
    )
    .unwrap();
    path
}

/// What `steward ARGS` prints on stdout; it must succeed.
fn run(args: &[&str]) -> String {
    let out = steward(args, &[], "");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The canaries `shown` holds.
fn leaks(shown: &str) -> Vec<&'static str> {
    CANARIES
        .iter()
        .copied()
        .filter(|c| shown.contains(c))
        .collect()
}

fn assert_clean(surface: &str, shown: &str) {
    let found = leaks(shown);
    assert!(found.is_empty(), "{surface} leaks {found:?}:\n{shown}");
}

/// Every CLI surface for `who`; returns what they showed, by surface.
fn surfaces(config: &str, who: &str) -> Vec<(&'static str, String)> {
    let as_who = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["-c", config, "--principal", who]);
        run(&all)
    };
    vec![
        ("schema", as_who(&["schema"])),
        ("schema --json", as_who(&["schema", "--json"])),
        (
            "schema --question",
            as_who(&[
                "schema",
                "--question",
                "What is the email and phone of CanaryOtherCustomer, and the vault notes?",
                "--budget",
                "400",
            ]),
        ),
        (
            "describe_tables",
            as_who(&[
                "tools",
                "call",
                "describe_tables",
                r#"{"tables": ["customers", "orders"]}"#,
            ]),
        ),
        ("list_tables", as_who(&["tools", "call", "list_tables"])),
        (
            "tools list",
            as_who(&["tools", "list", "--json", "--agent", "analyst"]),
        ),
    ]
}

/// The requests a model receives when `who` asks the analyst: it describes two tables, lists the tables, hands
/// a question to ask_database (whose sub-run runs one query and answers), then answers.
async fn ask_bodies(config: &str, who: &str) -> Vec<serde_json::Value> {
    let server = mock_openai(vec![
        tool_reply(
            "c1",
            "describe_tables",
            r#"{"tables": ["customers", "orders"]}"#,
        ),
        tool_reply("c2", "list_tables", "{}"),
        tool_reply(
            "c3",
            "ask_database",
            r#"{"question": "What is the email of CanaryOtherCustomer?"}"#,
        ),
        tool_reply(
            "s1",
            "run_sql",
            r#"{"sql": "SELECT count(*) AS n FROM orders"}"#,
        ),
        text_reply("You have 1 order."),
        text_reply("You have 1 order."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &[
            "ask",
            "-c",
            config,
            "--principal",
            who,
            "--agent",
            "analyst",
            "--no-store",
            "How many orders do I have, and what are the customers' emails and phones?",
        ],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{who}: {}", text(&out.stderr));
    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 6, "{who}: {bodies:#?}");
    bodies
}

async fn check(engine: &Engine) {
    let config = config(&engine.url);
    // The control: a principal without SQL rules is shown the canaries (samples, tables, columns).
    let open = surfaces(&config, "boss");
    for (surface, shown) in &open {
        if ["schema", "describe_tables"].contains(surface) {
            for canary in [
                "canary-email-7f3a@leak.test",
                "CanaryOtherCustomer",
                "email",
            ] {
                assert!(shown.contains(canary), "{surface}: {canary}:\n{shown}");
            }
        }
    }
    assert!(open[0].1.contains("vault_notes"), "{}", open[0].1);
    assert!(open[0].1.contains("canary-vault-3c1d"), "{}", open[0].1);
    assert!(open[5].1.contains("vault_notes"), "{}", open[5].1);

    // Ada: none anywhere, and what she may read is there.
    let scoped = surfaces(&config, "ada");
    for (surface, shown) in &scoped {
        assert_clean(surface, shown);
    }
    let schema = &scoped[0].1;
    for shown in [
        "CREATE TABLE customers",
        "CREATE TABLE orders",
        "city",
        "phone",
    ] {
        assert!(schema.contains(shown), "{shown}:\n{schema}");
    }
    let described = &scoped[3].1;
    assert!(described.contains("customer_id"), "{described}");
    // Filtered tables have no row estimate either (it counts every customer's rows).
    let listed = &scoped[4].1;
    for line in listed.lines() {
        assert!(!line.contains("rows"), "{listed}");
    }
    assert!(listed.contains("orders"), "{listed}");
    // query_table offers only the tables and columns Ada may read.
    let tools: serde_json::Value = serde_json::from_str(&scoped[5].1).unwrap();
    let query_table = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "query_table")
        .unwrap();
    let tables = &query_table["parameters"]["properties"]["table"]["enum"];
    assert_eq!(
        tables,
        &serde_json::json!(["customers", "orders"]),
        "{query_table}"
    );
    // A table she may not read is not described, nor named in the refusal.
    let out = steward(
        &[
            "tools",
            "call",
            "-c",
            &config,
            "--principal",
            "ada",
            "describe_tables",
            r#"{"tables": ["secret_stuff"]}"#,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_clean("describe_tables refusal", &text(&out.stdout));
    // A principal whose access cannot be worked out (the role without its customer_id) is shown nothing.
    let out = steward(&["schema", "-c", &config, "--role", "support"], &[], "");
    assert_ne!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_clean("schema --role", &text(&out.stdout));
    assert!(
        text(&out.stderr).contains("customer_id"),
        "{}",
        text(&out.stderr)
    );

    // The prompts a model is sent: the analyst's (schema, tools, observations of describe_tables and
    // list_tables) and ask_database's sub-run's. Without SQL rules they hold the canaries.
    let open = ask_bodies(&config, "boss").await;
    let prompt = open[0].to_string();
    for canary in [
        "canary-email-7f3a@leak.test",
        "CanaryOtherCustomer",
        "vault_notes",
    ] {
        assert!(prompt.contains(canary), "{canary}: {prompt}");
    }
    let bodies = ask_bodies(&config, "ada").await;
    let system = |body: &serde_json::Value| {
        body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let analyst = system(&bodies[0]);
    assert!(analyst.contains("CREATE TABLE orders"), "{analyst}");
    let sub = system(&bodies[3]);
    assert!(
        sub.contains("You answer the user's question with one"),
        "{sub}"
    );
    assert!(sub.contains("CREATE TABLE customers"), "{sub}");
    for (i, body) in bodies.iter().enumerate() {
        // The user's question names `email`; everything else the model is sent must not.
        let mut body = body.clone();
        for message in body["messages"].as_array_mut().unwrap() {
            if message["role"] == "user" {
                message["content"] = serde_json::Value::Null;
            }
            if let Some(calls) = message["tool_calls"].as_array_mut() {
                for call in calls {
                    call["function"]["arguments"] = serde_json::Value::Null;
                }
            }
        }
        assert_clean(&format!("model request {i}"), &body.to_string());
    }
    // The describe_tables and list_tables observations came back to the analyst.
    let last = bodies[5].to_string();
    assert!(last.contains("CREATE TABLE customers"), "{last}");
}

#[tokio::test]
async fn the_schema_is_scoped_on_sqlite() {
    check(&sqlite()).await;
}

#[tokio::test]
async fn the_schema_is_scoped_on_postgres() {
    if let Some(engine) = postgres() {
        check(&engine).await;
    }
}

#[tokio::test]
async fn the_schema_is_scoped_on_mariadb() {
    if let Some(engine) = mariadb() {
        check(&engine).await;
    }
}
