//! Declarative tools (`kind: sql`, `kind: http`) against real engines and a real HTTP server: the config
//! example as written, hostile values bound (never spliced) on SQLite, PostgreSQL and MariaDB, statements
//! refused at load, idempotent writes, placeholders the lexer must leave alone, and HTTP success and failures.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[path = "../../sql/tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use steward_app::tools::{HttpTool, HttpToolDef, SqlTool, SqlToolDef, ToolDef, ToolDefError};
use steward_core::{Tool, ToolCall, ToolContext, ToolData, ToolOutput, Toolbox};
use steward_sql::{Database, QueryLimits};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ISSUE_EXAMPLE: &str = r#"
tools:
  customers_by_city:
    kind: sql
    database: shop
    description: Customers living in a city.
    statement: SELECT name, email FROM customers WHERE city = :city ORDER BY name
    parameters:
      city: {type: string, description: The city, maxLength: 80}
  add_note_task:
    kind: sql
    database: shop
    mode: write
    description: Adds a task to the inbox.
    statement: INSERT INTO tasks (title, status, created_at) VALUES (:title, 'OPEN', CURRENT_TIMESTAMP)
    parameters:
      title: {type: string, description: What is to be done}
"#;

#[derive(Deserialize)]
struct Fragment {
    tools: BTreeMap<String, ToolDef>,
}

/// Values that would break a statement built by splicing text.
const HOSTILE: &[&str] = &[
    "O'Brien",
    "'; DROP TABLE customers; --",
    "back\\slash \\' \\\\ end\\",
    "Zoë 漢字 🦀 \u{202e}rtl \u{2066}",
    "\"double\" `tick` $1 ? :body %s {0}",
    "' OR '1'='1",
    "--",
    "/* x */",
];

fn ctx(call: &str) -> ToolContext {
    ToolContext::new("run-1", call, "agent")
}

/// Validates a call the way the runner does (against the spec's schema), then runs it.
async fn call(tool: &Arc<dyn Tool>, call_id: &str, args: Value) -> Result<ToolOutput, String> {
    let name = tool.spec().name.clone();
    let mut toolbox = Toolbox::new();
    toolbox.add(tool.clone()).unwrap();
    let (tool, args) = toolbox
        .check(&ToolCall::new(call_id, name, args.to_string()))
        .map_err(|r| r.observation)?;
    tool.call(&ctx(call_id), args).await.map_err(|e| e.message)
}

fn rows(output: &ToolOutput) -> Vec<Vec<Value>> {
    match &output.data {
        Some(ToolData::Table { rows, .. }) => rows.clone(),
        other => panic!("no table: {other:?}"),
    }
}

async fn sql_tool(
    name: &str,
    yaml: &str,
    db: &Arc<Database>,
) -> Result<Arc<dyn Tool>, ToolDefError> {
    let def: SqlToolDef = serde_yaml::from_str(yaml).unwrap();
    Ok(Arc::new(SqlTool::build(name, def, db.clone()).await?))
}

async fn scratch(setup: &str) -> Arc<Database> {
    Arc::new(common::scratch_sqlite(setup).await)
}

