//! Several tool calls in one reply: read-only ones overlap, others run one after another in call order, and
//! results always go back in call order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use steward_core::{Message, ModelResponse, ScriptedModel, Toolbox};

fn script(tool: &str) -> Arc<ScriptedModel> {
    // The first call is the slowest, so completion order differs from call order.
    Arc::new(ScriptedModel::new([
        calls(&[
            ("c1", tool, r#"{"ms": 300, "label": "first"}"#),
            ("c2", tool, r#"{"ms": 100, "label": "second"}"#),
            ("c3", tool, r#"{"ms": 200, "label": "third"}"#),
        ]),
        ModelResponse::text("done"),
    ]))
}

fn result_order(messages: &[Message]) -> Vec<(String, String)> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool {
                call_id, content, ..
            } => Some((call_id.clone(), content.clone())),
            _ => None,
        })
        .collect()
}

fn expected() -> Vec<(String, String)> {
    vec![
        ("c1".into(), "first".into()),
        ("c2".into(), "second".into()),
        ("c3".into(), "third".into()),
    ]
}

#[tokio::test(start_paused = true)]
async fn read_only_calls_overlap_and_results_keep_call_order() {
    let flight = Flight::default();
    let tools = Toolbox::new()
        .with(wait_tool("lookup", true, flight.clone()))
        .unwrap();
    let (runner, _) = runner(agent(tools), script("lookup"));
    let started = tokio::time::Instant::now();
    let (run, status) = runner.run("look up three things").await;
    assert_eq!(answer(&status), "done");
    assert_eq!(
        flight.max(),
        3,
        "all three read-only calls were in flight together"
    );
    assert_eq!(result_order(run.messages()), expected());
    // Overlapped: the whole batch took as long as the slowest call, not the sum.
    assert!(started.elapsed() < std::time::Duration::from_millis(600));
}

#[tokio::test(start_paused = true)]
async fn writing_calls_run_one_at_a_time_in_call_order() {
    let flight = Flight::default();
    let tools = Toolbox::new()
        .with(wait_tool("write", false, flight.clone()))
        .unwrap();
    let (runner, _) = runner(agent(tools), script("write"));
    let (run, _) = runner.run("write three things").await;
    assert_eq!(flight.max(), 1, "writes never overlap");
    assert_eq!(flight.started.all(), ["first", "second", "third"]);
    assert_eq!(result_order(run.messages()), expected());
}

#[tokio::test(start_paused = true)]
async fn one_writing_call_makes_the_whole_reply_sequential() {
    let flight = Flight::default();
    let tools = Toolbox::new()
        .with(wait_tool("lookup", true, flight.clone()))
        .unwrap()
        .with(wait_tool("write", false, flight.clone()))
        .unwrap();
    let model = Arc::new(ScriptedModel::new([
        calls(&[
            ("c1", "lookup", r#"{"ms": 300, "label": "first"}"#),
            ("c2", "write", r#"{"ms": 100, "label": "second"}"#),
            ("c3", "lookup", r#"{"ms": 200, "label": "third"}"#),
        ]),
        ModelResponse::text("done"),
    ]));
    let (runner, _) = runner(agent(tools), model);
    let (run, _) = runner.run("mixed").await;
    assert_eq!(flight.max(), 1);
    assert_eq!(flight.started.all(), ["first", "second", "third"]);
    assert_eq!(result_order(run.messages()), expected());
}

#[tokio::test(start_paused = true)]
async fn an_invalid_call_among_valid_ones_keeps_its_place() {
    let flight = Flight::default();
    let tools = Toolbox::new()
        .with(wait_tool("lookup", true, flight.clone()))
        .unwrap();
    let model = Arc::new(ScriptedModel::new([
        calls(&[
            ("c1", "lookup", r#"{"ms": 30, "label": "first"}"#),
            ("c2", "lookup", r#"{"ms": "soon"}"#),
            ("c3", "lookup", r#"{"ms": 10, "label": "third"}"#),
        ]),
        ModelResponse::text("done"),
    ]));
    let (runner, _) = runner(agent(tools), model);
    let (run, _) = runner.run("mixed").await;
    let order = result_order(run.messages());
    assert_eq!(
        order.iter().map(|o| o.0.as_str()).collect::<Vec<_>>(),
        ["c1", "c2", "c3"]
    );
    assert!(
        order[1].1.contains("Missing values: label"),
        "{}",
        order[1].1
    );
    assert!(
        order[1].1.contains("ms: expected an integer"),
        "{}",
        order[1].1
    );
    assert_eq!(flight.started.all(), ["first", "third"]);
}

#[tokio::test]
async fn missing_and_repeated_call_ids_are_made_unique() {
    let tools = Toolbox::new().with(current_date()).unwrap();
    let model = Arc::new(ScriptedModel::new([
        calls(&[
            ("", "current_date", "{}"),
            ("same", "current_date", "{}"),
            ("same", "current_date", "{}"),
        ]),
        ModelResponse::text("done"),
    ]));
    let (runner, _) = runner(agent(tools), model);
    let (run, _) = runner.run("date").await;
    let ids: Vec<_> = run.messages()[2]
        .tool_calls()
        .iter()
        .map(|c| c.id.clone())
        .collect();
    assert_eq!(ids, ["call_1_1", "same", "call_1_3"]);
    let results: Vec<_> = tool_results(&run).into_iter().map(|r| r.0).collect();
    assert_eq!(results, ids);
}
