//! One governed path: the same role, the same refusals, the same approval wait and the same audit record for the
//! same call, whichever surface it comes through — `steward tools call`, `steward ask`, `steward mcp` (stdio),
//! the server's API, `/v1` and `/mcp` (HTTP). Every surface writes one run store; `steward audit list` is read at
//! the end and must hold each surface's write (an expense row that is really in the database), its refusal and
//! its wait, marked with the surface it came through.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../../server/tests/mcp/python.rs"]
mod python;

use common::*;
use serde_json::{Value, json};

/// The demo database, and a config whose default principal `bob` is a clerk: the `expenses` agent only, its
/// tools without `run_sql`, and every `calculator` call waits for approval.
fn shop() -> (String, String, String) {
    let (dir, db) = demo_in("one-path");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  shop: sqlite://{db}\nroles:\n  clerk:\n    agents: [expenses]\n    \
             tools: [add_expense, list_expenses, current_date, calculator]\n    approve: [calculator]\n\
             principals:\n  bob: {{role: clerk}}\ndefaults:\n  principal: bob\n  agent: expenses\n"
        ),
    )
    .unwrap();
    (db, config, format!("{dir}/store.sqlite"))
}

fn expense(description: &str) -> String {
    json!({"description": description, "net_amount": 5, "tax_rate": 0.2, "date": "2026-11-20"})
        .to_string()
}

