//! Agents as tools: a router is an agent whose tools are agents.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::agent::Agent;
use crate::approval::Approval;
use crate::approval::ApprovalRequest;
use crate::context::ToolContext;
use crate::error::Error;
use crate::model::Model;
use crate::outcome::Outcome;
use crate::spec::ToolSpec;

use crate::run::Run;
use crate::runner::{RunStatus, Runner};
use crate::schema::schema_for;
use crate::suspension::{DecidedCall, Suspension, ToolProgress, agent_reason};
use crate::tool::{Tool, ToolError, ToolOutput};
use crate::typed::parse_args;

/// Arguments of an agent used as a tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentRequest {
    /// The user's request for this agent, in full: every detail the user gave (names, dates, amounts, codes).
    pub request: String,
}

/// An [`Agent`] that other agents call as a tool. Each call is a run of its own, whose id is derived from the
/// call (`<run id>/<call id>`) and whose parent is the caller's run. It inherits everything about the caller's
/// run from the call's [`ToolContext`]: the observer, the policy, the principal and the budget, so its events
/// are part of the trace and its tokens count against the caller's limit. The answer is the tool's output.
///
/// When a call of the sub-agent waits for a person's approval, the call suspends: the caller's run keeps the
/// whole sub-run (as JSON, so it survives a restart) and waits too, showing the sub-agent's requests with the
/// agent's name in front of the reason (`[expenses] …`). Decisions are routed down to the sub-run
/// ([`Tool::decide`]); once all are in, the caller's runner resumes it ([`Tool::resume`]) with the caller's
/// observer, policy, principal and budget, and its answer becomes the call's result. This works at any depth.
pub struct AgentTool {
    agent: Arc<Agent>,
    model: Arc<dyn Model>,
    spec: ToolSpec,
}

impl std::fmt::Debug for AgentTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentTool")
            .field("agent", &self.agent.name)
            .finish_non_exhaustive()
    }
}

impl AgentTool {
    /// `agent`, driven by `model`, as a tool named after it and described by its description.
    pub fn new(agent: Arc<Agent>, model: Arc<dyn Model>) -> Self {
        let spec = ToolSpec::new(
            agent.name.clone(),
            agent.description.clone(),
            schema_for::<AgentRequest>(),
        );
        Self { agent, model, spec }
    }

    /// The agent.
    pub fn agent(&self) -> &Arc<Agent> {
        &self.agent
    }
}

impl AgentTool {
    /// What a sub-run's status comes to as the call's progress: its answer, an error the caller's model can
    /// act on, or a suspension that keeps the whole sub-run.
    fn progress(&self, run: &Run, status: RunStatus) -> ToolProgress {
        let name = &self.agent.name;
        let failed = |error: ToolError| {
            let mut error = error;
            error.tainted_by = run.tainted_by().map(str::to_owned);
            ToolProgress::Done(Err(error))
        };
        match status {
            RunStatus::Done(Outcome::Answered { answer }) => {
                let mut output = ToolOutput::text(answer).with_taint(run.tainted_by());
                output.staged = run.staged().to_vec();
                ToolProgress::Done(Ok(output))
            }
            RunStatus::Done(outcome) => failed(
                ToolError::new(format!(
                    "The {name} agent did not finish ({outcome}). Tell the user what could not be done."
                ))
                .for_people(format!("The {name} agent did not finish ({outcome}).")),
            ),
            RunStatus::AwaitingApproval(requests) => {
                let state = match serde_json::to_value(run) {
                    Ok(state) => state,
                    Err(error) => {
                        return ToolProgress::Done(Err(ToolError::internal(format!(
                            "the {name} agent waits for approval, but its run could not be saved: {error}"
                        ))));
                    }
                };
                let requests = requests
                    .into_iter()
                    .map(|request| {
                        let nested = !run.awaits_directly(&request.call.id);
                        ApprovalRequest {
                            reason: agent_reason(name, &request.reason, nested),
                            call: request.call,
                        }
                    })
                    .collect();
                ToolProgress::Suspended(Suspension::new(state, requests))
            }
        }
    }

    /// The sub-run kept in a suspension's state; it must be a run of this tool's agent.
    fn saved_run(&self, state: &Value) -> Result<Run, Error> {
        let invalid = |problem: String| Error::InvalidSuspension {
            tool: self.spec.name.clone(),
            problem,
        };
        let run = Run::deserialize(state).map_err(|e| invalid(e.to_string()))?;
        if run.agent() != self.agent.name {
            return Err(invalid(format!(
                "it holds a run of the agent `{}`, not of `{}`",
                run.agent(),
                self.agent.name
            )));
        }
        Ok(run)
    }
}

#[async_trait]
impl Tool for AgentTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn runs_agent(&self) -> bool {
        true
    }

    /// Runs the sub-agent to its end. A sub-agent that waits for approval cannot be resumed from here (its
    /// run is dropped): that is an error the caller's model is shown. Runners call
    /// [`Tool::call_or_suspend`] instead, which keeps the sub-run and waits.
    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        match self.call_or_suspend(ctx, args).await {
            ToolProgress::Done(result) => result,
            ToolProgress::Suspended(suspension) => Err(ToolError::new(format!(
                "The {} agent needs a person's approval for {}, which it cannot ask for from here.",
                self.agent.name,
                suspension
                    .requests
                    .iter()
                    .map(|r| r.call.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    async fn call_or_suspend(&self, ctx: &ToolContext, args: Value) -> ToolProgress {
        let args: AgentRequest = match parse_args(args) {
            Ok(args) => args,
            Err(error) => return ToolProgress::Done(Err(error)),
        };
        let runner = Runner::for_call(self.agent.clone(), self.model.clone(), ctx);
        let mut run = runner.start_for_call(&args.request, ctx);
        let status = runner.drive(&mut run).await;
        self.progress(&run, status)
    }

    fn decide(
        &self,
        state: &mut Value,
        call_id: &str,
        approval: &Approval,
    ) -> Result<DecidedCall, Error> {
        let mut run = self.saved_run(state)?;
        let landed = run.decide(call_id, approval, &self.agent.tools)?;
        *state = serde_json::to_value(&run)?;
        Ok(landed)
    }

    /// Cancels the sub-run (and any sub-run suspended below it), reporting each as ended.
    fn cancel(&self, ctx: &ToolContext, state: Value) {
        if let Ok(mut run) = self.saved_run(&state) {
            Runner::for_call(self.agent.clone(), self.model.clone(), ctx).cancel(&mut run);
        }
    }

    async fn resume(&self, ctx: &ToolContext, state: Value) -> ToolProgress {
        let mut run = match self.saved_run(&state) {
            Ok(run) => run,
            Err(error) => return ToolProgress::Done(Err(ToolError::internal(error.to_string()))),
        };
        let runner = Runner::for_call(self.agent.clone(), self.model.clone(), ctx);
        let status = runner.drive(&mut run).await;
        self.progress(&run, status)
    }
}
