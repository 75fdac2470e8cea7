//! The web UI end to end: `steward serve` (the binary, a token required) with a mock OpenAI model, driven in
//! Debian's headless Chromium by `crates/server/tests/ui/e2e.mjs` (playwright-core): sign in, send a message,
//! watch the steps stream, see the table and the chart, approve the write, read the answer, reload. The
//! screenshots are saved in `target/ui-screenshots/`. Without node, npm or Chromium the test says SKIPPED
//! (under CI=true it fails: `.ci/run` installs them).
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

#[tokio::test]
async fn the_web_ui_signs_in_streams_steps_shows_a_table_and_a_chart_and_approves_a_write() {
    let ui = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../server/tests/ui");
    if !available("node", "--version") || !available("npm", "--version") {
        return skip_or_fail("node and npm are not installed (apt-get install nodejs npm)");
    }
    if !Path::new("/usr/bin/chromium").exists() {
        return skip_or_fail("Chromium is not installed (apt-get install chromium)");
    }
    if !ui.join("node_modules/playwright-core").exists() {
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&ui)
            .output()
            .unwrap();
        if !out.status.success() {
            return skip_or_fail(&format!(
                "`npm ci` in {} failed: {}",
                ui.display(),
                text(&out.stderr)
            ));
        }
    }

    let dir = scratch_dir("ui");
    let db = format!("{dir}/demo.sqlite");
    let out = steward(&["demo", "--db", &db], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let hash = steward_server_hash(TOKEN);
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
    let model_base = format!("{}/v1", model.uri());
    let data = scratch_dir("ui-data");
    let store = format!("sqlite://{data}/store.sqlite");
    let server = serve(&config, &store, &model_base, &data);
    let base = server.base.clone();

    let shots = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/ui-screenshots");
    let e2e = tokio::task::spawn_blocking({
        let ui = ui.clone();
        let shots = shots.clone();
        move || {
            Command::new("node")
                .arg("e2e.mjs")
                .current_dir(&ui)
                .env("STEWARD_URL", &base)
                .env("STEWARD_TOKEN", TOKEN)
                .env("STEWARD_EXPECT", "December refund adjustment is recorded")
                .env("STEWARD_SCREENSHOTS", &shots)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    drop(server);
    let report = format!("{}\n{}", text(&e2e.stdout), text(&e2e.stderr));
    println!("{report}");
    assert_eq!(
        e2e.status.code(),
        Some(0),
        "the browser test failed:\n{report}"
    );
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

/// The SHA-256 of a token, as `server.tokens[].sha256` holds it.
fn steward_server_hash(token: &str) -> String {
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