/// A mock model that records one expense, then asks for the calculator (which waits for approval).
async fn model(description: &str) -> wiremock::MockServer {
    mock_openai(vec![
        tool_reply("w1", "add_expense", &expense(description)),
        tool_reply("c1", "calculator", r#"{"expression": "6 * 1.2"}"#),
        text_reply("done"),
    ])
    .await
}

fn audit(config: &str, store: &str) -> Vec<Value> {
    let out = steward(
        &[
            "audit", "list", "--json", "-n", "1000", "-c", config, "--store", store,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The one record of the call of `tool` whose arguments contain `marker`, made through `surface`.
fn record<'a>(records: &'a [Value], surface: &str, tool: &str, marker: &str) -> &'a Value {
    let found: Vec<&Value> = records
        .iter()
        .filter(|r| {
            r["surface"] == surface
                && r["tool"] == tool
                && r["arguments"].as_str().unwrap().contains(marker)
        })
        .collect();
    assert_eq!(found.len(), 1, "{surface} {tool} {marker}: {records:#?}");
    found[0]
}

fn check_common(record: &Value) {
    assert_eq!(record["principal"], "bob", "{record}");
    assert_eq!(record["role"], "clerk", "{record}");
}

async fn post(base: &str, path: &str, body: Value) -> (u16, String) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let response = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_surface_takes_the_same_governed_path() {
    let Some(python) = python::python() else {
        return;
    };
    let (db, config, store) = shop();
    let data = scratch_dir("one-path-data");
    let env = [("XDG_DATA_HOME", data.as_str())];

    // `steward tools call`: the write runs, run_sql is refused by the role, the calculator waits (no terminal).
    let tools = |args: &[&str]| {
        let mut all = vec!["tools", "call", "-c", &config, "--store", &store];
        all.extend_from_slice(args);
        steward(&all, &env, "")
    };
    let out = tools(&["add_expense", &expense("Coffee via tools call")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = tools(&["run_sql", r#"{"sql": "SELECT 'tools call' AS x"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("Not allowed"),
        "{}",
        text(&out.stdout)
    );
    let out = tools(&["calculator", r#"{"expression": "1 + 1 /* tools call */"}"#]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));

    // `steward ask`: the same write, the same wait (saved), and the role's agents only.
    let mock = model("Coffee via ask").await;
    let base = format!("{}/v1", mock.uri());
    let ask_env = [
        ("OPENAI_BASE_URL", base.as_str()),
        ("XDG_DATA_HOME", data.as_str()),
    ];
    let out = steward(
        &[
            "ask",
            "-c",
            &config,
            "--store",
            &store,
            "Coffee for 5, and 6 * 1.2?",
        ],
        &ask_env,
        "",
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let out = steward(
        &[
            "ask",
            "-c",
            &config,
            "--store",
            &store,
            "--agent",
            "analyst",
            "How many?",
        ],
        &ask_env,
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("the role `clerk` may not use the agent `analyst`"),
        "{}",
        text(&out.stderr)
    );

    // `steward mcp` over stdio.
    let plan = |marker: &str| {
        json!({
            "mode": "auto",
            "calls": [
                {"name": "add_expense", "arguments": serde_json::from_str::<Value>(&expense(&format!("Coffee via {marker}"))).unwrap()},
                {"name": "run_sql", "arguments": {"sql": format!("SELECT '{marker}' AS x")}},
                {"name": "calculator", "arguments": {"expression": format!("1 + 1 /* {marker} */")}},
            ],
        })
    };
    let mcp_env = [
        ("HOME", env!("CARGO_TARGET_TMPDIR")),
        ("NO_COLOR", "1"),
        ("OLLAMA_HOST", "127.0.0.1:9"),
        ("XDG_DATA_HOME", data.as_str()),
    ];
    let answer = python::run_client(
        &python,
        &[
            "stdio",
            env!("CARGO_BIN_EXE_steward"),
            "mcp",
            "-c",
            &config,
            "--store",
            &store,
        ],
        &plan("mcp stdio"),
        &mcp_env,
    );
    let calls = answer["calls"].as_array().unwrap();
    assert_eq!(calls[0]["is_error"], false, "{answer}");
    assert_eq!(calls[1]["is_error"], true);
    assert!(
        calls[1]["text"].as_str().unwrap().contains("Not allowed"),
        "{answer}"
    );
    assert_eq!(calls[2]["is_error"], true);
    assert!(
        calls[2]["text"]
            .as_str()
            .unwrap()
            .contains("waits for a person's approval"),
        "{answer}"
    );

    // The server: its API, /v1 and /mcp, on the same store.
    let mock = model("Coffee via the API").await;
    let server = serve(&config, &store, &format!("{}/v1", mock.uri()), &data);
    let (status, body) = post(
        &server.base,
        "/api/conversations",
        json!({"agent": "analyst"}),
    )
    .await;
    let refused_at_once = status == 403;
    if !refused_at_once {
        // The conversation is made; the turn is refused.
        let id: Value = serde_json::from_str(&body).unwrap();
        let (status, body) = post(
            &server.base,
            &format!("/api/conversations/{}/messages", id["id"].as_str().unwrap()),
            json!({"content": "How many?"}),
        )
        .await;
        assert_eq!(status, 403, "{body}");
        assert!(body.contains("may not use the agent `analyst`"), "{body}");
    }
    let (status, body) = post(
        &server.base,
        "/api/conversations",
        json!({"agent": "expenses"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let id = serde_json::from_str::<Value>(&body).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, body) = post(
        &server.base,
        &format!("/api/conversations/{id}/messages"),
        json!({"content": "Coffee for 5, and 6 * 1.2?"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"type\":\"approval\""), "{body}");
    drop(server);

    let mock = model("Coffee via v1").await;
    let server = serve(&config, &store, &format!("{}/v1", mock.uri()), &data);
    let (status, body) = post(
        &server.base,
        "/v1/chat/completions",
        json!({"model": "analyst", "messages": [{"role": "user", "content": "How many?"}]}),
    )
    .await;
    // Refused as OpenAI refuses a model one may not use: not found, the caller's own models named.
    assert_eq!(status, 404, "{body}");
    assert!(
        body.contains("model_not_found") && body.contains("Models you may use: expenses"),
        "{body}"
    );
    let (status, body) = post(
        &server.base,
        "/v1/chat/completions",
        json!({"model": "expenses", "messages": [{"role": "user", "content": "Coffee for 5, and 6 * 1.2?"}]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("pproval"), "{body}");
    let answer = python::run_client(
        &python,
        &["http", &format!("{}/mcp", server.base)],
        &plan("mcp http"),
        &mcp_env,
    );
    let calls = answer["calls"].as_array().unwrap();
    assert_eq!(calls[0]["is_error"], false, "{answer}");
    assert!(
        calls[1]["text"].as_str().unwrap().contains("Not allowed"),
        "{answer}"
    );
    assert!(
        calls[2]["text"]
            .as_str()
            .unwrap()
            .contains("waits for a person's approval"),
        "{answer}"
    );
    drop(server);

    // Every write is in the database and in the trail, with the surface it came through.
    let records = audit(&config, &store);
    for (surface, marker) in [
        ("cli", "tools call"),
        ("cli", "via ask"),
        ("mcp", "mcp stdio"),
        ("api", "the API"),
        ("v1", "via v1"),
        ("mcp", "mcp http"),
    ] {
        let r = record(&records, surface, "add_expense", marker);
        check_common(r);
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(
            sqlite3(
                &db,
                &format!("SELECT count(*) FROM expenses WHERE description LIKE '%{marker}%'")
            ),
            "1",
            "{marker}"
        );
    }
    // The role's refusal of run_sql where a caller names the tool itself.
    for (surface, marker) in [
        ("cli", "tools call"),
        ("mcp", "mcp stdio"),
        ("mcp", "mcp http"),
    ] {
        let r = record(&records, surface, "run_sql", marker);
        check_common(r);
        assert_eq!(
            (&r["decision"], &r["status"]),
            (&json!("denied"), &json!("denied")),
            "{r}"
        );
    }
    // The calculator waited on every surface: refused where no one can approve, saved where a run waits.
    for (surface, marker, status) in [
        ("cli", "tools call", "rejected"),
        ("mcp", "mcp stdio", "rejected"),
        ("mcp", "mcp http", "rejected"),
    ] {
        let r = record(&records, surface, "calculator", marker);
        check_common(r);
        assert_eq!(r["decision"], "approval", "{r}");
        assert_eq!(r["status"], status, "{r}");
    }
    for surface in ["cli", "api", "v1"] {
        let r = record(&records, surface, "calculator", "6 * 1.2");
        check_common(r);
        assert_eq!(
            (&r["decision"], &r["status"]),
            (&json!("approval"), &json!("waiting")),
            "{r}"
        );
    }
    let out = steward(
        &["audit", "verify", "-c", &config, "--store", &store],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}
