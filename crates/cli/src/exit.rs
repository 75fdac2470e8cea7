//! Exit codes, the same for every command.

/// The run answered.
pub(crate) const OK: u8 = 0;
/// The run stopped without an answer: a step, token or time limit was reached.
pub(crate) const STOPPED: u8 = 1;
/// Bad usage or configuration: a flag, a missing model, a file that cannot be used.
pub(crate) const USAGE: u8 = 2;
/// The model or its provider failed (HTTP error, timeout, unusable replies, replay mismatch).
pub(crate) const MODEL_FAILED: u8 = 3;
/// The run waits for a person's approval, and no one at a terminal could give it.
pub(crate) const NEEDS_APPROVAL: u8 = 4;
/// `steward eval`: the accuracy is below `--min-accuracy`.
pub(crate) const BELOW_MIN_ACCURACY: u8 = 5;
/// Interrupted with Ctrl-C.
pub(crate) const INTERRUPTED: u8 = 130;

/// Shown under `--help`.
pub(crate) const HELP: &str = "Exit codes: 0 answered (sql: allowed, or rows returned), 1 stopped by a step, token or \
time limit (sql: refused or the query failed; eval guard: an attack escaped or a read was refused), 2 bad usage or configuration (a model, a database URL), 3 the model or \
provider failed, 4 the run waits for approval (no terminal to ask at), 5 eval: the accuracy is below --min-accuracy, 130 interrupted.";

/// The exit code for an error that ended a command before or outside a run.
pub(crate) fn code_for(error: &anyhow::Error) -> u8 {
    // Database errors before a run (a bad URL, an unreachable server) are configuration errors too.
    let model = error
        .downcast_ref::<steward_llm::Error>()
        .or_else(|| match error.downcast_ref::<steward_app::AppError>() {
            Some(steward_app::AppError::Model(e)) => Some(e),
            _ => None,
        });
    match model {
        Some(steward_llm::Error::Model(_)) => MODEL_FAILED,
        _ => USAGE,
    }
}

/// The exit code for how a run ended.
pub(crate) fn for_outcome(outcome: &steward_core::Outcome) -> u8 {
    use steward_core::Outcome;
    match outcome {
        Outcome::Answered { .. } => OK,
        Outcome::ModelFailed { .. } => MODEL_FAILED,
        Outcome::Cancelled => INTERRUPTED,
        _ => STOPPED,
    }
}
