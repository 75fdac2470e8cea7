//! Every way a tool call can be wrong: each is refused before the tool runs, and the model is told what was
//! wrong and how to fix it. None of them aborts the run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::*;
use steward_core::{
    Event, ModelResponse, RejectionKind, Run, ScriptedModel, Toolbox, ViolationKind,
};

/// Runs one bad call to `find_orders` followed by a plain answer; returns the observation, the rejection
/// kinds from the events, and how many times the tool body ran.
async fn one_bad_call(
    name: &str,
    args: &str,
) -> (String, Vec<(RejectionKind, Vec<ViolationKind>)>, usize, Run) {
    let ran = Calls::<String>::default();
    let tools = Toolbox::new()
        .with(current_date())
        .unwrap()
        .with(find_orders(ran.clone()))
        .unwrap();
    let model = Arc::new(ScriptedModel::new([
        calls(&[("c1", name, args)]),
        ModelResponse::text("Sorry, I could not do that."),
    ]));
    let (runner, log) = runner(agent(tools), model);
    let (run, status) = runner.run("find my order").await;
    assert_eq!(
        answer(&status),
        "Sorry, I could not do that.",
        "the run goes on after a bad call"
    );
    let results = tool_results(&run);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "c1");
    assert!(results[0].2, "a refused call is an error observation");
    let rejections = log
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::ValidationError { rejection, .. } => Some((
                rejection.kind,
                rejection.violations.iter().map(|v| v.kind).collect(),
            )),
            _ => None,
        })
        .collect();
    (results[0].1.clone(), rejections, ran.len(), run)
}

