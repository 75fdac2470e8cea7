//! One tool call made directly — by `steward tools call` or by an MCP client — rather than by a model in a run,
//! checked exactly as a run checks a model's call: the arguments against the tool's schema (a failure gives the
//! very observation a model gets), then the principal's policy (the role's tools, its approvals, write tools
//! declared in the config). What comes out says whether the call may run, waits for a person's approval, or was
//! refused, and with which words.
//!
//! With a run store, every direct call is in the audit trail as a run's calls are: a refusal when it is
//! refused, the intent before the tool runs (`started`, written ahead), and how it ended after.
//!
//! ```no_run
//! # async fn example(app: &steward_app::App) -> Result<(), steward_app::AppError> {
//! use steward_app::Surface;
//! use steward_app::direct::Checked;
//! use steward_core::{Principal, ToolCall};
//!
//! let principal = Principal::local();
//! let call = ToolCall::new("c1", "run_sql", r#"{"sql": "SELECT 1"}"#);
//! // No model: run_sql does not run one.
//! match app.check_call(Surface::Cli, &principal, call, None, None).await? {
//!     Checked::Allowed(call) => println!("{:?}", call.run().await),
//!     Checked::NeedsApproval(call, reason) => println!("`{}` waits: {reason}", call.call().name),
//!     Checked::Refused(refusal) => println!("{}", refusal.message()),
//! }
//! # Ok(()) }
//! ```

use std::sync::Arc;

use serde_json::Value;
use steward_core::{
    ApprovalRequest, Decision, Model, Policy as _, Principal, RunFacts, StagedCall, Tool, ToolCall,
    ToolContext, ToolError, ToolOutput, ToolSpec, Toolbox,
};

use crate::audited::{AuditTo, Surface};
use crate::roles::MarkedData;
use crate::store::AuditRecord;
use crate::telemetry::{DirectSpan, Telemetry};
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
        /// The same for a person (see [`steward_core::Rejection::for_person`]).
        person: String,
    },
    /// The policy does not let this principal use the tool.
    Denied {
        /// Why, as the policy says it.
        reason: String,
    },
}

impl Refusal {
    /// The words a person is told: what is wrong, without the advice meant for a model.
    pub fn for_person(&self) -> String {
        match self {
            Self::Invalid { person, .. } => person.clone(),
            Self::Denied { reason } => format!("not allowed: {reason}"),
        }
    }

