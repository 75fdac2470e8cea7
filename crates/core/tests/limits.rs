//! Run limits: steps, tokens and time each end the run with their own outcome and keep the transcript whole.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use common::*;
use steward_core::{
    Event, Limits, Message, Model, ModelError, ModelRequest, ModelResponse, Outcome, RunStatus,
    ScriptedModel, Toolbox,
};

fn with_limits(tools: Toolbox, limits: Limits) -> steward_core::Agent {
    agent(tools).with_limits(limits)
}

/// Every tool call in a transcript has its result, right after its assistant message.
fn pairs_complete(messages: &[Message]) {
    for (i, m) in messages.iter().enumerate() {
        for (k, call) in m.tool_calls().iter().enumerate() {
            match messages.get(i + 1 + k) {
                Some(Message::Tool { call_id, .. }) => assert_eq!(call_id, &call.id),
                other => panic!("call {} has no result: {other:?}", call.id),
            }
        }
    }
}

#[tokio::test]
async fn max_steps_stops_a_model_that_never_answers() {
    let tools = Toolbox::new().with(current_date()).unwrap();
    let model = Arc::new(ScriptedModel::cycle([calls(&[("", "current_date", "{}")])]));
    let limits = Limits {
        max_steps: 3,
        ..Limits::default()
    };
    let (runner, log) = runner(with_limits(tools, limits), model.clone());
    let (run, status) = runner.run("loop forever").await;
    assert_eq!(status, RunStatus::Done(Outcome::MaxSteps { limit: 3 }));
    assert_eq!(model.served(), 3);
    assert_eq!(run.steps(), 3);
    // system, user, then three (call, result) pairs, ids synthesised per step.
    assert_eq!(run.messages().len(), 2 + 3 * 2);
    let ids: Vec<_> = tool_results(&run).into_iter().map(|r| r.0).collect();
    assert_eq!(ids, ["call_1_1", "call_2_1", "call_3_1"]);
    pairs_complete(run.messages());
    assert_eq!(
        run.transcript().outcome,
        Some(Outcome::MaxSteps { limit: 3 })
    );
    assert!(matches!(
        log.events().last(),
        Some(Event::Finished {
            outcome: Outcome::MaxSteps { .. },
            steps: 3,
            ..
        })
    ));
}

#[tokio::test]
async fn token_budget_stops_before_the_next_model_call() {
    let tools = Toolbox::new().with(current_date()).unwrap();
    let model = Arc::new(ScriptedModel::new([
        calls(&[("a", "current_date", "{}")]).with_usage(500, 100),
        calls(&[("b", "current_date", "{}")]).with_usage(500, 100),
        ModelResponse::text("never reached").with_usage(10, 10),
    ]));
    let limits = Limits {
        max_tokens: Some(1_000),
        ..Limits::default()
    };
    let (runner, _) = runner(with_limits(tools, limits), model.clone());
    let (run, status) = runner.run("what's the date?").await;
    assert_eq!(
        status,
        RunStatus::Done(Outcome::TokenBudget {
            limit: 1_000,
            used: 1_200
        })
    );
    assert_eq!(
        model.served(),
        2,
        "no model call after the budget is used up"
    );
    assert_eq!(run.usage().total(), 1_200);
    assert_eq!(
        tool_results(&run).len(),
        2,
        "calls already made are answered"
    );
    pairs_complete(run.messages());
}

#[tokio::test]
async fn token_budget_counts_estimates_when_the_provider_reports_none() {
    let tools = Toolbox::new().with(current_date()).unwrap();
    let model = Arc::new(ScriptedModel::cycle([calls(&[("", "current_date", "{}")])]));
    let limits = Limits {
        max_tokens: Some(300),
        max_steps: 100,
        ..Limits::default()
    };
    let (runner, _) = runner(with_limits(tools, limits), model.clone());
    let (run, status) = runner.run("what's the date?").await;
    assert!(
        matches!(status, RunStatus::Done(Outcome::TokenBudget { limit: 300, used }) if used >= 300)
    );
    assert!(run.steps() < 100);
}

