//! Policies and approvals: a call can be allowed, denied with a reason the model sees, or held for a person;
//! a held run is saved, and the decision resumes it, here or in another process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use schemars::JsonSchema;
use serde::Deserialize;
use steward_core::{
    Agent, Approval, Decision, Event, ModelResponse, Outcome, Run, RunStatus, Runner,
    ScriptedModel, Tool, ToolOutput, Toolbox, TypedTool,
};

/// Arguments of `delete_project`.
#[derive(Deserialize, JsonSchema)]
struct DeleteProject {
    /// The project's id.
    id: u32,
}

fn delete_project(deleted: Calls<u32>) -> impl Tool {
    TypedTool::new(
        "delete_project",
        "Deletes a project.",
        move |_ctx, a: DeleteProject| {
            let deleted = deleted.clone();
            async move {
                deleted.push(a.id);
                Ok(ToolOutput::text(format!("Project {} deleted.", a.id)))
            }
        },
    )
    .destructive()
    .needs_approval()
}

fn tools(deleted: &Calls<u32>) -> Toolbox {
    Toolbox::new()
        .with(current_date())
        .unwrap()
        .with(delete_project(deleted.clone()))
        .unwrap()
}

/// First "process": the model asks to delete; the run stops and is saved as JSON.
async fn run_until_approval(deleted: &Calls<u32>) -> String {
    let model = Arc::new(ScriptedModel::new([calls(&[
        ("d1", "delete_project", r#"{"id": 7}"#),
        ("t1", "current_date", "{}"),
    ])]));
    let (runner, log) = runner(agent(tools(deleted)), model);
    let (run, status) = runner.run("delete project 7").await;
    let RunStatus::AwaitingApproval(requests) = status else {
        panic!("expected to wait for approval, got {status:?}");
    };
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].call.id, "d1");
    assert!(requests[0].reason.contains("delete_project"));
    assert_eq!(deleted.len(), 0, "nothing runs before the decision");
    assert!(
        log.events()
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { call, .. } if call.id == "d1"))
    );
    assert!(run.outcome().is_none());
    serde_json::to_string(&run).unwrap()
}

/// Second "process": nothing shared with the first but the saved JSON.
fn second_process(deleted: &Calls<u32>, reply: &str) -> (Runner, Arc<ScriptedModel>) {
    let model = Arc::new(ScriptedModel::new([ModelResponse::text(reply)]));
    let agent: Agent = agent(tools(deleted));
    (Runner::new(Arc::new(agent), model.clone()), model)
}

#[tokio::test]
async fn approved_call_runs_after_resuming_a_saved_run() {
    let deleted = Calls::<u32>::default();
    let saved = run_until_approval(&deleted).await;

    let (runner, model) = second_process(&deleted, "Project 7 is deleted.");
    let mut run: Run = serde_json::from_str(&saved).unwrap();
    let status = runner
        .resume(&mut run, "d1", Approval::Approve)
        .await
        .unwrap();

    assert_eq!(answer(&status), "Project 7 is deleted.");
    assert_eq!(deleted.all(), [7], "the approved call ran exactly once");
    assert_eq!(
        tool_results(&run),
        [
            ("d1".into(), "Project 7 deleted.".into(), false),
            ("t1".into(), "2026-11-21 (Saturday)".into(), false),
        ],
        "results in call order"
    );
    // The resumed model call saw both results.
    let seen = &model.requests()[0].messages;
    assert_eq!(seen.last().unwrap().text(), Some("2026-11-21 (Saturday)"));
}

