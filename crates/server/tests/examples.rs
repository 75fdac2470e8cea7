//! `POST /api/examples` (the thumbs-up) and `GET /api/examples`, by effect: an example is saved only from SQL
//! that ran, for a run of the caller's, within a few seconds; a role never sees — in the list or in the
//! analyst's instructions — an example over a table it may not read, nor one holding data of rows its role
//! filters (literals, comments); who saved one is told only to administrators and the saver.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use steward_app::store::RunStore;
use steward_app::{App, AppOptions, Config};
use steward_core::{Message, Model, ModelError, ModelRequest, ModelResponse, ToolCall};
use steward_server::{ModelChoice, Server, ServerOptions, token_hash};

use common::{Running, events};

/// Runs the SQL a message carries in `[sql: …]` with run_sql, then answers; a message without answers at once.
/// Keeps the system prompt of each request, and each whole request as it would go to a provider (JSON).
#[derive(Debug, Default)]
struct SqlBot {
    prompts: Mutex<Vec<String>>,
    requests: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl Model for SqlBot {
    fn name(&self) -> &str {
        "sql-bot"
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        if let Some(Message::System { content }) = request.messages.first() {
            self.prompts.lock().unwrap().push(content.clone());
        }
        self.requests
            .lock()
            .unwrap()
            .push(serde_json::to_string(request).unwrap());
        if matches!(request.messages.last(), Some(Message::Tool { .. })) {
            return Ok(ModelResponse::text("Done."));
        }
        let asked = request
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::User { content } => Some(content.clone()),
                _ => None,
            })
            .unwrap_or_default();
        match asked
            .split_once("[sql: ")
            .and_then(|(_, rest)| rest.split_once(']'))
        {
            Some((sql, _)) => Ok(ModelResponse::tool_calls(vec![ToolCall::new(
                "c1",
                "run_sql",
                json!({ "sql": sql }).to_string(),
            )])),
            None => Ok(ModelResponse::text("Nothing to look up.")),
        }
    }
}

const ADA: &str = "token-of-ada-clerk";
const BEA: &str = "token-of-bea-clerk";
const UNA: &str = "token-of-una-auditor";

/// A server on a shop database (`orders`, `customers`) where clerks read only `orders` and auditors all.
async fn start(bot: Arc<SqlBot>) -> Running {
    serve_shop(
        bot,
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, salary REAL);
         CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, total REAL NOT NULL);
         INSERT INTO customers (name, salary) VALUES ('Ann', 100), ('Bob', 200);
         INSERT INTO orders (customer_id, total) VALUES (1, 10), (2, 32.5);",
        r#"
roles:
  clerk: {agents: [analyst], sql: {read: {orders: "*"}}}
  auditor: {agents: [analyst]}
principals:
  ada: {role: clerk}
  bea: {role: clerk}
  una: {role: auditor}
"#,
        &[("ada", ADA), ("bea", BEA), ("una", UNA)],
    )
    .await
}

/// A server with `bot` on a SQLite shop made by `schema`, with `access` (its `roles:` and `principals:`) and an
/// API token for each of `tokens` (principal, token).
async fn serve_shop(
    bot: Arc<SqlBot>,
    schema: &str,
    access: &str,
    tokens: &[(&str, &str)],
) -> Running {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "examples-{}-{}",
        std::process::id(),
        uuid::Uuid::now_v7().simple()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let shop = dir.join("shop.sqlite");
    let db = steward_sql::Database::connect(&format!("sqlite://{}?mode=rwc", shop.display()))
        .await
        .unwrap();
    db.execute_script(schema).await.unwrap();
    db.close().await;
    let tokens: String = tokens
        .iter()
        .map(|(name, token)| {
            format!(
                "    - {{name: {name}, sha256: {}, principal: {name}}}\n",
                token_hash(token)
            )
        })
        .collect();
    let text = format!(
        "databases:\n  shop: sqlite://{shop}\ndefaults: {{agent: analyst}}\n{access}\nserver:\n  tokens:\n{tokens}",
        shop = shop.display(),
    );
    let config = Config::parse(&text, &dir.join("steward.yaml")).unwrap();
    let store = RunStore::open(Some(&format!("sqlite://{}/store.sqlite", dir.display())))
        .await
        .unwrap();
    let app = App::build(
        config,
        AppOptions {
            store: Some(store),
            ..AppOptions::default()
        },
    )
    .await
    .unwrap();
    let server = Server::new(ServerOptions {
        app: Arc::new(app),
        models: ModelChoice::fixed(bot),
        loopback: true,
    })
    .await
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener, Duration::from_secs(5), std::future::pending()));
    Running {
        base,
        client: reqwest::Client::new(),
        _dir: dir,
    }
}

