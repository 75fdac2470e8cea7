//! The errors of steward-core.

/// What can go wrong when assembling agents or driving runs (as opposed to what a model or tool reports,
/// which becomes an observation or an [`crate::Outcome`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool's argument schema is not a valid JSON Schema.
    #[error("invalid argument schema: {0}")]
    InvalidSchema(String),
    /// Two tools share a name.
    #[error("a tool named `{0}` is already registered; tool names must be unique within an agent")]
    DuplicateTool(String),
    /// A tool name providers would reject.
    #[error("invalid tool name `{0}`: use 1 to 64 characters among letters, digits, `_` and `-`")]
    InvalidToolName(String),
    /// An agent could not be built: every problem [`crate::AgentBuilder::build`] found, in the order the
    /// tools were added.
    #[error("the agent `{agent}` cannot be built: {}", numbered(problems))]
    InvalidAgent {
        /// The agent's name.
        agent: String,
        /// What is wrong (invalid or duplicate tool names, schemas that do not compile).
        problems: Vec<Error>,
    },
    /// An approval decision for a call that is not waiting for one.
    #[error("tool call `{0}` is not waiting for approval")]
    NotAwaitingApproval(String),
    /// A result or decision for a call the run does not know.
    #[error("the run has no pending tool call `{0}`")]
    UnknownCall(String),
    /// A decision for a call id that matches no call waiting for approval, anywhere in the run tree.
    #[error(
        "no tool call `{call_id}` waits for approval; {}",
        waiting_list(waiting)
    )]
    NoSuchApproval {
        /// The id given.
        call_id: String,
        /// The ids that do wait (qualified by the path of agent-tool calls), in order.
        waiting: Vec<String>,
    },
    /// An edited approval whose arguments do not fit the tool's schema; the call keeps waiting.
    #[error("the edited arguments of tool call `{call_id}` are not valid: {problem}")]
    InvalidEdit {
        /// The call.
        call_id: String,
        /// What is wrong (the validator's observation).
        problem: String,
    },
    /// A decision routed to a tool that cannot hold suspended calls.
    #[error("tool `{tool}` cannot take a decision on `{call_id}`: it never suspends")]
    CannotSuspend {
        /// The tool.
        tool: String,
        /// The request's id, relative to the tool's call.
        call_id: String,
    },
    /// The saved state of a suspended call does not belong to the tool asked to go on with it.
    #[error("the suspended state of tool `{tool}` is not valid: {problem}")]
    InvalidSuspension {
        /// The tool.
        tool: String,
        /// What is wrong.
        problem: String,
    },
    /// A run method called in the wrong phase (a bug in the code driving the run).
    #[error("run driven out of order: {0}")]
    OutOfOrder(&'static str),
    /// A saved run or transcript could not be read or written.
    #[error("saved run: {0}")]
    Serde(#[from] serde_json::Error),
}

/// "waiting: `a`, `b`", or "nothing waits".
fn waiting_list(waiting: &[String]) -> String {
    if waiting.is_empty() {
        return "nothing in this run waits for approval".to_owned();
    }
    let ids: Vec<String> = waiting.iter().map(|id| format!("`{id}`")).collect();
    format!("waiting: {}", ids.join(", "))
}

/// `1) first; 2) second`, or just the problem when there is one.
fn numbered(problems: &[Error]) -> String {
    match problems {
        [one] => one.to_string(),
        many => many
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{}) {p}", i + 1))
            .collect::<Vec<_>>()
            .join("; "),
    }
}
