//! Processes killed hard, by effect: `steward serve` and `steward ask` killed with SIGKILL after a write tool
//! ran and before the run ended. The write is in the audit trail (as `started`, or settled), the chain is
//! intact, and once the store is opened again (`steward runs list`) the killed run — its sub-run too — is
//! `died`, not `incomplete`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

/// The demo database and a config with a `books` agent that may record expenses.
struct Shop {
    db: String,
    config: String,
    data: String,
    store: String,
}

fn shop() -> Shop {
    let (dir, db) = demo_in("faults");
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
    tools: [add_expense]
"#
        ),
    )
    .unwrap();
    Shop {
        db,
        config,
        store: format!("sqlite://{dir}/store.sqlite"),
        data: scratch_dir("faults-data"),
    }
}

fn taxi(description: &str) -> String {
    json!({"description": description, "net_amount": 12.5, "tax_rate": 0.2, "date": "2026-11-21"})
        .to_string()
}

/// Waits until the expense `description` is in the database.
async fn until_recorded(db: &str, description: &str) {
    let started = Instant::now();
    let sql = format!("SELECT count(*) FROM expenses WHERE description = '{description}'");
    while sqlite3(db, &sql) != "1" {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the expense was never recorded"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the model was asked `n` times (the write's result went back to it: its run is past the
/// tool).
async fn until_asked(model: &wiremock::MockServer, n: usize) {
    let started = Instant::now();
    while bodies(model).await.len() < n {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the model was not asked again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn json_of(shop: &Shop, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-c", &shop.config, "--store", &shop.store, "--json"]);
    let out = steward(&all, &[("XDG_DATA_HOME", shop.data.as_str())], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The write is in the trail (every record, intents included), the chain is intact, and the killed run is
/// listed as died, its sub-runs too; `runs show` reads it.
fn check_after_kill(shop: &Shop, description: &str, sub_runs: usize) {
    let trail = json_of(shop, &["audit", "list", "--all", "-n", "1000"]);
    let writes: Vec<&Value> = trail
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["tool"] == "add_expense" && r["arguments"].as_str().unwrap().contains(description)
        })
        .collect();
    assert!(!writes.is_empty(), "{trail:#}");
    for record in &writes {
        assert!(
            ["started", "ok"].contains(&record["status"].as_str().unwrap()),
            "{record}"
        );
    }
    assert!(
        writes.iter().any(|r| r["status"] == "started"),
        "the intent is chained before the tool runs: {trail:#}"
    );
    let out = steward(
        &[
            "audit",
            "verify",
            "-c",
            &shop.config,
            "--store",
            &shop.store,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));

    let runs = json_of(shop, &["runs", "list"]);
    let run = &runs.as_array().unwrap()[0];
    assert_eq!(run["outcome"], "died", "{runs:#}");
    assert_eq!(run["sub_runs"], sub_runs);
    let id = run["id"].as_str().unwrap();
    let detail = json_of(shop, &["runs", "show", id]);
    assert_eq!(detail["run"]["died"], true, "{detail:#}");
    for sub in detail["sub_runs"].as_array().unwrap() {
        assert_eq!(sub["died"], true, "{sub:#}");
    }
    let out = steward(
        &[
            "runs",
            "show",
            id,
            "-c",
            &shop.config,
            "--store",
            &shop.store,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Add the airport taxi"),
        "{}",
        text(&out.stdout)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_after_a_write_leaves_the_call_in_the_trail_and_its_run_died() {
    let shop = shop();
    let description = "Airport taxi, serve killed";
    // The reply after the write never comes in time: the server is killed while it waits for it.
    let model = mock_openai(vec![
        tool_reply("c1", "add_expense", &taxi(description)),
        text_reply("Added the taxi ride.").set_delay(Duration::from_secs(60)),
    ])
    .await;
    let model_base = format!("{}/v1", model.uri());
    let mut server = serve(&shop.config, &shop.store, &model_base, &shop.data);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let created = http
        .post(format!("{}/api/conversations", server.base))
        .header("content-type", "application/json")
        .body(json!({"agent": "books"}).to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let created: Value = serde_json::from_str(&created).unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    let url = format!("{}/api/conversations/{id}/messages", server.base);
    let posting = tokio::spawn(async move {
        let _ = http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(json!({"content": "Add the airport taxi"}).to_string())
            .send()
            .await;
    });
    until_recorded(&shop.db, description).await;
    until_asked(&model, 2).await;
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    posting.abort();
    check_after_kill(&shop, description, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_killed_after_a_write_leaves_the_call_in_the_trail_and_its_runs_died() {
    let shop = shop();
    let description = "Airport taxi, ask killed";
    // The assistant routes to the expenses specialist, which records the expense; its next reply hangs.
    let model = mock_openai(vec![
        tool_reply(
            "r1",
            "expenses",
            &json!({"request": "Add the airport taxi"}).to_string(),
        ),
        tool_reply("e1", "add_expense", &taxi(description)),
        text_reply("Added the taxi ride.").set_delay(Duration::from_secs(60)),
    ])
    .await;
    let model_base = format!("{}/v1", model.uri());
    let mut ask = steward_command(
        &[
            "ask",
            "-c",
            &shop.config,
            "--store",
            &shop.store,
            "Add the airport taxi",
        ],
        &[
            ("OPENAI_BASE_URL", model_base.as_str()),
            ("OPENAI_API_KEY", "test"),
            ("XDG_DATA_HOME", shop.data.as_str()),
        ],
    )
    .spawn()
    .unwrap();
    until_recorded(&shop.db, description).await;
    until_asked(&model, 3).await;
    ask.kill().unwrap();
    let out = ask.wait_with_output().unwrap();
    assert_eq!(out.status.code(), None, "killed by a signal");
    check_after_kill(&shop, description, 1);
}
