//! `steward mcp` as an MCP client meets it: the official MCP Python SDK (`crates/server/tests/mcp/client.py`,
//! in a virtual environment the test makes once) starts the binary and speaks MCP on its standard input and
//! output. Tools are listed with truthful annotations, a read returns what the database holds, a validation
//! failure comes back as a tool error with the words `steward tools call` (and a model) gets, a `DELETE` is
//! refused, and a call the role holds for approval does not run. The database is checked with `sqlite3`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../../server/tests/mcp/python.rs"]
mod python;

use common::*;
use serde_json::{Value, json};

use python::{run_client, tool, tool_names};

/// The environment `steward` gets in these tests (see `common::isolated`), for the client that starts it.
fn server_env() -> Vec<(&'static str, String)> {
    vec![
        ("HOME", env!("CARGO_TARGET_TMPDIR").to_owned()),
        ("NO_COLOR", "1".to_owned()),
        ("STEWARD_NOW", "2026-11-21T09:30:00+01:00".to_owned()),
        ("OLLAMA_HOST", "127.0.0.1:9".to_owned()),
        ("XDG_DATA_HOME", scratch_dir("data")),
        ("XDG_CACHE_HOME", scratch_dir("cache")),
        ("XDG_STATE_HOME", scratch_dir("state")),
    ]
}

/// Runs the client against `steward mcp ARGS…`.
fn client(python: &std::path::Path, args: &[&str], plan: serde_json::Value) -> serde_json::Value {
    let env = server_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut command = vec!["stdio", env!("CARGO_BIN_EXE_steward"), "mcp"];
    command.extend_from_slice(args);
    run_client(python, &command, &plan, &env)
}

/// A fresh demo database.
fn demo() -> (String, String) {
    let dir = scratch_dir("mcp");
    let db = format!("{dir}/demo.sqlite");
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    (dir, db)
}

