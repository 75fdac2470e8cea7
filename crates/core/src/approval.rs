//! Approvals: a call waiting for a person's decision, and the decision.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::ToolCall;

/// A tool call waiting for a person's decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The call as the model made it.
    pub call: ToolCall,
    /// What the person is asked.
    pub reason: String,
}

/// A person's answer to an approval request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "approval", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Approval {
    /// Run the call.
    Approve,
    /// Do not run it; the model is shown the reason.
    Reject {
        /// Why, if the person said.
        reason: Option<String>,
    },
    /// Run it with these arguments instead of the model's. They are validated against the tool's schema when
    /// the decision is recorded (an invalid edit is refused and the call keeps waiting), and the model is told
    /// that the person changed them.
    Edit {
        /// The arguments to run the call with (a JSON object).
        arguments: Value,
    },
}