#[tokio::test]
async fn rejected_call_never_runs_and_the_model_is_told_why() {
    let deleted = Calls::<u32>::default();
    let saved = run_until_approval(&deleted).await;

    let (runner, model) = second_process(&deleted, "OK, I left project 7 alone.");
    let mut run: Run = serde_json::from_str(&saved).unwrap();
    let status = runner
        .resume(
            &mut run,
            "d1",
            Approval::Reject {
                reason: Some("it is still in use".into()),
            },
        )
        .await
        .unwrap();

    assert_eq!(answer(&status), "OK, I left project 7 alone.");
    assert!(deleted.all().is_empty());
    let results = tool_results(&run);
    assert_eq!(results[0].0, "d1");
    assert!(results[0].2);
    assert_eq!(
        results[0].1,
        "The user rejected this call: it is still in use. Do not retry it; ask the user how to proceed."
    );
    assert_eq!(
        results[1].1, "2026-11-21 (Saturday)",
        "the other call still ran"
    );
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn deciding_a_call_that_is_not_waiting_is_an_error() {
    let deleted = Calls::<u32>::default();
    let saved = run_until_approval(&deleted).await;
    let (runner, _) = second_process(&deleted, "done");
    let mut run: Run = serde_json::from_str(&saved).unwrap();
    assert!(
        runner
            .resume(&mut run, "t1", Approval::Approve)
            .await
            .is_err()
    );
    assert!(
        runner
            .resume(&mut run, "nope", Approval::Approve)
            .await
            .is_err()
    );
    // A run that still waits stays waiting when driven without a decision.
    assert!(matches!(
        runner.drive(&mut run).await,
        RunStatus::AwaitingApproval(_)
    ));
    assert_eq!(deleted.len(), 0);
}

#[tokio::test]
async fn same_process_approval_without_saving() {
    let deleted = Calls::<u32>::default();
    let model = Arc::new(ScriptedModel::new([
        calls(&[("d1", "delete_project", r#"{"id": 3}"#)]),
        ModelResponse::text("Deleted."),
    ]));
    let (runner, log) = runner(agent(tools(&deleted)), model);
    let (mut run, status) = runner.run("delete project 3").await;
    assert!(matches!(status, RunStatus::AwaitingApproval(_)));
    let status = runner
        .resume(&mut run, "d1", Approval::Approve)
        .await
        .unwrap();
    assert_eq!(answer(&status), "Deleted.");
    assert_eq!(deleted.all(), [3]);
    assert!(log.events().iter().any(|e| matches!(
        e,
        Event::ApprovalDecided {
            approval: Approval::Approve,
            ..
        }
    )));
}

#[tokio::test]
async fn policy_denial_is_shown_to_the_model_and_the_tool_never_runs() {
    let deleted = Calls::<u32>::default();
    let model = Arc::new(ScriptedModel::new([
        calls(&[("d1", "delete_project", r#"{"id": 1}"#)]),
        ModelResponse::text("I am not allowed to delete projects."),
    ]));
    let policy = |call: &steward_core::ToolCall,
                  spec: &steward_core::ToolSpec,
                  _args: &serde_json::Value| {
        if spec.annotations.destructive {
            Decision::Deny {
                reason: format!("role `viewer` may not call `{}`", call.name),
            }
        } else {
            Decision::Allow
        }
    };
    let log = steward_core::EventLog::new();
    let runner = Runner::new(Arc::new(agent(tools(&deleted))), model)
        .with_policy(Arc::new(policy))
        .with_observer(Arc::new(log.clone()));
    let (run, status) = runner.run("delete project 1").await;
    assert_eq!(
        status,
        RunStatus::Done(Outcome::Answered {
            answer: "I am not allowed to delete projects.".into()
        })
    );
    assert!(deleted.all().is_empty());
    assert_eq!(
        tool_results(&run)[0].1,
        "Not allowed: role `viewer` may not call `delete_project`. Do not retry this call; tell the user or choose another way."
    );
    assert!(
        log.events()
            .iter()
            .any(|e| matches!(e, Event::ToolDenied { .. }))
    );
}

#[tokio::test]
async fn final_answer_tool_ends_the_run_after_the_other_calls() {
    let deleted = Calls::<u32>::default();
    let tools = tools(&deleted).with(steward_core::final_answer()).unwrap();
    let model = Arc::new(ScriptedModel::new([calls(&[
        ("t1", "current_date", "{}"),
        (
            "f1",
            "final_answer",
            r#"{"answer": "Today is 2026-11-21."}"#,
        ),
    ])]));
    let (runner, _) = runner(agent(tools), model.clone());
    let (run, status) = runner.run("what day is it?").await;
    assert_eq!(answer(&status), "Today is 2026-11-21.");
    assert_eq!(model.served(), 1);
    assert_eq!(tool_results(&run).len(), 2);
}

#[tokio::test]
async fn an_edited_call_runs_with_the_persons_arguments_and_the_model_is_told() {
    let deleted = Calls::<u32>::default();
    let model = Arc::new(ScriptedModel::new([
        calls(&[("d1", "delete_project", r#"{"id": 7}"#)]),
        ModelResponse::text("Project 8 is deleted."),
    ]));
    let (runner, log) = runner(agent(tools(&deleted)), model.clone());
    let (mut run, status) = runner.run("delete project 8").await;
    assert!(matches!(status, RunStatus::AwaitingApproval(_)));

    // An edit that does not fit the schema is refused; the call keeps waiting and nothing runs.
    let bad = Approval::Edit {
        arguments: serde_json::json!({"id": "eight"}),
    };
    let error = runner.decide(&mut run, "d1", bad).unwrap_err();
    assert!(
        matches!(&error, steward_core::Error::InvalidEdit { call_id, .. } if call_id == "d1"),
        "{error:?}"
    );
    assert!(error.to_string().contains("id"), "{error}");
    assert!(matches!(
        runner.drive(&mut run).await,
        RunStatus::AwaitingApproval(_)
    ));
    assert_eq!(model.served(), 1);

    let edit = Approval::Edit {
        arguments: serde_json::json!({"id": 8}),
    };
    let status = runner.resume(&mut run, "d1", edit.clone()).await.unwrap();
    assert_eq!(answer(&status), "Project 8 is deleted.");
    assert_eq!(
        deleted.all(),
        [8],
        "it ran once, with the person's arguments"
    );
    assert_eq!(
        tool_results(&run)[0].1,
        "The user changed the arguments of this call before approving it; it ran with {\"id\":8}.\n\
         Project 8 deleted."
    );
    // The model's own call stays in the transcript as it made it.
    assert_eq!(run.messages()[2].tool_calls()[0].arguments, r#"{"id": 7}"#);
    assert!(log.events().iter().any(|e| matches!(
        e,
        Event::ApprovalDecided { approval, .. } if *approval == edit
    )));
}
