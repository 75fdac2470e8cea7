//! `steward demo`, `steward tools` and the agents on the demo database, as a user runs them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::Value;

fn demo_db() -> String {
    format!("{}/demo.sqlite", scratch_dir("demo"))
}

fn sql_count(db: &str, sql: &str) -> i64 {
    let out = steward(&["sql", "run", "--db", db, "--json", sql], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    json["rows"][0][0].as_i64().unwrap()
}

#[test]
fn demo_without_a_model_creates_the_database_and_says_what_works() {
    let db = demo_db();
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("1. I spent $5 on a coffee today, tax rate 0.2, please track it"),
        "{stdout}"
    );
    assert!(
        stdout.contains("2. When is my order QZKDLWPRTM arriving?"),
        "{stdout}"
    );
    assert!(stdout.contains("5. "), "{stdout}");
    assert!(
        stdout.contains("No model is configured, so chat does not start."),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "steward tools call get_order '{{\"order_code\": \"QZKDLWPRTM\"}}' --db {db}"
        )),
        "{stdout}"
    );
    assert!(
        text(&out.stderr).contains("Created the demo database at"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(sql_count(&db, "SELECT COUNT(*) FROM orders"), 1000);
    assert_eq!(sql_count(&db, "SELECT COUNT(*) FROM expenses"), 2000);
}

#[test]
fn demo_keeps_an_existing_database_unless_forced() {
    let db = demo_db();
    assert_eq!(
        steward(&["demo", "--db", &db], &[], "").status.code(),
        Some(0)
    );
    let out = steward(
        &[
            "tools",
            "call",
            "--db",
            &db,
            "add_task",
            r#"{"title": "Keep me"}"#,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let out = steward(&["demo", "--db", &db], &[], "");
    assert!(
        text(&out.stderr).contains("already at"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(sql_count(&db, "SELECT COUNT(*) FROM tasks"), 31, "kept");
    let out = steward(&["demo", "--db", &db, "--force"], &[], "");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(sql_count(&db, "SELECT COUNT(*) FROM tasks"), 30, "rebuilt");
}

#[tokio::test]
async fn demo_refuses_to_clobber_a_database_that_is_not_a_demo() {
    let db = demo_db();
    // A user's database with a table named like one of the demo's.
    let user = steward_sql::Database::connect(&format!("sqlite://{db}?mode=rwc"))
        .await
        .unwrap();
    user.execute_script("CREATE TABLE orders (id INTEGER)")
        .await
        .unwrap();
    user.close().await;
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("already has tables named orders; --force replaces them"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn tools_list_shows_each_agents_tools_with_their_schemas() {
    let db = demo_db();
    steward(&["demo", "--db", &db], &[], "");
    let out = steward(&["tools", "list", "--db", &db, "--json"], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for name in [
        "add_expense",
        "list_expenses",
        "expense_summary",
        "get_order",
        "find_orders",
        "order_stats",
        "get_inbox_tasks",
        "get_projects",
        "get_tasks",
        "create_project",
        "move_task",
        "add_task",
        "complete_task",
        "list_tables",
        "describe_tables",
        "query_table",
        "run_sql",
        "current_date",
        "calculator",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert!(!names.iter().any(|n| n.starts_with("delete")));
    let add = tools.iter().find(|t| t["name"] == "add_expense").unwrap();
    assert!(
        add["parameters"].get("required").is_none(),
        "add_expense is lenient: {}",
        add["parameters"]
    );
    let get = tools.iter().find(|t| t["name"] == "get_order").unwrap();
    assert_eq!(
        get["parameters"]["properties"]["order_code"]["pattern"],
        "^[A-Z]{10}$"
    );
    assert!(
        get["description"]
            .as_str()
            .unwrap()
            .contains("order number")
    );
    let out = steward(
        &["tools", "list", "--db", &db, "--agent", "orders", "--json"],
        &[],
        "",
    );
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "get_order",
            "find_orders",
            "order_stats",
            "current_date",
            "calculator"
        ]
    );
}

#[test]
fn tools_call_validates_like_the_model_and_writes_once_per_call_id() {
    let db = demo_db();
    steward(&["demo", "--db", &db], &[], "");
    let args = r#"{"description": "Coffee", "category": "Coffee", "net_amount": 5, "tax_rate": 0.2, "date": "2026-11-21"}"#;
    let first = steward(
        &[
            "tools",
            "call",
            "--db",
            &db,
            "--call-id",
            "demo-1",
            "--json",
            "add_expense",
            args,
        ],
        &[],
        "",
    );
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let json: Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(json["ok"], true);
    assert!(
        json["content"].as_str().unwrap().ends_with("gross 6.00."),
        "{json}"
    );
    assert_eq!(json["data"]["value"]["gross_amount"], "6.00");
    let again = steward(
        &[
            "tools",
            "call",
            "--db",
            &db,
            "--call-id",
            "demo-1",
            "--json",
            "add_expense",
            args,
        ],
        &[],
        "",
    );
    assert_eq!(
        again.stdout, first.stdout,
        "the same call id returns the first result"
    );
    assert_eq!(sql_count(&db, "SELECT COUNT(*) FROM expenses"), 2001);
    assert_eq!(
        sql_count(
            &db,
            "SELECT COUNT(*) FROM audit_log WHERE call_id = 'demo-1'"
        ),
        1
    );
    let out = steward(
        &[
            "tools",
            "call",
            "--db",
            &db,
            "--json",
            "add_expense",
            r#"{"net_amount": 5}"#,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["ok"], false);
    assert_eq!(
        json["content"],
        "Missing values: description, date. Ask the user for them or use a tool that provides them."
    );
    let out = steward(
        &[
            "tools",
            "call",
            "--db",
            &db,
            "get_order",
            r#"{"order_code": "QZKDLWPRTM"}"#,
        ],
        &[],
        "",
    );
    assert!(
        text(&out.stdout).starts_with("Order QZKDLWPRTM: IN TRANSIT."),
        "{}",
        text(&out.stdout)
    );
    let out = steward(
        &["tools", "call", "--db", &db, "delete_task", "{}"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .contains("there is no tool named `delete_task` (did you mean `complete_task`?); the tools are: add_expense,"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn ask_on_the_demo_database_routes_to_the_orders_agent() {
    let data = scratch_dir("data");
    let out = steward(&["demo"], &[("XDG_DATA_HOME", &data)], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let server = mock_openai(vec![
        tool_reply(
            "r1",
            "orders",
            r#"{"request": "When is my order QZKDLWPRTM arriving?"}"#,
        ),
        tool_reply("o1", "get_order", r#"{"order_code": "QZKDLWPRTM"}"#),
        text_reply("QZKDLWPRTM is in transit; ETA 2026-11-23."),
        text_reply("Your order should arrive on 23 November."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &["ask", "--trace", "When is my order QZKDLWPRTM arriving?"],
        &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &data)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "Your order should arrive on 23 November.\n"
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("call orders {\"request\": \"When is my order QZKDLWPRTM arriving?\"}"),
        "{stderr}"
    );
    assert!(stderr.contains("  [orders]   call get_order"), "{stderr}");
    assert!(
        stderr.contains("  [orders]   result get_order: Order QZKDLWPRTM: IN TRANSIT."),
        "{stderr}"
    );
    assert!(stderr.contains("  [orders] answered"), "{stderr}");
    assert!(
        stderr.contains("answered · 2 steps · 770 tokens"),
        "tokens of every run are summed: {stderr}"
    );
}

#[test]
fn agents_that_need_the_demo_schema_say_so() {
    let db = demo_db();
    let created = steward(
        &[
            "sql",
            "run",
            "--db",
            &format!("sqlite://{db}?mode=rwc"),
            "SELECT 1",
        ],
        &[],
        "",
    );
    assert_eq!(created.status.code(), Some(0));
    let out = steward(
        &[
            "ask", "--db", &db, "--agent", "expenses", "--model", "openai:x", "hi",
        ],
        &[("OPENAI_API_KEY", "k")],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("the expenses agent needs the demo's tables"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn demo_opens_chat_when_a_model_is_configured() {
    let server = mock_openai(vec![text_reply("unused")]).await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &["demo", "--db", &demo_db()],
        &[("OPENAI_BASE_URL", &base)],
        "/exit\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("steward chat · openai:gpt-4o-mini"),
        "{}",
        text(&out.stderr)
    );
    assert!(!text(&out.stdout).contains("No model is configured"));
}

/// `steward demo --db URL` on a server without that database creates it, then the demo in it; a second run
/// keeps both.
fn demo_creates_a_missing_server_database(url: &str, name: &str) {
    let out = steward(&["demo", "--db", url], &[], "");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("Created the database `{name}` at ")),
        "{stderr}"
    );
    assert!(stderr.contains("Created the demo database at"), "{stderr}");
    assert_eq!(sql_count(url, "SELECT COUNT(*) FROM orders"), 1000);
    let out = steward(&["demo", "--db", url], &[], "");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("Created the database"), "{stderr}");
    assert!(stderr.contains("already at"), "{stderr}");
}

#[test]
fn demo_creates_a_missing_postgres_database() {
    if !postgres_up() {
        return;
    }
    let name = fresh_name("steward");
    let (url, _cleanup) = ServerDb::postgres(&name);
    demo_creates_a_missing_server_database(&url, &name);
}

#[test]
fn demo_creates_a_missing_mariadb_database() {
    if !mariadb_up() {
        return;
    }
    // A backtick in the name: MySQL's quote character, doubled inside the quoted name.
    let name = fresh_name("steward`");
    let (url, _cleanup) = ServerDb::mariadb(&name);
    demo_creates_a_missing_server_database(&url, &name);
}

#[test]
fn demo_on_a_server_that_does_not_answer_creates_nothing_and_says_why() {
    let out = steward(
        &[
            "demo",
            "--db",
            "postgres://postgres@127.0.0.1:9/nothing_here",
        ],
        &[],
        "",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("Created the database"), "{stderr}");
    assert!(stderr.contains("connection refused"), "{stderr}");
}
