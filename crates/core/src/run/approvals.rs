//! A run's approvals: what waits for a person (its own calls and those of suspended calls below it), a
//! decision routed to the call it is for, and suspended calls recorded.

use std::collections::HashSet;

use super::{CallState, Phase, Run};
use crate::approval::Approval;
use crate::approval::ApprovalRequest;
use crate::error::Error;
use crate::message::ToolCall;

use crate::suspension::{DecidedCall, Suspension, qualified_id};
use crate::toolbox::Toolbox;

impl Run {
    /// Every call that waits for a person's decision, in call order: this run's own, then for each suspended
    /// call the requests it still waits on, their ids qualified (`<call id>/<inner id>`).
    pub fn awaiting_approval(&self) -> Vec<ApprovalRequest> {
        let Phase::Tools { calls, .. } = &self.phase else {
            return Vec::new();
        };
        let mut waiting = Vec::new();
        for pending in calls {
            match &pending.state {
                CallState::AwaitingApproval { reason, .. } => waiting.push(ApprovalRequest {
                    call: pending.call.clone(),
                    reason: reason.clone(),
                }),
                CallState::Suspended {
                    suspension,
                    decided,
                    ..
                } => waiting.extend(
                    suspension
                        .requests
                        .iter()
                        .filter(|r| !decided.contains(&r.call.id))
                        .map(|r| ApprovalRequest {
                            call: ToolCall {
                                id: qualified_id(&pending.call.id, &r.call.id),
                                ..r.call.clone()
                            },
                            reason: r.reason.clone(),
                        }),
                ),
                CallState::Ready { .. } | CallState::Resolved { .. } => {}
            }
        }
        waiting
    }