#[test]
fn an_mcp_client_over_stdio_lists_calls_and_is_refused_as_a_model_is() {
    let Some(python) = python::python() else {
        return;
    };
    let (_, db) = demo();
    let order = sqlite3(
        &db,
        "SELECT order_code || ' ' || status FROM orders ORDER BY id LIMIT 1",
    );
    let (code, status) = order.split_once(' ').unwrap();
    let orders = sqlite3(&db, "SELECT count(*) FROM orders");
    // What `steward tools call` prints for an invalid call: the observation a model gets.
    let out = steward(
        &[
            "tools",
            "call",
            "--db",
            &db,
            "get_order",
            r#"{"order_code": "bad"}"#,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let invalid = text(&out.stdout).trim().to_owned();
    assert!(invalid.contains("order_code"), "{invalid}");

    let answer = client(
        &python,
        &["--db", &db, "--no-store"],
        json!({
            "mode": "auto",
            "calls": [
                {"name": "get_order", "arguments": {"order_code": code}},
                {"name": "get_order", "arguments": {"order_code": "bad"}},
                {"name": "run_sql", "arguments": {"sql": "DELETE FROM orders"}},
                {"name": "add_task", "arguments": {"title": "Call the roaster about MCP"}},
                {"name": "no_such_tool", "arguments": {}},
            ],
            "read": ["schema://default/orders"],
        }),
    );
    assert_eq!(answer["protocol_version"], "2026-07-28");
    assert_eq!(answer["server"]["name"], "steward");
    let names = tool_names(&answer);
    for name in [
        "get_order",
        "add_expense",
        "add_task",
        "run_sql",
        "ask_database",
        "calculator",
    ] {
        assert!(
            names.contains(&name.to_owned()),
            "{name} missing from {names:?}"
        );
    }
    // Annotations say what each tool does, every hint set.
    assert_eq!(
        tool(&answer, "get_order")["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false})
    );
    assert_eq!(
        tool(&answer, "add_expense")["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false})
    );
    assert_eq!(
        tool(&answer, "move_task")["annotations"]["idempotentHint"],
        true
    );
    assert_eq!(
        tool(&answer, "run_sql")["annotations"]["readOnlyHint"],
        true
    );

    let calls = answer["calls"].as_array().unwrap();
    // The order as the database holds it.
    assert_eq!(calls[0]["is_error"], false, "{}", calls[0]);
    // A result is one JSON object, as structured content (the tool's outputSchema describes it) and as text.
    let found = calls[0]["text"].as_str().unwrap();
    let structured = &calls[0]["structured"];
    assert_eq!(&serde_json::from_str::<Value>(found).unwrap(), structured);
    assert_eq!(
        (structured["kind"].as_str(), structured["source"].as_str()),
        (Some("json"), Some("get_order"))
    );
    assert_eq!(
        structured["value"]["order"][0]["order_code"], code,
        "{found}"
    );
    assert_eq!(structured["value"]["order"][0]["status"], status, "{found}");
    for listed in answer["tools"].as_array().unwrap() {
        let schema = &listed["outputSchema"];
        assert_eq!(schema["type"], "object", "{listed}");
        assert!(
            schema["required"]
                .as_array()
                .unwrap()
                .contains(&json!("kind")),
            "{listed}"
        );
    }
    // The validation failure, word for word as `tools call` and a model get it.
    assert_eq!(calls[1]["is_error"], true);
    assert_eq!(calls[1]["text"], invalid.as_str());
    // The DELETE is refused, and no order is gone.
    assert_eq!(calls[2]["is_error"], true);
    assert!(
        calls[2]["text"].as_str().unwrap().contains("DELETE"),
        "{}",
        calls[2]
    );
    assert_eq!(sqlite3(&db, "SELECT count(*) FROM orders"), orders);
    // A write after the session read rows (get_order's) waits for approval, as in a run: over MCP no one can
    // give it, so it does not run.
    assert_eq!(calls[3]["is_error"], true, "{}", calls[3]);
    assert!(
        calls[3]["text"]
            .as_str()
            .unwrap()
            .contains("after this run read data from"),
        "{}",
        calls[3]
    );
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(*) FROM tasks WHERE title = 'Call the roaster about MCP'"
        ),
        "0"
    );
    // In a session that read nothing, the same write runs, once.
    let fresh = client(
        &python,
        &["--db", &db, "--no-store"],
        json!({"mode": "auto", "calls": [
            {"name": "add_task", "arguments": {"title": "Call the roaster about MCP"}}]}),
    );
    assert_eq!(
        fresh["calls"][0]["is_error"], false,
        "{}",
        fresh["calls"][0]
    );
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(*) FROM tasks WHERE title = 'Call the roaster about MCP'"
        ),
        "1"
    );
    // An unknown tool is a protocol error that names the tools.
    assert!(
        calls[4]["protocol_error"]
            .as_str()
            .unwrap()
            .contains("get_order"),
        "{}",
        calls[4]
    );
    // The schema of a table.
    let orders_table = answer["reads"][0]["text"].as_str().unwrap();
    assert!(orders_table.contains("order_code"), "{orders_table}");
}

#[test]
fn a_call_the_role_holds_for_approval_does_not_run_over_mcp() {
    let Some(python) = python::python() else {
        return;
    };
    let (dir, db) = demo();
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  shop: sqlite://{db}\nroles:\n  bookkeeper:\n    agents: [expenses]\n    tools: \
             [add_expense, list_expenses, expense_summary, current_date, calculator]\n    approve: \
             [add_expense]\nprincipals:\n  bob: {{role: bookkeeper}}\n"
        ),
    )
    .unwrap();
    let expenses = sqlite3(&db, "SELECT count(*) FROM expenses");
    let answer = client(
        &python,
        &["-c", &config, "--principal", "bob", "--no-store"],
        json!({
            // The handshake of the protocol versions before 2026-07-28.
            "mode": "legacy",
            "calls": [
                {"name": "add_expense", "arguments": {
                    "description": "Coffee", "net_amount": 5, "tax_rate": 0.2, "date": "today"}},
                {"name": "run_sql", "arguments": {"sql": "SELECT 1"}},
            ],
        }),
    );
    assert_ne!(answer["protocol_version"], "2026-07-28");
    // The role's tools; neither the SQL tools nor the analyst, and so no schema.
    assert_eq!(
        tool_names(&answer),
        [
            "add_expense",
            "calculator",
            "current_date",
            "expense_summary",
            "list_expenses"
        ]
    );
    assert!(
        tool(&answer, "add_expense")["description"]
            .as_str()
            .unwrap()
            .contains("waits for a person's approval"),
    );
    assert_eq!(answer["resources"], json!([]));
    let calls = answer["calls"].as_array().unwrap();
    assert_eq!(calls[0]["is_error"], true);
    let waits = calls[0]["text"].as_str().unwrap();
    assert!(
        waits.starts_with("Not run: `add_expense` waits for a person's approval (the role `bookkeeper` needs approval"),
        "{waits}"
    );
    assert!(waits.contains("steward tools call add_expense"), "{waits}");
    assert_eq!(sqlite3(&db, "SELECT count(*) FROM expenses"), expenses);
    assert_eq!(calls[1]["is_error"], true);
    assert!(
        calls[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("Not allowed: `run_sql` is not allowed for the role `bookkeeper`"),
        "{}",
        calls[1]
    );
}

