//! The history budget as the model sees it: trimmed requests keep every tool call with its result, and long
//! tool outputs are cut with a marker while events keep the whole output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use schemars::JsonSchema;
use serde::Deserialize;
use steward_core::{
    Event, HistoryBudget, Message, ModelResponse, Retention, ScriptedModel, ToolOutput, Toolbox,
    TypedTool,
};

fn assert_pairs(messages: &[Message]) {
    for (i, m) in messages.iter().enumerate() {
        if let Message::Tool { call_id, .. } = m {
            let owner = messages[..i]
                .iter()
                .rev()
                .find(|p| !matches!(p, Message::Tool { .. }))
                .unwrap();
            assert!(
                owner.tool_calls().iter().any(|c| &c.id == call_id),
                "orphan result {call_id}: {messages:#?}"
            );
        }
        for call in m.tool_calls() {
            assert!(
                messages[i + 1..]
                    .iter()
                    .any(|r| matches!(r, Message::Tool { call_id, .. } if call_id == &call.id)),
                "call {} without result",
                call.id
            );
        }
    }
}

fn long_run_model() -> Arc<ScriptedModel> {
    // Replies alternate between one call and two calls, so that cut points fall in awkward places.
    Arc::new(ScriptedModel::new(
        (0..8)
            .map(|i| {
                if i % 2 == 0 {
                    calls(&[("", "current_date", "{}")])
                } else {
                    calls(&[("", "current_date", "{}"), ("", "current_date", "{}")])
                }
            })
            .chain([ModelResponse::text("done")]),
    ))
}

#[tokio::test]
async fn trimmed_requests_keep_call_result_pairs() {
    for max in 1..12 {
        let tools = Toolbox::new().with(current_date()).unwrap();
        let budget = HistoryBudget {
            max_messages: Some(max),
            ..HistoryBudget::default()
        };
        let model = long_run_model();
        let (runner, _) = runner(agent(tools).with_history(budget), model.clone());
        let (run, status) = runner.run("what's the date, many times?").await;
        assert_eq!(answer(&status), "done");
        for request in model.requests() {
            assert_eq!(
                request.messages[0],
                Message::system("You are a careful assistant.")
            );
            assert!(!matches!(request.messages[1], Message::Tool { .. }));
            assert!(
                request.messages.len() - 1 <= max.max(3),
                "max {max}: {} messages",
                request.messages.len()
            );
            assert_pairs(&request.messages);
        }
        // The full transcript is kept (Retention::Full).
        assert_eq!(run.messages().len(), 2 + 8 + 12 + 1);
        assert_pairs(run.messages());
    }
}

#[tokio::test]
async fn window_retention_forgets_old_messages_but_keeps_pairs() {
    let tools = Toolbox::new().with(current_date()).unwrap();
    let budget = HistoryBudget {
        max_messages: Some(4),
        retention: Retention::Window,
        ..HistoryBudget::default()
    };
    let (runner, _) = runner(agent(tools).with_history(budget), long_run_model());
    let (run, _) = runner.run("dates").await;
    let transcript = run.transcript();
    assert!(transcript.dropped_messages > 0);
    assert_eq!(
        transcript.messages.len() + transcript.dropped_messages,
        2 + 8 + 12 + 1
    );
    assert!(transcript.messages.len() <= 1 + 4 + 1);
    assert_pairs(&transcript.messages);
}

#[tokio::test]
async fn token_budget_trims_by_size() {
    let tools = Toolbox::new().with(current_date()).unwrap();
    let budget = HistoryBudget {
        max_tokens: Some(60),
        ..HistoryBudget::default()
    };
    let model = long_run_model();
    let (runner, _) = runner(agent(tools).with_history(budget), model.clone());
    runner.run("dates").await;
    for request in model.requests() {
        let window = &request.messages[1..];
        let size: usize = window.iter().map(steward_core::message_tokens).sum();
        // Within budget, or only the newest turn (which is always sent).
        let newest_turn_only = window.len() == 1 + window[0].tool_calls().len();
        assert!(
            size <= 60 || newest_turn_only,
            "{size} tokens in {window:#?}"
        );
    }
    assert!(model.requests().last().unwrap().messages.len() < 2 + 8 + 12);
    for r in model.requests() {
        assert_pairs(&r.messages);
    }
}

/// Arguments of `dump`.
#[derive(Deserialize, JsonSchema)]
struct Dump {
    /// How many characters to return.
    size: usize,
}

#[tokio::test]
async fn long_tool_output_is_cut_for_the_model_but_kept_whole_in_events() {
    let dump = TypedTool::new(
        "dump",
        "Returns a lot of text.",
        |_ctx, a: Dump| async move { Ok(ToolOutput::text("x".repeat(a.size))) },
    )
    .read_only();
    let tools = Toolbox::new().with(dump).unwrap();
    let budget = HistoryBudget {
        max_tool_output_chars: 1_000,
        ..HistoryBudget::default()
    };
    let model = Arc::new(ScriptedModel::new([
        calls(&[("c1", "dump", r#"{"size": 50000}"#)]),
        ModelResponse::text("done"),
    ]));
    let (runner, log) = runner(agent(tools).with_history(budget), model.clone());
    let (run, _) = runner.run("dump").await;
    let shown = &tool_results(&run)[0].1;
    assert!(shown.starts_with(&"x".repeat(1_000)));
    assert!(shown.ends_with(
        "[output cut: showing the first 1000 of 50000 characters; 49000 characters were cut. \
         Ask for less, e.g. with a narrower filter or a smaller limit.]"
    ));
    assert!(shown.len() < 1_200);
    assert_eq!(
        model.requests()[1].messages.last().unwrap().text(),
        Some(shown.as_str())
    );
    let full = log
        .events()
        .into_iter()
        .find_map(|e| match e {
            Event::ToolResult { content, .. } => Some(content),
            _ => None,
        })
        .unwrap();
    assert_eq!(full.len(), 50_000);
}
