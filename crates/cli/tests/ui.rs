//! The web UI end to end: `steward serve` (the binary, a token required) with a mock OpenAI model, driven in
//! Debian's headless Chromium by `crates/server/tests/ui/e2e.mjs` (playwright-core): sign in, send a message,
//! watch the steps stream, see the table and the chart, approve the write, read the answer, reload. The
//! screenshots are saved in `target/ui-screenshots/`. The other tests of this file drive the change-set card, four
//! eyes, the everyday controls, chart choice by the shape of a result (`charts.mjs`) and drive-by requests.
//! Without node, npm or Chromium the test says SKIPPED (under CI=true it fails: `.ci/run` installs them).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::json;

const TOKEN: &str = "ui-test-token-7f3a";
const MONTHLY: &str = "SELECT substr(spent_on, 1, 7) AS month, ROUND(SUM(gross_amount), 2) AS total FROM expenses GROUP BY month ORDER BY month";
const ADJUSTMENT: &str = r#"{"description": "December refund adjustment", "net_amount": 40, "tax_rate": 0.2, "date": "2026-11-21"}"#;

fn available(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn skip_or_fail(what: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("{what} (CI=true: required; .ci/run installs it)");
    }
    eprintln!("SKIPPED: the web UI end-to-end test: {what}");
}

/// The folder of the browser scripts, with node, Chromium and playwright-core ready; `None` after saying
/// SKIPPED (or failing under CI=true) when they are not.
fn browser_ready() -> Option<PathBuf> {
    let ui = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../server/tests/ui");
    if !available("node", "--version") || !available("npm", "--version") {
        skip_or_fail("node and npm are not installed (apt-get install nodejs npm)");
        return None;
    }
    if !Path::new("/usr/bin/chromium").exists() {
        skip_or_fail("Chromium is not installed (apt-get install chromium)");
        return None;
    }
    // One `npm ci` at a time: the tests of this file run in parallel.
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _installing = INSTALL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !ui.join("node_modules/playwright-core").exists() {
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&ui)
            .output()
            .unwrap();
        if !out.status.success() {
            skip_or_fail(&format!(
                "`npm ci` in {} failed: {}",
                ui.display(),
                text(&out.stderr)
            ));
            return None;
        }
    }
    Some(ui)
}

#[tokio::test]
async fn the_web_ui_signs_in_streams_steps_shows_a_table_and_a_chart_and_approves_a_write() {
    let Some(ui) = browser_ready() else {
        return;
    };

    let dir = scratch_dir("ui");
    let db = format!("{dir}/demo.sqlite");
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let hash = token_sha256(TOKEN);
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            r#"databases:
  shop: sqlite://{db}
agents:
  books:
    description: Keeps the books.
    instructions: You keep the books.
    tools: [run_sql, add_expense]
roles:
  clerk: {{agents: [books], approve: [add_expense]}}
principals:
  ada: {{role: clerk}}
defaults: {{agent: books}}
server:
  tokens:
    - {{name: ui-test, sha256: {hash}, principal: ada}}
"#
        ),
    )
    .unwrap();
    let before = sqlite3(&db, "SELECT count(*) FROM expenses");
    let model = mock_openai(vec![
        tool_reply("c1", "run_sql", &json!({"sql": MONTHLY}).to_string()),
        tool_reply("c2", "add_expense", ADJUSTMENT),
        text_reply(
            "Spending by month is in the table, and the December refund adjustment is recorded.",
        ),
    ])
    .await;
    let server = serve_for(&config, &model, "ui-data");
    let base = server.base.clone();

    let shots = shots();
    node(
        &ui,
        "e2e.mjs",
        &base,
        &shots,
        &[("STEWARD_EXPECT", "December refund adjustment is recorded")],
    )
    .await;
    drop(server);
    // The approved write happened once, in the database itself.
    let after: i64 = sqlite3(&db, "SELECT count(*) FROM expenses")
        .parse()
        .unwrap();
    assert_eq!(after, before.parse::<i64>().unwrap() + 1);
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(*) FROM expenses WHERE description = 'December refund adjustment'"
        ),
        "1"
    );
    assert!(shots.join("chat.png").exists() || std::fs::read_dir(&shots).unwrap().count() > 0);
}

