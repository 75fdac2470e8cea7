//! Events: what an observer sees during a run, in order, and that each event serialises to JSON.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use steward_core::{Event, ModelResponse, ScriptedModel, Toolbox};

fn kind(e: &Event) -> &'static str {
    match e {
        Event::RunStarted { .. } => "run_started",
        Event::ModelRequest { .. } => "model_request",
        Event::ModelResponse { .. } => "model_response",
        Event::ToolCall { .. } => "tool_call",
        Event::ValidationError { .. } => "validation_error",
        Event::ToolDenied { .. } => "tool_denied",
        Event::ToolResult { .. } => "tool_result",
        Event::ApprovalRequested { .. } => "approval_requested",
        Event::ApprovalDecided { .. } => "approval_decided",
        Event::Finished { .. } => "finished",
        _ => "other",
    }
}

#[tokio::test]
async fn events_follow_the_run_in_order() {
    let tools = Toolbox::new().with(current_date()).unwrap();
    let model = Arc::new(ScriptedModel::new([
        calls(&[("a", "current_date", "{}"), ("b", "current_dat", "{}")]),
        ModelResponse::text("It is Saturday.").with_usage(30, 5),
    ]));
    let (runner, log) = runner(agent(tools), model);
    let (run, _) = runner.run("what day is it?").await;
    let events = log.events();
    let kinds: Vec<_> = events.iter().map(kind).collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "model_request",
            "model_response",
            "validation_error",
            "tool_call",
            "tool_result",
            "model_request",
            "model_response",
            "finished"
        ]
    );
    for e in &events {
        let json = serde_json::to_value(e).unwrap();
        assert_eq!(json["event"], kind(e));
        assert_eq!(json["run_id"], run.id());
        let back: Event = serde_json::from_value(json).unwrap();
        assert_eq!(&back, e);
    }
    match events.last().unwrap() {
        Event::Finished { usage, steps, .. } => {
            assert_eq!(*steps, 2);
            assert_eq!(*usage, run.usage());
            assert!(
                usage.total() > 35,
                "estimated usage of step 1 plus 35 reported"
            );
        }
        other => panic!("{other:?}"),
    }
}
