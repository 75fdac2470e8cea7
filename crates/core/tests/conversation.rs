//! Conversations: a finished run continues with the user's next message, limits apply per turn, and a
//! streaming runner reports the reply's pieces as events.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use steward_core::{
    Event, Limits, Message, ModelResponse, Outcome, RunStatus, ScriptedModel, StreamDelta, Toolbox,
};

#[tokio::test]
async fn a_follow_up_sees_the_whole_conversation_and_gets_fresh_limits() {
    let tools = Toolbox::new().with(current_date()).unwrap();
    let model = Arc::new(ScriptedModel::new([
        calls(&[("a", "current_date", "{}")]),
        ModelResponse::text("It is Saturday."),
        calls(&[("b", "current_date", "{}")]),
        ModelResponse::text("Tomorrow is Sunday."),
    ]));
    let limits = Limits {
        max_steps: 2,
        ..Limits::default()
    };
    let (runner, _) = runner(agent(tools).with_limits(limits), model.clone());
    let (mut run, status) = runner.run("What day is it?").await;
    assert_eq!(answer(&status), "It is Saturday.");

    run.follow_up("And tomorrow?").unwrap();
    let status = runner.drive(&mut run).await;
    assert_eq!(
        answer(&status),
        "Tomorrow is Sunday.",
        "two more steps were allowed in the second turn"
    );
    assert_eq!(run.steps(), 4);
    let second_turn = &model.requests()[2].messages;
    assert_eq!(second_turn[1], Message::user("What day is it?"));
    assert_eq!(second_turn[4], Message::assistant("It is Saturday."));
    assert_eq!(second_turn[5], Message::user("And tomorrow?"));
}

#[tokio::test]
async fn a_follow_up_before_the_run_is_done_is_refused() {
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("hi")]));
    let (runner, _) = runner(agent(Toolbox::new()), model);
    let mut run = runner.start("hello");
    assert!(run.follow_up("again").is_err());
    assert!(matches!(
        runner.drive(&mut run).await,
        RunStatus::Done(Outcome::Answered { .. })
    ));
    assert!(run.follow_up("again").is_ok());
}

#[tokio::test]
async fn a_follow_up_through_the_runner_is_reported_so_a_stored_run_keeps_every_question() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::text("hi"),
        ModelResponse::text("hi again"),
    ]));
    let (runner, log) = runner(agent(Toolbox::new()), model);
    let (mut run, _) = runner.run("hello").await;
    runner.follow_up(&mut run, "hello again").unwrap();
    assert_eq!(answer(&runner.drive(&mut run).await), "hi again");
    let events = log.events();
    let at = events
        .iter()
        .position(|e| matches!(e, Event::FollowUp { input, .. } if input == "hello again"))
        .expect("a FollowUp event");
    assert!(
        matches!(events[at - 1], Event::Finished { .. }),
        "{events:?}"
    );
    assert!(
        matches!(events[at + 1], Event::ModelRequest { step: 2, .. }),
        "{events:?}"
    );
    // Refused follow-ups are not reported.
    let mut fresh = runner.start("again");
    assert!(runner.follow_up(&mut fresh, "too soon").is_err());
    assert_eq!(
        log.events()
            .iter()
            .filter(|e| matches!(e, Event::FollowUp { .. }))
            .count(),
        1
    );
}

#[tokio::test]
async fn a_streaming_runner_reports_deltas_before_the_response() {
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("Hello there.")]));
    let log = steward_core::EventLog::new();
    let runner = steward_core::Runner::new(Arc::new(agent(Toolbox::new())), model)
        .with_streaming(true)
        .with_observer(Arc::new(log.clone()));
    runner.run("hi").await;
    let events = log.events();
    let delta = events.iter().position(|e| matches!(e, Event::ModelDelta { delta: StreamDelta::Text(t), .. } if t == "Hello there."));
    let response = events
        .iter()
        .position(|e| matches!(e, Event::ModelResponse { .. }));
    assert!(delta.unwrap() < response.unwrap());
}