/// The change-set card in Chromium, desktop and phone: sorting the inbox ends with one card (10 changes, the
/// rows by table, before → after); the changes about Garden are left out from the keyboard and the rest applied
/// (the database has exactly those rows); a read-only follow-up does not wait; after a reload the card says who
/// applied it. Screenshots: `target/ui-screenshots/changes-*.png`.
#[tokio::test]
async fn the_web_ui_shows_a_change_set_and_applies_the_chosen_changes() {
    let Some(ui) = browser_ready() else {
        return;
    };
    let dir = scratch_dir("ui-changes");
    let db = format!("{dir}/demo.sqlite");
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let tasks = inbox(&db);
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            r#"databases:
  shop: sqlite://{db}
roles:
  organiser: {{agents: [tasks]}}
principals:
  ada: {{role: organiser}}
defaults: {{agent: tasks}}
server:
  tokens:
    - {{name: ui-test, sha256: {hash}, principal: ada}}
"#,
            hash = token_sha256(TOKEN)
        ),
    )
    .unwrap();
    let mut replies = inbox_model(&tasks);
    replies.push(tool_reply("q1", "get_projects", "{}"));
    replies.push(text_reply("You have the projects listed above."));
    let model = mock_openai(replies).await;
    let server = serve_for(&config, &model, "ui-changes-data");
    let shots = shots();
    let report = node(&ui, "changes.mjs", &server.base, &shots, &[]).await;
    drop(server);
    // The chosen changes, and only those, are in the database: Birthday party with the even moves; no Garden.
    assert_eq!(
        sqlite3(&db, "SELECT count(*) FROM projects WHERE name = 'Garden'"),
        "0",
        "{report}"
    );
    for (i, task) in tasks.iter().enumerate() {
        let project = sqlite3(
            &db,
            &format!(
                "SELECT coalesce(p.name, 'inbox') FROM tasks t LEFT JOIN projects p ON p.id = t.project_id WHERE t.id = {task}"
            ),
        );
        let expected = if i % 2 == 0 {
            "Birthday party"
        } else {
            "inbox"
        };
        assert_eq!(project, expected, "task {task}: {report}");
    }
    for shot in [
        "changes-01-desktop.png",
        "changes-02-phone.png",
        "changes-03-applied.png",
        "changes-04-phone-decided.png",
    ] {
        assert!(shots.join(shot).exists(), "{shot} was not saved");
    }
}

/// Four eyes in the browser: the clerk's own Apply is refused on the card with the reason; the lead signs in,
/// finds the set under "Changes to decide" (on a phone), applies it, and the rows are written once.
#[tokio::test]
async fn the_web_ui_lets_a_lead_apply_what_a_clerk_may_not() {
    let Some(ui) = browser_ready() else {
        return;
    };
    const LEAD: &str = "ui-test-lead-token-2c9d";
    let (dir, db) = demo_in("ui-approver");
    let tasks = inbox(&db);
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            r#"databases:
  shop: sqlite://{db}
roles:
  clerk: {{agents: [tasks], approve_by: [lead], self_approval: false}}
  lead: {{}}
principals:
  ada: {{role: clerk}}
  grace: {{role: lead}}
defaults: {{agent: tasks}}
server:
  tokens:
    - {{name: ada, sha256: {ada}, principal: ada}}
    - {{name: grace, sha256: {grace}, principal: grace}}
"#,
            ada = token_sha256(TOKEN),
            grace = token_sha256(LEAD)
        ),
    )
    .unwrap();
    let model = mock_openai(inbox_model(&tasks)).await;
    let server = serve_for(&config, &model, "ui-approver-data");
    let shots = shots();
    let report = node(
        &ui,
        "approver.mjs",
        &server.base,
        &shots,
        &[("STEWARD_APPROVER_TOKEN", LEAD)],
    )
    .await;
    drop(server);
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(*) FROM projects WHERE name IN ('Birthday party', 'Garden')"
        ),
        "2",
        "{report}"
    );
    assert_eq!(
        sqlite3(&db, "SELECT count(*) FROM tool_calls"),
        "10",
        "{report}"
    );
}

