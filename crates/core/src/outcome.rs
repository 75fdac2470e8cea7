//! How a run ended, and the transcript it leaves.

use serde::{Deserialize, Serialize};

use crate::message::Message;
use crate::model::{FailureCause, Usage};

/// How a run ended. Every outcome keeps the whole transcript.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// The model gave its answer (a plain reply or a `final_answer` call).
    Answered {
        /// The answer.
        answer: String,
    },
    /// The step limit was reached before an answer.
    MaxSteps {
        /// The limit.
        limit: u32,
    },
    /// The token budget was used up before an answer.
    TokenBudget {
        /// The budget.
        limit: u64,
        /// Tokens used.
        used: u64,
    },
    /// The time limit was reached before an answer.
    TimeLimit {
        /// The limit, in milliseconds.
        limit_ms: u64,
    },
    /// The model could not be called, or its reply was unusable.
    ModelFailed {
        /// What went wrong.
        error: String,
        /// What failed: the provider, the reply, a replay, an engine.
        #[serde(default)]
        cause: FailureCause,
    },
    /// The run was cancelled by its caller.
    Cancelled,
}

impl Outcome {
    /// The answer, when the run ended with one.
    pub fn answer(&self) -> Option<&str> {
        match self {
            Self::Answered { answer } => Some(answer),
            _ => None,
        }
    }

    /// True when the run ended normally, with an answer.
    pub fn is_answered(&self) -> bool {
        matches!(self, Self::Answered { .. })
    }

    /// A short machine-readable name: `answered`, `max_steps`, `token_budget`, `time_limit`,
    /// `model_failed`, `cancelled`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Answered { .. } => "answered",
            Self::MaxSteps { .. } => "max_steps",
            Self::TokenBudget { .. } => "token_budget",
            Self::TimeLimit { .. } => "time_limit",
            Self::ModelFailed { .. } => "model_failed",
            Self::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Answered { .. } => f.write_str("answered"),
            Self::MaxSteps { limit } => write!(f, "stopped after the limit of {limit} steps"),
            Self::TokenBudget { limit, used } => {
                write!(f, "stopped: {used} tokens used of a budget of {limit}")
            }
            Self::TimeLimit { limit_ms } => {
                write!(f, "stopped at the time limit of {limit_ms} ms")
            }
            Self::ModelFailed { error, cause } => match cause {
                FailureCause::Replay => write!(f, "the replay diverged: {error}"),
                FailureCause::Engine => write!(f, "the database failed: {error}"),
                _ => write!(f, "the model failed: {error}"),
            },
            Self::Cancelled => f.write_str("cancelled"),
        }
    }
}

/// The record of a run: every message in order, how it ended and what it cost. Round-trips through JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// The run.
    pub run_id: String,
    /// The agent.
    pub agent: String,
    /// Every message kept, in order.
    pub messages: Vec<Message>,
    /// Messages dropped from memory under [`crate::Retention::Window`] (they were reported as events).
    #[serde(default)]
    pub dropped_messages: usize,
    /// Model calls made.
    pub steps: u32,
    /// Tokens used.
    pub usage: Usage,
    /// How the run ended; `None` while it is still going or waiting for approval.
    pub outcome: Option<Outcome>,
}

impl Transcript {
    /// The transcript as pretty JSON.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// A transcript from JSON.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json)
    }
}
