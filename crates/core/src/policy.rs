//! Policies: for each validated tool call, allow it, deny it, or hold it for a person's approval.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::ToolCall;
use crate::spec::ToolSpec;

/// A policy's decision about one tool call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// Run the call.
    Allow,
    /// Do not run it; the model is shown the reason.
    Deny {
        /// Why, in words the model can act on.
        reason: String,
    },
    /// Hold the call until a person approves or rejects it.
    NeedsApproval {
        /// What the person is asked.
        reason: String,
    },
    /// The call needs a person's approval, which may be given with the run's other writes: in a run that
    /// stages ([`crate::Run::with_staging`]) a tool that [`crate::Tool::stages`] is staged in the run's change
    /// set; otherwise it is held like [`Decision::NeedsApproval`].
    Review {
        /// What the person is asked.
        reason: String,
    },
}

impl Decision {
    /// Why the call needs a person, for a decision that holds it.
    pub fn approval_reason(&self) -> Option<&str> {
        match self {
            Self::NeedsApproval { reason } | Self::Review { reason } => Some(reason),
            _ => None,
        }
    }
}

/// What a policy knows of the run a call belongs to, beside the call itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunFacts<'a> {
    /// The tool whose result first brought data from outside the run into it (see [`Policy::taints`]), once
    /// one did: an earlier turn, a call before this one, or the run that started this sub-run.
    pub tainted_by: Option<&'a str>,
}

impl<'a> RunFacts<'a> {
    /// The facts of a run that read outside data from `tainted_by` (`None`: it read none).
    pub fn tainted_by(tainted_by: Option<&'a str>) -> Self {
        Self { tainted_by }
    }
}

/// Decides, for each validated tool call, whether it may run.
///
/// Closures `Fn(&ToolCall, &ToolSpec, &Value) -> Decision` are policies too (they see no [`RunFacts`] and
/// taint nothing).
pub trait Policy: Send + Sync {
    /// The decision for one call with validated arguments, in a run of which `run` is known.
    fn decide(&self, call: &ToolCall, spec: &ToolSpec, args: &Value, run: RunFacts<'_>)
    -> Decision;

    /// True when a successful result of the tool `spec` brings data from outside the run into it: the run is
    /// then tainted by that tool ([`crate::Run::tainted_by`]) and later decisions see it. None by default.
    fn taints(&self, _spec: &ToolSpec) -> bool {
        false
    }
}

impl<F> Policy for F
where
    F: Fn(&ToolCall, &ToolSpec, &Value) -> Decision + Send + Sync,
{
    fn decide(&self, call: &ToolCall, spec: &ToolSpec, args: &Value, _: RunFacts<'_>) -> Decision {
        self(call, spec, args)
    }
}

/// The default policy: tools annotated `needs_approval` wait for approval; everything else runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnnotationPolicy;

impl Policy for AnnotationPolicy {
    fn decide(&self, call: &ToolCall, spec: &ToolSpec, args: &Value, _: RunFacts<'_>) -> Decision {
        if spec.annotations.needs_approval {
            Decision::Review {
                reason: format!("`{}` with {args} needs approval", call.name),
            }
        } else {
            Decision::Allow
        }
    }
}