/// The everyday controls in the browser (`crates/server/tests/ui/basics.mjs`): starters, folded steps, Copy SQL,
/// Download CSV (compared with the database's own rows), Edit and run again (the edited SQL reaches the model),
/// Stop and Retry, "tokens unknown", Escape, the default model named, the dark theme.
#[tokio::test]
async fn the_web_ui_has_the_everyday_controls() {
    let Some(ui) = browser_ready() else {
        return;
    };
    const FIRST: &str = "SELECT name, city FROM customers ORDER BY id LIMIT 3";
    const EDITED: &str = "SELECT name, city FROM customers ORDER BY id DESC LIMIT 2";
    let (dir, db) = demo_in("ui-basics");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  shop: sqlite://{db}\ndefaults: {{agent: analyst}}\nroles:\n  analyst: {{agents: [analyst]}}\nprincipals:\n  ada: {{role: analyst}}\nserver:\n  tokens:\n    - {{name: ui, sha256: {}, principal: ada}}\n",
            token_sha256(TOKEN)
        ),
    )
    .unwrap();
    // A text reply whose provider reports no usage.
    let unreported = |text: &str| {
        wiremock::ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-u", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]
        }))
    };
    let model = mock_openai(vec![
        tool_reply("s1", "run_sql", &json!({"sql": FIRST}).to_string()),
        text_reply("Here are three customers."),
        tool_reply("e1", "run_sql", &json!({"sql": EDITED}).to_string()),
        unreported("Two customers, newest first."),
        // Long enough to be stopped.
        text_reply("Too late.").set_delay(std::time::Duration::from_secs(20)),
        unreported("There are many orders."),
    ])
    .await;
    let model_base = format!("{}/v1", model.uri());
    let data = scratch_dir("ui-basics-data");
    let store = format!("sqlite://{data}/store.sqlite");
    let server = serve_with(
        &config,
        &store,
        &model_base,
        &data,
        &[("STEWARD_MODEL", "openai:gpt-4o-mini")],
    );
    // The CSV the first result must download as: the database's own rows, in RFC 4180.
    let rows = sqlite3(&db, &format!("SELECT name || '\t' || city FROM ({FIRST})"));
    let quote = |v: &str| {
        if v.contains([',', '"', '\r', '\n']) {
            format!("\"{}\"", v.replace('"', "\"\""))
        } else {
            v.to_owned()
        }
    };
    let mut csv = "name,city\r\n".to_owned();
    for line in rows.lines() {
        let (name, city) = line.split_once('\t').unwrap();
        csv.push_str(&format!("{},{}\r\n", quote(name), quote(city)));
    }
    let shots = shots();
    let report = node(
        &ui,
        "basics.mjs",
        &server.base,
        &shots,
        &[
            ("STEWARD_CSV", &csv),
            ("STEWARD_EDITED", EDITED),
            ("STEWARD_MODEL_SHOWN", "openai:gpt-4o-mini"),
        ],
    )
    .await;
    drop(server);
    // The edited SQL reached the model as the person's message.
    let asked = bodies(&model).await;
    assert!(
        asked
            .iter()
            .any(|b| b["messages"].to_string().contains(EDITED)),
        "{report}"
    );
}

/// Chart choice in the browser (`crates/server/tests/ui/charts.mjs`), desktop and phone: one turn runs five queries
/// on the demo database whose results have five shapes — a listing of 60 shipments (a table, no chart), shipments
/// per carrier (bars), orders per month (a line), shipments per carrier in two years (one axis), orders and
/// revenue per category (two axes) — and the page must draw exactly that. Screenshots:
/// `target/ui-screenshots/charts-*.png`.
#[tokio::test]
async fn the_web_ui_draws_a_chart_only_when_the_shape_of_a_result_calls_for_one() {
    let Some(ui) = browser_ready() else {
        return;
    };
    const QUERIES: [&str; 5] = [
        "SELECT s.id, s.carrier, s.status, o.total FROM shipments s JOIN orders o ON o.id = s.order_id ORDER BY s.id LIMIT 60",
        "SELECT carrier, COUNT(*) AS shipments FROM shipments GROUP BY carrier ORDER BY carrier",
        "SELECT substr(ordered_at, 1, 7) AS month, COUNT(*) AS orders FROM orders GROUP BY month ORDER BY month",
        "SELECT carrier, SUM(shipped_at < '2026-01-01') AS shipped_2025, SUM(shipped_at >= '2026-01-01') AS shipped_2026 FROM shipments GROUP BY carrier ORDER BY carrier",
        "SELECT p.category, COUNT(DISTINCT i.order_id) AS orders, ROUND(SUM(i.quantity * i.unit_price), 2) AS revenue FROM order_items i JOIN products p ON p.id = i.product_id GROUP BY p.category ORDER BY p.category",
    ];
    let (dir, db) = demo_in("ui-charts");
    // The demo data have the shapes the script expects: carriers repeat within 60 shipments, revenue per category
    // is in thousands next to hundreds of orders.
    let carriers: usize = sqlite3(&db, "SELECT count(DISTINCT carrier) FROM shipments")
        .parse()
        .unwrap();
    assert!((2..60).contains(&carriers), "{carriers} carriers");
    let scales = sqlite3(
        &db,
        &format!("SELECT max(orders), max(revenue) FROM ({})", QUERIES[4]),
    );
    let (orders, revenue) = scales.split_once('|').unwrap();
    let (orders, revenue): (f64, f64) = (orders.parse().unwrap(), revenue.parse().unwrap());
    assert!(revenue >= 1000.0 && revenue > 10.0 * orders, "{scales}");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  shop: sqlite://{db}\ndefaults: {{agent: analyst}}\nroles:\n  analyst: {{agents: [analyst]}}\nprincipals:\n  ada: {{role: analyst}}\nserver:\n  tokens:\n    - {{name: ui, sha256: {}, principal: ada}}\n",
            token_sha256(TOKEN)
        ),
    )
    .unwrap();
    let mut replies: Vec<_> = QUERIES
        .iter()
        .enumerate()
        .map(|(i, sql)| {
            tool_reply(
                &format!("q{i}"),
                "run_sql",
                &json!({"sql": sql}).to_string(),
            )
        })
        .collect();
    // A call the schema refuses: the page says it in the person's words.
    replies.push(tool_reply("q5", "run_sql", "{}"));
    replies.push(text_reply("The five results are above."));
    let model = mock_openai(replies).await;
    let server = serve_for(&config, &model, "ui-charts-data");
    let shots = shots();
    let report = node(&ui, "charts.mjs", &server.base, &shots, &[]).await;
    drop(server);
    for (i, shape) in ["listing", "bar", "line", "one-axis", "two-axes"]
        .iter()
        .enumerate()
    {
        for viewport in ["desktop", "phone"] {
            let shot = format!("charts-{}-{shape}-{viewport}.png", i + 1);
            assert!(shots.join(&shot).exists(), "{shot} was not saved: {report}");
        }
    }
}

