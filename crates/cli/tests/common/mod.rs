//! Running the `steward` binary against a local OpenAI-compatible mock server.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::collections::VecDeque;
use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Plays responses in order; the last one repeats.
pub struct Sequence(Mutex<VecDeque<ResponseTemplate>>);

impl Respond for Sequence {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let mut queue = self.0.lock().unwrap();
        if queue.len() > 1 {
            queue.pop_front().unwrap()
        } else {
            queue.front().cloned().unwrap()
        }
    }
}

/// An OpenAI chat completion calling one tool.
pub fn tool_reply(id: &str, name: &str, arguments: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-t", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 150, "completion_tokens": 20, "total_tokens": 170}
    }))
}

/// An OpenAI chat completion with text.
pub fn text_reply(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-a", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 200, "completion_tokens": 15, "total_tokens": 215}
    }))
}

/// A mock OpenAI endpoint playing `replies` in order.
pub async fn mock_openai(replies: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Sequence(Mutex::new(replies.into())))
        .mount(&server)
        .await;
    server
}

/// The bodies of the requests the server received.
pub async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

/// `steward` with a clean environment plus `env`, its three streams piped.
pub fn steward_command(args: &[&str], env: &[(&str, &str)]) -> Command {
    isolated(env!("CARGO_BIN_EXE_steward"), args, env)
}

/// `program` with the clean environment `steward` gets (see [`steward_command`]).
pub fn isolated(program: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", env!("CARGO_TARGET_TMPDIR"))
        .env("NO_COLOR", "1")
        .env("STEWARD_NOW", "2026-11-21T09:30:00+01:00")
        // No Ollama is ever picked up by accident.
        .env("OLLAMA_HOST", "127.0.0.1:9")
        // Each run has its own data, cache and state folders (the demo database and the run store live in
        // the first).
        .env("XDG_DATA_HOME", scratch_dir("data"))
        .env("XDG_CACHE_HOME", scratch_dir("cache"))
        .env("XDG_STATE_HOME", scratch_dir("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    command
}

/// Runs `steward` with a clean environment plus `env`, feeding `stdin`.
pub fn steward(args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
    let mut child = steward_command(args, env).spawn().expect("run steward");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A fresh folder under the test's temporary directory.
pub fn scratch_dir(what: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{what}-{}-{n}", std::process::id()));
    // A folder left by an earlier run whose process had the same id would hold its databases and stores.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// True when a test server answers at `addr` (`127.0.0.1:5432`); otherwise says SKIPPED, or fails under
/// CI=true, where the test servers must run.
pub fn server_up(addr: &str, name: &str) -> bool {
    let up = std::net::TcpStream::connect(addr).is_ok();
    if !up {
        if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
            panic!("{name} at {addr} is not running (CI=true: required)");
        }
        eprintln!("SKIPPED: {name} at {addr} is not running");
    }
    up
}

/// True when the test PostgreSQL answers (see [`server_up`]).
pub fn postgres_up() -> bool {
    server_up("127.0.0.1:5432", "PostgreSQL")
}

/// True when the test MariaDB answers (see [`server_up`]).
pub fn mariadb_up() -> bool {
    server_up("127.0.0.1:3306", "MariaDB")
}

/// A database on a test server, dropped when the test ends (also when it fails).
pub struct ServerDb {
    /// A URL of the server's maintenance database.
    pub admin: &'static str,
    /// The DROP statement.
    pub drop: String,
}

impl Drop for ServerDb {
    fn drop(&mut self) {
        let (admin, drop) = (self.admin, self.drop.clone());
        // Its own thread and runtime: a test's runtime may be the one ending.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let db = steward_sql::Database::connect(admin).await.unwrap();
                db.execute_script(&drop).await.unwrap();
                db.close().await;
            });
        })
        .join();
    }
}

/// A database name no other test run uses, with a space and a capital so it must be quoted.
pub fn fresh_name(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix} Demo{}_{nanos}", std::process::id())
}

/// A database name as a URL path writes it.
fn url_path(name: &str) -> String {
    name.replace('%', "%25")
        .replace(' ', "%20")
        .replace('`', "%60")
}

impl ServerDb {
    /// A database `name` on the test PostgreSQL, not created yet: the URL that names it, and its cleanup.
    pub fn postgres(name: &str) -> (String, Self) {
        (
            format!("postgres://postgres@127.0.0.1:5432/{}", url_path(name)),
            Self {
                admin: "postgres://postgres@127.0.0.1:5432/postgres",
                drop: format!(
                    "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
                    name.replace('"', "\"\"")
                ),
            },
        )
    }

