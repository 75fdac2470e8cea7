//! The audit trail at the tool-execution layer: every call a run makes is chained as `started` in the store
//! before its tool runs (written ahead, so that a process killed mid-call leaves "started, outcome unknown",
//! never an executed call with no record). Its outcome is chained once it settles, from the run's events (see
//! `store::trail`); a direct call ([`crate::direct::DirectCall::run`]) chains its own outcome.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use steward_core::{
    Approval, DecidedCall, Error, Tool, ToolCall, ToolContext, ToolError, ToolOutput, ToolProgress,
    ToolSpec,
};

use crate::store::{AuditRecord, RunStore};

/// Where a run or a call comes from: the same policy, approvals and audit hold on each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Surface {
    /// The terminal: `ask`, `chat`, `runs resume`, `tools call`.
    Cli,
    /// The server's API and web UI.
    Api,
    /// The OpenAI-compatible `/v1`.
    OpenAi,
    /// MCP, over stdio or HTTP.
    Mcp,
    /// `steward eval`.
    Eval,
}

impl Surface {
    /// Its name in the audit trail and the run store.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cli => "cli",
            Self::Api => "api",
            Self::OpenAi => "v1",
            Self::Mcp => "mcp",
            Self::Eval => "eval",
        }
    }
}

impl std::fmt::Display for Surface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a run's calls are chained.
#[derive(Clone, Debug)]
pub(crate) struct AuditTo {
    pub(crate) store: RunStore,
    pub(crate) surface: Surface,
}

impl AuditTo {
    /// Chains the intent of `call` (made in `ctx`'s run by `agent_path`) before it runs. An error means the
    /// call must not run.
    pub(crate) async fn started(
        &self,
        ctx: &ToolContext,
        agent_path: &str,
        call: &ToolCall,
    ) -> Result<(), ToolError> {
        let record = AuditRecord::of_call(
            &ctx.principal,
            &ctx.run_id,
            agent_path,
            call,
            Some(self.surface.as_str().to_owned()),
            "started",
        );
        self.store
            .append_audit(vec![record])
            .await
            .map(|_| ())
            .map_err(|e| {
                ToolError::new(
                    "Not run: the audit trail cannot be written, and no call runs unrecorded. Tell the user; \
                     the operator has the details.",
                )
                .for_people(
                    "Not run: the audit trail cannot be written, and no call runs unrecorded; the operator has \
                     the details.",
                )
                .with_diagnostic(format!("the audit trail of {}: {e}", self.store.url()))
            })
    }
}

/// A tool whose every call is chained as `started` before it runs.
pub(crate) struct Audited {
    pub(crate) inner: Arc<dyn Tool>,
    pub(crate) audit: AuditTo,
    /// The agents from the top run down to the one that owns this tool.
    pub(crate) agent_path: String,
}

impl Audited {
    async fn started(&self, ctx: &ToolContext, args: &Value) -> Result<(), ToolError> {
        let call = ToolCall::new(
            ctx.call_id.as_str(),
            self.inner.spec().name.as_str(),
            args.to_string(),
        );
        self.audit.started(ctx, &self.agent_path, &call).await
    }
}

#[async_trait]
impl Tool for Audited {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        // A dry run (a staged call) writes nothing: its record is `staged`, chained when it returns.
        if !ctx.dry_run {
            self.started(ctx, &args).await?;
        }
        self.inner.call(ctx, args).await
    }

    fn runs_agent(&self) -> bool {
        self.inner.runs_agent()
    }

    fn stages(&self) -> bool {
        self.inner.stages()
    }

    fn applier(&self) -> Option<std::sync::Arc<dyn steward_core::Applier>> {
        self.inner.applier()
    }

    async fn preview(&self, ctx: &ToolContext, args: Value) -> Option<String> {
        self.inner.preview(ctx, args).await
    }

    async fn call_or_suspend(&self, ctx: &ToolContext, args: Value) -> ToolProgress {
        if !ctx.dry_run
            && let Err(e) = self.started(ctx, &args).await
        {
            return ToolProgress::Done(Err(e));
        }
        self.inner.call_or_suspend(ctx, args).await
    }

    fn decide(
        &self,
        state: &mut Value,
        call_id: &str,
        approval: &Approval,
    ) -> Result<DecidedCall, Error> {
        self.inner.decide(state, call_id, approval)
    }

    fn cancel(&self, ctx: &ToolContext, state: Value) {
        self.inner.cancel(ctx, state);
    }

    async fn resume(&self, ctx: &ToolContext, state: Value) -> ToolProgress {
        self.inner.resume(ctx, state).await
    }
}