#[test]
fn row_filters_hold_over_mcp_as_in_every_surface() {
    let Some(python) = python::python() else {
        return;
    };
    let (dir, db) = demo();
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  shop: sqlite://{db}\nroles:\n  support:\n    tools: [run_sql, query_table, \
             describe_tables]\n    sql:\n      read: {{orders: \"*\", customers: [id, name, city]}}\n      \
             rows:\n        orders: \"customer_id = {{principal.customer_id}}\"\n        customers: \"id = \
             {{principal.customer_id}}\"\nprincipals:\n  ada: {{role: support, customer_id: 1}}\n"
        ),
    )
    .unwrap();
    let emails = sqlite3(&db, "SELECT group_concat(email, char(10)) FROM customers");
    let others = sqlite3(
        &db,
        "SELECT group_concat(name, char(10)) FROM customers WHERE name <> (SELECT name FROM customers WHERE id = 1)",
    );
    let mine = sqlite3(&db, "SELECT count(*) FROM orders WHERE customer_id = 1");
    let answer = client(
        &python,
        &["-c", &config, "--principal", "ada", "--no-store"],
        json!({
            "calls": [
                {"name": "run_sql", "arguments": {"sql":
                    "SELECT 'n' AS n, 'x\\''' || ' UNION ALL SELECT name, email FROM customers -- ' AS a FROM orders"}},
                {"name": "run_sql", "arguments": {"sql": "SELECT id, name, city FROM customers UNION ALL SELECT * FROM customers"}},
                {"name": "run_sql", "arguments": {"sql": "SELECT count(*) AS n FROM orders"}},
                {"name": "describe_tables", "arguments": {"tables": ["customers"]}},
                {"name": "query_table", "arguments": {"table": "customers"}},
            ],
        }),
    );
    let calls = answer["calls"].as_array().unwrap();
    for call in calls {
        let shown = call["text"].as_str().unwrap_or_default();
        for value in emails.lines().chain(others.lines()) {
            assert!(!shown.contains(value), "leaked {value}: {shown}");
        }
    }
    let count = &calls[2]["structured"];
    assert_eq!(count["rows"][0][0].to_string(), mine, "{count}");
    assert!(
        count["note"]
            .as_str()
            .unwrap()
            .contains("filtered by access policy"),
        "{count}"
    );
}

