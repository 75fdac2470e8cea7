//! Record and replay: a recorded run replays identically; a run whose requests changed fails with the diff.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use steward_core::{
    Agent, Model, ModelResponse, Outcome, RunStatus, Runner, ScriptedModel, ToolCall, ToolOutput,
    Toolbox, TypedTool,
};
use steward_llm::{Recorder, ReplayModel};

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct Echo {
    /// Text.
    text: String,
}

fn echo(name: &str) -> impl steward_core::Tool {
    TypedTool::new(name, "Echoes.", |_ctx, a: Echo| async move {
        Ok(ToolOutput::text(a.text))
    })
    .read_only()
}

fn agent(extra_tool: bool) -> Agent {
    let mut tools = Toolbox::new().with(echo("echo")).unwrap();
    if extra_tool {
        tools = tools.with(echo("shout")).unwrap();
    }
    Agent::new("replayed", "You echo.", tools)
}

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}.jsonl", std::process::id()))
}

async fn record(file: &PathBuf) {
    let scripted = ScriptedModel::new([
        ModelResponse::tool_calls(vec![ToolCall::new("c1", "echo", r#"{"text": "hi"}"#)]),
        ModelResponse::text("It said hi."),
    ]);
    let recorder = Recorder::create(scripted, file).unwrap();
    let (_, status) = Runner::new(Arc::new(agent(false)), Arc::new(recorder))
        .run("say hi")
        .await;
    assert_eq!(
        status,
        RunStatus::Done(Outcome::Answered {
            answer: "It said hi.".into()
        })
    );
}

#[tokio::test]
async fn an_identical_run_replays() {
    let file = path("identical");
    record(&file).await;
    let lines = std::fs::read_to_string(&file).unwrap().lines().count();
    assert_eq!(lines, 3, "a header and two exchanges");
    let replay = ReplayModel::open(&file).unwrap();
    assert_eq!(replay.len(), 2);
    assert!(replay.name().starts_with("replay:"));
    let (run, status) = Runner::new(Arc::new(agent(false)), Arc::new(replay))
        .run("say hi")
        .await;
    assert_eq!(
        status,
        RunStatus::Done(Outcome::Answered {
            answer: "It said hi.".into()
        })
    );
    assert_eq!(run.steps(), 2);
}

#[tokio::test]
async fn a_changed_tool_list_fails_with_the_diff() {
    let file = path("tools-changed");
    record(&file).await;
    let replay = ReplayModel::open(&file).unwrap();
    let (_, status) = Runner::new(Arc::new(agent(true)), Arc::new(replay))
        .run("say hi")
        .await;
    let RunStatus::Done(Outcome::ModelFailed { error, cause }) = status else {
        panic!("{status:?}")
    };
    assert_eq!(cause, steward_core::FailureCause::Replay);
    assert!(
        error.contains("model call 1 of 2 differs from the recording"),
        "{error}"
    );
    assert!(
        error.contains("tools: recorded [echo], now [echo, shout]"),
        "{error}"
    );
}

#[tokio::test]
async fn a_changed_question_fails_with_the_diff() {
    let file = path("question-changed");
    record(&file).await;
    let replay = ReplayModel::open(&file).unwrap();
    let (_, status) = Runner::new(Arc::new(agent(false)), Arc::new(replay))
        .run("say hello")
        .await;
    let RunStatus::Done(Outcome::ModelFailed { error, cause }) = status else {
        panic!("{status:?}")
    };
    assert_eq!(cause, steward_core::FailureCause::Replay);
    assert!(
        error.contains("messages[1].content: recorded \"say hi\", now \"say hello\""),
        "{error}"
    );
}

#[test]
fn a_file_that_is_not_a_recording_is_refused_clearly() {
    let file = path("garbage");
    std::fs::write(&file, "hello\n").unwrap();
    let err = ReplayModel::open(&file).unwrap_err().to_string();
    assert!(err.contains("line 1: not a Steward recording"), "{err}");
    let err = ReplayModel::open("/nonexistent/run.jsonl")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("cannot read /nonexistent/run.jsonl"),
        "{err}"
    );
}
