//! The MCP server over streamable HTTP, driven by the official MCP Python SDK (`tests/mcp/client.py`, in a
//! virtual environment the test makes once): the caller the server's authentication put in the request decides
//! the tools, the schema and the SQL it sees; validation failures and refused SQL come back as tool errors with
//! the words a model gets; `ask_database` runs the analyst; nothing is written. The stdio side is tested with
//! the `steward` binary (crates/cli/tests/mcp.rs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "mcp/python.rs"]
mod python;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use steward_app::direct::Checked;
use steward_app::{App, AppOptions, Config};
use steward_core::{ModelResponse, Principal, ScriptedModel, ToolCall};
use steward_server::Caller;
use steward_server::mcp::{McpHttpOptions, McpServer};

use python::{run_client, tool, tool_names};

const CONFIG: &str = r#"
roles:
  reader:
    tools: [list_tables, describe_tables, run_sql, query_table, current_date]
    sql:
      read: {Artist: "*", Album: "*", Track: [TrackId, Name, AlbumId]}
principals:
  ada: {role: reader}
knowledge:
  tables:
    Track:
      description: One row per song of the shop.
      columns:
        Name: The song's title as printed on the album.
        Composer: composer-canary who wrote it.
"#;

/// A copy of the Chinook database, and the app over it with `CONFIG`.
async fn app() -> (String, App) {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcp-http-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("chinook.sqlite");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/chinook/Chinook_Sqlite.sqlite"),
        &db,
    )
    .unwrap();
    let db = db.display().to_string();
    let config = Config::parse(CONFIG, &dir.join("steward.yaml")).unwrap();
    let options = AppOptions {
        db: Some(format!("sqlite://{db}")),
        ..AppOptions::default()
    };
    (db, App::build(config, options).await.unwrap())
}