    /// The words a model in a run is told for the same call.
    pub fn message(&self) -> String {
        match self {
            Self::Invalid { observation, .. } => observation.clone(),
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
    /// Its result is data from outside (whether or not it is marked): a session that made it has read data.
    taints: bool,
    /// Where it is chained in the audit trail (`None`: no run store).
    audit: Option<AuditTo>,
    /// Why it waited for approval, and who approved it.
    approval: Option<(String, String)>,
    /// The policy held it for review (not a role's own `approve` list): it may be staged instead of waiting.
    review: bool,
    /// Where its span goes, when calls are traced.
    telemetry: Option<Telemetry>,
    /// Why its principal may not approve it themselves (four eyes).
    own_refused: Option<String>,
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

    /// The agent it is recorded under.
    pub fn agent(&self) -> &str {
        &self.ctx.agent
    }

    /// The tool's spec.
    pub fn spec(&self) -> &ToolSpec {
        self.tool.spec()
    }

    /// True when running this call reads data from outside (rows, a response): a session that makes it should
    /// pass the tool's name as `tainted_by` to its later calls (see [`App::check_call`]).
    pub fn reads_outside_data(&self) -> bool {
        self.taints
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

    /// Why its own principal may not approve it (four eyes: their role's `approve_by` or `self_approval:
    /// false`), with who may; `None` when they may.
    pub fn own_approval_refused(&self) -> Option<&str> {
        self.own_refused.as_deref()
    }

    /// The same call, approved by its own principal (the person at a terminal) after it waited for `reason`
    /// (its audit records say so); refused when their role's four eyes forbid it.
    pub fn approved_here(mut self, reason: impl Into<String>) -> Result<Self, AppError> {
        if let Some(why) = self.own_refused.take() {
            return Err(AppError::Forbidden(why));
        }
        let by = if self.ctx.principal.is_local() {
            String::new()
        } else {
            self.ctx.principal.name.clone()
        };
        self.approval = Some((reason.into(), by));
        Ok(self)
    }

    /// Records that the call, which waited for approval for `reason`, was not run: `why` (a person said no,
    /// or no one could approve it here). An error only when the audit trail cannot be written.
    pub async fn not_run(self, reason: &str, why: &str) -> Result<(), AppError> {
        self.trace(chrono::Utc::now(), Some("rejected"), None);
        let mut record = self.record("rejected");
        record.decision = "approval".to_owned();
        record.decision_reason = Some(reason.to_owned());
        record.approval = Some("rejected".to_owned());
        record.approval_reason = Some(why.to_owned());
        self.chain(record).await
    }

    /// True when this call, held for approval, may be staged in a change set instead ([`DirectCall::stage`]):
    /// the policy held it for review (a role's own `approve` list asks for each call on its own), and the tool
    /// can be staged.
    pub fn stageable(&self) -> bool {
        self.review && self.tool.stages()
    }

    /// Stages the call, held for review for `reason`, after the writes `earlier` of the same change set: the
    /// tool runs in a transaction that replays them first and is rolled back, so nothing is written, and its
    /// real result is returned with the call (chained in the audit trail as `staged`).
    pub async fn stage(
        &self,
        reason: &str,
        earlier: Vec<StagedCall>,
    ) -> Result<StagedCall, ToolError> {
        let ctx = self.ctx.clone().with_staged(Some(earlier)).with_dry_run();
        let start = chrono::Utc::now();
        let result = self.tool.call(&ctx, self.args.clone()).await;
        self.trace(
            start,
            Some("staged"),
            result.is_err().then_some("tool_error"),
        );
        let mut record = self.record(if result.is_ok() { "staged" } else { "error" });
        record.decision = "approval".to_owned();
        record.decision_reason = Some(reason.to_owned());
        record.arguments = self.args.to_string();
        if let Err(e) = self.chain(record).await {
            return Err(ToolError::internal(format!(
                "the staged call could not be recorded in the audit trail: {e}"
            )));
        }
        let output = result?;
        Ok(StagedCall {
            run_id: self.ctx.run_id.clone(),
            call: self.call.clone(),
            args: self.args.clone(),
            reason: reason.to_owned(),
            output,
        })
    }

    /// Runs the call for its principal, under its policy (sub-agents the tool starts obey it too). With a run
    /// store, its intent is chained before the tool runs (when that fails, the tool does not run) and its
    /// outcome after.
    pub async fn run(self) -> Result<ToolOutput, ToolError> {
        if let Some(audit) = &self.audit {
            audit
                .started(&self.ctx, self.ctx.agent.as_str(), &self.call)
                .await?;
        }
        let start = chrono::Utc::now();
        let result = self.tool.call(&self.ctx, self.args.clone()).await;
        let decision = self.approval.as_ref().map(|_| "approved");
        self.trace(start, decision, result.is_err().then_some("tool_error"));
        if self.audit.is_some() {
            let record = self.record(if result.is_ok() { "ok" } else { "error" });
            if let Err(e) = self.chain(record).await {
                // The call ran and its intent is chained; its outcome is what could not be written.
                let diagnostic = format!(
                    "the outcome of {} is not in the audit trail: {e}",
                    self.call.id
                );
                return match result {
                    Ok(output) => Ok(output),
                    Err(error) => Err(error.with_diagnostic(diagnostic)),
                };
            }
        }
        result
    }

    /// Sends the call's span, when calls are traced.
    fn trace(
        &self,
        start: chrono::DateTime<chrono::Utc>,
        decision: Option<&str>,
        failure: Option<&str>,
    ) {
        trace(
            self.telemetry.as_ref(),
            &self.ctx,
            &self.call,
            start,
            (decision, failure),
        );
    }

    /// The audit record of this call with `status`.
    fn record(&self, status: &str) -> AuditRecord {
        let mut record = AuditRecord::of_call(
            &self.ctx.principal,
            &self.ctx.run_id,
            &self.ctx.agent,
            &self.call,
            self.audit.as_ref().map(|a| a.surface.as_str().to_owned()),
            status,
        );
        if let Some((reason, by)) = &self.approval {
            record.decision = "approval".to_owned();
            record.decision_reason = Some(reason.clone());
            record.approval = Some("approved".to_owned());
            record.approved_by = Some(by.clone());
        }
        record
    }

    async fn chain(&self, record: AuditRecord) -> Result<(), AppError> {
        if let Some(audit) = &self.audit {
            audit.store.append_audit(vec![record]).await?;
        }
        Ok(())
    }
}

impl App {
    /// Checks `call` as a run checks a model's call: the tool must exist here (else
    /// [`AppError::UnknownTool`], or [`AppError::ToolNeeds`] when it needs a database this app lacks or a model
    /// it was not given), its arguments must pass its schema, and the role's policy (see [`App::policy`])
    /// decides for `principal`. `surface` names where the call comes from: the tool sees it as the run and the
    /// agent, and the audit trail keeps it; a refusal is chained there at once. `model` drives a tool that runs
    /// a model itself (`ask_database`); the others need none.
    /// `tainted_by` names a tool whose outside data the caller's session read before (an MCP session): a write
    /// then waits for approval, as in a run.
    pub async fn check_call(
        &self,
        surface: Surface,
        principal: &Principal,
        call: ToolCall,
        model: Option<Arc<dyn Model>>,
        tainted_by: Option<&str>,
    ) -> Result<Checked, AppError> {
        let origin = surface.as_str();
        self.check_role(principal)?;
        let policy = self.policy(principal);
        let facts = RunFacts::tainted_by(tainted_by);
        let audit = self.store.clone().map(|store| AuditTo { store, surface });
        let ctx = ToolContext::new(origin, call.id.as_str(), origin)
            .with_tool(call.name.as_str())
            .with_principal(Arc::new(principal.clone()))
            .with_policy(policy.clone())
            .with_taint(tainted_by);
        let tool = match self.build_tool(&call.name, model, Some(principal)) {
            Ok(tool) => tool,
            Err(needs @ AppError::ToolNeeds { .. }) => {
                // A tool this call cannot run here is still refused for the role first, and chained, as any
                // call the role may not make is.
                if let Ok(spec) = self.tool_spec(&call.name, Some(principal)) {
                    let args = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
                    if let Decision::Deny { reason } = policy.decide(&call, &spec, &args, facts) {
                        let refusal = Refusal::Denied { reason };
                        refused(
                            audit.as_ref(),
                            self.telemetry.as_ref(),
                            &ctx,
                            &call,
                            &refusal,
                        )
                        .await?;
                        return Ok(Checked::Refused(refusal));
                    }
                }
                return Err(needs);
            }
            Err(other) => return Err(other),
        };
        let reads_data = policy.taints(tool.spec());
        let mut toolbox = Toolbox::new();
        toolbox.add(tool)?;
        let (tool, args) = match toolbox.check(&call) {
            Ok((tool, args)) => (tool.clone(), args),
            Err(rejection) => {
                let refusal = Refusal::Invalid {
                    person: rejection.for_person(&call.name),
                    observation: rejection.observation,
                };
                refused(
                    audit.as_ref(),
                    self.telemetry.as_ref(),
                    &ctx,
                    &call,
                    &refusal,
                )
                .await?;
                return Ok(Checked::Refused(refusal));
            }
        };
        let decision = policy.decide(&call, tool.spec(), &args, facts);
        let direct = DirectCall {
            tool,
            call,
            args,
            ctx,
            reads_data,
            taints: reads_data,
            audit,
            approval: None,
            review: matches!(decision, Decision::Review { .. }),
            telemetry: self.telemetry.clone(),
            own_refused: self.config.four_eyes(principal, principal).err(),
        };
        let refusal = match decision {
            Decision::Deny { reason } => Refusal::Denied { reason },
            Decision::NeedsApproval { reason } | Decision::Review { reason } => {
                return Ok(Checked::NeedsApproval(direct, reason));
            }
            Decision::Allow => return Ok(Checked::Allowed(direct)),
            // A decision this version does not know runs nothing.
            other => Refusal::Denied {
                reason: format!("the policy decided {other:?}, which Steward cannot carry out"),
            },
        };
        refused(
            direct.audit.as_ref(),
            direct.telemetry.as_ref(),
            &direct.ctx,
            &direct.call,
            &refusal,
        )
        .await?;
        Ok(Checked::Refused(refusal))
    }
}

/// Sends the span of a direct call, when calls are traced: `outcome` is how it was decided and how it failed.
fn trace(
    telemetry: Option<&Telemetry>,
    ctx: &ToolContext,
    call: &ToolCall,
    start: chrono::DateTime<chrono::Utc>,
    (decision, failure): (Option<&str>, Option<&str>),
) {
    if let Some(telemetry) = telemetry {
        telemetry.direct_call(&DirectSpan {
            tool: &call.name,
            call_id: &call.id,
            surface: ctx.run_id.as_str(),
            principal: &ctx.principal.name,
            start,
            decision,
            failure,
        });
    }
}

/// Chains a refused direct call in the audit trail (`invalid` or `denied`, with why) and sends its span.
async fn refused(
    audit: Option<&AuditTo>,
    telemetry: Option<&Telemetry>,
    ctx: &ToolContext,
    call: &ToolCall,
    refusal: &Refusal,
) -> Result<(), AppError> {
    let (status, reason, failure) = match refusal {
        Refusal::Invalid { observation, .. } => ("invalid", observation, "invalid_arguments"),
        Refusal::Denied { reason } => ("denied", reason, "denied"),
    };
    trace(
        telemetry,
        ctx,
        call,
        chrono::Utc::now(),
        (Some(status), Some(failure)),
    );
    let Some(audit) = audit else {
        return Ok(());
    };
    let mut record = AuditRecord::of_call(
        &ctx.principal,
        &ctx.run_id,
        &ctx.agent,
        call,
        Some(audit.surface.as_str().to_owned()),
        status,
    );
    record.decision = status.to_owned();
    record.decision_reason = Some(reason.clone());
    audit.store.append_audit(vec![record]).await?;
    Ok(())
}
