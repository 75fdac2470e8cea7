//! Approvals through sub-agents: a call that needs approval deep in a run tree (router → specialist → write
//! tool, and deeper) suspends every run above it; a decision given by the qualified call id reaches the
//! sub-run that waits, which resumes where it stopped, and its answer goes back up. The whole tree is one JSON
//! document in between, so another process can decide and resume.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use steward_core::{
    Agent, AgentTool, Approval, Decision, Error, Event, EventLog, Message, Model, ModelResponse,
    Run, RunStatus, Runner, ScriptedModel, Tool, ToolCall, ToolContext, ToolOutput, ToolSpec,
    Toolbox, TypedTool,
};

/// Arguments of `record_expense`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RecordExpense {
    /// What was bought.
    description: String,
    /// The amount, in euros.
    #[schemars(range(min = 0))]
    amount: f64,
}

/// What a "process" builds from code: the agents, the tools and a runner. Nothing else is shared with another
/// process but the saved run.
struct World {
    runner: Runner,
    model: Arc<ScriptedModel>,
    log: EventLog,
    /// How many times `record_expense` ran.
    runs: Arc<AtomicUsize>,
    /// What it ran with, in order.
    recorded: Calls<String>,
}

fn record_expense(runs: Arc<AtomicUsize>, recorded: Calls<String>) -> impl Tool {
    TypedTool::new(
        "record_expense",
        "Records one expense.",
        move |_ctx, args: RecordExpense| {
            let runs = runs.clone();
            let recorded = recorded.clone();
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                recorded.push(format!("{} {}", args.description, args.amount));
                Ok(ToolOutput::text(format!(
                    "Recorded {} EUR for {}.",
                    args.amount, args.description
                )))
            }
        },
    )
}

/// Asks a person before every `record_expense` call; allows everything else.
fn policy(call: &ToolCall, _spec: &ToolSpec, args: &Value) -> Decision {
    if call.name == "record_expense" {
        Decision::NeedsApproval {
            reason: format!("record the expense {args}?"),
        }
    } else {
        Decision::Allow
    }
}

fn specialist(name: &str, tools: Toolbox) -> Agent {
    let mut agent = Agent::new(name, format!("You are the {name} agent."), tools)
        .with_description(format!("Handles {name}."));
    agent.name = name.to_owned();
    agent
}

