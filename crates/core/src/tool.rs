//! Tools: what the model may call, what a call returns, and how a call fails.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use std::sync::Arc;

use crate::budget::{Principal, RunBudget};
use crate::error::Error;
use crate::event::{NoObserver, Observer};
use crate::policy::{AnnotationPolicy, Approval, Policy};
use crate::schema::{self, SchemaStyle};
use crate::suspension::{DecidedCall, ToolProgress};

/// Hints about what a tool does, used by policies and UIs (the same vocabulary as MCP's tool annotations).
///
/// Built with chained setters, so that new hints can be added without breaking anyone:
///
/// ```
/// use steward_core::ToolAnnotations;
///
/// let hints = ToolAnnotations::new().read_only(true).idempotent(true).title("Order lookup");
/// assert!(hints.read_only && !hints.destructive);
/// assert_eq!(hints.title.as_deref(), Some("Order lookup"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// A human-readable name for UIs (MCP's `title`); the model calls the tool by its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool only reads; calls to read-only tools in one response may run concurrently.
    #[serde(default)]
    pub read_only: bool,
    /// The tool may destroy or overwrite data.
    #[serde(default)]
    pub destructive: bool,
    /// Calling the tool twice with the same arguments has the effect of calling it once.
    #[serde(default)]
    pub idempotent: bool,
    /// Every call waits for a person's approval before it runs.
    #[serde(default)]
    pub needs_approval: bool,
    /// The tool reaches outside systems (the web, a third-party API) rather than a closed set of Steward's
    /// own data (MCP's `openWorldHint`).
    #[serde(default)]
    pub open_world: bool,
}

impl ToolAnnotations {
    /// No hints: not read-only, not destructive, not idempotent, no approval, closed world, no title.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same hints with a human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same hints, saying whether the tool only reads.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// The same hints, saying whether the tool may destroy or overwrite data.
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.destructive = destructive;
        self
    }

    /// The same hints, saying whether a repeated call has the effect of one.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// The same hints, saying whether every call waits for a person's approval.
    pub fn needs_approval(mut self, needs_approval: bool) -> Self {
        self.needs_approval = needs_approval;
        self
    }

    /// The same hints, saying whether the tool reaches outside systems.
    pub fn open_world(mut self, open_world: bool) -> Self {
        self.open_world = open_world;
        self
    }
}

/// Everything the model and the validator need to know about a tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls the tool by (`^[a-zA-Z0-9_-]{1,64}$`).
    pub name: String,
    /// What the tool does and when to use it.
    pub description: String,
    /// The full JSON Schema of the arguments; the validator checks calls against it.
    pub parameters: Value,
    /// What the tool does to the world.
    #[serde(default)]
    pub annotations: ToolAnnotations,
    /// Show every parameter to the model as optional; the validator then reports what is missing.
    #[serde(default)]
    pub lenient: bool,
}

impl ToolSpec {
    /// A spec with the given name, description and argument schema, no annotations, not lenient.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
            annotations: ToolAnnotations::default(),
            lenient: false,
        }
    }

    /// The same spec with these annotations.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// The argument schema as the model is shown it, in the given style.
    pub fn model_parameters(&self, style: SchemaStyle) -> Value {
        schema::render(&self.parameters, style, self.lenient)
    }
}

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
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("run_id", &self.run_id)
            .field("call_id", &self.call_id)
            .field("agent", &self.agent)
            .field("tool", &self.tool)
            .field("principal", &self.principal)
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

/// Structured data a tool returns for UIs, beside the text the model sees.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolData {
    /// Rows and columns.
    Table {
        /// Column names.
        columns: Vec<String>,
        /// Rows, each as long as `columns`.
        rows: Vec<Vec<Value>>,
        /// True when more rows existed than were returned.
        #[serde(default)]
        truncated: bool,
    },
    /// A chart specification (Vega-Lite).
    Chart {
        /// The specification.
        spec: Value,
    },
    /// Any other JSON value.
    Json {
        /// The value.
        value: Value,
    },
}

/// The successful result of a tool call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// What the model is shown.
    pub content: String,
    /// Optional structured data for UIs; the model does not see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<ToolData>,
}

