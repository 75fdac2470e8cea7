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
}

/// Decides, for each validated tool call, whether it may run.
///
/// Closures `Fn(&ToolCall, &ToolSpec, &Value) -> Decision` are policies too.
pub trait Policy: Send + Sync {
    /// The decision for one call with validated arguments.
    fn decide(&self, call: &ToolCall, spec: &ToolSpec, args: &Value) -> Decision;
}

impl<F> Policy for F
where
    F: Fn(&ToolCall, &ToolSpec, &Value) -> Decision + Send + Sync,
{
    fn decide(&self, call: &ToolCall, spec: &ToolSpec, args: &Value) -> Decision {
        self(call, spec, args)
    }
}

/// The default policy: tools annotated `needs_approval` wait for approval; everything else runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnnotationPolicy;

impl Policy for AnnotationPolicy {
    fn decide(&self, call: &ToolCall, spec: &ToolSpec, args: &Value) -> Decision {
        if spec.annotations.needs_approval {
            Decision::NeedsApproval {
                reason: format!("`{}` with {args} needs approval", call.name),
            }
        } else {
            Decision::Allow
        }
    }
}