#[tokio::test]
async fn unknown_tool_lists_the_tools_that_exist() {
    let (obs, rejections, ran, _) = one_bad_call("find_order", r#"{"limit": 5}"#).await;
    assert_eq!(
        obs,
        "There is no tool named `find_order`. Available tools: current_date, find_orders. \
         Call one of them by its exact name."
    );
    assert_eq!(rejections, [(RejectionKind::UnknownTool, vec![])]);
    assert_eq!(ran, 0);
}

#[tokio::test]
async fn invalid_json_is_quoted_with_the_parse_error() {
    let (obs, rejections, ran, _) = one_bad_call("find_orders", r#"{"limit": 5,}"#).await;
    assert!(obs.starts_with("The arguments for `find_orders` are not valid JSON (trailing comma at line 1 column 13)"), "{obs}");
    assert!(obs.contains(r#"{"limit": 5,}"#), "{obs}");
    assert_eq!(rejections, [(RejectionKind::InvalidJson, vec![])]);
    assert_eq!(ran, 0);
}

#[tokio::test]
async fn enum_violation_lists_the_allowed_values() {
    let (obs, rejections, ran, _) =
        one_bad_call("find_orders", r#"{"status": "in_transit"}"#).await;
    assert_eq!(
        obs,
        "Invalid arguments for `find_orders`:\n- status: \"in_transit\" is not one of the allowed values: \
         \"PENDING\", \"IN_TRANSIT\", \"DELIVERED\". Use one of them exactly. Did you mean \"IN_TRANSIT\"?"
    );
    assert_eq!(
        rejections,
        [(RejectionKind::InvalidArguments, vec![ViolationKind::Enum])]
    );
    assert_eq!(ran, 0);
}

#[tokio::test]
async fn pattern_violation_shows_the_pattern() {
    let (obs, rejections, ran, _) =
        one_bad_call("find_orders", r#"{"order_code": "qzkdlwprtm"}"#).await;
    assert_eq!(
        obs,
        "Invalid arguments for `find_orders`:\n- order_code: \"qzkdlwprtm\" does not match the pattern \
         ^[A-Z]{10}$. Send a value that matches it."
    );
    assert_eq!(
        rejections,
        [(
            RejectionKind::InvalidArguments,
            vec![ViolationKind::Pattern]
        )]
    );
    assert_eq!(ran, 0);
}

#[tokio::test]
async fn range_violation_states_the_bound() {
    let (obs, rejections, ran, _) = one_bad_call("find_orders", r#"{"limit": 500}"#).await;
    assert_eq!(
        obs,
        "Invalid arguments for `find_orders`:\n- limit: 500 is out of range: it must be at most 50. \
         Send a number at most 50."
    );
    assert_eq!(
        rejections,
        [(RejectionKind::InvalidArguments, vec![ViolationKind::Range])]
    );
    assert_eq!(ran, 0);
}

#[tokio::test]
async fn type_violation_says_what_was_expected() {
    let (obs, rejections, ran, _) = one_bad_call("find_orders", r#"{"limit": "10"}"#).await;
    assert_eq!(
        obs,
        "Invalid arguments for `find_orders`:\n- limit: expected an integer, got a string (\"10\"). \
         Send the number without quotes."
    );
    assert_eq!(
        rejections,
        [(RejectionKind::InvalidArguments, vec![ViolationKind::Type])]
    );
    assert_eq!(ran, 0);
}

#[tokio::test]
async fn unknown_field_names_the_real_fields() {
    let (obs, rejections, ran, _) =
        one_bad_call("find_orders", r#"{"order_number": "QZKDLWPRTM"}"#).await;
    assert_eq!(
        obs,
        "Invalid arguments for `find_orders`:\n- unknown field `order_number`. The fields are: order_code, \
         status, limit. Remove it, or send its value under one of those names."
    );
    assert_eq!(
        rejections,
        [(
            RejectionKind::InvalidArguments,
            vec![ViolationKind::UnknownField]
        )]
    );
    assert_eq!(ran, 0);
}

#[tokio::test]
async fn several_violations_are_reported_together() {
    let (obs, rejections, ran, _) = one_bad_call(
        "find_orders",
        r#"{"order_code": "X", "status": "LOST", "limit": 0}"#,
    )
    .await;
    let kinds = &rejections[0].1;
    assert_eq!(kinds.len(), 3, "{obs}");
    for kind in [
        ViolationKind::Pattern,
        ViolationKind::Enum,
        ViolationKind::Range,
    ] {
        assert!(kinds.contains(&kind), "{kind:?} missing from {obs}");
    }
    assert_eq!(ran, 0);
}

#[tokio::test]
async fn valid_arguments_run_the_tool() {
    // The control for the tests above: a valid call runs the tool body exactly once.
    let ran = Calls::<String>::default();
    let tools = Toolbox::new().with(find_orders(ran.clone())).unwrap();
    let model = Arc::new(ScriptedModel::new([
        calls(&[(
            "c1",
            "find_orders",
            r#"{"order_code": "QZKDLWPRTM", "status": "IN_TRANSIT", "limit": 5}"#,
        )]),
        ModelResponse::text("done"),
    ]));
    let (runner, _) = runner(agent(tools), model);
    let (run, _) = runner.run("find my order").await;
    assert_eq!(ran.len(), 1);
    assert_eq!(
        tool_results(&run),
        [("c1".into(), "no orders".into(), false)]
    );
}

#[tokio::test]
async fn a_tool_that_fails_reports_to_the_model_and_the_operator_separately() {
    use steward_core::{ToolError, TypedTool};
    let failing = TypedTool::new("flaky", "Always fails.", |_ctx, _a: NoArgs| async {
        Err::<steward_core::ToolOutput, _>(ToolError::internal(
            "connection refused: db at 10.0.0.5:5432",
        ))
    });
    let panicking = TypedTool::new("broken", "Always panics.", |_ctx, _a: NoArgs| async {
        if true {
            panic!("index out of bounds");
        }
        Ok(steward_core::ToolOutput::text("unreachable"))
    });
    let tools = Toolbox::new()
        .with(failing)
        .unwrap()
        .with(panicking)
        .unwrap();
    let model = Arc::new(ScriptedModel::new([
        calls(&[("c1", "flaky", "{}"), ("c2", "broken", "{}")]),
        ModelResponse::text("Both failed."),
    ]));
    let (runner, log) = runner(agent(tools), model);
    let (run, status) = runner.run("go").await;
    assert_eq!(answer(&status), "Both failed.");
    let results = tool_results(&run);
    assert!(
        results
            .iter()
            .all(|(_, content, is_error)| *is_error && !content.contains("10.0.0.5"))
    );
    assert!(!results[1].1.contains("index out of bounds"));
    let diagnostics: Vec<_> = log
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolResult { diagnostic, .. } => diagnostic,
            _ => None,
        })
        .collect();
    assert_eq!(diagnostics.len(), 2);
    assert!(diagnostics[0].contains("10.0.0.5:5432"));
    assert!(
        diagnostics[1].contains("panicked: index out of bounds"),
        "{diagnostics:?}"
    );
}
