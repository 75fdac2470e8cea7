//! The workload shared by the step benchmarks: an agent with one trivial read-only tool, and a scripted model
//! that calls it on every step, so that each step is one model call, one validation and one tool call.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used
)]

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use steward_core::{
    Agent, HistoryBudget, Limits, ModelResponse, Observer, Retention, Run, Runner, ScriptedModel,
    ToolCall, ToolOutput, Toolbox, TypedTool,
};

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Echo {
    /// The text to return.
    #[schemars(length(min = 1, max = 200))]
    pub text: String,
}

/// A runner whose every step calls `echo` once, and a fresh run of `steps` steps.
pub fn workload(steps: u32, retention: Retention, observer: Arc<dyn Observer>) -> (Runner, Run) {
    let echo = TypedTool::new("echo", "Returns its text.", |_ctx, a: Echo| async move {
        Ok(ToolOutput::text(a.text))
    })
    .read_only();
    let tools = Toolbox::new().with(echo).unwrap();
    let agent = Agent::new("bench", "You echo.", tools)
        .with_limits(Limits {
            max_steps: steps,
            ..Limits::default()
        })
        .with_history(HistoryBudget {
            max_messages: Some(20),
            retention,
            ..HistoryBudget::default()
        });
    // Empty ids: the run assigns a unique one per step, as it does for providers that send none.
    let reply = ModelResponse::tool_calls(vec![ToolCall::new("", "echo", r#"{"text":"hello"}"#)])
        .with_usage(120, 12);
    let model = ScriptedModel::cycle([reply]).without_recording();
    let runner = Runner::new(Arc::new(agent), Arc::new(model)).with_observer(observer);
    let run = runner.start("echo hello, forever");
    (runner, run)
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}
