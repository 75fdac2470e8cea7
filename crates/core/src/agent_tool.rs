//! Agents as tools: a router is an agent whose tools are agents.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::agent::Agent;
use crate::model::Model;
use crate::outcome::Outcome;
use crate::runner::{RunStatus, Runner};
use crate::schema::schema_for;
use crate::tool::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
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

#[async_trait]
impl Tool for AgentTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn runs_agent(&self) -> bool {
        true
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: AgentRequest = parse_args(args)?;
        let runner = Runner::for_call(self.agent.clone(), self.model.clone(), ctx);
        let mut run = runner.start_for_call(&args.request, ctx);
        let name = &self.agent.name;
        match runner.drive(&mut run).await {
            RunStatus::Done(Outcome::Answered { answer }) => Ok(ToolOutput::text(answer)),
            RunStatus::Done(outcome) => Err(ToolError::new(format!(
                "The {name} agent did not finish ({outcome}). Tell the user what could not be done."
            ))),
            RunStatus::AwaitingApproval(requests) => Err(ToolError::new(format!(
                "The {name} agent needs a person's approval for {}, which it cannot ask for from here.",
                requests
                    .iter()
                    .map(|r| r.call.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}