#[tokio::test]
async fn the_issue_example_works_as_written() {
    let db = scratch(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT, city TEXT);
         INSERT INTO customers (name, email, city) VALUES ('Zed', 'z@x.org', 'Lyon'), ('Ann', 'a@x.org', 'Lyon'),
                                                          ('Bob', 'b@x.org', 'Paris');
         CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT NOT NULL, status TEXT, created_at TIMESTAMP);",
    )
    .await;
    let fragment: Fragment = serde_yaml::from_str(ISSUE_EXAMPLE).unwrap();
    let databases = BTreeMap::from([("shop".to_owned(), db.clone())]);
    let mut tools = BTreeMap::new();
    for (name, def) in fragment.tools {
        tools.insert(name.clone(), def.build(&name, &databases).await.unwrap());
    }
    let read = &tools["customers_by_city"];
    let spec = read.spec();
    assert!(spec.annotations.read_only && spec.annotations.idempotent);
    assert!(!spec.annotations.open_world && !spec.annotations.destructive);
    assert_eq!(spec.parameters["required"], json!(["city"]));
    assert_eq!(spec.parameters["properties"]["city"]["maxLength"], 80);
    let out = call(read, "c1", json!({"city": "Lyon"})).await.unwrap();
    assert_eq!(
        out.content,
        "name | email\nAnn | a@x.org\nZed | z@x.org\n(2 rows)"
    );
    assert_eq!(rows(&out)[0], vec![json!("Ann"), json!("a@x.org")]);
    // Validated before it runs: too long, missing, or unknown arguments never reach the database.
    let long = call(read, "c2", json!({"city": "x".repeat(81)}))
        .await
        .unwrap_err();
    assert!(long.contains("city"), "{long}");
    assert!(
        call(read, "c3", json!({}))
            .await
            .unwrap_err()
            .contains("city")
    );
    assert!(
        call(read, "c4", json!({"city": "Lyon", "x": 1}))
            .await
            .is_err()
    );

    let write = &tools["add_note_task"];
    let a = &write.spec().annotations;
    assert!(!a.read_only && !a.destructive && a.idempotent && !a.open_world);
    let out = call(write, "w1", json!({"title": "Call O'Brien"}))
        .await
        .unwrap();
    assert_eq!(out.content, "Done: 1 row added.");
    let tasks = db
        .query_prepared(
            "SELECT title, status FROM tasks",
            &[],
            &QueryLimits::default(),
        )
        .await
        .unwrap();
    assert_eq!(tasks.rows, vec![vec![json!("Call O'Brien"), json!("OPEN")]]);
}

/// The write tool stores each hostile value, the read tool finds it by exact match, the table the values
/// name still exists, and a retried call (same id, same arguments) adds nothing.
async fn hostile_values_round_trip(db: Arc<Database>, setup: &str) {
    db.execute_script(setup).await.unwrap();
    let write = sql_tool(
        "add_note",
        "{database: x, mode: write, description: Adds a note., statement: 'INSERT INTO notes (body) VALUES (:body)',
          parameters: {body: {type: string}}}",
        &db,
    )
    .await
    .unwrap();
    let read = sql_tool(
        "notes_with_body",
        "{database: x, description: Notes with this exact body., statement: 'SELECT body FROM notes WHERE body = :body',
          parameters: {body: {type: string}}}",
        &db,
    )
    .await
    .unwrap();
    for (i, value) in HOSTILE.iter().enumerate() {
        let id = format!("w{i}");
        let out = call(&write, &id, json!({"body": value})).await.unwrap();
        assert_eq!(out.content, "Done: 1 row added.", "{value}");
        // A retry of the same call is a replay, not a second row.
        let again = call(&write, &id, json!({"body": value})).await.unwrap();
        assert_eq!(again, out);
        let found = call(&read, "r", json!({"body": value})).await.unwrap();
        assert_eq!(rows(&found), vec![vec![json!(value)]], "{value}");
    }
    let limits = QueryLimits {
        max_rows: 1000,
        ..QueryLimits::default()
    };
    let stored = db
        .query_prepared("SELECT body FROM notes ORDER BY id", &[], &limits)
        .await
        .unwrap();
    let expected: Vec<Vec<Value>> = HOSTILE.iter().map(|v| vec![json!(v)]).collect();
    assert_eq!(stored.rows, expected);
    let customers = db
        .query_prepared("SELECT count(*) FROM customers", &[], &limits)
        .await
        .unwrap();
    assert_eq!(steward_sql::cell_text(&customers.rows[0][0]), "1");
}

#[tokio::test]
async fn hostile_values_are_bound_on_sqlite() {
    let db = scratch("").await;
    hostile_values_round_trip(
        db,
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('kept');
         CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);",
    )
    .await;
}

async fn server_db(admin: &str, mysql: bool, what: &str) -> Option<Arc<Database>> {
    match common::fresh(admin, "", mysql).await {
        Ok(url) => Some(Arc::new(Database::connect(&url).await.unwrap())),
        Err(e) => {
            common::skip(&format!("{what} is not usable: {e}"));
            None
        }
    }
}