/// The tree of agents, described as `(name, children)`: a leaf has `record_expense` and `current_date`.
enum Shape {
    Leaf(&'static str),
    Node(&'static str, Vec<Shape>),
}

fn build_agent(
    shape: &Shape,
    model: &Arc<ScriptedModel>,
    runs: &Arc<AtomicUsize>,
    recorded: &Calls<String>,
) -> Agent {
    match shape {
        Shape::Leaf(name) => specialist(
            name,
            Toolbox::new()
                .with(record_expense(runs.clone(), recorded.clone()))
                .unwrap()
                .with(current_date())
                .unwrap(),
        ),
        Shape::Node(name, children) => {
            let mut tools = Toolbox::new().with(current_date()).unwrap();
            for child in children {
                let agent = build_agent(child, model, runs, recorded);
                tools = tools
                    .with(AgentTool::new(
                        Arc::new(agent),
                        model.clone() as Arc<dyn Model>,
                    ))
                    .unwrap();
            }
            specialist(name, tools)
        }
    }
}

fn world(shape: &Shape, script: Vec<ModelResponse>) -> World {
    world_limited(shape, script, None)
}

/// A world whose top agent may spend at most `max_tokens` for the whole tree.
fn world_limited(shape: &Shape, script: Vec<ModelResponse>, max_tokens: Option<u64>) -> World {
    let model = Arc::new(ScriptedModel::new(script));
    let runs = Arc::new(AtomicUsize::new(0));
    let recorded = Calls::default();
    let log = EventLog::new();
    let mut agent = build_agent(shape, &model, &runs, &recorded);
    agent.limits.max_tokens = max_tokens;
    let runner = Runner::new(Arc::new(agent), model.clone())
        .with_policy(Arc::new(policy))
        .with_observer(Arc::new(log.clone()));
    World {
        runner,
        model,
        log,
        runs,
        recorded,
    }
}

/// router → expenses → record_expense.
fn two_levels() -> Shape {
    Shape::Node("router", vec![Shape::Leaf("expenses")])
}

fn waiting(status: &RunStatus) -> Vec<(String, String, String)> {
    match status {
        RunStatus::AwaitingApproval(requests) => requests
            .iter()
            .map(|r| (r.call.id.clone(), r.call.name.clone(), r.reason.clone()))
            .collect(),
        other => panic!("expected the run to wait for approval, got {other:?}"),
    }
}

/// The router asks the date and the expenses agent in one reply; the expenses agent wants to record lunch.
fn lunch_start() -> Vec<ModelResponse> {
    vec![
        calls(&[
            ("d1", "current_date", "{}"),
            (
                "r1",
                "expenses",
                r#"{"request": "Record 12.50 EUR for lunch today."}"#,
            ),
        ]),
        calls(&[(
            "e1",
            "record_expense",
            r#"{"description": "lunch", "amount": 12.5}"#,
        )]),
    ]
}

/// The router's run, stopped because the expenses agent waits; checks what waits and that nothing ran.
async fn lunch_waiting(world: &World) -> Run {
    let (run, status) = world.runner.run("Record my lunch, 12.50.").await;
    assert_eq!(
        waiting(&status),
        [(
            "r1/e1".to_owned(),
            "record_expense".to_owned(),
            r#"[expenses] record the expense {"description":"lunch","amount":12.5}?"#.to_owned()
        )]
    );
    assert_eq!(
        world.runs.load(Ordering::SeqCst),
        0,
        "nothing runs before the decision"
    );
    assert!(run.outcome().is_none());
    assert_eq!(run.awaiting_approval().len(), 1);
    run
}

/// The model's requests made by the agent whose system message is `You are the {agent} agent.`.
fn requests_of(model: &ScriptedModel, agent: &str) -> Vec<Vec<Message>> {
    let system = format!("You are the {agent} agent.");
    model
        .requests()
        .into_iter()
        .filter(|r| r.messages.first().and_then(Message::text) == Some(system.as_str()))
        .map(|r| r.messages)
        .collect()
}

#[tokio::test]
async fn an_approved_call_of_a_specialist_runs_once_and_its_answer_reaches_the_router() {
    let mut script = lunch_start();
    script.push(ModelResponse::text("Recorded lunch: 12.50 EUR."));
    script.push(ModelResponse::text("Your lunch (12.50 EUR) is recorded."));
    let w = world(&two_levels(), script);
    let mut run = lunch_waiting(&w).await;

    // Driving again without a decision changes nothing.
    assert_eq!(waiting(&w.runner.drive(&mut run).await).len(), 1);
    assert_eq!(w.model.served(), 2);

    w.runner
        .decide(&mut run, "r1/e1", Approval::Approve)
        .unwrap();
    assert_eq!(
        w.runs.load(Ordering::SeqCst),
        0,
        "deciding does not run anything"
    );
    let status = w.runner.drive(&mut run).await;

    assert_eq!(answer(&status), "Your lunch (12.50 EUR) is recorded.");
    assert_eq!(
        w.runs.load(Ordering::SeqCst),
        1,
        "the approved call ran exactly once"
    );
    assert_eq!(w.recorded.all(), ["lunch 12.5"]);
    assert_eq!(
        tool_results(&run),
        [
            ("d1".into(), "2026-11-21 (Saturday)".into(), false),
            ("r1".into(), "Recorded lunch: 12.50 EUR.".into(), false),
        ],
        "the call done before the suspension kept its result; the agent's answer is the call's result"
    );
    // The specialist, resumed, saw its tool's result.
    let expenses = requests_of(&w.model, "expenses");
    assert_eq!(expenses.len(), 2);
    assert_eq!(
        expenses[1].last().unwrap().text(),
        Some("Recorded 12.5 EUR for lunch.")
    );

    // The sub-run's events are those of one run that paused: started once, finished once, same id.
    let root = run.id().to_owned();
    let sub = format!("{root}/r1");
    let records = w.log.records();
    let started: Vec<&str> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::RunStarted { run_id, .. } => Some(run_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(started, [root.as_str(), sub.as_str()]);
    let finished: Vec<&str> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Finished { run_id, .. } => Some(run_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(finished, [sub.as_str(), root.as_str()]);
    let requested = records.iter().find_map(|r| match &r.event {
        Event::ApprovalRequested { run_id, call, .. } => {
            Some((run_id.clone(), call.id.clone(), r.parent_run_id.clone()))
        }
        _ => None,
    });
    assert_eq!(
        requested,
        Some((sub.clone(), "e1".into(), Some(root.clone())))
    );
    let decided = records.iter().find_map(|r| match &r.event {
        Event::ApprovalDecided {
            run_id,
            call_id,
            approval,
        } => Some((
            run_id.clone(),
            call_id.clone(),
            approval.clone(),
            r.parent_run_id.clone(),
        )),
        _ => None,
    });
    assert_eq!(
        decided,
        Some((
            sub.clone(),
            "e1".into(),
            Approval::Approve,
            Some(root.clone())
        )),
        "the decision is reported for the sub-run whose call waited"
    );
    let results: Vec<(String, String)> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::ToolResult {
                run_id, call_id, ..
            } => Some((run_id.clone(), call_id.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            (root.clone(), "d1".into()),
            (sub.clone(), "e1".into()),
            (root.clone(), "r1".into())
        ]
    );
}

#[tokio::test]
async fn a_rejection_goes_back_to_the_specialist_which_answers_the_router() {
    let mut script = lunch_start();
    script.push(ModelResponse::text(
        "I did not record the lunch: lunches are not refunded.",
    ));
    script.push(ModelResponse::text(
        "The lunch was not recorded; lunches are not refunded.",
    ));
    let w = world(&two_levels(), script);
    let mut run = lunch_waiting(&w).await;

    let reject = Approval::Reject {
        reason: Some("lunches are not refunded".into()),
    };
    let status = w.runner.resume(&mut run, "r1/e1", reject).await.unwrap();

    assert_eq!(
        answer(&status),
        "The lunch was not recorded; lunches are not refunded."
    );
    assert_eq!(
        w.runs.load(Ordering::SeqCst),
        0,
        "a rejected call never runs"
    );
    let expenses = requests_of(&w.model, "expenses");
    let seen = expenses[1].last().unwrap();
    assert!(
        matches!(seen, Message::Tool { is_error: true, call_id, .. } if call_id == "e1"),
        "{seen:?}"
    );
    assert_eq!(
        seen.text(),
        Some(
            "The user rejected this call: lunches are not refunded. Do not retry it; ask the user how to proceed."
        ),
        "the specialist, which made the call, is told why"
    );
    assert_eq!(
        tool_results(&run)[1],
        (
            "r1".into(),
            "I did not record the lunch: lunches are not refunded.".into(),
            false
        ),
        "the router gets the specialist's answer"
    );
}

#[tokio::test]
async fn an_edited_call_runs_with_the_persons_arguments_and_a_bad_edit_is_refused() {
    let mut script = lunch_start();
    script.push(ModelResponse::text("Recorded lunch: 15 EUR."));
    script.push(ModelResponse::text("Your lunch (15 EUR) is recorded."));
    let w = world(&two_levels(), script);
    let mut run = lunch_waiting(&w).await;

    // An edit that does not fit the schema is an error for the caller of `decide`; the call keeps waiting.
    let bad = Approval::Edit {
        arguments: json!({"description": "lunch", "amount": "fifteen"}),
    };
    let error = w.runner.decide(&mut run, "r1/e1", bad).unwrap_err();
    assert!(
        matches!(&error, Error::InvalidEdit { call_id, .. } if call_id == "r1/e1"),
        "the error names the id the caller gave: {error:?}"
    );
    assert!(error.to_string().contains("amount"), "{error}");
    let missing = Approval::Edit {
        arguments: json!({"description": "lunch"}),
    };
    assert!(w.runner.decide(&mut run, "r1/e1", missing).is_err());
    assert_eq!(waiting(&w.runner.drive(&mut run).await).len(), 1);
    assert_eq!(w.model.served(), 2, "a refused edit drives nothing");

    let edit = Approval::Edit {
        arguments: json!({"description": "lunch", "amount": 15}),
    };
    w.runner.decide(&mut run, "r1/e1", edit).unwrap();
    let status = w.runner.drive(&mut run).await;

    assert_eq!(answer(&status), "Your lunch (15 EUR) is recorded.");
    assert_eq!(w.recorded.all(), ["lunch 15"], "it ran once, with the edit");
    let expenses = requests_of(&w.model, "expenses");
    assert_eq!(
        expenses[1].last().unwrap().text(),
        Some(
            "The user changed the arguments of this call before approving it; it ran with \
             {\"description\":\"lunch\",\"amount\":15}.\nRecorded 15 EUR for lunch."
        ),
        "the specialist is told that the person changed its arguments"
    );
}

/// router → books → expenses → record_expense.
fn three_levels() -> Shape {
    Shape::Node(
        "router",
        vec![Shape::Node("books", vec![Shape::Leaf("expenses")])],
    )
}

fn deep_script_start() -> Vec<ModelResponse> {
    vec![
        calls(&[(
            "r1",
            "books",
            r#"{"request": "Record the 40 EUR train ticket."}"#,
        )]),
        calls(&[("b1", "expenses", r#"{"request": "Train ticket, 40 EUR."}"#)]),
        calls(&[(
            "e1",
            "record_expense",
            r#"{"description": "train", "amount": 40}"#,
        )]),
    ]
}

fn deep_script_end() -> Vec<ModelResponse> {
    vec![
        ModelResponse::text("Recorded the train ticket."),
        ModelResponse::text("The books have the train ticket."),
        ModelResponse::text("Your 40 EUR train ticket is recorded."),
    ]
}

#[tokio::test]
async fn three_levels_deep_the_decision_reaches_the_bottom_and_the_answers_come_back_up() {
    let mut script = deep_script_start();
    script.extend(deep_script_end());
    let w = world(&three_levels(), script);
    let (mut run, status) = w.runner.run("Record my train ticket.").await;
    assert_eq!(
        waiting(&status),
        [(
            "r1/b1/e1".to_owned(),
            "record_expense".to_owned(),
            r#"[books/expenses] record the expense {"description":"train","amount":40}?"#
                .to_owned()
        )]
    );
    // A decision for a level that is not the waiting call's is refused.
    assert!(
        w.runner
            .decide(&mut run, "r1/e1", Approval::Approve)
            .is_err()
    );
    assert!(
        w.runner
            .decide(&mut run, "r1/b1", Approval::Approve)
            .is_err()
    );

    let status = w
        .runner
        .resume(&mut run, "r1/b1/e1", Approval::Approve)
        .await
        .unwrap();
    assert_eq!(answer(&status), "Your 40 EUR train ticket is recorded.");
    assert_eq!(w.runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        tool_results(&run),
        [(
            "r1".into(),
            "The books have the train ticket.".into(),
            false
        )]
    );
    let books = requests_of(&w.model, "books");
    assert_eq!(
        books[1].last().unwrap().text(),
        Some("Recorded the train ticket."),
        "the middle agent got the bottom agent's answer"
    );
    let decided = w.log.events().into_iter().find_map(|e| match e {
        Event::ApprovalDecided {
            run_id, call_id, ..
        } => Some((run_id, call_id)),
        _ => None,
    });
    assert_eq!(decided, Some((format!("{}/r1/b1", run.id()), "e1".into())));
}

#[tokio::test]
async fn a_run_tree_saved_mid_approval_resumes_in_another_process() {
    // Process 1: run until the bottom call waits, save the whole tree, drop everything.
    let saved = {
        let w = world(&three_levels(), deep_script_start());
        let (run, status) = w.runner.run("Record my train ticket.").await;
        assert_eq!(waiting(&status)[0].0, "r1/b1/e1");
        serde_json::to_string(&run).unwrap()
    };
    let root_id: String = serde_json::from_str::<Run>(&saved).unwrap().id().to_owned();

    // Process 2: load, see the same request, decide, save again (the decision is kept in the tree).
    let saved = {
        let w = world(&three_levels(), Vec::new());
        let mut run: Run = serde_json::from_str(&saved).unwrap();
        let requests = run.awaiting_approval();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].call.id, "r1/b1/e1");
        assert!(requests[0].reason.starts_with("[books/expenses] "));
        w.runner
            .decide(&mut run, "r1/b1/e1", Approval::Approve)
            .unwrap();
        assert!(run.awaiting_approval().is_empty());
        assert_eq!(w.runs.load(Ordering::SeqCst), 0);
        serde_json::to_string(&run).unwrap()
    };

    // Process 3: load and drive; the decision applies, the sub-runs resume, the answer is the same as in one
    // process.
    let w = world(&three_levels(), deep_script_end());
    let mut run: Run = serde_json::from_str(&saved).unwrap();
    let status = w.runner.drive(&mut run).await;
    assert_eq!(answer(&status), "Your 40 EUR train ticket is recorded.");
    assert_eq!(run.id(), root_id);
    assert_eq!(w.runs.load(Ordering::SeqCst), 1);
    assert_eq!(w.recorded.all(), ["train 40"]);
    assert_eq!(
        w.model.served(),
        3,
        "only the rest of the script was played"
    );
    // The resumed sub-runs kept their ids and parents.
    let finished: Vec<(String, Option<String>)> = w
        .log
        .records()
        .into_iter()
        .filter_map(|r| match r.event {
            Event::Finished { run_id, .. } => Some((run_id, r.parent_run_id)),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        [
            (format!("{root_id}/r1/b1"), Some(format!("{root_id}/r1"))),
            (format!("{root_id}/r1"), Some(root_id.clone())),
            (root_id.clone(), None),
        ]
    );
}

#[tokio::test]
async fn two_specialists_in_one_reply_each_wait_in_call_order() {
    let shape = Shape::Node(
        "router",
        vec![Shape::Leaf("expenses"), Shape::Leaf("travel")],
    );
    let w = world(
        &shape,
        vec![
            calls(&[
                ("r1", "expenses", r#"{"request": "Lunch, 12 EUR."}"#),
                ("r2", "travel", r#"{"request": "Taxi, 30 EUR."}"#),
            ]),
            calls(&[(
                "e1",
                "record_expense",
                r#"{"description": "lunch", "amount": 12}"#,
            )]),
            ModelResponse::text("Lunch recorded."),
            calls(&[(
                "t1",
                "record_expense",
                r#"{"description": "taxi", "amount": 30}"#,
            )]),
            ModelResponse::text("The taxi was not recorded: refused."),
            ModelResponse::text("Lunch recorded; the taxi was refused."),
        ],
    );
    let (mut run, status) = w.runner.run("Lunch 12 and taxi 30.").await;
    // Calls run in the order the model made them: the travel agent starts only after the expenses agent's
    // call is decided and done.
    let first = waiting(&status);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].0, "r1/e1");
    assert!(first[0].2.starts_with("[expenses] "));
    assert!(requests_of(&w.model, "travel").is_empty());

    let status = w
        .runner
        .resume(&mut run, "r1/e1", Approval::Approve)
        .await
        .unwrap();
    let second = waiting(&status);
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].0, "r2/t1");
    assert!(second[0].2.starts_with("[travel] "), "{}", second[0].2);
    assert_eq!(w.recorded.all(), ["lunch 12"]);

    let reject = Approval::Reject { reason: None };
    let status = w.runner.resume(&mut run, "r2/t1", reject).await.unwrap();
    assert_eq!(answer(&status), "Lunch recorded; the taxi was refused.");
    assert_eq!(w.runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        tool_results(&run),
        [
            ("r1".into(), "Lunch recorded.".into(), false),
            (
                "r2".into(),
                "The taxi was not recorded: refused.".into(),
                false
            ),
        ]
    );
}

#[tokio::test]
async fn two_waiting_calls_of_one_specialist_resume_only_when_both_are_decided() {
    let w = world(
        &two_levels(),
        vec![
            calls(&[("r1", "expenses", r#"{"request": "Lunch 12 and taxi 30."}"#)]),
            calls(&[
                (
                    "e1",
                    "record_expense",
                    r#"{"description": "lunch", "amount": 12}"#,
                ),
                (
                    "e2",
                    "record_expense",
                    r#"{"description": "taxi", "amount": 30}"#,
                ),
            ]),
            ModelResponse::text("Lunch recorded, taxi refused."),
            ModelResponse::text("Lunch recorded; the taxi was refused."),
        ],
    );
    let (mut run, status) = w.runner.run("Lunch 12 and taxi 30.").await;
    let ids: Vec<String> = waiting(&status).into_iter().map(|w| w.0).collect();
    assert_eq!(ids, ["r1/e1", "r1/e2"]);

    w.runner
        .decide(&mut run, "r1/e2", Approval::Reject { reason: None })
        .unwrap();
    let status = w.runner.drive(&mut run).await;
    let ids: Vec<String> = waiting(&status).into_iter().map(|w| w.0).collect();
    assert_eq!(
        ids,
        ["r1/e1"],
        "the decided request no longer waits; nothing resumed yet"
    );
    assert_eq!(w.model.served(), 2);
    // A second decision for the same call is refused.
    assert!(matches!(
        w.runner.decide(&mut run, "r1/e2", Approval::Approve),
        Err(Error::NotAwaitingApproval(id)) if id == "r1/e2"
    ));

    let status = w
        .runner
        .resume(&mut run, "r1/e1", Approval::Approve)
        .await
        .unwrap();
    assert_eq!(answer(&status), "Lunch recorded; the taxi was refused.");
    assert_eq!(w.recorded.all(), ["lunch 12"]);
}

#[tokio::test]
async fn an_unknown_call_id_is_an_error_that_names_the_waiting_ids() {
    let w = world(&two_levels(), lunch_start());
    let mut run = lunch_waiting(&w).await;
    for wrong in ["e1", "r1", "r1/e2", "r2/e1", "r1/e1/x", ""] {
        let error = w
            .runner
            .decide(&mut run, wrong, Approval::Approve)
            .unwrap_err();
        match &error {
            Error::NoSuchApproval { call_id, waiting } => {
                assert_eq!(call_id, wrong);
                assert_eq!(waiting, &["r1/e1".to_owned()]);
            }
            other => panic!("{wrong}: expected NoSuchApproval, got {other:?}"),
        }
        assert!(error.to_string().contains("`r1/e1`"), "{error}");
    }
    // A finished run has nothing waiting, and says so.
    let done = world(&Shape::Leaf("expenses"), vec![ModelResponse::text("hi")]);
    let (mut finished, _) = done.runner.run("hi").await;
    let error = done
        .runner
        .decide(&mut finished, "e1", Approval::Approve)
        .unwrap_err();
    assert!(error.to_string().contains("nothing"), "{error}");
    assert_eq!(w.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn ask_reports_the_qualified_requests_it_cannot_give() {
    let w = world(&two_levels(), lunch_start());
    let failed = w.runner.ask("Record my lunch, 12.50.").await.unwrap_err();
    let ids: Vec<&str> = failed
        .approvals()
        .iter()
        .map(|r| r.call.id.as_str())
        .collect();
    assert_eq!(ids, ["r1/e1"]);
    assert_eq!(w.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_agent_tool_called_outside_a_runner_cannot_wait() {
    let w = world(
        &Shape::Leaf("expenses"),
        vec![calls(&[(
            "e1",
            "record_expense",
            r#"{"description": "lunch", "amount": 12}"#,
        )])],
    );
    let tool = AgentTool::new(
        Arc::new(build_agent(
            &Shape::Leaf("expenses"),
            &w.model,
            &w.runs,
            &w.recorded,
        )),
        w.model.clone(),
    );
    let ctx = ToolContext::new("run", "c1", "test").with_policy(Arc::new(policy));
    let error = tool
        .call(&ctx, json!({"request": "lunch 12"}))
        .await
        .unwrap_err();
    assert!(
        error
            .message
            .contains("needs a person's approval for record_expense"),
        "{error:?}"
    );
    assert_eq!(w.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn cancelling_a_waiting_tree_ends_every_sub_run_in_it() {
    let w = world(&three_levels(), deep_script_start());
    let (mut run, status) = w.runner.run("Record my train ticket.").await;
    assert_eq!(waiting(&status).len(), 1);
    w.runner.cancel(&mut run);
    assert_eq!(run.outcome(), Some(&steward_core::Outcome::Cancelled));
    assert!(run.awaiting_approval().is_empty());
    let root = run.id().to_owned();
    let finished: Vec<(String, steward_core::Outcome)> = w
        .log
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Finished {
                run_id, outcome, ..
            } => Some((run_id, outcome)),
            _ => None,
        })
        .collect();
    let cancelled = steward_core::Outcome::Cancelled;
    assert_eq!(
        finished,
        [
            (format!("{root}/r1/b1"), cancelled.clone()),
            (format!("{root}/r1"), cancelled.clone()),
            (root.clone(), cancelled),
        ]
    );
    assert_eq!(
        tool_results(&run),
        [(
            "r1".into(),
            "No result: the run ended (cancelled) before this call finished.".into(),
            true
        )]
    );
    assert_eq!(w.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_resumed_tree_still_spends_from_what_is_left_of_its_token_budget() {
    // The router may spend 100 tokens for the whole tree. Before the approval the router spent 30 and the
    // specialist 50; after it, in another process, the specialist spends 30 more: 110, so the router's next
    // call must not happen.
    let saved = {
        let w = world_limited(
            &two_levels(),
            vec![
                calls(&[("r1", "expenses", r#"{"request": "Lunch, 12 EUR."}"#)]).with_usage(20, 10),
                calls(&[(
                    "e1",
                    "record_expense",
                    r#"{"description": "lunch", "amount": 12}"#,
                )])
                .with_usage(40, 10),
            ],
            Some(100),
        );
        let (run, status) = w.runner.run("Lunch, 12 EUR.").await;
        assert_eq!(waiting(&status)[0].0, "r1/e1");
        serde_json::to_string(&run).unwrap()
    };
    let w = world_limited(
        &two_levels(),
        vec![
            ModelResponse::text("Lunch recorded.").with_usage(20, 10),
            ModelResponse::text("never reached"),
        ],
        Some(100),
    );
    let mut run: Run = serde_json::from_str(&saved).unwrap();
    let status = w
        .runner
        .resume(&mut run, "r1/e1", Approval::Approve)
        .await
        .unwrap();
    assert_eq!(
        status,
        RunStatus::Done(steward_core::Outcome::TokenBudget {
            limit: 100,
            used: 110
        })
    );
    assert_eq!(
        w.model.served(),
        1,
        "the router's second call must not happen"
    );
    assert_eq!(w.runs.load(Ordering::SeqCst), 1);
    assert_eq!(tool_results(&run)[0].1, "Lunch recorded.");
}

#[tokio::test]
async fn an_edited_agent_call_that_then_suspends_still_tells_the_router_about_the_edit() {
    // Here the router's call of the expenses agent needs approval too; the person edits its request.
    let model = Arc::new(ScriptedModel::new([
        calls(&[("r1", "expenses", r#"{"request": "Lunch, 12 EUR."}"#)]),
        calls(&[(
            "e1",
            "record_expense",
            r#"{"description": "lunch", "amount": 14}"#,
        )]),
        ModelResponse::text("Recorded lunch: 14 EUR."),
        ModelResponse::text("Your lunch (14 EUR) is recorded."),
    ]));
    let runs = Arc::new(AtomicUsize::new(0));
    let recorded = Calls::default();
    let agent = build_agent(&two_levels(), &model, &runs, &recorded);
    let both = |call: &ToolCall, spec: &ToolSpec, args: &Value| {
        if call.name == "expenses" {
            Decision::NeedsApproval {
                reason: "ask the expenses agent?".into(),
            }
        } else {
            policy(call, spec, args)
        }
    };
    let runner = Runner::new(Arc::new(agent), model.clone()).with_policy(Arc::new(both));
    let (mut run, status) = runner.run("Lunch, 12 EUR.").await;
    assert_eq!(waiting(&status)[0].0, "r1");
    let edit = Approval::Edit {
        arguments: json!({"request": "Lunch, 14 EUR."}),
    };
    let status = runner.resume(&mut run, "r1", edit).await.unwrap();
    assert_eq!(waiting(&status)[0].0, "r1/e1");
    assert_eq!(
        requests_of(&model, "expenses")[0][1].text(),
        Some("Lunch, 14 EUR."),
        "the sub-agent got the edited request"
    );
    let status = runner
        .resume(&mut run, "r1/e1", Approval::Approve)
        .await
        .unwrap();
    assert_eq!(answer(&status), "Your lunch (14 EUR) is recorded.");
    assert_eq!(recorded.all(), ["lunch 14"]);
    assert_eq!(
        tool_results(&run)[0].1,
        "The user changed the arguments of this call before approving it; it ran with \
         {\"request\":\"Lunch, 14 EUR.\"}.\nRecorded lunch: 14 EUR."
    );
}