/// `steward serve` with `config`, the model `model` and a fresh store in the data folder named `what`.
fn serve_for(config: &str, model: &wiremock::MockServer, what: &str) -> Serve {
    let data = scratch_dir(what);
    let store = format!("sqlite://{data}/store.sqlite");
    serve(config, &store, &format!("{}/v1", model.uri()), &data)
}

/// Where the browser tests save their screenshots: `target/ui-screenshots/`.
fn shots() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/ui-screenshots")
}

/// Runs the browser script `script` against the server at `base` (signing in with [`TOKEN`]), with `env`
/// besides; fails the test with its report unless it passed. Returns the report.
async fn node(ui: &Path, script: &str, base: &str, shots: &Path, env: &[(&str, &str)]) -> String {
    let (ui, script, base, shots) = (
        ui.to_owned(),
        script.to_owned(),
        base.to_owned(),
        shots.to_owned(),
    );
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let run = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(&script)
            .current_dir(&ui)
            .env("STEWARD_URL", &base)
            .env("STEWARD_TOKEN", TOKEN)
            .env("STEWARD_SCREENSHOTS", &shots)
            .envs(env)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let report = format!("{}\n{}", text(&run.stdout), text(&run.stderr));
    println!("{report}");
    assert_eq!(
        run.status.code(),
        Some(0),
        "the browser test failed:\n{report}"
    );
    report
}

/// A page on another site, and one whose name was made to resolve to this machine (DNS rebinding), try to make a
/// visitor's browser record an expense, start a conversation or read the runs through a `steward serve` that needs
/// no credentials (bound to 127.0.0.1, the default): `crates/server/tests/ui/driveby.mjs` in headless Chromium.
/// Nothing is created but the conversation the server's own page makes as a control, and the model is never asked.
#[tokio::test]
async fn drive_by_requests_from_other_origins_change_nothing() {
    let Some(ui) = browser_ready() else {
        return;
    };
    let dir = scratch_dir("driveby");
    let db = format!("{dir}/demo.sqlite");
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            r#"databases:
  shop: sqlite://{db}
agents:
  books:
    description: Keeps the books.
    instructions: You keep the books.
    tools: [run_sql, add_expense]
defaults: {{agent: books}}
"#
        ),
    )
    .unwrap();
    let expenses = || sqlite3(&db, "SELECT count(*) FROM expenses");
    let before = expenses();
    // Any request that reached the model would record this expense.
    let model = mock_openai(vec![
        tool_reply(
            "c1",
            "add_expense",
            r#"{"description": "Drive-by taxi", "net_amount": 12.5, "tax_rate": 0.2, "date": "2026-11-21"}"#,
        ),
        text_reply("Recorded."),
    ])
    .await;
    let server = serve_for(&config, &model, "driveby-data");
    let base = server.base.clone();

    let run = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg("driveby.mjs")
            .current_dir(&ui)
            .env("STEWARD_URL", &base)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let report = format!("{}\n{}", text(&run.stdout), text(&run.stderr));
    println!("{report}");

    // Over HTTP, as the server's own client: one conversation (the control's), no run, no expense.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let get = |path: &str| {
        let request = http.get(format!("{}{path}", server.base));
        async move {
            let response = request.send().await.unwrap();
            assert_eq!(response.status().as_u16(), 200);
            serde_json::from_str::<serde_json::Value>(&response.text().await.unwrap()).unwrap()
        }
    };
    let conversations = get("/api/conversations").await;
    let titles: Vec<&str> = conversations
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["title"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(titles, ["own page"], "{report}");
    assert_eq!(get("/api/runs").await, json!([]), "{report}");
    assert_eq!(expenses(), before, "{report}");
    assert!(
        bodies(&model).await.is_empty(),
        "the model was asked: {report}"
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "the drive-by script failed:\n{report}"
    );
}