#[tokio::test]
async fn hostile_values_are_bound_on_postgres() {
    let Some(db) = server_db(common::PG_ADMIN, false, "PostgreSQL at 127.0.0.1:5432").await else {
        return;
    };
    hostile_values_round_trip(
        db,
        "CREATE TABLE customers (id SERIAL PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('kept');
         CREATE TABLE notes (id SERIAL PRIMARY KEY, body TEXT NOT NULL);",
    )
    .await;
}

#[tokio::test]
async fn hostile_values_are_bound_on_mariadb() {
    let Some(db) = server_db(common::MARIA_ADMIN, true, "MariaDB at 127.0.0.1:3306").await else {
        return;
    };
    hostile_values_round_trip(
        db,
        "CREATE TABLE customers (id INT AUTO_INCREMENT PRIMARY KEY, name TEXT) CHARACTER SET utf8mb4;
         INSERT INTO customers (name) VALUES ('kept');
         CREATE TABLE notes (id INT AUTO_INCREMENT PRIMARY KEY, body TEXT NOT NULL) CHARACTER SET utf8mb4;",
    )
    .await;
}

async fn load_error(db: &Arc<Database>, mode: &str, statement: &str) -> String {
    let yaml = format!(
        "{{database: x, mode: {mode}, description: d, statement: {}}}",
        serde_json::to_string(statement).unwrap()
    );
    match sql_tool("t", &yaml, db).await {
        Ok(_) => panic!("`{statement}` was accepted as a {mode} tool"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn statements_that_do_not_fit_their_mode_are_refused_at_load() {
    let db = scratch("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1);").await;
    for statement in [
        "DELETE FROM t",
        "INSERT INTO t VALUES (2)",
        "UPDATE t SET a = 3",
        "DROP TABLE t",
    ] {
        let e = load_error(&db, "read", statement).await;
        assert!(e.starts_with("tool `t`: it is a read tool"), "{e}");
        assert!(e.contains("changes the database"), "{e}");
    }
    for (statement, says) in [
        (
            "INSERT INTO t VALUES (1); DELETE FROM t",
            "More than one statement",
        ),
        ("DELETE FROM t; DROP TABLE t", "More than one statement"),
        ("DROP TABLE t", "changes the schema"),
        ("CREATE TABLE u (a INTEGER)", "changes the schema"),
        ("SELECT a FROM t", "only reads"),
    ] {
        let e = load_error(&db, "write", statement).await;
        assert!(e.starts_with("tool `t`: it is a write tool"), "{e}");
        assert!(e.contains(says), "{statement}: {e}");
    }
    // Names that do not match the declared parameters.
    let e = sql_tool(
        "t",
        "{database: x, description: d, statement: 'SELECT a FROM t WHERE a = :b', parameters: {a: {type: integer}}}",
        &db,
    )
    .await
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains(":b, which is not declared"), "{e}");
    let e = sql_tool(
        "t",
        "{database: x, description: d, statement: 'SELECT a FROM t WHERE a = :a',
          parameters: {a: {type: integer}, extra: {type: string}}}",
        &db,
    )
    .await
    .err()
    .unwrap()
    .to_string();
    assert_eq!(
        e,
        "tool `t`, parameter `extra`: it is declared but the statement never uses :extra; use it or remove it"
    );
    // Nothing ran: the table is intact.
    let left = db
        .query_prepared("SELECT a FROM t", &[], &QueryLimits::default())
        .await
        .unwrap();
    assert_eq!(left.rows, vec![vec![json!(1)]]);
    let unknown = ToolDef::Sql(
        serde_yaml::from_str("{database: nope, description: d, statement: SELECT 1}").unwrap(),
    )
    .build("t", &BTreeMap::from([("shop".to_owned(), db.clone())]))
    .await
    .err()
    .unwrap()
    .to_string();
    assert!(
        unknown.contains(
            "database `nope`, which is not configured; the configured databases are: shop"
        ),
        "{unknown}"
    );
}

#[tokio::test]
async fn a_side_effect_function_in_a_read_tool_is_refused_on_postgres() {
    let Some(db) = server_db(common::PG_ADMIN, false, "PostgreSQL at 127.0.0.1:5432").await else {
        return;
    };
    db.execute_script("CREATE TABLE t (a INT)").await.unwrap();
    let e = load_error(&db, "read", "SELECT pg_sleep(1)").await;
    assert!(
        e.contains("refused by the read-only guard") && e.contains("pg_sleep"),
        "{e}"
    );
    let e = load_error(&db, "read", "DELETE FROM t").await;
    assert!(e.contains("changes the database"), "{e}");
    let e = load_error(&db, "write", "CREATE TABLE u (a INT)").await;
    assert!(e.contains("changes the schema"), "{e}");
}

#[tokio::test]
async fn a_call_id_replays_its_call_and_refuses_other_arguments() {
    let db = scratch(
        "CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT NOT NULL, done INTEGER DEFAULT 0);",
    )
    .await;
    let add = sql_tool(
        "add_task",
        "{database: x, mode: write, description: d, statement: 'INSERT INTO tasks (title) VALUES (:title)',
          parameters: {title: {type: string}}}",
        &db,
    )
    .await
    .unwrap();
    let first = call(&add, "c1", json!({"title": "a"})).await.unwrap();
    let replay = call(&add, "c1", json!({"title": "a"})).await.unwrap();
    assert_eq!(first, replay);
    let other = call(&add, "c1", json!({"title": "b"})).await.unwrap_err();
    assert_eq!(
        other,
        "Call id c1 was already used by add_task with other arguments; use a new call id."
    );
    call(&add, "c2", json!({"title": "b"})).await.unwrap();
    let titles = db
        .query_prepared(
            "SELECT title FROM tasks ORDER BY id",
            &[],
            &QueryLimits::default(),
        )
        .await
        .unwrap();
    assert_eq!(titles.rows, vec![vec![json!("a")], vec![json!("b")]]);
    // A DELETE is destructive, an UPDATE says when nothing matched.
    let done = sql_tool(
        "finish_task",
        "{database: x, mode: write, description: d, statement: 'UPDATE tasks SET done = 1 WHERE title = :title',
          parameters: {title: {type: string}}}",
        &db,
    )
    .await
    .unwrap();
    assert!(done.spec().annotations.destructive);
    let out = call(&done, "c3", json!({"title": "nope"})).await.unwrap();
    assert_eq!(out.content, "No row matched, so nothing was changed.");
}

