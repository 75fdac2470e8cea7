//! Staging: in a run that stages, a write that needs approval runs as a dry run after the run's earlier staged
//! writes and the run goes on; the change set is the run's (saved with it), and a sub-agent continues its
//! caller's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use steward_core::{
    AgentTool, Event, EventLog, ModelResponse, Run, RunStatus, Runner, ScriptedModel, Tool,
    ToolOutput, Toolbox, TypedTool,
};

/// A write that needs approval and can be staged; it records whether it was a dry run and how many staged
/// writes came before it.
fn note(seen: Calls<(bool, usize)>) -> impl Tool {
    TypedTool::new("note", "Writes a note.", move |ctx, _: NoArgs| {
        let seen = seen.clone();
        async move {
            let before = ctx.staged.as_ref().map_or(0, Vec::len);
            seen.push((ctx.dry_run, before));
            Ok(ToolOutput::text(format!("Note #{} written.", before + 1)))
        }
    })
    .needs_approval()
    .staged_by(Arc::new(Nowhere))
}

/// An applier that is never asked here.
struct Nowhere;

#[async_trait::async_trait]
impl steward_core::Applier for Nowhere {
    fn target(&self) -> String {
        "nowhere".into()
    }

    async fn apply(
        &self,
        _: &[steward_core::StagedCall],
        _: Option<&[String]>,
    ) -> Result<steward_core::AppliedChanges, steward_core::ToolError> {
        Err(steward_core::ToolError::new("not here"))
    }
}

fn final_text(run: &Run) -> Vec<String> {
    tool_results(run)
        .into_iter()
        .map(|(_, text, _)| text)
        .collect()
}

#[tokio::test]
async fn writes_that_need_approval_are_staged_and_the_run_goes_on() {
    let seen = Calls::default();
    let model = Arc::new(ScriptedModel::new([
        calls(&[("n1", "note", "{}")]),
        calls(&[("n2", "note", "{}")]),
        ModelResponse::text("Two notes are ready for approval."),
    ]));
    let log = EventLog::new();
    let runner = Runner::new(
        Arc::new(agent(Toolbox::new().with(note(seen.clone())).unwrap())),
        model,
    )
    .with_observer(Arc::new(log.clone()))
    .with_staging(true);
    let (run, status) = runner.run("write two notes").await;
    assert_eq!(answer(&status), "Two notes are ready for approval.");
    // Each ran as a dry run after the ones staged before it.
    assert_eq!(seen.all(), [(true, 0), (true, 1)]);
    let staged: Vec<&str> = run.staged().iter().map(|s| s.call.id.as_str()).collect();
    assert_eq!(staged, ["n1", "n2"]);
    assert_eq!(run.staged()[1].output.content, "Note #2 written.");
    assert!(run.staged()[0].reason.contains("needs approval"));
    // The model is told the change waits.
    assert!(final_text(&run)[0].starts_with("Staged, not written yet: Note #1 written."));
    // Observers see each staged call; nothing waited.
    let events = log.events();
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::CallStaged { .. }))
            .count(),
        2
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { .. }))
    );
    // The change set is saved with the run.
    let saved: Run = serde_json::from_str(&serde_json::to_string(&run).unwrap()).unwrap();
    assert_eq!(saved.staged(), run.staged());
}

#[tokio::test]
async fn without_staging_the_write_waits_as_before() {
    let seen = Calls::default();
    let model = Arc::new(ScriptedModel::new([calls(&[("n1", "note", "{}")])]));
    let runner = Runner::new(
        Arc::new(agent(Toolbox::new().with(note(seen.clone())).unwrap())),
        model,
    );
    let (run, status) = runner.run("write a note").await;
    assert!(
        matches!(status, RunStatus::AwaitingApproval(_)),
        "{status:?}"
    );
    assert!(run.staged().is_empty());
    assert_eq!(seen.len(), 0);
}

#[tokio::test]
async fn a_sub_agent_continues_its_callers_change_set() {
    let seen = Calls::default();
    let model = Arc::new(ScriptedModel::new([
        // router stages a note, then asks the scribe
        calls(&[("n1", "note", "{}")]),
        calls(&[("r1", "scribe", r#"{"request": "one more note"}"#)]),
        // scribe
        calls(&[("s1", "note", "{}")]),
        ModelResponse::text("Written."),
        // router
        calls(&[("n2", "note", "{}")]),
        ModelResponse::text("Three notes wait."),
    ]));
    let mut scribe =
        agent(Toolbox::new().with(note(seen.clone())).unwrap()).with_description("Writes notes.");
    scribe.name = "scribe".into();
    let router_tools = Toolbox::new()
        .with(note(seen.clone()))
        .unwrap()
        .with(AgentTool::new(Arc::new(scribe), model.clone()))
        .unwrap();
    let runner = Runner::new(Arc::new(agent(router_tools)), model).with_staging(true);
    let (run, status) = runner.run("notes").await;
    assert_eq!(answer(&status), "Three notes wait.");
    assert_eq!(seen.all(), [(true, 0), (true, 1), (true, 2)]);
    let staged: Vec<(&str, &str)> = run
        .staged()
        .iter()
        .map(|s| (s.run_id.as_str(), s.call.id.as_str()))
        .collect();
    let sub = format!("{}/r1", run.id());
    assert_eq!(
        staged,
        [(run.id(), "n1"), (sub.as_str(), "s1"), (run.id(), "n2")]
    );
}
