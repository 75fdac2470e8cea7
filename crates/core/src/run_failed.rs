//! Why [`crate::Runner::ask`] got no answer.

use crate::approval::ApprovalRequest;
use crate::outcome::Outcome;

/// Why a run driven by [`crate::Runner::ask`] ended without an answer.
///
/// `ask` is for callers that just want the answer. Use [`crate::Runner::run`] to keep the [`crate::Run`]
/// (its transcript, its usage) or to wait for approvals.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RunFailed {
    /// The run ended without an answer: a step, token or time limit, a failed model, a cancellation.
    #[error("the run ended without an answer: {outcome}")]
    Ended {
        /// How it ended.
        outcome: Outcome,
    },
    /// A tool call needs a person's approval, and `ask` has no one to ask.
    #[error(
        "the run stopped because {} needs a person's approval, which `ask` cannot give; \
         drive it with `Runner::run` and `Runner::resume` to decide",
        calls(requests)
    )]
    NeedsApproval {
        /// The calls waiting, with what the person would have been asked.
        requests: Vec<ApprovalRequest>,
    },
}

impl RunFailed {
    /// How the run ended, when it ended.
    pub fn outcome(&self) -> Option<&Outcome> {
        match self {
            Self::Ended { outcome } => Some(outcome),
            Self::NeedsApproval { .. } => None,
        }
    }

    /// The calls waiting for approval, when that is why the run stopped.
    pub fn approvals(&self) -> &[ApprovalRequest] {
        match self {
            Self::NeedsApproval { requests } => requests,
            Self::Ended { .. } => &[],
        }
    }
}

/// "`a` (with {…})" for one call, "`a` and `b`" for several.
fn calls(requests: &[ApprovalRequest]) -> String {
    let names: Vec<String> = requests
        .iter()
        .map(|r| format!("the call `{}` ({})", r.call.name, r.reason))
        .collect();
    match names.as_slice() {
        [] => "a tool call".to_owned(),
        [one] => one.clone(),
        [first @ .., last] => format!("{} and {last}", first.join(", ")),
    }
}