#[tokio::test]
async fn placeholders_in_strings_comments_and_casts_are_left_alone() {
    let db = scratch("CREATE TABLE t (a TEXT); INSERT INTO t VALUES ('x');").await;
    let tool = SqlTool::build(
        "t",
        serde_yaml::from_str(
            r#"{database: x, description: d, parameters: {city: {type: string}, n: {type: integer, default: 2}},
                statement: "SELECT ':city' AS lit, \":n\" AS q, :city AS c, :n + 1 AS m /* :nope */ FROM (SELECT 1 AS \":n\") -- :gone"}"#,
        )
        .unwrap(),
        db.clone(),
    )
    .await
    .unwrap();
    assert_eq!(
        tool.statement(),
        "SELECT ':city' AS lit, \":n\" AS q, ? AS c, ? + 1 AS m /* :nope */ FROM (SELECT 1 AS \":n\") -- :gone"
    );
    let tool: Arc<dyn Tool> = Arc::new(tool);
    let out = call(&tool, "c", json!({"city": "Lyon"})).await.unwrap();
    assert_eq!(
        rows(&out),
        vec![vec![json!(":city"), json!(1), json!("Lyon"), json!(3)]]
    );

    let Some(pg) = server_db(common::PG_ADMIN, false, "PostgreSQL at 127.0.0.1:5432").await else {
        return;
    };
    let tool = SqlTool::build(
        "t",
        serde_yaml::from_str(
            r#"{database: x, description: d, parameters: {v: {type: string}},
                statement: "SELECT ':v' AS lit, '7'::int AS n, :v::text AS a, $$:v$$ AS d, upper(:v) AS b -- :v"}"#,
        )
        .unwrap(),
        pg.clone(),
    )
    .await
    .unwrap();
    assert_eq!(
        tool.statement(),
        "SELECT ':v' AS lit, '7'::int AS n, $1::text AS a, $$:v$$ AS d, upper($1) AS b -- :v"
    );
    let tool: Arc<dyn Tool> = Arc::new(tool);
    let out = call(&tool, "c", json!({"v": "o'k"})).await.unwrap();
    assert_eq!(
        rows(&out),
        vec![vec![
            json!(":v"),
            json!(7),
            json!("o'k"),
            json!(":v"),
            json!("O'K")
        ]]
    );
}