/// Asks `content` in a new conversation of `token`'s; the top run's id and whether run_sql succeeded.
async fn ask(s: &Running, token: &str, content: &str) -> (String, Option<bool>) {
    let (status, conversation) = s
        .json("POST", "/api/conversations", Some(token), Some(json!({})))
        .await;
    assert_eq!(status, 201, "{conversation}");
    let id = conversation["id"].as_str().unwrap();
    let (status, stream) = s
        .call(
            "POST",
            &format!("/api/conversations/{id}/messages"),
            Some(token),
            Some(json!({ "content": content })),
        )
        .await;
    assert_eq!(status, 200, "{stream}");
    let events = events(&stream);
    let answer = events
        .iter()
        .find(|e| e["type"] == "answer" && e.get("parent_run_id").is_none())
        .unwrap_or_else(|| panic!("no answer: {stream}"));
    let ran = events
        .iter()
        .find(|e| e["type"] == "observation")
        .map(|e| e["is_error"] == false);
    (answer["run_id"].as_str().unwrap().to_owned(), ran)
}

async fn thumbs_up(s: &Running, token: &str, run_id: &str) -> (u16, Value) {
    s.json(
        "POST",
        "/api/examples",
        Some(token),
        Some(json!({ "run_id": run_id, "source": "web" })),
    )
    .await
}

const ORDERS: &str = "SELECT COUNT(*) AS n FROM orders";
const SALARIES: &str = "SELECT SUM(salary) AS payroll FROM customers";

