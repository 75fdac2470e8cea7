//! The agents the binary runs. Until the business tools arrive, the assistant has the common tools.

use std::sync::Arc;

use steward_core::{Agent, Limits, Toolbox};
use steward_domains::common::{Clock, calculator, current_date};
use steward_sql::SqlToolkit;

const ASSISTANT: &str = "You are Steward, an assistant that acts carefully on the user's behalf.
- Call current_date whenever a date matters; never guess today's date.
- Call calculator for every calculation; never do arithmetic in your head.
- If information you need is missing, ask the user for it instead of guessing.
- Answer briefly and plainly, and say what you did.";

/// The default assistant.
pub(crate) fn assistant(clock: Clock, limits: Limits) -> anyhow::Result<Agent> {
    let tools = Toolbox::new()
        .with(current_date(clock))?
        .with(calculator())?;
    Ok(Agent::new("assistant", ASSISTANT, tools)
        .with_description("Answers questions with the date and a calculator.")
        .with_limits(limits))
}

/// Tokens of schema context in the analyst's instructions.
const ANALYST_CONTEXT: usize = 1500;

/// The analyst: SQL tools over one database, the date and a calculator; with a question, the schema most
/// relevant to it is in the instructions.
pub(crate) fn analyst(
    kit: &Arc<SqlToolkit>,
    question: Option<&str>,
    clock: Clock,
    limits: Limits,
) -> anyhow::Result<Agent> {
    let mut tools = Toolbox::new();
    for tool in kit.tools() {
        tools.add(tool)?;
    }
    let tools = tools.with(current_date(clock))?.with(calculator())?;
    Ok(Agent::new(
        "analyst",
        kit.analyst_instructions(question, ANALYST_CONTEXT),
        tools,
    )
    .with_description("Answers questions over a SQL database by writing and running read-only SQL.")
    .with_limits(limits))
}