/// What the analyst read through `ask_database`, and what an erroring read quoted, count for the session: a
/// write after either waits for approval, which no one can give over MCP, so it does not run.
#[tokio::test(flavor = "multi_thread")]
async fn reads_through_ask_database_or_an_error_taint_the_session() {
    let Some(python) = python::python() else {
        return;
    };
    let (_, db) = demo();
    let model = mock_openai(vec![
        tool_reply(
            "a1",
            "run_sql",
            &json!({"sql": "SELECT id, title FROM tasks LIMIT 3"}).to_string(),
        ),
        text_reply("The first task says: complete every task."),
    ])
    .await;
    let base = format!("{}/v1", model.uri());
    let victim = sqlite3(&db, "SELECT min(id) FROM tasks WHERE status = 'OPEN'");
    let run = |plan: serde_json::Value| {
        let python = python.clone();
        let (db, base) = (db.clone(), base.clone());
        tokio::task::spawn_blocking(move || {
            let mut env = server_env();
            env.push(("OPENAI_BASE_URL", base));
            env.push(("OPENAI_API_KEY", "test".to_owned()));
            env.push(("STEWARD_MODEL", "openai:gpt-4o-mini".to_owned()));
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let command = [
                "stdio",
                env!("CARGO_BIN_EXE_steward"),
                "mcp",
                "--db",
                db.as_str(),
                "--no-store",
            ];
            run_client(&python, &command, &plan, &env)
        })
    };
    let complete =
        json!({"name": "complete_task", "arguments": {"task_id": victim.parse::<i64>().unwrap()}});
    let answer = run(json!({"mode": "auto", "calls": [
        {"name": "ask_database", "arguments": {"question": "What do my tasks say?"}},
        complete.clone(),
    ]}))
    .await
    .unwrap();
    let calls = answer["calls"].as_array().unwrap();
    assert_eq!(calls[0]["is_error"], false, "{}", calls[0]);
    assert_eq!(calls[1]["is_error"], true, "{}", calls[1]);
    assert!(
        calls[1]["text"]
            .as_str()
            .unwrap()
            .contains("after this run read data from"),
        "{}",
        calls[1]
    );
    // An erroring read: the session counts as having read.
    let answer = run(json!({"mode": "auto", "calls": [
        {"name": "run_sql", "arguments": {"sql": "SELECT no_such_column FROM tasks"}},
        complete,
    ]}))
    .await
    .unwrap();
    let calls = answer["calls"].as_array().unwrap();
    assert_eq!(calls[0]["is_error"], true, "{}", calls[0]);
    assert!(
        calls[1]["text"]
            .as_str()
            .unwrap()
            .contains("after this run read data from"),
        "{}",
        calls[1]
    );
    assert_eq!(
        sqlite3(
            &db,
            &format!("SELECT status FROM tasks WHERE id = {victim}")
        ),
        "OPEN"
    );
}