/// What the `sqlite3` client prints for `sql` on `db`.
fn sqlite3(db: &str, sql: &str) -> String {
    let out = std::process::Command::new("sqlite3")
        .args([db, sql])
        .output()
        .expect("the sqlite3 client");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_over_http_gets_the_callers_tools_schema_and_refusals() {
    let Some(python) = python::python() else {
        return;
    };
    let (db, app) = app().await;
    let ada = steward_app::resolve_principal(app.config(), Some("ada"), None).unwrap();
    // The words a model gets for a call without its one required argument, found the way a run finds them.
    let invalid = match app
        .check_call(
            steward_app::Surface::Mcp,
            &ada,
            ToolCall::new("c", "run_sql", "{}"),
            None,
            None,
        )
        .await
        .unwrap()
    {
        Checked::Refused(refusal) => refusal.message(),
        _ => panic!("run_sql without sql was not refused"),
    };
    // The analyst counts the artists with one query, then answers.
    let model = ScriptedModel::new([
        ModelResponse::tool_calls(vec![ToolCall::new(
            "a1",
            "run_sql",
            r#"{"sql": "SELECT count(*) AS n FROM Artist"}"#,
        )]),
        ModelResponse::text("There are 275 artists."),
    ]);
    let server = McpServer::new(
        Arc::new(app),
        steward_app::ModelChoice::fixed(Arc::new(model)),
        Principal::local(),
    );
    let service = server.clone().http_service(McpHttpOptions::default());
    let router = axum::Router::new()
        .merge(
            server
                .clone()
                .http_router("/mcp", McpHttpOptions::default()),
        )
        // What the server's authentication does: the caller in the request's extensions.
        .layer(axum::Extension(Caller {
            principal: ada,
            admin: false,
        }));
    // Without a caller, the fallback principal (the local user, without a role).
    let router = axum::Router::new()
        .nest_service("/open/mcp", service)
        .merge(router);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });

    let artists_before = sqlite3(&db, "SELECT count(*) FROM Artist");
    let first_artist = sqlite3(&db, "SELECT Name FROM Artist WHERE ArtistId = 1");
    let plan = json!({
        "mode": "auto",
        "calls": [
            {"name": "run_sql", "arguments": {"sql": "SELECT Name FROM Artist WHERE ArtistId = 1"}},
            {"name": "run_sql", "arguments": {}},
            {"name": "run_sql", "arguments": {"sql": "DELETE FROM Artist"}},
            {"name": "run_sql", "arguments": {"sql": "SELECT Email FROM Customer"}},
            {"name": "calculator", "arguments": {"expression": "1 + 1"}},
            {"name": "ask_database", "arguments": {"question": "How many artists are there?"}},
            {"name": "ask_database", "arguments": {}},
        ],
        "read": ["schema://default", "schema://default/Track", "schema://default/Customer"],
    });
    let url = format!("http://{addr}/mcp");
    let answer = tokio::task::spawn_blocking({
        let python = python.clone();
        move || run_client(&python, &["http", &url], &plan, &[])
    })
    .await
    .unwrap();

    assert_eq!(answer["protocol_version"], "2026-07-28");
    // The role's tools, and ask_database (its role may run the analyst); not the calculator.
    assert_eq!(
        tool_names(&answer),
        [
            "ask_database",
            "current_date",
            "describe_tables",
            "list_tables",
            "query_table",
            "run_sql"
        ]
    );
    assert_eq!(
        tool(&answer, "run_sql")["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(
        tool(&answer, "ask_database")["annotations"]["readOnlyHint"],
        true
    );
    assert_eq!(
        tool(&answer, "run_sql")["inputSchema"]["required"],
        json!(["sql"])
    );

    let calls = answer["calls"].as_array().unwrap();
    // A read: the row the database holds, as structured rows from their source (the tool's outputSchema says
    // so, and the SDK checks the result against it), and the same object as JSON text.
    assert_eq!(calls[0]["is_error"], false, "{}", calls[0]);
    let text = calls[0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        calls[0]["structured"]
    );
    assert_eq!(calls[0]["structured"]["source"], "run_sql", "{text}");
    assert_eq!(tool(&answer, "run_sql")["outputSchema"]["type"], "object");
    assert_eq!(calls[0]["structured"]["kind"], "table");
    assert_eq!(calls[0]["structured"]["columns"], json!(["Name"]));
    assert_eq!(calls[0]["structured"]["rows"], json!([[first_artist]]));
    // A validation failure: a tool error with the model's very words.
    assert_eq!(calls[1]["is_error"], true);
    assert_eq!(calls[1]["text"], invalid);
    // The guard refuses a DELETE, and the role's SQL rules a table it may not read.
    assert_eq!(calls[2]["is_error"], true);
    assert!(
        calls[2]["text"].as_str().unwrap().contains("DELETE"),
        "{}",
        calls[2]
    );
    assert_eq!(calls[3]["is_error"], true);
    assert!(
        calls[3]["text"]
            .as_str()
            .unwrap()
            .contains("Table `Customer` may not be read"),
        "{}",
        calls[3]
    );
    // A tool outside the role: refused as a run refuses it.
    assert_eq!(calls[4]["is_error"], true);
    assert!(
        calls[4]["text"]
            .as_str()
            .unwrap()
            .starts_with("Not allowed: `calculator` is not allowed for the role `reader`"),
        "{}",
        calls[4]
    );
    // ask_database: the analyst's answer, and the run it came from.
    assert_eq!(calls[5]["is_error"], false, "{}", calls[5]);
    assert_eq!(calls[5]["structured"]["kind"], "answer", "{}", calls[5]);
    assert_eq!(calls[5]["structured"]["answer"], "There are 275 artists.");
    assert!(calls[5]["structured"]["run_id"].is_string());
    assert_eq!(
        serde_json::from_str::<Value>(calls[5]["text"].as_str().unwrap()).unwrap(),
        calls[5]["structured"]
    );
    assert_eq!(calls[6]["is_error"], true);
    assert!(
        calls[6]["text"].as_str().unwrap().contains("question"),
        "{}",
        calls[6]
    );

    // The schema: only what the role may read, Track with only its three columns.
    let uris: Vec<&str> = answer["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "schema://default",
            "schema://default/Album",
            "schema://default/Artist",
            "schema://default/Track"
        ]
    );
    let reads = answer["reads"].as_array().unwrap();
    assert_eq!(
        reads[0]["text"].as_str().unwrap().lines().count(),
        3,
        "{}",
        reads[0]
    );
    let track = reads[1]["text"].as_str().unwrap();
    for column in ["TrackId", "Name", "AlbumId"] {
        assert!(track.contains(column), "{track}");
    }
    for column in ["Composer", "UnitPrice", "GenreId", "composer-canary"] {
        assert!(!track.contains(column), "{track}");
    }
    // The team's descriptions, of what the role may see only.
    for described in [
        "One row per song of the shop.",
        "The song's title as printed on the album.",
    ] {
        assert!(track.contains(described), "{track}");
    }
    assert!(reads[2]["protocol_error"].is_string(), "{}", reads[2]);

    // Nothing was written.
    assert_eq!(sqlite3(&db, "SELECT count(*) FROM Artist"), artists_before);

    // The handshake of the protocol versions before 2026-07-28 works too; without a caller the fallback
    // principal, who has no role, sees every tool.
    let url = format!("http://{addr}/open/mcp");
    let legacy = tokio::task::spawn_blocking(move || {
        run_client(&python, &["http", &url], &json!({"mode": "legacy"}), &[])
    })
    .await
    .unwrap();
    assert_ne!(legacy["protocol_version"], "2026-07-28");
    assert!(tool_names(&legacy).contains(&"calculator".to_owned()));
    let tables = sqlite3(
        &db,
        "SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'",
    );
    // The database and each of its tables.
    assert_eq!(
        legacy["resources"].as_array().unwrap().len(),
        tables.parse::<usize>().unwrap() + 1
    );

    // JSON-RPC as the specification has it where the transport alone answers otherwise: a body that is not
    // JSON is a parse error, arguments that are not an object are invalid params, an unknown method says so.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let post = |body: &'static str| {
        let url = format!("http://{addr}/mcp");
        async move {
            let response = reqwest::Client::new()
                .post(url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2025-06-18")
                .body(body)
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            let text = response.text().await.unwrap();
            (
                status,
                serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text)),
            )
        }
    };
    for body in ["{not json", "[1, 2", "\"SELECT 1\" garbage"] {
        let (status, answer) = post(body).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], -32700, "{body}: {answer}");
        assert_eq!(answer["id"], Value::Null, "{body}: {answer}");
    }
    for body in [
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_sql","arguments":"SELECT 1"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_sql","arguments":["SELECT 1"]}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}"#,
    ] {
        let (status, answer) = post(body).await;
        assert_eq!(status, 200, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], -32602, "{body}: {answer}");
        assert_eq!(answer["id"], 5, "{body}: {answer}");
    }
    // A body over the limit is refused before it is read further (it once took a gigabyte to parse).
    let big = format!("[{}0]", "0,".repeat(1024 * 1024));
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 413);
    let refused = response.text().await.unwrap();
    let refused: Value = serde_json::from_str(&refused).unwrap_or_else(|_| panic!("{refused}"));
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than this server takes"),
        "{refused}"
    );
    let (_, answer) = post(r#"{"jsonrpc":"2.0","id":6,"method":"nope/nope","params":{}}"#).await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Method not found: `nope/nope`"),
        "{answer}"
    );
}