fn http_def(yaml: &str) -> HttpToolDef {
    serde_yaml::from_str(yaml).unwrap()
}

fn http_tool(yaml: &str) -> Arc<dyn Tool> {
    Arc::new(HttpTool::build("api", http_def(yaml)).unwrap())
}

#[tokio::test]
async fn http_get_extracts_a_json_pointer_and_encodes_values() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"data": {"user": {"name": "Ann"}}, "x": 1})),
        )
        .mount(&server)
        .await;
    let tool = http_tool(&format!(
        "{{description: d, url: '{}/users/{{id}}/info', query: {{q: '{{q}}', fixed: yes}}, extract: /data/user,
           parameters: {{id: {{type: string}}, q: {{type: string, required: false}}}}}}",
        server.uri()
    ));
    let a = &tool.spec().annotations;
    assert!(a.read_only && a.open_world && !a.destructive);
    let out = call(&tool, "c", json!({"id": "a b/../c?&", "q": "x&y=z"}))
        .await
        .unwrap();
    assert_eq!(out.content, r#"{"name":"Ann"}"#);
    let seen = server.received_requests().await.unwrap();
    assert_eq!(seen[0].url.path(), "/users/a%20b%2F..%2Fc%3F%26/info");
    assert_eq!(seen[0].url.query(), Some("q=x%26y%3Dz&fixed=yes"));
    // A left-out optional parameter leaves its query pair out; a dot segment is refused.
    call(&tool, "c", json!({"id": "7"})).await.unwrap();
    let seen = server.received_requests().await.unwrap();
    assert_eq!(seen[1].url.query(), Some("fixed=yes"));
    let e = call(&tool, "c", json!({"id": ".."})).await.unwrap_err();
    assert!(e.contains("`.` or `..`"), "{e}");
}

#[tokio::test]
async fn http_headers_come_from_the_environment_and_stay_secret() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/tasks"))
        .and(header("authorization", "Bearer s3cret-token"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({"id": 9})))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/fail"))
        .respond_with(
            ResponseTemplate::new(500)
                .set_body_string("internal error; your key s3cret-token was\nrejected"),
        )
        .mount(&server)
        .await;
    let yaml = |p: &str| {
        format!(
            "{{description: d, method: POST, url: '{}/{p}', headers: {{Authorization: 'Bearer ${{API_TOKEN}}'}},
               parameters: {{title: {{type: string}}, due: {{type: string, required: false}}, n: {{type: integer, default: 1}}}}}}",
            server.uri()
        )
    };
    let env = |v: &str| (v == "API_TOKEN").then(|| "s3cret-token".to_owned());
    let tool = HttpTool::build_with_env("api", http_def(&yaml("tasks")), &env).unwrap();
    assert!(!format!("{tool:?}").contains("s3cret"));
    let tool: Arc<dyn Tool> = Arc::new(tool);
    let a = &tool.spec().annotations;
    assert!(!a.read_only && a.open_world);
    let out = call(&tool, "c", json!({"title": "Write"})).await.unwrap();
    assert_eq!(out.content, r#"{"id":9}"#);
    let seen = server.received_requests().await.unwrap();
    assert_eq!(
        seen[0].body_json::<Value>().unwrap(),
        json!({"title": "Write", "n": 1})
    );

    // A 500: status and a short, one-line quote, without the secret.
    let failing: Arc<dyn Tool> =
        Arc::new(HttpTool::build_with_env("api", http_def(&yaml("fail")), &env).unwrap());
    let e = call(&failing, "c", json!({"title": "x"}))
        .await
        .unwrap_err();
    assert!(
        e.contains(
            "HTTP 500 Internal Server Error: internal error; your key [redacted] was rejected"
        ),
        "{e}"
    );
    assert!(!e.contains("s3cret"), "{e}");

    // A missing variable is a load error that names it, not its value.
    let missing = yaml("tasks").replace("API_TOKEN", "STEWARD_TEST_SURELY_UNSET_VARIABLE");
    let e = HttpTool::build("api", http_def(&missing))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "tool `api`: header `Authorization` needs the environment variable `STEWARD_TEST_SURELY_UNSET_VARIABLE`, which is not set; set it or remove the header"
    );
    // The process environment is where `build` reads them (cargo sets CARGO_PKG_NAME for tests).
    let from_process = yaml("tasks").replace("API_TOKEN", "CARGO_PKG_NAME");
    assert!(HttpTool::build("api", http_def(&from_process)).is_ok());
}

