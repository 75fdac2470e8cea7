//! Agents as tools: a router whose tool is an agent; the sub-run's id derives from the call, its events reach
//! the same observer, and its answer is the router's observation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use steward_core::{AgentTool, Event, ModelResponse, ScriptedModel, Toolbox};

#[tokio::test]
async fn a_router_calls_an_agent_like_a_tool() {
    let model = Arc::new(ScriptedModel::new([
        // router
        calls(&[("r1", "dates", r#"{"request": "What day is it today?"}"#)]),
        // sub-agent
        calls(&[("s1", "current_date", "{}")]),
        ModelResponse::text("It is Saturday 2026-11-21."),
        // router again
        ModelResponse::text("Today is Saturday."),
    ]));
    let log = steward_core::EventLog::new();
    let mut dates = agent(Toolbox::new().with(current_date()).unwrap())
        .with_description("Answers questions about dates.");
    dates.name = "dates".into();
    // The sub-agent gets the observer from the call's context, not from its constructor.
    let tool = AgentTool::new(Arc::new(dates), model.clone());
    use steward_core::Tool as _;
    assert_eq!(tool.spec().name, "dates");
    assert_eq!(tool.spec().description, "Answers questions about dates.");
    let router = agent(Toolbox::new().with(tool).unwrap());
    let runner = steward_core::Runner::new(Arc::new(router), model.clone())
        .with_observer(Arc::new(log.clone()));
    let (run, status) = runner.run("what day is it?").await;
    assert_eq!(answer(&status), "Today is Saturday.");
    assert_eq!(
        tool_results(&run),
        [("r1".into(), "It is Saturday 2026-11-21.".into(), false)]
    );
    // The sub-agent got the request as its user message.
    assert_eq!(
        model.requests()[1].messages[1].text(),
        Some("What day is it today?")
    );
    let sub_runs: Vec<String> = log
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::RunStarted { run_id, agent, .. } if agent == "dates" => Some(run_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(sub_runs, [format!("{}/r1", run.id())]);
    // Every event of the sub-run names the router's run as its parent; the router's own have none.
    let records = log.records();
    for record in &records {
        let run_id = match &record.event {
            Event::RunStarted { run_id, .. }
            | Event::ModelRequest { run_id, .. }
            | Event::ModelResponse { run_id, .. }
            | Event::ToolCall { run_id, .. }
            | Event::ToolResult { run_id, .. }
            | Event::Finished { run_id, .. } => run_id.clone(),
            other => panic!("unexpected event {other:?}"),
        };
        let expected = (run_id != run.id()).then(|| run.id().to_owned());
        assert_eq!(record.parent_run_id, expected, "{record:?}");
    }
    assert!(records.windows(2).all(|w| w[0].at <= w[1].at));
    // Run ids are UUIDv7: unique across processes, ordered by time.
    let id = uuid::Uuid::parse_str(run.id()).unwrap();
    assert_eq!(id.get_version_num(), 7);
}

#[tokio::test]
async fn a_sub_agent_spends_from_the_routers_token_budget() {
    // The router may use 100 tokens; its first call uses 30, the specialist's calls 40 each. The specialist
    // is stopped by the shared budget before its third call, and the router before its second.
    let model = Arc::new(ScriptedModel::new([
        calls(&[("r1", "dates", r#"{"request": "loop"}"#)]).with_usage(20, 10),
        calls(&[("s1", "current_date", "{}")]).with_usage(30, 10),
        calls(&[("s2", "current_date", "{}")]).with_usage(30, 10),
        calls(&[("s3", "current_date", "{}")]).with_usage(30, 10),
        ModelResponse::text("never reached"),
    ]));
    let mut dates = agent(Toolbox::new().with(current_date()).unwrap());
    dates.name = "dates".into();
    let mut router = agent(
        Toolbox::new()
            .with(AgentTool::new(Arc::new(dates), model.clone()))
            .unwrap(),
    );
    router.limits.max_tokens = Some(100);
    let (runner, _) = runner(router, model.clone());
    let (run, status) = runner.run("loop").await;
    assert_eq!(
        model.requests().len(),
        3,
        "the third specialist call must not happen"
    );
    let (_, content, is_error) = &tool_results(&run)[0];
    assert!(is_error);
    assert!(
        content.contains("110 tokens used of a budget of 100"),
        "{content}"
    );
    assert_eq!(
        status,
        steward_core::RunStatus::Done(steward_core::Outcome::TokenBudget {
            limit: 100,
            used: 110
        })
    );
}

#[tokio::test]
async fn a_sub_agent_that_fails_is_an_error_observation() {
    let model = Arc::new(ScriptedModel::new([
        calls(&[("r1", "dates", r#"{"request": "loop"}"#)]),
        calls(&[("", "current_date", "{}")]),
        calls(&[("", "current_date", "{}")]),
        ModelResponse::text("The dates agent could not answer."),
    ]));
    let mut dates = agent(Toolbox::new().with(current_date()).unwrap());
    dates.name = "dates".into();
    dates.limits.max_steps = 2;
    let router = agent(
        Toolbox::new()
            .with(AgentTool::new(Arc::new(dates), model.clone()))
            .unwrap(),
    );
    let (runner, _) = runner(router, model);
    let (run, status) = runner.run("loop").await;
    assert_eq!(answer(&status), "The dates agent could not answer.");
    let (_, content, is_error) = &tool_results(&run)[0];
    assert!(is_error);
    assert_eq!(
        content,
        "The dates agent did not finish (stopped after the limit of 2 steps). Tell the user what could not be done."
    );
}