    /// The calls that are suspended, with their states (to tell them the run ends: [`crate::Tool::cancel`]).
    pub(crate) fn suspended_calls(&self) -> Vec<(ToolCall, serde_json::Value)> {
        let Phase::Tools { calls, .. } = &self.phase else {
            return Vec::new();
        };
        calls
            .iter()
            .filter_map(|p| match &p.state {
                CallState::Suspended { suspension, .. } => {
                    Some((p.call.clone(), suspension.state.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// True when `call_id` is a call of this run itself that waits for approval (not one inside a suspended
    /// call).
    pub(crate) fn awaits_directly(&self, call_id: &str) -> bool {
        match &self.phase {
            Phase::Tools { calls, .. } => calls.iter().any(|p| {
                p.call.id == call_id && matches!(p.state, CallState::AwaitingApproval { .. })
            }),
            _ => false,
        }
    }

    /// Records a person's decision about a call waiting for approval: one of this run's calls, or, by its
    /// qualified id (`<call id>/<inner id>`), one inside a suspended call, routed down to the tool that holds
    /// it ([`crate::Tool::decide`]). `tools` are the run's tools: an edit ([`Approval::Edit`]) is validated
    /// against the tool's schema and refused when it does not fit; the call then keeps waiting.
    ///
    /// Says where the decision landed. An id that matches no waiting call is [`Error::NoSuchApproval`], which
    /// lists the ids that do wait.
    pub fn decide(
        &mut self,
        call_id: &str,
        approval: &Approval,
        tools: &Toolbox,
    ) -> Result<DecidedCall, Error> {
        let run_id = self.id.clone();
        let parent_run_id = self.parent_id.clone();
        let waiting: Vec<String> = self
            .awaiting_approval()
            .into_iter()
            .map(|r| r.call.id)
            .collect();
        let no_such = || Error::NoSuchApproval {
            call_id: call_id.to_owned(),
            waiting: waiting.clone(),
        };
        let Phase::Tools { calls, .. } = &mut self.phase else {
            return Err(no_such());
        };
        if let Some(pending) = calls.iter_mut().find(|p| p.call.id == call_id) {
            let args = match &mut pending.state {
                CallState::AwaitingApproval { args, .. } => args,
                // The person decides the calls a suspended call waits for, not the call itself.
                CallState::Suspended { .. } => return Err(no_such()),
                CallState::Ready { .. } | CallState::Resolved { .. } => {
                    return Err(Error::NotAwaitingApproval(call_id.to_owned()));
                }
            };
            pending.state = match approval {
                Approval::Approve => CallState::Ready {
                    args: std::mem::take(args),
                    edited: false,
                    staged: None,
                },
                Approval::Edit { arguments } => {
                    let edited = ToolCall::new(
                        pending.call.id.clone(),
                        pending.call.name.clone(),
                        arguments.to_string(),
                    );
                    let (_, args) =
                        tools
                            .check(&edited)
                            .map_err(|rejection| Error::InvalidEdit {
                                call_id: call_id.to_owned(),
                                problem: rejection.observation,
                            })?;
                    CallState::Ready {
                        args,
                        edited: true,
                        staged: None,
                    }
                }
                Approval::Reject { reason } => CallState::Resolved {
                    content: rejection_text(reason.as_deref()),
                    is_error: true,
                },
            };
            self.settle();
            return Ok(DecidedCall::new(run_id, parent_run_id, call_id));
        }
        for pending in calls.iter_mut() {
            let CallState::Suspended {
                suspension,
                decided,
                ..
            } = &mut pending.state
            else {
                continue;
            };
            let Some(inner) = call_id
                .strip_prefix(pending.call.id.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
            else {
                continue;
            };
            if !suspension.requests.iter().any(|r| r.call.id == inner) {
                continue;
            }
            if decided.iter().any(|d| d == inner) {
                return Err(Error::NotAwaitingApproval(call_id.to_owned()));
            }
            let Some(tool) = tools.get(&pending.call.name) else {
                return Err(Error::CannotSuspend {
                    tool: pending.call.name.clone(),
                    call_id: inner.to_owned(),
                });
            };
            let prefix = pending.call.id.as_str();
            let landed = tool
                .decide(&mut suspension.state, inner, approval)
                .map_err(|e| seen_from_above(e, prefix))?;
            decided.push(inner.to_owned());
            return Ok(landed);
        }
        Err(no_such())
    }

    /// Records that a call returned by [`crate::Step::CallTools`] or [`crate::Step::ResumeTools`] stopped
    /// until people decide its requests; the run waits with it ([`crate::Step::AwaitApproval`] lists them).
    /// A suspension without requests, or with an empty or repeated request id, could never go on: it is
    /// refused ([`Error::InvalidSuspension`]) and the call is still running (record its error instead).
    pub fn record_suspension(
        &mut self,
        call_id: &str,
        suspension: Suspension,
    ) -> Result<(), Error> {
        let pending = self.pending_mut(call_id)?;
        // An edit the person made to the call itself is kept, to be told with its result.
        let edited = match &pending.state {
            CallState::Ready { args, edited, .. } => edited.then(|| args.clone()),
            CallState::Suspended {
                suspension,
                decided,
                edited,
            } if all_decided(suspension, decided) => edited.clone(),
            _ => {
                return Err(Error::OutOfOrder(
                    "a suspension arrived for a call that is not running",
                ));
            }
        };
        let mut seen = HashSet::new();
        if suspension.requests.is_empty() {
            return Err(Error::InvalidSuspension {
                tool: pending.call.name.clone(),
                problem: "it suspended without a request, so nothing could ever resume it"
                    .to_owned(),
            });
        }
        if let Some(bad) = suspension
            .requests
            .iter()
            .find(|r| r.call.id.is_empty() || !seen.insert(r.call.id.as_str()))
        {
            return Err(Error::InvalidSuspension {
                tool: pending.call.name.clone(),
                problem: format!(
                    "request id `{}` is empty or repeated, so decisions could not be told apart",
                    bad.call.id
                ),
            });
        }
        pending.state = CallState::Suspended {
            suspension,
            decided: Vec::new(),
            edited,
        };
        Ok(())
    }
}

/// True when every request of a suspension has a decision.
pub(super) fn all_decided(suspension: &Suspension, decided: &[String]) -> bool {
    suspension
        .requests
        .iter()
        .all(|r| decided.contains(&r.call.id))
}

/// An error about a call inside the suspended call `prefix`, with its ids as the caller gave them (qualified).
fn seen_from_above(error: Error, prefix: &str) -> Error {
    match error {
        Error::NotAwaitingApproval(id) => Error::NotAwaitingApproval(qualified_id(prefix, &id)),
        Error::InvalidEdit { call_id, problem } => Error::InvalidEdit {
            call_id: qualified_id(prefix, &call_id),
            problem,
        },
        Error::NoSuchApproval { call_id, waiting } => Error::NoSuchApproval {
            call_id: qualified_id(prefix, &call_id),
            waiting: waiting.iter().map(|id| qualified_id(prefix, id)).collect(),
        },
        other => other,
    }
}

/// What the model is told about a call the person rejected.
fn rejection_text(reason: Option<&str>) -> String {
    match reason {
        Some(r) => format!(
            "The user rejected this call: {r}. Do not retry it; ask the user how to proceed."
        ),
        None => {
            "The user rejected this call. Do not retry it; ask the user how to proceed.".to_owned()
        }
    }
}