#[tokio::test(start_paused = true)]
async fn time_limit_interrupts_a_slow_tool() {
    let flight = Flight::default();
    let tools = Toolbox::new()
        .with(wait_tool("slow", false, flight.clone()))
        .unwrap();
    let model = Arc::new(ScriptedModel::new([
        calls(&[
            ("a", "slow", r#"{"ms": 60000, "label": "a"}"#),
            ("b", "slow", r#"{"ms": 1, "label": "b"}"#),
        ]),
        ModelResponse::text("never reached"),
    ]));
    let limits = Limits {
        time_limit: Some(Duration::from_secs(2)),
        ..Limits::default()
    };
    let (runner, _) = runner(with_limits(tools, limits), model.clone());
    let (run, status) = runner.run("wait").await;
    assert_eq!(
        status,
        RunStatus::Done(Outcome::TimeLimit { limit_ms: 2_000 })
    );
    assert_eq!(flight.started.all(), ["a"], "the second call never started");
    let results = tool_results(&run);
    assert_eq!(results.len(), 2);
    for (_, content, is_error) in &results {
        assert!(is_error);
        assert_eq!(
            content,
            "No result: the run ended (stopped at the time limit of 2000 ms) before this call finished."
        );
    }
    pairs_complete(run.messages());
    assert_eq!(model.served(), 1);
    assert!(run.elapsed() >= Duration::from_secs(2));
}

/// A model that takes a long time to answer.
struct SlowModel(Duration);

#[async_trait]
impl Model for SlowModel {
    fn name(&self) -> &str {
        "slow"
    }
    async fn complete(&self, _request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        tokio::time::sleep(self.0).await;
        Ok(ModelResponse::text("too late"))
    }
}

#[tokio::test(start_paused = true)]
async fn time_limit_interrupts_a_slow_model() {
    let tools = Toolbox::new().with(current_date()).unwrap();
    let limits = Limits {
        time_limit: Some(Duration::from_millis(500)),
        ..Limits::default()
    };
    let runner = steward_core::Runner::new(
        Arc::new(with_limits(tools, limits)),
        Arc::new(SlowModel(Duration::from_secs(30))),
    );
    let (run, status) = runner.run("hello").await;
    assert_eq!(
        status,
        RunStatus::Done(Outcome::TimeLimit { limit_ms: 500 })
    );
    assert_eq!(run.messages().len(), 2, "the transcript keeps the input");
}

#[tokio::test(start_paused = true)]
async fn time_limit_accumulates_over_steps() {
    let flight = Flight::default();
    let tools = Toolbox::new()
        .with(wait_tool("slow", false, flight.clone()))
        .unwrap();
    // Each step takes 400 ms; with a 1 s limit the third call is cut short and no fourth model call is made.
    let model = Arc::new(ScriptedModel::cycle([calls(&[(
        "",
        "slow",
        r#"{"ms": 400, "label": "x"}"#,
    )])]));
    let limits = Limits {
        time_limit: Some(Duration::from_secs(1)),
        max_steps: 50,
        ..Limits::default()
    };
    let (runner, _) = runner(with_limits(tools, limits), model.clone());
    let (run, status) = runner.run("wait").await;
    assert_eq!(
        status,
        RunStatus::Done(Outcome::TimeLimit { limit_ms: 1_000 })
    );
    assert_eq!(model.served(), 3);
    let results = tool_results(&run);
    assert_eq!(results.iter().filter(|r| !r.2).count(), 2);
    pairs_complete(run.messages());
}

#[tokio::test]
async fn a_failing_model_ends_the_run_with_its_error() {
    let tools = Toolbox::new().with(current_date()).unwrap();
    let model = Arc::new(ScriptedModel::new([calls(&[("a", "current_date", "{}")])]));
    let (runner, _) = runner(agent(tools), model);
    let (run, status) = runner.run("date?").await;
    match status {
        RunStatus::Done(Outcome::ModelFailed { error, .. }) => {
            assert!(error.contains("no reply left"), "{error}")
        }
        other => panic!("{other:?}"),
    }
    pairs_complete(run.messages());
    assert_eq!(tool_results(&run).len(), 1);
}

#[tokio::test]
async fn an_empty_reply_is_a_failure_not_a_silent_answer() {
    let model = Arc::new(ScriptedModel::new([ModelResponse::default()]));
    let (runner, _) = runner(agent(Toolbox::new()), model);
    let (_, status) = runner.run("hi").await;
    assert!(
        matches!(status, RunStatus::Done(Outcome::ModelFailed { error, cause: steward_core::FailureCause::Reply }) if error.contains("empty reply"))
    );
}

#[tokio::test(start_paused = true)]
async fn cancelling_mid_tool_keeps_the_transcript_whole_and_reports_it() {
    let flight = Flight::default();
    let tools = Toolbox::new()
        .with(wait_tool("slow", false, flight.clone()))
        .unwrap();
    let model = Arc::new(ScriptedModel::new([calls(&[(
        "a",
        "slow",
        r#"{"ms": 60000, "label": "a"}"#,
    )])]));
    let (runner, log) = runner(agent(tools), model);
    let mut run = runner.start("wait");
    let driven = tokio::time::timeout(Duration::from_secs(1), runner.drive(&mut run)).await;
    assert!(driven.is_err(), "still running after a second");
    runner.cancel(&mut run);
    assert_eq!(run.outcome(), Some(&Outcome::Cancelled));
    assert_eq!(
        tool_results(&run),
        [(
            "a".into(),
            "No result: the run ended (cancelled) before this call finished.".into(),
            true
        )]
    );
    pairs_complete(run.messages());
    assert!(matches!(
        log.events().last(),
        Some(Event::Finished {
            outcome: Outcome::Cancelled,
            ..
        })
    ));
    runner.cancel(&mut run);
    assert_eq!(
        log.events()
            .iter()
            .filter(|e| matches!(e, Event::Finished { .. }))
            .count(),
        1
    );
}

/// A model that makes the same call again after its result (spacing and key order aside) is told it has the
/// result and offered no tool for one step; made once more, the run ends with a clear outcome instead of
/// running to the step limit. A call with other arguments is not a repeat.
#[tokio::test]
async fn a_repeated_call_is_told_then_ends_the_run() {
    let tools = Toolbox::new().with(current_date()).unwrap();
    let model = Arc::new(ScriptedModel::new([
        calls(&[("", "current_date", "{}")]),
        calls(&[("", "current_date", "{ }")]),
        calls(&[("", "current_date", " {}\n")]),
        ModelResponse::text("never reached"),
    ]));
    let (first, _) = runner(agent(tools), model.clone());
    let (run, status) = first.run("what's the date?").await;
    let RunStatus::Done(Outcome::ModelFailed { error, .. }) = &status else {
        panic!("{status:?}");
    };
    assert!(error.contains("kept calling `current_date`"), "{error}");
    assert_eq!(model.served(), 3);
    let requests = model.requests();
    assert_eq!(requests[1].tool_choice, steward_core::ToolChoice::Auto);
    assert_eq!(requests[2].tool_choice, steward_core::ToolChoice::None);
    let told = requests[2]
        .messages
        .last()
        .unwrap()
        .text()
        .unwrap_or_default()
        .to_owned();
    assert!(told.contains("already called `current_date`"), "{told}");
    assert!(told.contains("Its result: "), "{told}");
    pairs_complete(run.messages());

    // Told once, the model answers from what it has.
    let tools = Toolbox::new().with(current_date()).unwrap();
    let model = Arc::new(ScriptedModel::new([
        calls(&[("", "current_date", "{}")]),
        calls(&[("", "current_date", "{}")]),
        ModelResponse::text("It is the 21st."),
    ]));
    let (second, _) = runner(agent(tools), model.clone());
    let (_, status) = second.run("what's the date?").await;
    assert_eq!(
        status,
        RunStatus::Done(Outcome::Answered {
            answer: "It is the 21st.".into()
        })
    );
}
