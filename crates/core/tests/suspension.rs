//! Suspended tool calls, with a tool of its own (not a sub-agent): a call may stop until a person decides
//! something it asks, the run waits with it and shows the request under the call's id, the decision is
//! routed to the tool, and the tool goes on. A tool that suspends wrongly fails instead of hanging the run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use async_trait::async_trait;
use common::*;
use serde_json::{Value, json};
use steward_core::{
    Approval, ApprovalRequest, DecidedCall, Error, ModelResponse, Run, RunStatus, ScriptedModel,
    Suspension, Tool, ToolCall, ToolContext, ToolError, ToolOutput, ToolProgress, ToolSpec,
    Toolbox,
};

/// A transfer that needs a second person's sign-off, asked from inside the call.
struct Transfer {
    spec: ToolSpec,
    /// Amounts actually sent.
    sent: Calls<u64>,
    /// When true, the tool suspends without saying what waits (a bug the run must survive).
    broken: bool,
}

impl Transfer {
    fn new(sent: Calls<u64>, broken: bool) -> Self {
        let spec = ToolSpec::new(
            "transfer",
            "Sends money.",
            json!({"type": "object", "properties": {"amount": {"type": "integer"}}, "required": ["amount"]}),
        );
        Self { spec, sent, broken }
    }
}

#[async_trait]
impl Tool for Transfer {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, _ctx: &ToolContext, _args: Value) -> Result<ToolOutput, ToolError> {
        Err(ToolError::new("a transfer needs a sign-off"))
    }

    async fn call_or_suspend(&self, _ctx: &ToolContext, args: Value) -> ToolProgress {
        let requests = if self.broken {
            Vec::new()
        } else {
            vec![ApprovalRequest {
                call: ToolCall::new("sign", "sign_off", args.to_string()),
                reason: format!("second signature for a transfer of {}", args["amount"]),
            }]
        };
        ToolProgress::Suspended(Suspension::new(json!({"amount": args["amount"]}), requests))
    }

    fn decide(
        &self,
        state: &mut Value,
        call_id: &str,
        approval: &Approval,
    ) -> Result<DecidedCall, Error> {
        assert_eq!(call_id, "sign", "only its own request is routed to it");
        state["signed"] = json!(matches!(approval, Approval::Approve));
        Ok(DecidedCall::new("bank", None, call_id))
    }

    async fn resume(&self, ctx: &ToolContext, state: Value) -> ToolProgress {
        assert_eq!(ctx.tool, "transfer");
        let amount = state["amount"].as_u64().unwrap();
        ToolProgress::Done(if state["signed"] == json!(true) {
            self.sent.push(amount);
            Ok(ToolOutput::text(format!("Sent {amount}.")))
        } else {
            Err(ToolError::new("The second signer refused the transfer."))
        })
    }
}

fn run_with(broken: bool, script: Vec<ModelResponse>) -> (steward_core::Runner, Calls<u64>) {
    let sent = Calls::default();
    let tools = Toolbox::new()
        .with(current_date())
        .unwrap()
        .with(Transfer::new(sent.clone(), broken))
        .unwrap();
    let (runner, _) = runner(agent(tools), Arc::new(ScriptedModel::new(script)));
    (runner, sent)
}

fn transfer_reply() -> ModelResponse {
    calls(&[
        ("t1", "transfer", r#"{"amount": 500}"#),
        ("c1", "current_date", "{}"),
    ])
}

#[tokio::test]
async fn a_suspended_call_waits_under_its_id_and_goes_on_after_the_decision() {
    let (runner, sent) = run_with(false, vec![transfer_reply(), ModelResponse::text("Sent.")]);
    let (run, status) = runner.run("send 500").await;
    let RunStatus::AwaitingApproval(requests) = status else {
        panic!("expected to wait, got {status:?}");
    };
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].call.id, "t1/sign");
    assert_eq!(requests[0].call.name, "sign_off");
    assert_eq!(requests[0].reason, "second signature for a transfer of 500");
    assert!(
        tool_results(&run).is_empty(),
        "the later call waits for the suspended one: calls run in order"
    );

    // Through JSON, as another process would.
    let mut run: Run = serde_json::from_str(&serde_json::to_string(&run).unwrap()).unwrap();
    let status = runner
        .resume(&mut run, "t1/sign", Approval::Approve)
        .await
        .unwrap();
    assert_eq!(answer(&status), "Sent.");
    assert_eq!(sent.all(), [500]);
    assert_eq!(
        tool_results(&run),
        [
            ("t1".into(), "Sent 500.".into(), false),
            ("c1".into(), "2026-11-21 (Saturday)".into(), false),
        ]
    );
}

#[tokio::test]
async fn a_refused_sign_off_is_the_calls_error() {
    let (runner, sent) = run_with(
        false,
        vec![transfer_reply(), ModelResponse::text("Refused.")],
    );
    let (mut run, _) = runner.run("send 500").await;
    let status = runner
        .resume(&mut run, "t1/sign", Approval::Reject { reason: None })
        .await
        .unwrap();
    assert_eq!(answer(&status), "Refused.");
    assert!(sent.all().is_empty());
    assert_eq!(
        tool_results(&run)[0],
        (
            "t1".into(),
            "The second signer refused the transfer.".into(),
            true
        )
    );
}

#[tokio::test]
async fn a_tool_that_suspends_without_requests_fails_instead_of_hanging() {
    let (runner, sent) = run_with(true, vec![transfer_reply(), ModelResponse::text("Failed.")]);
    let (run, status) = runner.run("send 500").await;
    assert_eq!(answer(&status), "Failed.");
    assert!(sent.all().is_empty());
    let (id, content, is_error) = &tool_results(&run)[0];
    assert_eq!(id, "t1");
    assert!(is_error);
    assert!(content.contains("internal error"), "{content}");
}

#[tokio::test]
async fn a_decision_under_a_call_that_is_not_suspended_matches_nothing() {
    // `c1` (current_date) is not suspended: nothing waits under it.
    let (runner, _) = run_with(false, vec![transfer_reply()]);
    let (mut run, _) = runner.run("send 500").await;
    let error = runner
        .decide(&mut run, "c1/sign", Approval::Approve)
        .unwrap_err();
    assert!(
        matches!(&error, Error::NoSuchApproval { waiting, .. } if waiting == &["t1/sign".to_owned()]),
        "{error:?}"
    );
}