#[tokio::test]
async fn the_thumbs_up_saves_only_sql_that_ran_for_a_run_of_the_callers() {
    let s = start(Arc::default()).await;
    let question = format!("How many orders are there? [sql: {ORDERS}]");
    let (run, ran) = ask(&s, ADA, &question).await;
    assert_eq!(ran, Some(true));

    // Another principal's run is not theirs to save (nor to learn of).
    let (status, body) = thumbs_up(&s, BEA, &run).await;
    assert_eq!(status, 404, "{body}");
    // Nor a prefix of it, even one that names several runs (their ids are not told), nor one's own by prefix.
    for prefix in [&run[..2], &run[..12], &run[..run.len() - 1]] {
        let (status, body) = thumbs_up(&s, BEA, prefix).await;
        assert_eq!(status, 404, "{prefix}: {body}");
        assert!(
            !body.to_string().contains(&run[..12]) || prefix.len() >= 12,
            "{body}"
        );
        let (status, body) = thumbs_up(&s, ADA, prefix).await;
        assert_eq!(status, 404, "{prefix}: {body}");
    }

    let (status, saved) = thumbs_up(&s, ADA, &run).await;
    assert_eq!(status, 201, "{saved}");
    assert_eq!(saved["question"], question.as_str());
    assert_eq!(saved["sql"], ORDERS);
    assert_eq!(saved["run_id"], run.as_str());
    assert_eq!(saved["source"], "web");
    assert_eq!(saved["saved_by"], "ada");

    // Twice: refused, saying so.
    let (status, body) = thumbs_up(&s, ADA, &run).await;
    assert_eq!(status, 409, "{body}");
    assert!(body["error"].as_str().unwrap().contains("saved already"));

    // A run that ran no SQL.
    let (run, ran) = ask(&s, ADA, "Hello there").await;
    assert_eq!(ran, None);
    let (status, body) = thumbs_up(&s, ADA, &run).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("ran no SQL"),
        "{body}"
    );

    // A run whose SQL the guard refused (a table the clerk may not read), and one whose SQL failed.
    for sql in [SALARIES, "SELECT nope FROM orders"] {
        let (run, ran) = ask(&s, ADA, &format!("Look this up [sql: {sql}]")).await;
        assert_eq!(ran, Some(false), "{sql}");
        let (status, body) = thumbs_up(&s, ADA, &run).await;
        assert_eq!(status, 400, "{sql}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains("ran successfully"),
            "{body}"
        );
    }
    // Given directly: the guard refuses it for the clerk (403), SQL that does not run is a 400.
    let (status, body) = s
        .json(
            "POST",
            "/api/examples",
            Some(ADA),
            Some(json!({"question": "What is the payroll?", "sql": SALARIES})),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = s
        .json(
            "POST",
            "/api/examples",
            Some(ADA),
            Some(json!({"question": "Overflow", "sql": "SELECT abs(-9223372036854775808) FROM orders"})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = s
        .json(
            "POST",
            "/api/examples",
            Some(ADA),
            Some(json!({"run_id": "any", "sql": ORDERS})),
        )
        .await;
    assert_eq!(status, 400, "{body}");

    let (status, list) = s.json("GET", "/api/examples", Some(ADA), None).await;
    assert_eq!(status, 200);
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
}

#[tokio::test]
async fn a_role_never_sees_an_example_over_a_table_it_may_not_read() {
    let bot = Arc::new(SqlBot::default());
    let s = start(bot.clone()).await;
    // The auditor saves two examples: one over orders, one over customers (which clerks may not read).
    for (question, sql) in [
        ("How many orders did customers place?", ORDERS),
        ("What is the payroll of customers?", SALARIES),
    ] {
        let (status, body) = s
            .json(
                "POST",
                "/api/examples",
                Some(UNA),
                Some(json!({"question": question, "sql": sql})),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        assert_eq!(body["source"], "api");
    }
    let listed = |list: &Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|e| e["sql"].as_str().unwrap().to_owned())
            .collect()
    };
    let (_, clerk) = s.json("GET", "/api/examples", Some(ADA), None).await;
    assert_eq!(listed(&clerk), [ORDERS]);
    let (_, auditor) = s.json("GET", "/api/examples", Some(UNA), None).await;
    assert_eq!(listed(&auditor), [ORDERS, SALARIES]);

    // The analyst's instructions: the clerk's never carry the customers example; the auditor's do.
    let question = "What do customers pay, and how many orders did customers place?";
    ask(&s, ADA, question).await;
    let clerk_prompt = bot.prompts.lock().unwrap().last().cloned().unwrap();
    assert!(clerk_prompt.contains(ORDERS), "{clerk_prompt}");
    assert!(!clerk_prompt.contains("salary"), "{clerk_prompt}");
    ask(&s, UNA, question).await;
    let auditor_prompt = bot.prompts.lock().unwrap().last().cloned().unwrap();
    assert!(auditor_prompt.contains(SALARIES), "{auditor_prompt}");
}

const MIA: &str = "token-of-mia-manager";
const ROOT: &str = "token-of-root-admin";

/// A shop whose second customer's order code and SSN only a reader of every row may learn: managers (`mia`) and
/// auditors (`una`) see every row, clerks (`ada`, customer 1) their own, `root` administers.
async fn start_secret(bot: Arc<SqlBot>) -> Running {
    serve_shop(
        bot,
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, ssn TEXT);
         CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, order_code TEXT NOT NULL,
                              total REAL NOT NULL);
         INSERT INTO customers (id, name, ssn) VALUES (1, 'Ann', 'SSN-ANN'), (2, 'Bob', 'SSN-BOB-SECRET');
         INSERT INTO orders (id, customer_id, order_code, total) VALUES
           (1, 1, 'AAAAAAAAAA', 10), (2, 2, 'QZKDLWPRTM', 32.5);",
        r#"
roles:
  manager: {agents: [analyst]}
  auditor: {agents: [analyst]}
  clerk:
    agents: [analyst]
    sql:
      rows:
        orders: "customer_id = {principal.customer_id}"
        customers: "id = {principal.customer_id}"
  admin: {agents: [analyst], admin: true}
principals:
  mia: {role: manager}
  una: {role: auditor}
  ada: {role: clerk, customer_id: 1}
  root: {role: admin}
"#,
        &[("mia", MIA), ("una", UNA), ("ada", ADA), ("root", ROOT)],
    )
    .await
}

