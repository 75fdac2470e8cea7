//! The `final_answer` tool: ends a run with the model's answer.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::run::FINAL_ANSWER;
use crate::tool::{Tool, ToolOutput};
use crate::typed::TypedTool;

/// Arguments of `final_answer`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinalAnswerArgs {
    /// The complete answer for the user.
    pub answer: String,
}

/// The `final_answer` tool. A valid call ends the run with its `answer` once the other calls of the same
/// reply have run; the tool body itself is never needed.
pub fn final_answer() -> impl Tool {
    TypedTool::new(
        FINAL_ANSWER,
        "Give the final answer to the user and end the task. Call it only when you are done.",
        |_ctx, args: FinalAnswerArgs| async move { Ok(ToolOutput::text(args.answer)) },
    )
    .read_only()
}
