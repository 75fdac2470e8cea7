//! The expense scenario from the source material, as a scripted run: the model asks for the date, calls
//! `add_expense` without `gross_amount`, is told what is missing, calls again with every value and answers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use steward_core::{
    Event, Message, ModelResponse, Outcome, RunStatus, SchemaStyle, ScriptedModel, Toolbox,
    Transcript,
};

const INPUT: &str = "I spent $5 on a coffee today, tax rate 0.2, please track it";
const MISSING: &str =
    "Missing values: gross_amount. Ask the user for them or use a tool that provides them.";

#[tokio::test]
async fn coffee_expense_recovers_from_a_missing_value() {
    let recorded = Calls::<AddExpense>::default();
    let tools = Toolbox::new()
        .with(current_date())
        .unwrap()
        .with(add_expense(recorded.clone()))
        .unwrap();
    let model = Arc::new(ScriptedModel::new([
        calls(&[("call_date", "current_date", "{}")]),
        calls(&[(
            "call_add_1",
            "add_expense",
            r#"{"description":"coffee","net_amount":5,"tax_rate":0.2,"date":"2026-11-21"}"#,
        )]),
        calls(&[(
            "call_add_2",
            "add_expense",
            r#"{"description":"coffee","net_amount":5,"gross_amount":6,"tax_rate":0.2,"date":"2026-11-21"}"#,
        )]),
        ModelResponse::text("Tracked: coffee, 5.00 net, 6.00 gross (20% tax) on 2026-11-21."),
    ]));
    let (runner, log) = runner(agent(tools), model.clone());

    let (run, status) = runner.run(INPUT).await;

    assert_eq!(
        answer(&status),
        "Tracked: coffee, 5.00 net, 6.00 gross (20% tax) on 2026-11-21."
    );
    // The tool body ran exactly once, with complete arguments.
    assert_eq!(
        recorded.all(),
        vec![AddExpense {
            description: "coffee".into(),
            net_amount: 5.0,
            gross_amount: 6.0,
            tax_rate: 0.2,
            date: "2026-11-21".into(),
        }]
    );
    // The observations, in order and keyed by call id.
    assert_eq!(
        tool_results(&run),
        vec![
            ("call_date".into(), "2026-11-21 (Saturday)".into(), false),
            ("call_add_1".into(), MISSING.into(), true),
            (
                "call_add_2".into(),
                "Recorded expense #1 (coffee): 6 gross on 2026-11-21 (call call_add_2).".into(),
                false
            ),
        ]
    );
    // The whole transcript: roles in order, each result right after the call it answers.
    let roles: Vec<_> = run
        .messages()
        .iter()
        .map(|m| format!("{:?}", m.role()))
        .collect();
    assert_eq!(
        roles,
        [
            "System",
            "User",
            "Assistant",
            "Tool",
            "Assistant",
            "Tool",
            "Assistant",
            "Tool",
            "Assistant"
        ]
    );
    assert_eq!(run.messages()[1], Message::user(INPUT));
    for (i, m) in run.messages().iter().enumerate() {
        if let Message::Tool { call_id, .. } = m {
            assert_eq!(&run.messages()[i - 1].tool_calls()[0].id, call_id);
        }
    }
    // The model saw the missing-value observation before its third call.
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[2].messages.last().unwrap().text(), Some(MISSING));
    // add_expense is lenient: the model is shown no required parameters.
    let spec = requests[0]
        .tools
        .iter()
        .find(|t| t.name == "add_expense")
        .unwrap();
    let shown = spec.model_parameters(SchemaStyle::Standard);
    assert!(shown.get("required").is_none(), "{shown}");
    assert_eq!(
        shown["properties"]["gross_amount"]["description"],
        "Amount including tax."
    );
    // One validation error event, for the right call.
    let events = log.events();
    let rejected: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ValidationError { call, .. } => Some(call.id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(rejected, ["call_add_1"]);
    assert!(matches!(
        events.last(),
        Some(Event::Finished {
            outcome: Outcome::Answered { .. },
            steps: 4,
            ..
        })
    ));
    assert!(matches!(events.first(), Some(Event::RunStarted { input, .. }) if input == INPUT));
    // The transcript round-trips through JSON.
    let transcript = run.transcript();
    let back = Transcript::from_json(&transcript.to_json().unwrap()).unwrap();
    assert_eq!(back, transcript);
    assert_eq!(
        back.outcome.as_ref().and_then(|o| o.answer()),
        Some("Tracked: coffee, 5.00 net, 6.00 gross (20% tax) on 2026-11-21.")
    );
    assert!(matches!(status, RunStatus::Done(_)));
}
