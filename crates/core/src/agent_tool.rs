//! Agents as tools: a router is an agent whose tools are agents.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::agent::Agent;
use crate::event::{NoObserver, Observer};
use crate::model::Model;
use crate::outcome::Outcome;
use crate::policy::{AnnotationPolicy, Policy};
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
/// call (`<run id>/<call id>`), reported to the same observer; the answer is the tool's output.
pub struct AgentTool {
    agent: Arc<Agent>,
    model: Arc<dyn Model>,
    policy: Arc<dyn Policy>,
    observer: Arc<dyn Observer>,
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
        Self {
            agent,
            model,
            policy: Arc::new(AnnotationPolicy),
            observer: Arc::new(NoObserver),
            spec,
        }
    }

    /// The same tool with a policy for the sub-agent's calls.
    pub fn with_policy(mut self, policy: Arc<dyn Policy>) -> Self {
        self.policy = policy;
        self
    }

    /// The same tool reporting the sub-agent's events to `observer`.
    pub fn with_observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.observer = observer;
        self
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

    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: AgentRequest = parse_args(args)?;
        let runner = Runner::new(self.agent.clone(), self.model.clone())
            .with_policy(self.policy.clone())
            .with_observer(self.observer.clone());
        let mut run =
            runner.start_with_id(&args.request, format!("{}/{}", ctx.run_id, ctx.call_id));
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