    /// A database `name` on the test MariaDB, not created yet: the URL that names it, and its cleanup.
    pub fn mariadb(name: &str) -> (String, Self) {
        (
            format!("mysql://root@127.0.0.1:3306/{}", url_path(name)),
            Self {
                admin: "mysql://root@127.0.0.1:3306",
                drop: format!("DROP DATABASE IF EXISTS `{}`", name.replace('`', "``")),
            },
        )
    }
}

/// What an engine's own command-line client prints for `args` (trimmed); the test fails when it fails.
pub fn client(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("the {program} client: {e}"));
    assert!(out.status.success(), "{program}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_owned()
}

/// What the `sqlite3` client prints for `sql` on the database file `db`.
pub fn sqlite3(db: &str, sql: &str) -> String {
    client("sqlite3", &[db, sql])
}

/// A running `steward serve`, killed when dropped.
pub struct Serve {
    pub child: std::process::Child,
    pub base: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `steward serve` on a free port of 127.0.0.1 with `config`, the run store `store`, the OpenAI-compatible
/// model at `model_base` and the data folder `data`; returns once it listens.
pub fn serve(config: &str, store: &str, model_base: &str, data: &str) -> Serve {
    serve_with(config, store, model_base, data, &[])
}

/// [`serve`] with more environment variables.
pub fn serve_with(
    config: &str,
    store: &str,
    model_base: &str,
    data: &str,
    env: &[(&str, &str)],
) -> Serve {
    let mut child = steward_command(
        &[
            "serve",
            "-c",
            config,
            "--bind",
            "127.0.0.1:0",
            "--store",
            store,
            "--grace",
            "2",
        ],
        &[
            ("OPENAI_BASE_URL", model_base),
            ("OPENAI_API_KEY", "test"),
            ("XDG_DATA_HOME", data),
        ]
        .into_iter()
        .chain(env.iter().copied())
        .collect::<Vec<_>>(),
    )
    .spawn()
    .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let base = loop {
        let line = lines
            .next()
            .expect("steward serve ended before listening")
            .unwrap();
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    // Keep draining standard error so the server never blocks on it.
    std::thread::spawn(move || for _ in lines {});
    Serve { child, base }
}

/// A fresh demo database in a new scratch folder (named after `what`): the folder and the database's path.
pub fn demo_in(what: &str) -> (String, String) {
    let dir = scratch_dir(what);
    let db = format!("{dir}/demo.sqlite");
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    (dir, db)
}

/// The inbox scenario of the source material, scripted: read the inbox, create two projects, move eight
/// tasks (the moves name the new projects by their placeholders, -1 and -2), answer.
pub fn inbox_model(inbox: &[i64]) -> Vec<wiremock::ResponseTemplate> {
    let mut replies = vec![
        tool_reply("t1", "get_inbox_tasks", "{}"),
        tool_reply("p1", "create_project", r#"{"name": "Birthday party"}"#),
        tool_reply("p2", "create_project", r#"{"name": "Garden"}"#),
    ];
    for (i, task) in inbox.iter().enumerate() {
        let project = if i % 2 == 0 { -1 } else { -2 };
        replies.push(tool_reply(
            &format!("m{i}"),
            "move_task",
            &json!({"task_id": task, "project_id": project}).to_string(),
        ));
    }
    replies.push(text_reply("Your inbox is sorted into two projects."));
    replies
}

/// The first eight open tasks of the demo inbox.
pub fn inbox(db: &str) -> Vec<i64> {
    sqlite3(
        db,
        "SELECT id FROM tasks WHERE project_id IS NULL AND status = 'OPEN' ORDER BY id LIMIT 8",
    )
    .lines()
    .map(|l| l.parse().unwrap())
    .collect()
}

/// The SHA-256 of a token, as `server.tokens[].sha256` holds it.
pub fn token_sha256(token: &str) -> String {
    let out = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(token.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    text(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

/// A config (its path) whose SQL tool `orders_of` reads a table the empty database lacks, as one that was never
/// checked with `config check`; `extra` is appended (agents and the like).
pub fn misconfigured_tool(what: &str, extra: &str) -> String {
    let dir = scratch_dir(what);
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  shop: sqlite://{dir}/shop.sqlite?mode=rwc\ntools:\n  orders_of:\n    kind: sql\n    \
             database: shop\n    description: Orders of a customer.\n    statement: SELECT * FROM vanished WHERE \
             customer = :customer\n    parameters:\n      customer: {{type: string}}\n{extra}"
        ),
    )
    .unwrap();
    config
}