#[tokio::test]
async fn http_timeouts_oversized_and_non_json_bodies_are_clear_errors() {
    let server = MockServer::start().await;
    Mock::given(path("/slow"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({}))
                .set_delay(Duration::from_secs(3)),
        )
        .mount(&server)
        .await;
    Mock::given(path("/big"))
        .respond_with(ResponseTemplate::new(200).set_body_string("x".repeat(5000)))
        .mount(&server)
        .await;
    Mock::given(path("/html"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("<html>hi</html>", "text/html"))
        .mount(&server)
        .await;
    Mock::given(path("/json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"a": 1})))
        .mount(&server)
        .await;
    let tool = |p: &str, extra: &str| {
        http_tool(&format!(
            "{{description: d, url: '{}/{p}'{extra}}}",
            server.uri()
        ))
    };

    let e = call(&tool("slow", ", timeout_ms: 300"), "c", json!({}))
        .await
        .unwrap_err();
    assert!(e.contains("did not answer within 300 ms"), "{e}");
    let e = call(&tool("big", ", max_response_bytes: 1000"), "c", json!({}))
        .await
        .unwrap_err();
    assert!(e.contains("was larger than 1000 bytes"), "{e}");
    let e = call(&tool("html", ", extract: /a"), "c", json!({}))
        .await
        .unwrap_err();
    assert!(e.contains("is not JSON (text/html)"), "{e}");
    let e = call(&tool("json", ", extract: /b"), "c", json!({}))
        .await
        .unwrap_err();
    assert!(e.contains("nothing at `/b`"), "{e}");
    let out = call(&tool("html", ""), "c", json!({})).await.unwrap();
    assert_eq!(out.content, "<html>hi</html>");
    let out = call(&tool("json", ", extract: /a"), "c", json!({}))
        .await
        .unwrap();
    assert_eq!(out.content, "1");
}

#[test]
fn http_declarations_are_checked_at_load() {
    for (yaml, says) in [
        (
            "{description: d, url: 'ftp://x/y'}",
            "must start with http:// or https://",
        ),
        (
            "{description: d, url: 'https://{host}/y', parameters: {host: {type: string}}}",
            "not in the host",
        ),
        (
            "{description: d, url: 'https://x/{id}'}",
            "`{id}` is used but not declared",
        ),
        (
            "{description: d, url: 'https://x/y', parameters: {id: {type: string}}}",
            "declared but used neither",
        ),
        (
            "{description: d, url: 'https://x/{id}', parameters: {id: {type: string, required: false}}}",
            "needs a value",
        ),
        (
            "{description: d, url: 'https://x/y', body: {a: 1}}",
            "GET request carries no body",
        ),
        (
            "{description: d, url: 'https://x/y', extract: data}",
            "not a JSON pointer",
        ),
        (
            "{description: d, url: 'https://x/y', timeout_ms: 0}",
            "timeout_ms must be between",
        ),
        (
            "{description: d, url: 'https://x/y', headers: {'Bad Name': v}}",
            "not a valid header name",
        ),
    ] {
        let e = HttpTool::build("api", http_def(yaml))
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{yaml}: {e}");
    }
    let e = serde_yaml::from_str::<HttpToolDef>("{description: d, url: 'https://x', verb: GET}")
        .unwrap_err();
    assert!(e.to_string().contains("unknown field `verb`"), "{e}");
    let tool = HttpTool::build(
        "api",
        http_def("{description: d, url: 'https://x/y', method: DELETE}"),
    )
    .unwrap();
    let a = &tool.spec().annotations;
    assert!(a.destructive && a.open_world && !a.read_only);
}