/// What a clerk must never receive from the manager's examples.
const SECRETS: [&str; 2] = ["QZKDLWPRTM", "SSN-BOB-SECRET"];

fn secret_in(text: &str) -> Option<&'static str> {
    SECRETS.into_iter().find(|s| text.contains(s))
}

async fn save(s: &Running, token: &str, question: &str, sql: &str) -> Value {
    let (status, body) = s
        .json(
            "POST",
            "/api/examples",
            Some(token),
            Some(json!({"question": question, "sql": sql})),
        )
        .await;
    assert_eq!(status, 201, "{sql}: {body}");
    body
}

/// Issue 35, item 6: a manager's example whose literal names a row, or whose comment holds a secret, reaches a
/// row-filtered clerk neither through `GET /api/examples` nor through the model's prompt (the analyst behind the
/// web API and behind `/v1`); a reader of every row gets it, without comments.
#[tokio::test]
async fn a_managers_example_never_carries_rows_to_a_row_filtered_clerk() {
    let bot = Arc::new(SqlBot::default());
    let s = start_secret(bot.clone()).await;
    let literal = save(
        &s,
        MIA,
        "How many orders have the code QZKDLWPRTM?",
        "SELECT COUNT(*) AS n FROM orders WHERE order_code = 'QZKDLWPRTM'",
    )
    .await;
    let commented = save(
        &s,
        MIA,
        "How many orders are there?",
        "SELECT COUNT(*) AS n -- SSN-BOB-SECRET\nFROM orders /* the customer's SSN is SSN-BOB-SECRET",
    )
    .await;
    assert_eq!(commented["sql"], "SELECT COUNT(*) AS n\nFROM orders");
    let quoted = save(
        &s,
        MIA,
        "What is the total of orders per customer?",
        "SELECT customer_id, SUM(total) AS total FROM orders WHERE order_code <> '-- kept /* SSN */' GROUP BY customer_id",
    )
    .await;
    assert_eq!(
        quoted["sql"],
        "SELECT customer_id, SUM(total) AS total FROM orders WHERE order_code <> '-- kept /* SSN */' GROUP BY customer_id"
    );

    let listed = |list: &Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let id = |e: &Value| e["id"].as_str().unwrap().to_owned();
    // The clerk: only the example that holds no data of rows, without its comment.
    let (status, clerk) = s.json("GET", "/api/examples", Some(ADA), None).await;
    assert_eq!(status, 200, "{clerk}");
    assert_eq!(listed(&clerk), [id(&commented)]);
    assert_eq!(secret_in(&clerk.to_string()), None, "{clerk}");
    // The manager and the auditor see every row: every example, no comment.
    for token in [MIA, UNA] {
        let (_, all) = s.json("GET", "/api/examples", Some(token), None).await;
        assert_eq!(listed(&all), [id(&literal), id(&commented), id(&quoted)]);
        assert!(all.to_string().contains("QZKDLWPRTM"), "{all}");
        assert!(!all.to_string().contains("SSN-BOB-SECRET"), "{all}");
        assert!(all.to_string().contains("-- kept /* SSN */"), "{all}");
    }

    // The model's prompt for the clerk, through the web API and through /v1, holds none of it; the manager's
    // holds the literal.
    let question = "How many orders are there, and how many have the code of the order?";
    let last_request = || bot.requests.lock().unwrap().last().cloned().unwrap();
    ask(&s, ADA, question).await;
    let clerk_request = last_request();
    assert!(
        clerk_request.contains("SELECT COUNT(*) AS n\\nFROM orders"),
        "{clerk_request}"
    );
    assert_eq!(secret_in(&clerk_request), None, "{clerk_request}");
    let (status, reply) = s
        .json(
            "POST",
            "/v1/chat/completions",
            Some(ADA),
            Some(json!({"model": "analyst", "messages": [{"role": "user", "content": question}]})),
        )
        .await;
    assert_eq!(status, 200, "{reply}");
    let v1_request = last_request();
    assert!(v1_request.contains("saved examples"), "{v1_request}");
    assert_eq!(secret_in(&v1_request), None, "{v1_request}");
    assert_eq!(secret_in(&reply.to_string()), None, "{reply}");
    ask(&s, MIA, question).await;
    let manager_request = last_request();
    assert!(manager_request.contains("QZKDLWPRTM"), "{manager_request}");
}

