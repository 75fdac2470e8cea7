//! What one tool call may need from its run: which call it is, who asks, and the run's observer, policy and
//! budget.

use std::sync::Arc;

use crate::budget::RunBudget;
use crate::event::{NoObserver, Observer};
use crate::policy::{AnnotationPolicy, Policy};
use crate::principal::Principal;

/// Everything about one run that a tool call may need: which call it is, who asks, and the run's observer,
/// policy and budget. Sub-agents started by a call inherit the observer, policy, budget and principal, so a
/// router's specialists report to the same trace, obey the same policy and spend from the same budget.
#[derive(Clone)]
#[non_exhaustive]
pub struct ToolContext {
    /// The run the call belongs to.
    pub run_id: String,
    /// The id of the tool call (stable across retries: writes are keyed by it).
    pub call_id: String,
    /// The name of the agent that made the call.
    pub agent: String,
    /// The tool's name.
    pub tool: String,
    /// Who is asking (empty for the local CLI user).
    pub principal: Arc<Principal>,
    /// Where the run's events go.
    pub observer: Arc<dyn Observer>,
    /// The run's policy for tool calls.
    pub policy: Arc<dyn Policy>,
    /// The budget the whole run tree spends from.
    pub budget: Arc<RunBudget>,
    /// The tool whose outside data the calling run had read when it made the call (a sub-run it starts
    /// begins tainted by it).
    pub tainted_by: Option<String>,
    /// A dry run: the tool does everything it would (reads, computes, writes inside its transaction) and
    /// returns its real result, but rolls back: nothing is kept. Only tools that say they honour it are called
    /// so (a [`crate::TypedTool`] made with [`crate::TypedTool::previewed_by_dry_run`]).
    pub dry_run: bool,
    /// The calling run's change set when it stages writes ([`crate::Run::with_staging`]): a staged call
    /// replays these first; a sub-run continues them. `None`: the run does not stage.
    pub staged: Option<Vec<crate::run::StagedCall>>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("run_id", &self.run_id)
            .field("call_id", &self.call_id)
            .field("agent", &self.agent)
            .field("tool", &self.tool)
            .field("principal", &self.principal)
            .field("tainted_by", &self.tainted_by)
            .field("dry_run", &self.dry_run)
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// A context for one call, with the local principal, no observer, the default policy and an unlimited
    /// budget (the runner fills these from the run).
    pub fn new(
        run_id: impl Into<String>,
        call_id: impl Into<String>,
        agent: impl Into<String>,
    ) -> Self {
        Self {
            run_id: run_id.into(),
            call_id: call_id.into(),
            agent: agent.into(),
            tool: String::new(),
            principal: Arc::new(Principal::local()),
            observer: Arc::new(NoObserver),
            policy: Arc::new(AnnotationPolicy),
            budget: Arc::new(RunBudget::unlimited()),
            tainted_by: None,
            dry_run: false,
            staged: None,
        }
    }

    /// The same context naming the tool.
    pub fn with_tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = tool.into();
        self
    }

    /// The same context for another principal.
    pub fn with_principal(mut self, principal: Arc<Principal>) -> Self {
        self.principal = principal;
        self
    }

    /// The same context reporting to `observer`.
    pub fn with_observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.observer = observer;
        self
    }

    /// The same context with another policy.
    pub fn with_policy(mut self, policy: Arc<dyn Policy>) -> Self {
        self.policy = policy;
        self
    }

    /// The same context for a run that had read outside data from the tool `by` (`None`: none).
    pub fn with_taint(mut self, by: Option<&str>) -> Self {
        self.tainted_by = by.map(str::to_owned);
        self
    }

    /// The same context for a dry run: the tool keeps nothing it writes.
    pub fn with_dry_run(mut self) -> Self {
        self.dry_run = true;
        self
    }

    /// The same context in a run that stages writes, with its change set so far (`None`: it does not).
    pub fn with_staged(mut self, staged: Option<Vec<crate::run::StagedCall>>) -> Self {
        self.staged = staged;
        self
    }

    /// The same context spending from `budget`.
    pub fn with_budget(mut self, budget: Arc<RunBudget>) -> Self {
        self.budget = budget;
        self
    }
}

impl Default for ToolContext {
    fn default() -> Self {
        Self::new("", "", "")
    }
}