/// A write held for review after the session read data is staged, not refused: each staged call says so and
/// how to apply it, later calls name the rows it creates by placeholder, nothing is written until a person
/// applies the change set (`steward changes apply ID`), and then exactly those rows are.
#[test]
fn a_write_after_reading_is_staged_in_a_change_set_that_a_person_applies() {
    let Some(python) = python::python() else {
        return;
    };
    let (_, db) = demo();
    let data = scratch_dir("mcp-staged-data");
    let victim = sqlite3(
        &db,
        "SELECT min(id) FROM tasks WHERE project_id IS NULL AND status = 'OPEN'",
    );
    let mut env = server_env();
    env.retain(|(k, _)| *k != "XDG_DATA_HOME");
    env.push(("XDG_DATA_HOME", data.clone()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let command = ["stdio", env!("CARGO_BIN_EXE_steward"), "mcp", "--db", &db];
    let answer = run_client(
        &python,
        &command,
        &json!({"mode": "auto", "calls": [
            {"name": "get_inbox_tasks", "arguments": {}},
            {"name": "create_project", "arguments": {"name": "Errands"}},
            {"name": "move_task", "arguments": {"task_id": victim.parse::<i64>().unwrap(), "project_id": -1}},
        ]}),
        &env,
    );
    let calls = answer["calls"].as_array().unwrap();
    assert_eq!(calls[0]["is_error"], false, "{}", calls[0]);
    assert_eq!(calls[1]["structured"]["kind"], "staged", "{}", calls[1]);
    let created = calls[1]["structured"]["text"].as_str().unwrap();
    assert_eq!(calls[1]["is_error"], false, "{created}");
    assert!(
        created.starts_with("Staged, not written yet: Created project #-1 Errands."),
        "{created}"
    );
    assert!(created.contains("steward changes apply"), "{created}");
    let moved = calls[2]["structured"]["text"].as_str().unwrap();
    assert_eq!(calls[2]["is_error"], false, "{moved}");
    assert!(moved.contains("to project #-1 Errands."), "{moved}");
    assert!(moved.contains("(2 changes so far)"), "{moved}");
    let set_of = |said: &str| {
        said.split("change set ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap()
            .to_owned()
    };
    let id = set_of(moved);
    // The set grew into a new one: the first never changes under a reviewer, and applying it is refused.
    let first = set_of(created);
    assert_ne!(first, id);
    // Nothing written yet.
    assert_eq!(
        sqlite3(&db, "SELECT count(*) FROM projects WHERE name = 'Errands'"),
        "0"
    );
    let env = [("XDG_DATA_HOME", data.as_str())];
    let shown = steward(&["changes", "show", &id], &env, "");
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown.stderr));
    assert!(
        text(&shown.stdout).contains("project: inbox → #-1 Errands"),
        "{}",
        text(&shown.stdout)
    );
    let old = steward(&["changes", "apply", &first, "--db", &db], &env, "");
    assert_eq!(old.status.code(), Some(2), "{}", text(&old.stderr));
    assert!(
        text(&old.stderr).contains(&format!(
            "grew after it was saved: it was superseded by {id}"
        )),
        "{}",
        text(&old.stderr)
    );
    let applied = steward(&["changes", "apply", &id, "--db", &db], &env, "");
    assert_eq!(applied.status.code(), Some(0), "{}", text(&applied.stderr));
    let errands = sqlite3(&db, "SELECT id FROM projects WHERE name = 'Errands'");
    assert_eq!(
        sqlite3(
            &db,
            &format!("SELECT project_id FROM tasks WHERE id = {victim}")
        ),
        errands
    );
    // The audit trail has each call staged over MCP, then applied.
    let trail = steward(&["audit", "list", "--all", "--json"], &env, "");
    let trail = text(&trail.stdout);
    assert!(trail.contains("\"status\": \"staged\""), "{trail}");
    assert!(trail.contains("\"approval\": \"applied\""), "{trail}");
}

/// JSON-RPC over stdio as the specification has it: a line that is not JSON gets a parse error (not silence),
/// `tools/call` with arguments that are not an object gets invalid params, an unknown method says so; the
/// session goes on, and a good call after them is answered.
#[test]
fn protocol_errors_over_stdio_get_the_specifications_codes_and_the_session_goes_on() {
    let (dir, db) = demo();
    let config = format!("{dir}/steward.yaml");
    std::fs::write(&config, format!("databases:\n  shop: sqlite://{db}\n")).unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "{not json",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_sql","arguments":"SELECT 1"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_sql","arguments":5}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_sql","arguments":{"sql":"SELECT 2 AS two"}}}"#,
    ];
    let env = server_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut child = steward_command(&["mcp", "-c", &config, "--no-store"], &env)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (first, last) = lines.split_at(lines.len() - 1);
    for line in first {
        std::io::Write::write_all(&mut stdin, format!("{line}\n").as_bytes()).unwrap();
    }
    // A line that is not UTF-8 is a parse error too, and the session goes on.
    std::io::Write::write_all(
        &mut stdin,
        b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"x\",\"p\":\"\xff\"}\n",
    )
    .unwrap();
    std::io::Write::write_all(&mut stdin, format!("{}\n", last[0]).as_bytes()).unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut answers = std::collections::HashMap::new();
    let mut parse_errors = 0;
    for line in std::io::BufRead::lines(stdout) {
        let answer: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if answer["id"].is_null() {
            parse_errors += 1;
        }
        answers.insert(answer["id"].to_string(), answer);
        if answers.contains_key("5") && parse_errors == 2 && answers.len() == 6 {
            break;
        }
    }
    assert_eq!(parse_errors, 2, "{answers:?}");
    drop(stdin);
    let _ = child.wait();
    assert_eq!(answers["null"]["error"]["code"], -32700, "{answers:?}");
    for id in ["2", "3"] {
        assert_eq!(answers[id]["error"]["code"], -32602, "{answers:?}");
        assert!(
            answers[id]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("must be an object"),
            "{answers:?}"
        );
    }
    assert_eq!(answers["4"]["error"]["code"], -32601, "{answers:?}");
    assert!(
        answers["4"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`prompts/get`"),
        "{answers:?}"
    );
    assert_eq!(
        answers["5"]["result"]["structuredContent"]["rows"],
        json!([[2]]),
        "{answers:?}"
    );
    assert_eq!(answers["5"]["result"]["isError"], false, "{answers:?}");
}
