//! The library's front door: `Agent::builder` collects every tool problem, `Runner::ask` returns the answer or
//! says why there is none, `TypedTool::with_state` hands the tool its state and its name.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use schemars::JsonSchema;
use serde::Deserialize;
use steward_core::{
    Agent, Error, Limits, ModelResponse, Outcome, RunFailed, RunStatus, Runner, ScriptedModel,
    ToolAnnotations, ToolOutput, TypedTool,
};

fn named(name: &str) -> impl steward_core::Tool + use<> {
    TypedTool::new(
        name.to_owned(),
        "Does nothing.",
        |_ctx, _args: NoArgs| async { Ok(ToolOutput::text("done")) },
    )
}

#[test]
fn the_builder_reports_every_tool_problem_at_once() {
    let err = Agent::builder("clerk")
        .instructions("You file things.")
        .tool(named("file"))
        .tool(named("file"))
        .tool(named("no spaces please"))
        .tool(named("stamp"))
        .build()
        .unwrap_err();
    let Error::InvalidAgent { agent, problems } = &err else {
        panic!("expected InvalidAgent, got {err:?}");
    };
    assert_eq!(agent, "clerk");
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(matches!(&problems[0], Error::DuplicateTool(n) if n == "file"));
    assert!(matches!(&problems[1], Error::InvalidToolName(n) if n == "no spaces please"));
    let text = err.to_string();
    assert!(
        text.starts_with("the agent `clerk` cannot be built: 1) "),
        "{text}"
    );
    assert!(
        text.contains("`file` is already registered") && text.contains("`no spaces please`"),
        "{text}"
    );
}

#[test]
fn the_builder_sets_what_it_is_given() {
    let limits = Limits {
        max_steps: 3,
        ..Limits::default()
    };
    let agent = Agent::builder("clerk")
        .description("Files things.")
        .instructions("You file things.")
        .tool(named("file"))
        .tool(named("stamp"))
        .limits(limits)
        .build()
        .unwrap();
    assert_eq!(agent.description, "Files things.");
    assert_eq!(agent.instructions, "You file things.");
    assert_eq!(agent.limits, limits);
    assert_eq!(agent.tools.names().collect::<Vec<_>>(), ["file", "stamp"]);
}

#[tokio::test]
async fn ask_returns_the_answer() {
    let agent = Agent::builder("dates")
        .tool(current_date())
        .build()
        .unwrap();
    let model = ScriptedModel::new([
        calls(&[("c1", "current_date", "{}")]),
        ModelResponse::text("It is 2026-11-21."),
    ]);
    let runner = Runner::new(Arc::new(agent), Arc::new(model));
    assert_eq!(
        runner.ask("What day is it?").await.unwrap(),
        "It is 2026-11-21."
    );
}

#[tokio::test]
async fn ask_says_which_limit_stopped_the_run() {
    let agent = Agent::builder("dates")
        .tool(current_date())
        .limits(Limits {
            max_steps: 2,
            ..Limits::default()
        })
        .build()
        .unwrap();
    let model = ScriptedModel::cycle([calls(&[("c1", "current_date", "{}")])]);
    let runner = Runner::new(Arc::new(agent), Arc::new(model));
    let failed = runner.ask("What day is it?").await.unwrap_err();
    assert_eq!(
        failed,
        RunFailed::Ended {
            outcome: Outcome::MaxSteps { limit: 2 }
        }
    );
    assert_eq!(failed.outcome(), Some(&Outcome::MaxSteps { limit: 2 }));
    assert_eq!(
        failed.to_string(),
        "the run ended without an answer: stopped after the limit of 2 steps"
    );
    let as_error: &dyn std::error::Error = &failed;
    assert!(as_error.source().is_none());
}

#[tokio::test]
async fn ask_stops_at_an_approval_it_cannot_give() {
    let ran = Calls::<String>::default();
    let seen = ran.clone();
    let wipe = TypedTool::new("wipe", "Wipes the disk.", move |_ctx, _args: NoArgs| {
        let seen = seen.clone();
        async move {
            seen.push("wiped".to_owned());
            Ok(ToolOutput::text("wiped"))
        }
    })
    .annotations(
        ToolAnnotations::new()
            .destructive(true)
            .needs_approval(true),
    );
    let agent = Agent::builder("admin").tool(wipe).build().unwrap();
    let model = ScriptedModel::new([calls(&[("w1", "wipe", "{}")])]);
    let runner = Runner::new(Arc::new(agent), Arc::new(model));
    let failed = runner.ask("Wipe it.").await.unwrap_err();
    let RunFailed::NeedsApproval { requests } = &failed else {
        panic!("expected NeedsApproval, got {failed:?}");
    };
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].call.id, "w1");
    assert_eq!(failed.approvals(), requests.as_slice());
    assert_eq!(failed.outcome(), None);
    let text = failed.to_string();
    assert!(
        text.contains("the call `wipe`") && text.contains("approval"),
        "{text}"
    );
    assert_eq!(ran.len(), 0, "a call waiting for approval must not run");
}

#[tokio::test]
async fn run_status_answer_is_the_answer_only_when_answered() {
    let agent = Agent::builder("echo").build().unwrap();
    let model = ScriptedModel::new([ModelResponse::text("hi")]);
    let runner = Runner::new(Arc::new(agent), Arc::new(model));
    let (_, status) = runner.run("hello").await;
    assert_eq!(status.answer(), Some("hi"));
    assert_eq!(
        RunStatus::Done(Outcome::MaxSteps { limit: 1 }).answer(),
        None
    );
    assert_eq!(RunStatus::AwaitingApproval(Vec::new()).answer(), None);
}

/// Arguments of the ledger tools.
#[derive(Deserialize, JsonSchema)]
struct Entry {
    /// The amount.
    amount: u32,
}

#[tokio::test]
async fn a_tool_with_state_sees_its_state_and_its_name() {
    let ledger = Calls::<String>::default();
    // One handler serves two tools: it tells them apart by the name in the context.
    let handler = |ledger: Calls<String>, ctx: steward_core::ToolContext, args: Entry| async move {
        ledger.push(format!("{} {} ({})", ctx.tool, args.amount, ctx.call_id));
        Ok(ToolOutput::text(format!("{} entries", ledger.len())))
    };
    let credit = TypedTool::with_state("credit", "Credits.", ledger.clone(), handler);
    let debit = TypedTool::with_state("debit", "Debits.", ledger.clone(), handler)
        .title("Debit the ledger")
        .idempotent();
    assert_eq!(
        steward_core::Tool::spec(&debit).annotations,
        ToolAnnotations::new()
            .title("Debit the ledger")
            .idempotent(true)
    );
    let agent = Agent::builder("books")
        .tool(credit)
        .tool(debit)
        .build()
        .unwrap();
    let model = ScriptedModel::new([
        calls(&[
            ("c1", "credit", r#"{"amount": 5}"#),
            ("c2", "debit", r#"{"amount": 2}"#),
        ]),
        ModelResponse::text("Booked."),
    ]);
    let runner = Runner::new(Arc::new(agent), Arc::new(model));
    let (run, status) = runner.run("Book them.").await;
    assert_eq!(status.answer(), Some("Booked."));
    assert_eq!(ledger.all(), ["credit 5 (c1)", "debit 2 (c2)"]);
    assert_eq!(run.messages()[3].text(), Some("2 entries")); // user, assistant, credit, debit
}