impl ToolOutput {
    /// An output with text only.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            data: None,
        }
    }

    /// An output whose text is the given value as compact JSON, also kept as structured data.
    pub fn json(value: Value) -> Self {
        Self {
            content: value.to_string(),
            data: Some(ToolData::Json { value }),
        }
    }

    /// The same output with structured data attached.
    pub fn with_data(mut self, data: ToolData) -> Self {
        self.data = Some(data);
        self
    }
}

/// A failed tool call.
///
/// `message` is what the model is told (what went wrong and what to do); `diagnostic` is for the operator
/// only (the cause, with context) and never reaches the model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{message}")]
pub struct ToolError {
    /// What the model is told.
    pub message: String,
    /// What the operator is told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostic: Option<String>,
}

impl ToolError {
    /// An error the model can act on.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            diagnostic: None,
        }
    }

    /// An internal failure: the model is told only that the tool failed, the operator gets the cause.
    pub fn internal(diagnostic: impl Into<String>) -> Self {
        Self {
            message: "The tool failed because of an internal error; the operator has the details. \
                      Tell the user the action could not be completed."
                .to_owned(),
            diagnostic: Some(diagnostic.into()),
        }
    }

    /// The same error with an operator diagnostic attached.
    pub fn with_diagnostic(mut self, diagnostic: impl Into<String>) -> Self {
        self.diagnostic = Some(diagnostic.into());
        self
    }
}

/// Something the model can call.
///
/// Most tools are written with [`crate::TypedTool`], which derives the schema from a Rust type and
/// deserialises the arguments; implement this trait directly for tools whose schema is only known at run
/// time (for example one declared in a config file).
#[async_trait]
pub trait Tool: Send + Sync {
    /// The tool's name, description, schema and annotations.
    fn spec(&self) -> &ToolSpec;

    /// Runs the tool. `args` has already been validated against `spec().parameters`.
    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError>;

    /// True when the tool runs another agent on the run's model (a sub-agent). A replay then runs the tool,
    /// and the sub-agent's own calls are replayed one by one (see [`crate::Model::tool_replay`]).
    fn runs_agent(&self) -> bool {
        false
    }

    /// What a call with `args` would do, for the person asked to approve it (for a SQL write: the rows it
    /// would change, found in a transaction that is rolled back). `None` (the default): nothing to show
    /// beyond the call itself. Nothing may change.
    async fn preview(&self, ctx: &ToolContext, args: Value) -> Option<String> {
        let _ = (ctx, args);
        None
    }

    /// Runs the tool as the runner does: it may finish, or stop because calls it made wait for a person and
    /// hand back a [`crate::Suspension`] that the caller's run keeps (an agent tool whose sub-agent waits). By
    /// default the tool runs to its end with [`Tool::call`].
    async fn call_or_suspend(&self, ctx: &ToolContext, args: Value) -> ToolProgress {
        ToolProgress::Done(self.call(ctx, args).await)
    }

    /// Records a person's decision on the request `call_id` (an id of the suspension's requests) inside a
    /// suspension's `state`, checking it as a decision on the waiting call itself would be (an edit against the
    /// tool's schema). Says where the decision landed. Tools that never suspend refuse.
    fn decide(
        &self,
        state: &mut Value,
        call_id: &str,
        approval: &Approval,
    ) -> Result<DecidedCall, Error> {
        let _ = (state, approval);
        Err(Error::CannotSuspend {
            tool: self.spec().name.clone(),
            call_id: call_id.to_owned(),
        })
    }

    /// Ends a suspended call that will never go on (the caller's run was cancelled), so that what it started
    /// is reported as ended too. By default there is nothing to end.
    fn cancel(&self, ctx: &ToolContext, state: Value) {
        let _ = (ctx, state);
    }

    /// Goes on from a suspension whose every request has a decision: finishes, or stops again with new
    /// requests. `ctx` is the context of the call being resumed. Tools that never suspend fail.
    async fn resume(&self, ctx: &ToolContext, state: Value) -> ToolProgress {
        let _ = (ctx, state);
        ToolProgress::Done(Err(ToolError::internal(format!(
            "tool `{}` cannot resume a suspended call: it never suspends",
            self.spec().name
        ))))
    }
}
