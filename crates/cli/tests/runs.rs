//! The run store as a user meets it: `ask` and `chat` record their runs, `steward runs list` lists them newest
//! first, `steward runs show` prints one step by step, and a run whose process was killed is listed with its
//! last event.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

fn three_steps() -> Vec<wiremock::ResponseTemplate> {
    vec![
        tool_reply("call_date", "current_date", "{}"),
        tool_reply("call_calc", "calculator", r#"{"expression": "5 * 1.2"}"#),
        text_reply("Today is Saturday 21 November 2026; 5 * 1.2 = 6."),
    ]
}

fn list_json(data: &str) -> Vec<Value> {
    let out = steward(&["runs", "list", "--json"], &[("XDG_DATA_HOME", data)], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn ask_records_its_run_and_runs_list_and_show_read_it_back() {
    let data = scratch_dir("data");
    let server = mock_openai(three_steps()).await;
    let base = format!("{}/v1", server.uri());
    let env = [("OPENAI_BASE_URL", base.as_str()), ("XDG_DATA_HOME", &data)];
    let out = steward(
        &["ask", "--json", "What's the date, and what is 5 * 1.2?"],
        &env,
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let asked: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = asked["run_id"].as_str().unwrap().to_owned();
    let out = steward(&["ask", "--no-store", "Not recorded"], &env, "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let runs = list_json(&data);
    assert_eq!(
        runs.len(),
        1,
        "the --no-store run is not recorded: {runs:?}"
    );
    let run = &runs[0];
    assert_eq!(run["id"], id.as_str());
    assert_eq!(run["agent"], "assistant");
    assert_eq!(run["input"], "What's the date, and what is 5 * 1.2?");
    assert_eq!(run["outcome"], "answered");
    assert_eq!(run["steps"], 3);
    assert_eq!(run["usage"]["input_tokens"], 500);
    assert_eq!(run["usage"]["output_tokens"], 55);
    assert_eq!(run["model"], "openai:gpt-4o-mini");
    assert!(run["cost_usd"].as_f64().unwrap() > 0.0, "{run}");

    // The terminal table.
    let out = steward(&["runs", "list"], &[("XDG_DATA_HOME", &data)], "");
    let table = text(&out.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    for column in [
        "id", "agent", "question", "outcome", "steps", "tokens", "cost", "time",
    ] {
        assert!(lines[0].contains(column), "{table}");
    }
    for cell in [
        id.as_str(),
        "assistant",
        "answered",
        " 3 ",
        "555",
        "$0.0001",
    ] {
        assert!(lines[2].contains(cell), "missing {cell:?}: {table}");
    }

    // `show` by a prefix the id alone has, and by `last`: the steps as --trace prints them, then the answer.
    for wanted in [&id[..id.len() - 4], "last"] {
        let out = steward(&["runs", "show", wanted], &[("XDG_DATA_HOME", &data)], "");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let shown = text(&out.stdout);
        for expected in [
            format!("run {id}"),
            "question What's the date, and what is 5 * 1.2?".to_owned(),
            "step 1 · openai:gpt-4o-mini".to_owned(),
            "call current_date {}".to_owned(),
            "result current_date: 2026-11-21 (Saturday)".to_owned(),
            "call calculator {\"expression\": \"5 * 1.2\"}".to_owned(),
            "step 3 · openai:gpt-4o-mini".to_owned(),
            "answered · 3 steps · 555 tokens (500 in, 55 out)".to_owned(),
            "answer\nToday is Saturday 21 November 2026; 5 * 1.2 = 6.".to_owned(),
        ] {
            assert!(
                shown.contains(&expected),
                "missing {expected:?} in:\n{shown}"
            );
        }
    }
    let out = steward(
        &["runs", "show", &id, "--json"],
        &[("XDG_DATA_HOME", &data)],
        "",
    );
    let detail: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools: Vec<&str> = detail["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["current_date", "calculator"]);
    assert_eq!(
        detail["run"]["outcome"]["answer"],
        "Today is Saturday 21 November 2026; 5 * 1.2 = 6."
    );

    let out = steward(&["runs", "show", "nope"], &[("XDG_DATA_HOME", &data)], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .contains("no stored run matches `nope` (`steward runs list` shows the runs)"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn a_chat_is_one_run_whose_steps_restart_with_each_question() {
    let data = scratch_dir("data");
    let server = mock_openai(vec![
        tool_reply("c1", "current_date", "{}"),
        text_reply("It is Saturday."),
        text_reply("Still Saturday."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &["chat", "--trace"],
        &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &data)],
        "What day is it?\nAnd now?\n/exit\n",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The second question's one step is step 1, and its summary counts its own step and tokens.
    assert!(!stderr.contains("step 3"), "{stderr}");
    assert_eq!(
        stderr.matches("step 1 · openai:gpt-4o-mini").count(),
        2,
        "{stderr}"
    );
    assert!(
        stderr.contains("answered · 1 step · 215 tokens"),
        "{stderr}"
    );

    let runs = list_json(&data);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["input"], "What day is it?");
    assert_eq!(runs[0]["steps"], 3);
    let out = steward(&["runs", "show", "last"], &[("XDG_DATA_HOME", &data)], "");
    let shown = text(&out.stdout);
    assert!(shown.contains("question And now?"), "{shown}");
    assert!(shown.contains("Still Saturday."), "{shown}");
}

#[tokio::test]
async fn a_run_whose_process_was_killed_is_listed_with_its_last_event() {
    let data = scratch_dir("data");
    // The second model call never answers in time: the process is killed while it waits.
    let server = mock_openai(vec![
        tool_reply("call_date", "current_date", "{}"),
        text_reply("too late").set_delay(Duration::from_secs(120)),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let mut child = steward_command(
        &["ask", "What's the date?"],
        &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &data)],
    )
    .spawn()
    .unwrap();
    // Wait until the tool's result is stored, then kill the process outright.
    let started = Instant::now();
    loop {
        let runs = list_json(&data);
        if let Some(run) = runs.first() {
            let out = steward(
                &["runs", "show", run["id"].as_str().unwrap(), "--json"],
                &[("XDG_DATA_HOME", &data)],
                "",
            );
            let detail: Value = serde_json::from_slice(&out.stdout).unwrap();
            if detail["tool_calls"][0]["result"].is_string() && bodies(&server).await.len() == 2 {
                break;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the run was not stored as it went"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let runs = list_json(&data);
    assert_eq!(runs.len(), 1);
    // Listing opens the store, which marks the run of the killed process.
    assert_eq!(runs[0]["outcome"], "died");
    assert_eq!(runs[0]["finished_at"], Value::Null);
    let out = steward(&["runs", "show", "last"], &[("XDG_DATA_HOME", &data)], "");
    let shown = text(&out.stdout);
    assert!(shown.contains("call current_date {}"), "{shown}");
    assert!(shown.contains("result current_date: 2026-11-21"), "{shown}");
    assert!(
        shown.contains("(not finished: the last event was at"),
        "{shown}"
    );
}

#[tokio::test]
async fn a_store_that_cannot_be_opened() {
    let server = mock_openai(vec![text_reply("Hi.")]).await;
    let base = format!("{}/v1", server.uri());
    // A store the user named must open: the question is not sent.
    let out = steward(
        &["ask", "--store", "redis://127.0.0.1/0", "hi"],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unsupported run store URL `redis://127.0.0.1/0`"),
        "{}",
        text(&out.stderr)
    );
    assert!(bodies(&server).await.is_empty());

    // The default store in a data folder that cannot hold it: the answer stands, with a warning.
    let blocked = format!("{}/not-a-folder", scratch_dir("data"));
    std::fs::write(&blocked, "a file").unwrap();
    let out = steward(
        &["ask", "hi"],
        &[("OPENAI_BASE_URL", &base), ("XDG_DATA_HOME", &blocked)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Hi.\n");
    assert!(
        text(&out.stderr).contains("warning: this run is not recorded: cannot open the run store"),
        "{}",
        text(&out.stderr)
    );

    // `runs list` on an empty store says where it looked.
    let out = steward(&["runs", "list"], &[], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("(no runs recorded in sqlite://"),
        "{}",
        text(&out.stderr)
    );
}

/// `runs list --agent`, `--status` and `--since` narrow the list, on a SQLite store and on PostgreSQL; a
/// `--since` that is no time says what it takes.
#[tokio::test]
async fn runs_list_filters_by_agent_outcome_and_time() {
    let (_, db) = demo_in("runs-filters");
    let (_, other) = demo_in("runs-filters-other");
    let sqlite = format!(
        "sqlite://{}/store.sqlite",
        scratch_dir("runs-filters-store")
    );
    let mut stores = vec![(sqlite, None)];
    if postgres_up() {
        let name = fresh_name("runs_filters");
        let (url, drop) = ServerDb::postgres(&name);
        let admin = steward_sql::Database::connect("postgres://postgres@127.0.0.1:5432/postgres")
            .await
            .unwrap();
        admin
            .execute_script(&format!("CREATE DATABASE \"{name}\""))
            .await
            .unwrap();
        admin.close().await;
        stores.push((url, Some(drop)));
    }
    for (store, _drop) in &stores {
        let server = mock_openai(vec![text_reply("Answered.")]).await;
        let base = format!("{}/v1", server.uri());
        let env = [("OPENAI_BASE_URL", base.as_str())];
        for (agent, question) in [
            ("analyst", "How many customers?"),
            ("orders", "Where is my order?"),
        ] {
            let out = steward(
                &["ask", "--db", &db, "--store", store, "-a", agent, question],
                &env,
                "",
            );
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        }
        let listed = |filters: &[&str]| {
            let mut args = vec!["runs", "list", "--json", "--store", store.as_str()];
            args.extend_from_slice(filters);
            let out = steward(&args, &[], "");
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
            serde_json::from_slice::<Value>(&out.stdout)
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["input"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        let out = steward(
            &[
                "ask",
                "--db",
                &other,
                "--store",
                store,
                "-a",
                "analyst",
                "Elsewhere?",
            ],
            &env,
            "",
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(listed(&["--db", &other]), ["Elsewhere?"], "{store}");
        assert_eq!(
            listed(&["--db", &format!("sqlite://{db}")]).len(),
            2,
            "{store}"
        );
        assert!(listed(&["--db", "/nowhere.sqlite"]).is_empty(), "{store}");
        let out = steward(
            &[
                "runs", "list", "--json", "--store", store, "--agent", "analyst", "--db", &db,
            ],
            &[],
            "",
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let out = steward(
            &["runs", "list", "--store", store, "--since", "1h"],
            &[],
            "",
        );
        assert_eq!(out.status.code(), Some(0));
        // The rest below counts the two runs on `db`.
        let listed = |filters: &[&str]| {
            let mut with_db = vec!["--db", db.as_str()];
            with_db.extend_from_slice(filters);
            listed(&with_db)
        };
        assert_eq!(listed(&[]).len(), 2, "{store}");
        assert_eq!(
            listed(&["--agent", "orders"]),
            ["Where is my order?"],
            "{store}"
        );
        assert_eq!(listed(&["--status", "answered"]).len(), 2, "{store}");
        assert!(listed(&["--status", "incomplete"]).is_empty(), "{store}");
        assert_eq!(listed(&["--since", "1h"]).len(), 2, "{store}");
        assert!(listed(&["--since", "2099-01-01"]).is_empty(), "{store}");
        assert_eq!(
            listed(&["--since", "2020-01-01T00:00:00Z", "--agent", "analyst"]),
            ["How many customers?"],
            "{store}"
        );
        let out = steward(
            &["runs", "list", "--store", store, "--agent", "nobody"],
            &[],
            "",
        );
        assert_eq!(out.status.code(), Some(0));
        assert!(
            text(&out.stderr).contains("no run in")
                && text(&out.stderr).contains("matches --agent as given)"),
            "{}",
            text(&out.stderr)
        );
    }
    // An outcome that does not exist is refused with the ones that do (it matched nothing before).
    let out = steward(&["runs", "list", "--status", "waiting"], &[], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("answered") && text(&out.stderr).contains("incomplete"),
        "{}",
        text(&out.stderr)
    );
    let out = steward(&["runs", "list", "--since", "yesterday-ish"], &[], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("30m, 12h, 7d, 2w"),
        "{}",
        text(&out.stderr)
    );
}
