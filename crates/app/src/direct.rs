//! One tool call made directly — by `steward tools call` or by an MCP client — rather than by a model in a run,
//! checked exactly as a run checks a model's call: the arguments against the tool's schema (a failure gives the
//! very observation a model gets), then the principal's policy (the role's tools, its approvals, write tools
//! declared in the config). What comes out says whether the call may run, waits for a person's approval, or was
//! refused, and with which words.
//!
//! ```no_run
//! # async fn example(app: &steward_app::App) -> Result<(), steward_app::AppError> {
//! use std::sync::Arc;
//! use steward_app::direct::Checked;
//! use steward_core::{Principal, ScriptedModel, ToolCall};
//!
//! let principal = Principal::local();
//! let call = ToolCall::new("c1", "run_sql", r#"{"sql": "SELECT 1"}"#);
//! let model = Arc::new(ScriptedModel::new([]));
//! match app.check_call("cli", &principal, app.policy(&principal), call, model)? {
//!     Checked::Allowed(call) => println!("{:?}", call.run().await),
//!     Checked::NeedsApproval(call, reason) => println!("`{}` waits: {reason}", call.call().name),
//!     Checked::Refused(refusal) => println!("{}", refusal.message()),
//! }
//! # Ok(()) }
//! ```

use std::sync::Arc;

use serde_json::Value;
use steward_core::{
    ApprovalRequest, Decision, Model, Policy as _, Principal, Tool, ToolCall, ToolContext,
    ToolError, ToolOutput, ToolSpec, Toolbox,
};

use crate::roles::{MarkedData, RolePolicy, reads_data};
use crate::{App, AppError};

/// What checking one direct call came to.
#[must_use]
pub enum Checked {
    /// Valid and allowed: run it with [`DirectCall::run`].
    Allowed(DirectCall),
    /// Valid, but the policy holds it for a person's approval, for the reason given; run it only once someone
    /// approved it.
    NeedsApproval(DirectCall, String),
    /// Refused before it ran.
    Refused(Refusal),
}

/// Why a direct call was refused before it ran.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The arguments do not pass the tool's schema (or are not JSON).
    Invalid {
        /// What a model is told: each field, what was wrong and how to fix it.
        observation: String,
    },
    /// The policy does not let this principal use the tool.
    Denied {
        /// Why, as the policy says it.
        reason: String,
    },
}

impl Refusal {
    /// The words a model in a run is told for the same call.
    pub fn message(&self) -> String {
        match self {
            Self::Invalid { observation } => observation.clone(),
            Self::Denied { reason } => format!(
                "Not allowed: {reason}. Do not retry this call; tell the user or choose another way."
            ),
        }
    }
}

/// A validated call, ready to run for its principal.
pub struct DirectCall {
    tool: Arc<dyn Tool>,
    call: ToolCall,
    args: Value,
    ctx: ToolContext,
    /// Its results are data from outside the run (see [`DirectCall::marking_data`]).
    reads_data: bool,
}

impl std::fmt::Debug for DirectCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectCall")
            .field("call", &self.call)
            .field("args", &self.args)
            .field("ctx", &self.ctx)
            .finish_non_exhaustive()
    }
}

impl DirectCall {
    /// The call as made.
    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// The tool's spec.
    pub fn spec(&self) -> &ToolSpec {
        self.tool.spec()
    }

    /// The validated arguments the tool runs with.
    pub fn arguments(&self) -> &Value {
        &self.args
    }

    /// The approval request for this call, for the policy's `reason`.
    pub fn request(&self, reason: impl Into<String>) -> ApprovalRequest {
        ApprovalRequest {
            call: self.call.clone(),
            reason: reason.into(),
        }
    }

    /// What the call would do, for the person asked to approve it, when the tool can say (nothing changes).
    pub async fn preview(&self) -> Option<String> {
        self.tool.preview(&self.ctx, self.args.clone()).await
    }

    /// The same call, its result marked as data (`<data source="…">…</data>`) when the tool reads data from
    /// outside Steward (rows, an HTTP response) and neither the config nor the role trusts it: the words a model
    /// in a run is shown, so that planted instructions read as data.
    pub fn marking_data(mut self) -> Self {
        if self.reads_data {
            self.tool = Arc::new(MarkedData { inner: self.tool });
            self.reads_data = false;
        }
        self
    }

    /// Runs the call for its principal, under its policy (sub-agents the tool starts obey it too).
    pub async fn run(self) -> Result<ToolOutput, ToolError> {
        self.tool.call(&self.ctx, self.args).await
    }
}

impl App {
    /// Checks `call` as a run checks a model's call: the tool must exist here (else
    /// [`AppError::UnknownTool`], or [`AppError::ToolNeeds`] when it needs a database this app lacks), its
    /// arguments must pass its schema, and `policy` (see [`App::policy`]) decides for `principal`. `origin`
    /// names where the call comes from (`cli`, `mcp`): the tool sees it as the run and the agent. `model` drives
    /// tools that call a model themselves.
    pub fn check_call(
        &self,
        origin: &str,
        principal: &Principal,
        policy: Arc<RolePolicy>,
        call: ToolCall,
        model: Arc<dyn Model>,
    ) -> Result<Checked, AppError> {
        let tool = self.tool_for(principal, &call.name, model)?;
        let trusted = self.trusted(self.role(principal).map(|(_, def)| def));
        let reads_data = reads_data(tool.spec(), &trusted);
        let mut toolbox = Toolbox::new();
        toolbox.add(tool)?;
        let (tool, args) = match toolbox.check(&call) {
            Ok((tool, args)) => (tool.clone(), args),
            Err(rejection) => {
                return Ok(Checked::Refused(Refusal::Invalid {
                    observation: rejection.observation,
                }));
            }
        };
        let decision = policy.decide(&call, tool.spec(), &args);
        let ctx = ToolContext::new(origin, call.id.as_str(), origin)
            .with_tool(call.name.as_str())
            .with_principal(Arc::new(principal.clone()))
            .with_observer(policy.clone())
            .with_policy(policy);
        let direct = DirectCall {
            tool,
            call,
            args,
            ctx,
            reads_data,
        };
        Ok(match decision {
            Decision::Deny { reason } => Checked::Refused(Refusal::Denied { reason }),
            Decision::NeedsApproval { reason } => Checked::NeedsApproval(direct, reason),
            Decision::Allow => Checked::Allowed(direct),
            // A decision this version does not know runs nothing.
            other => Checked::Refused(Refusal::Denied {
                reason: format!("the policy decided {other:?}, which Steward cannot carry out"),
            }),
        })
    }
}