/// Issue 35, item 9 (ii): who saved an example and the run it came from are told to an administrator and to the
/// one who saved it, not to other readers.
#[tokio::test]
async fn who_saved_an_example_is_told_only_to_administrators_and_the_saver() {
    let s = start_secret(Arc::default()).await;
    let (run, ran) = ask(
        &s,
        MIA,
        "What is the total of orders? [sql: SELECT SUM(total) AS total FROM orders]",
    )
    .await;
    assert_eq!(ran, Some(true));
    let (status, saved) = thumbs_up(&s, MIA, &run).await;
    assert_eq!(status, 201, "{saved}");
    save(
        &s,
        MIA,
        "How many orders are there?",
        "SELECT COUNT(*) AS n FROM orders",
    )
    .await;
    for (token, told) in [(MIA, true), (ROOT, true), (UNA, false), (ADA, false)] {
        let (status, list) = s.json("GET", "/api/examples", Some(token), None).await;
        assert_eq!(status, 200, "{list}");
        let list = list.as_array().unwrap();
        assert!(!list.is_empty());
        for example in list {
            assert_eq!(
                example.get("saved_by").is_some(),
                told,
                "{token}: {example}"
            );
            if !told {
                assert!(example["run_id"].is_null(), "{token}: {example}");
                assert!(!example.to_string().contains(&run), "{token}: {example}");
                assert!(!example.to_string().contains("mia"), "{token}: {example}");
            }
        }
        if token == UNA || told {
            assert_eq!(list.len(), 2, "{token}");
        }
        if told {
            assert_eq!(list[0]["saved_by"], "mia");
            assert_eq!(list[0]["run_id"], run.as_str());
        }
    }
}

/// Issue 35, item 9 (i): an example whose SQL runs on is stopped within a few seconds and refused, the request
/// answered promptly with why.
#[tokio::test]
async fn a_slow_example_is_refused_promptly() {
    let s = start_secret(Arc::default()).await;
    let started = std::time::Instant::now();
    let (status, body) = s
        .json(
            "POST",
            "/api/examples",
            Some(MIA),
            Some(json!({
                "question": "How many numbers are there?",
                "sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) AS n FROM c",
            })),
        )
        .await;
    let took = started.elapsed();
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("ran longer than 5 s"),
        "{body}"
    );
    assert!(took < Duration::from_secs(9), "{took:?}");
    let (_, list) = s.json("GET", "/api/examples", Some(MIA), None).await;
    assert_eq!(list, json!([]));
}
