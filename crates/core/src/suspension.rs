//! Suspended tool calls: a call that stops because calls it made wait for a person (a sub-agent whose write
//! needs approval), keeps its whole state in the caller's run, and goes on once every decision is in.
//!
//! The run tree waits as one: the call's [`Suspension`] is stored in the caller's [`crate::Run`], its
//! requests are shown to the person with the call's id in front (`<call id>/<inner call id>`), a decision is
//! routed down to the tool ([`crate::Tool::decide`]) and, once every request has one, the runner asks the tool
//! to go on ([`crate::Tool::resume`]). Because the state is JSON inside the run, all of it survives a restart.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approval::ApprovalRequest;
use crate::tool::{ToolError, ToolOutput};

/// What a tool call came to: finished, or stopped until people decide on calls it made.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ToolProgress {
    /// The call finished with this result.
    Done(Result<ToolOutput, ToolError>),
    /// The call waits for decisions; the caller's run keeps the state and waits too.
    Suspended(Suspension),
}

impl From<Result<ToolOutput, ToolError>> for ToolProgress {
    fn from(result: Result<ToolOutput, ToolError>) -> Self {
        Self::Done(result)
    }
}

/// The state of a tool call that waits for people's decisions, kept in the caller's run until it goes on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Suspension {
    /// Everything the tool needs to go on, as JSON (an agent tool keeps its sub-agent's whole run here). Only
    /// the tool that made it reads it.
    pub state: Value,
    /// What waits, with call ids relative to the suspended call (each unique, not empty) and reasons as the
    /// person should read them.
    pub requests: Vec<ApprovalRequest>,
}

impl Suspension {
    /// A suspension with the tool's state and what waits.
    pub fn new(state: Value, requests: Vec<ApprovalRequest>) -> Self {
        Self { state, requests }
    }
}

/// Where a decision landed: the run whose call waited, and that call's own id in it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecidedCall {
    /// The run whose call waited (a sub-run's id is `<parent run id>/<call id>`).
    pub run_id: String,
    /// That run's parent, if any.
    pub parent_run_id: Option<String>,
    /// The call's id within that run.
    pub call_id: String,
}

impl DecidedCall {
    /// The call `call_id` of the run `run_id`, whose parent is `parent_run_id`.
    pub fn new(
        run_id: impl Into<String>,
        parent_run_id: Option<String>,
        call_id: impl Into<String>,
    ) -> Self {
        Self {
            run_id: run_id.into(),
            parent_run_id,
            call_id: call_id.into(),
        }
    }
}

/// The id a person decides a request by, seen from the run above: `<call id>/<inner id>`.
pub(crate) fn qualified_id(call_id: &str, inner: &str) -> String {
    format!("{call_id}/{inner}")
}

/// The reason of a request from below the agent `agent`, prefixed with the agents' path so that a person knows
/// who asks: `[expenses] …` for a call of the agent's own, `[expenses/receipts] …` for one that already came
/// from a sub-agent (`nested`) and carries that sub-agent's prefix.
pub(crate) fn agent_reason(agent: &str, reason: &str, nested: bool) -> String {
    if nested
        && let Some(rest) = reason.strip_prefix('[')
        && let Some(end) = rest.find("] ")
        && !rest[..end].contains(['[', ' '])
    {
        return format!("[{agent}/{rest}");
    }
    format!("[{agent}] {reason}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_carry_the_agent_path() {
        assert_eq!(
            agent_reason("expenses", "`add_expense` needs approval", false),
            "[expenses] `add_expense` needs approval"
        );
        assert_eq!(
            agent_reason("books", "[expenses] `add_expense` needs approval", true),
            "[books/expenses] `add_expense` needs approval"
        );
        assert_eq!(
            agent_reason("books", "[a/b] x", true),
            "[books/a/b] x",
            "a longer path grows at the front"
        );
        assert_eq!(
            agent_reason("books", "[not a path] x", true),
            "[books] [not a path] x"
        );
        assert_eq!(
            agent_reason("books", "[expenses] x", false),
            "[books] [expenses] x",
            "a direct call's own reason is never merged"
        );
        assert_eq!(qualified_id("r1", "s1/t1"), "r1/s1/t1");
    }
}
