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

/// A tool that is not read-only: each call bumps `writes` and answers with the count.
fn writer(writes: Arc<std::sync::atomic::AtomicUsize>) -> Agent {
    let tool = TypedTool::new("note", "Writes a note.", move |_ctx, a: Echo| {
        let writes = writes.clone();
        async move {
            let n = writes.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            Ok(ToolOutput::text(format!("note {n}: {}", a.text)))
        }
    });
    Agent::new(
        "writer",
        "You write notes.",
        Toolbox::new().with(tool).unwrap(),
    )
}

fn writing_script() -> ScriptedModel {
    // The same call id twice, as some providers and mocks do: each step gets its own result back.
    ScriptedModel::new([
        ModelResponse::tool_calls(vec![ToolCall::new("c1", "note", r#"{"text": "a"}"#)]),
        ModelResponse::tool_calls(vec![ToolCall::new("c1", "note", r#"{"text": "b"}"#)]),
        ModelResponse::text("Two notes."),
    ])
}

fn answer(status: &RunStatus) -> Option<&str> {
    match status {
        RunStatus::Done(Outcome::Answered { answer }) => Some(answer),
        _ => None,
    }
}

fn results(run: &steward_core::Run) -> Vec<(String, bool)> {
    run.messages()
        .iter()
        .filter_map(|m| match m {
            steward_core::Message::Tool {
                content, is_error, ..
            } => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_replay_never_runs_a_tool_that_writes_and_shows_the_recorded_results() {
    let file = path("writes");
    let writes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let recorder = Recorder::create(writing_script(), &file).unwrap();
    let (recorded, status) = Runner::new(Arc::new(writer(writes.clone())), Arc::new(recorder))
        .run("two notes")
        .await;
    assert_eq!(answer(&status), Some("Two notes."));
    assert_eq!(writes.load(std::sync::atomic::Ordering::SeqCst), 2);

    let replayed_writes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let replay = ReplayModel::open(&file).unwrap();
    let (run, status) = Runner::new(Arc::new(writer(replayed_writes.clone())), Arc::new(replay))
        .run("two notes")
        .await;
    assert_eq!(answer(&status), Some("Two notes."), "{status:?}");
    assert_eq!(replayed_writes.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(results(&run), results(&recorded));
    assert_eq!(
        results(&run),
        [
            ("note 1: a".to_owned(), false),
            ("note 2: b".to_owned(), false)
        ]
    );

    // A recording cut short holds no result for the last call: the tool is refused, not run.
    let text = std::fs::read_to_string(&file).unwrap();
    let cut: Vec<&str> = text.lines().take(3).collect();
    std::fs::write(&file, cut.join("\n")).unwrap();
    let replay = ReplayModel::open(&file).unwrap();
    let (run, _) = Runner::new(Arc::new(writer(replayed_writes.clone())), Arc::new(replay))
        .run("two notes")
        .await;
    assert_eq!(replayed_writes.load(std::sync::atomic::Ordering::SeqCst), 0);
    let last = results(&run).pop().unwrap();
    assert!(last.1, "{last:?}");
    assert!(
        last.0.contains("`note` was not run: this is a replay"),
        "{last:?}"
    );
}
