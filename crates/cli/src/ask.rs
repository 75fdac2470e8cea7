//! `steward ask`: one question, one answer.

use crate::out::{note, say};
use std::io::Read;

use anyhow::Context as _;
use clap::Args;
use serde_json::json;
use steward_core::Outcome;

use crate::agents::{AgentArgs, ConfigFile};
use crate::session::Session;
use crate::setup::ModelArgs;
use crate::{exit, session};

/// Arguments of `steward ask`.
#[derive(Args, Debug)]
pub(crate) struct AskArgs {
    /// The question; `-` reads it from standard input.
    #[arg(value_name = "QUESTION")]
    question: String,

    /// Show each step on standard error: thought, tool call with arguments, observation.
    #[arg(short, long)]
    trace: bool,

    /// Print {"run_id", "answer", "outcome", "steps", "usage", "transcript", "events"} as JSON instead of the answer
    /// (the events include the sub-agents' steps).
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    agents: AgentArgs,

    #[command(flatten)]
    model: ModelArgs,
}

/// Runs `steward ask`.
pub(crate) async fn run(args: AskArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let question = if args.question == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the question from standard input")?;
        text
    } else {
        args.question.clone()
    };
    let question = question.trim();
    if question.is_empty() {
        anyhow::bail!("the question is empty");
    }
    let session = Session::open(
        config,
        &args.agents,
        &args.model,
        args.trace,
        !args.json,
        Some(question),
    )
    .await?;
    let mut run = session.turn.start(question);
    let code = conclude(&session, &mut run, args.json).await;
    session.close().await;
    code
}

/// Drives `run` to its end and reports it as `ask` does: the answer (or, with `json`, the whole run); a run
/// that waits for an approval no one here can give is saved in the run store to be decided and resumed later
/// (exit code 4).
pub(crate) async fn conclude(
    session: &Session,
    run: &mut steward_core::Run,
    json: bool,
) -> anyhow::Result<u8> {
    let Session {
        turn,
        trace,
        model_name,
        log,
        ..
    } = session;
    let driven = session::drive(turn, run, true).await;
    trace.clear();
    crate::runs::finish(turn).await;
    let (outcome, changes) = match driven {
        session::Driven::Done(outcome) => (outcome, None),
        session::Driven::Staged(outcome, changes) => (outcome, Some(changes)),
        session::Driven::Waiting(requests) => {
            return waiting(turn, run, &requests, json).await;
        }
    };

    if json {
        let usage = trace.total_usage();
        let output = json!({
            "run_id": run.id(),
            "answer": outcome.answer(),
            // The changes the run staged, saved to be applied or discarded (`steward changes`).
            "change_set": saved(changes.as_ref()),
            "outcome": outcome.name(),
            "error": (!outcome.is_answered()).then(|| outcome.to_string()),
            "steps": run.steps(),
            "model": model_name,
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "total_tokens": usage.total(),
                "cost_usd": trace.cost(usage),
            },
            "transcript": run.transcript(),
            // Every event of the run and of its sub-agents' runs, with times and parent runs.
            "events": log.records(),
        });
        say!("{}", serde_json::to_string_pretty(&output)?);
    } else {
        match &outcome {
            Outcome::Answered { answer } => {
                // A streamed answer is on the screen already.
                if trace.take_streamed_answer().as_deref() != Some(answer.as_str()) {
                    say!("{}", crate::markdown::for_stdout(answer));
                }
            }
            other => note!("{} {other}", crate::style::Style::stderr().error("error:")),
        }
    }
    match changes {
        // Staged changes wait for a decision: like a call waiting for approval, exit code 4.
        Some(session::Changes::Saved(_)) => Ok(exit::NEEDS_APPROVAL),
        // The person said yes and nothing was written: the request did not go through.
        Some(session::Changes::Decided { failed: true, .. }) => Ok(exit::STOPPED),
        _ => Ok(exit::for_outcome(&outcome)),
    }
}

/// The id of the change set saved for a decision later, if one was.
fn saved(changes: Option<&session::Changes>) -> Option<&str> {
    match changes {
        Some(session::Changes::Saved(id)) => Some(id),
        _ => None,
    }
}

/// A run that waits for approval where no one can give it: saved in the run store, what waits and how to go
/// on; exit code 4.
pub(crate) async fn waiting(
    turn: &steward_app::Turn,
    run: &steward_core::Run,
    requests: &[steward_core::ApprovalRequest],
    json: bool,
) -> anyhow::Result<u8> {
    let (ids, previews) = if turn.app().store().is_some() {
        let parked = turn.park(run, requests).await?;
        (Some(parked.ids), parked.previews)
    } else {
        let mut previews = Vec::new();
        for request in requests {
            previews.push(turn.preview(request).await);
        }
        (None, previews)
    };
    if json {
        let pending: Vec<_> = requests
            .iter()
            .enumerate()
            .map(|(i, r)| {
                json!({
                    "approval_id": ids.as_ref().and_then(|ids| ids.get(i)),
                    "call_id": r.call.id,
                    "tool": r.call.name,
                    "arguments": r.call.arguments,
                    "reason": r.reason,
                    "preview": previews.get(i).cloned().flatten(),
                })
            })
            .collect();
        say!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "run_id": run.id(),
                "outcome": "awaiting_approval",
                "pending": pending,
                "steps": run.steps(),
                "transcript": run.transcript(),
            }))?
        );
    }
    let style = crate::style::Style::stderr();
    for (i, request) in requests.iter().enumerate() {
        let id = ids.as_ref().and_then(|ids| ids.get(i)).map(String::as_str);
        let preview = previews.get(i).and_then(Option::as_deref);
        session::note_waiting(request, id, preview);
    }
    match ids {
        Some(_) => note!(
            "{}",
            style.dim(&format!(
                "(saved: decide with `steward approvals approve ID` or `steward approvals deny ID --reason TEXT`, \
                 then `steward runs resume {}`; or let the role run the tool without approval in steward.yaml)",
                run.id()
            ))
        ),
        None => note!(
            "{}",
            style.dim(
                "(not saved, as --no-store was given: run the command in a terminal to approve or deny each call, \
                 or let the role run the tool without approval in steward.yaml: `skip_approval`, or `trusted` for \
                 the tool that read the data)"
            )
        ),
    }
    Ok(exit::NEEDS_APPROVAL)
}
