//! From events to audit records: the writer follows each tool call from the event that opens it to the one
//! that settles it, and turns it into one [`AuditRecord`] then.
//!
//! - `ValidationError`: settled at once, `invalid`;
//! - `ToolDenied`: settled at once, `denied`;
//! - `ApprovalRequested` opens a call that waits; `ApprovalDecided` records the decision, and a rejection
//!   settles it (`rejected`);
//! - `ToolCall` opens an allowed call (or starts an approved one); its `ToolResult` settles it (`ok`, `error`),
//!   after settling as `error` what the sub-run it started left open (a sub-agent cannot wait for approval);
//! - `Finished` settles whatever its run left open as `error` (the run ended before the result came).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use steward_core::{Approval, Event, EventRecord, ToolCall};

use super::StoreError;
use super::audit::{AuditRecord, sql_fingerprint};
use super::engine::{Arg, Tx};

/// Who made the calls of one run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Caller {
    /// The principal's name (empty: the local user).
    pub(crate) principal: String,
    /// The principal's role.
    pub(crate) role: Option<String>,
    /// The agents from the top run down to this run's.
    pub(crate) agent_path: String,
    /// Where the run came from.
    pub(crate) surface: Option<String>,
}

/// A call that has not settled yet.
#[derive(Clone, Debug)]
struct OpenCall {
    tool: String,
    arguments: String,
    /// What the person was asked, for a call that waited for approval.
    asked: Option<String>,
    /// `approved` once a person approved it, with who did.
    approved_by: Option<String>,
    /// The person changed the arguments when approving (`arguments` are theirs).
    edited: bool,
    /// Staged in the run's change set (a dry run: nothing was written).
    staged: bool,
}

impl OpenCall {
    /// A call that waits for approval, with what the person is asked.
    fn waiting(call: &ToolCall, reason: &str) -> Self {
        Self {
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            asked: Some(reason.to_owned()),
            approved_by: None,
            edited: false,
            staged: false,
        }
    }

    /// A call staged in the run's change set, with why it needs approval.
    fn staged(call: &ToolCall, reason: &str) -> Self {
        Self {
            staged: true,
            ..Self::waiting(call, reason)
        }
    }

    /// An allowed call whose opening event was not seen (its tool and arguments read back from the store).
    fn allowed(tool: &str, arguments: &str) -> Self {
        Self {
            tool: tool.to_owned(),
            arguments: arguments.to_owned(),
            asked: None,
            approved_by: None,
            edited: false,
            staged: false,
        }
    }
}

/// How a call settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Ok,
    Error,
    Denied,
    Invalid,
    Rejected,
    /// Staged in a change set: ran as a dry run, nothing written yet.
    Staged,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
            Self::Denied => "denied",
            Self::Invalid => "invalid",
            Self::Rejected => "rejected",
            Self::Staged => "staged",
        }
    }
}

/// The calls open in the runs being written, by run id and call id.
#[derive(Clone, Debug, Default)]
pub(crate) struct Trail {
    open: HashMap<(String, String), OpenCall>,
}

impl Trail {
    /// Follows the tool calls of `record`, an event of `run_id`, adding the audit records of the calls it
    /// settles to `settled`. `caller_of` says who made a run's calls (the writer knows every run it writes).
    pub(crate) async fn follow(
        &mut self,
        tx: &mut Tx,
        caller_of: &(dyn Fn(&str) -> Option<Caller> + Sync),
        run_id: &str,
        record: &EventRecord,
        settled: &mut Vec<AuditRecord>,
    ) -> Result<(), StoreError> {
        let at = record.at;
        let caller = caller_of(run_id).unwrap_or_default();
        match &record.event {
            Event::ValidationError {
                call, rejection, ..
            } => settled.push(refused(
                &caller,
                run_id,
                call,
                Status::Invalid,
                &rejection.observation,
                at,
            )),
            Event::ToolDenied { call, reason, .. } => {
                settled.push(refused(&caller, run_id, call, Status::Denied, reason, at));
            }
            Event::ApprovalRequested { call, reason, .. } => {
                self.open(run_id, &call.id, OpenCall::waiting(call, reason));
            }
            Event::CallStaged { call, reason, .. } => {
                self.open(run_id, &call.id, OpenCall::staged(call, reason));
            }
            Event::ApprovalDecided {
                call_id, approval, ..
            } => {
                // Decided in another process than the one that asked: the request is in the store.
                if !self.is_open(run_id, call_id)
                    && let Some(call) = requested(tx, run_id, call_id).await?
                {
                    self.open(run_id, call_id, call);
                }
                // Who decided: the person recorded with the saved approval (an administrator may decide another
                // principal's call), else the run's principal, who was asked at a terminal.
                let by = decided_by(tx, run_id, call_id)
                    .await?
                    .unwrap_or_else(|| caller.principal.clone());
                settled.extend(self.decided(&caller, run_id, call_id, approval, &by, at));
            }
            Event::ToolCall { call, .. } => self.started(run_id, call),
            Event::ToolResult {
                call_id,
                tool,
                is_error,
                ..
            } => {
                // A sub-run still open when its call returned (one waiting for an approval it cannot get) is
                // abandoned: its calls settle first.
                self.abandon(caller_of, &format!("{run_id}/{call_id}"), at, settled);
                if !self.is_open(run_id, call_id) {
                    let arguments = stored_arguments(tx, run_id, call_id).await?;
                    self.open(run_id, call_id, OpenCall::allowed(tool, &arguments));
                }
                settled.extend(self.result(&caller, run_id, call_id, *is_error, at));
            }
            Event::Finished { .. } => self.abandon(caller_of, run_id, at, settled),
            _ => {}
        }
        Ok(())
    }

    /// Settles as `error` the calls left open in the run `top` and the runs under it, deepest runs first.
    fn abandon(
        &mut self,
        caller_of: &(dyn Fn(&str) -> Option<Caller> + Sync),
        top: &str,
        at: DateTime<Utc>,
        settled: &mut Vec<AuditRecord>,
    ) {
        let mut runs = self.runs_under(top);
        runs.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        for run in runs {
            let caller = caller_of(&run).unwrap_or_default();
            settled.extend(self.finished(&caller, &run, at));
        }
    }

    /// True when the call is open.
    fn is_open(&self, run_id: &str, call_id: &str) -> bool {
        self.open
            .contains_key(&(run_id.to_owned(), call_id.to_owned()))
    }

    /// The runs with open calls that are `top` or under it (their ids start with `top/`).
    fn runs_under(&self, top: &str) -> Vec<String> {
        let mut runs: Vec<String> = self
            .open
            .keys()
            .map(|(run, _)| run)
            .filter(|run| {
                run.strip_prefix(top)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            })
            .cloned()
            .collect();
        runs.sort();
        runs.dedup();
        runs
    }

    /// Opens a call (one that waits for approval, or one read back from the store).
    fn open(&mut self, run_id: &str, call_id: &str, call: OpenCall) {
        self.open
            .insert((run_id.to_owned(), call_id.to_owned()), call);
    }

    /// A call about to run: allowed, or approved earlier.
    fn started(&mut self, run_id: &str, call: &ToolCall) {
        self.open
            .entry((run_id.to_owned(), call.id.clone()))
            .or_insert_with(|| OpenCall::allowed(&call.name, &call.arguments));
    }

    /// A person's decision on a waiting call; a rejection settles it. `None` for an approval (the call runs
    /// next) and for a call that is not open.
    fn decided(
        &mut self,
        caller: &Caller,
        run_id: &str,
        call_id: &str,
        approval: &Approval,
        by: &str,
        at: DateTime<Utc>,
    ) -> Option<AuditRecord> {
        let key = (run_id.to_owned(), call_id.to_owned());
        match approval {
            Approval::Reject { reason } => {
                let call = self.open.remove(&key)?;
                let mut record = settle(caller, run_id, call_id, call, Status::Rejected, at);
                record.approval = Some("rejected".to_owned());
                record.approval_reason = reason.clone();
                record.approved_by = Some(by.to_owned());
                Some(record)
            }
            other => {
                if let Some(call) = self.open.get_mut(&key) {
                    call.approved_by = Some(by.to_owned());
                    // The call runs with the arguments the person gave: the record says what ran.
                    if let Approval::Edit { arguments } = other {
                        call.arguments = arguments.to_string();
                        call.edited = true;
                    }
                }
                None
            }
        }
    }

    /// A call's result: settles it, `ok` or `error`. `None` when the call is not open.
    fn result(
        &mut self,
        caller: &Caller,
        run_id: &str,
        call_id: &str,
        is_error: bool,
        at: DateTime<Utc>,
    ) -> Option<AuditRecord> {
        let call = self.open.remove(&(run_id.to_owned(), call_id.to_owned()))?;
        let status = match (is_error, call.staged) {
            (true, _) => Status::Error,
            (false, true) => Status::Staged,
            (false, false) => Status::Ok,
        };
        Some(settle(caller, run_id, call_id, call, status, at))
    }

    /// A run ended: every call it left open settles as `error`, in call id order.
    fn finished(&mut self, caller: &Caller, run_id: &str, at: DateTime<Utc>) -> Vec<AuditRecord> {
        let mut left: Vec<(String, OpenCall)> = Vec::new();
        self.open.retain(|(run, call_id), call| {
            if run == run_id {
                left.push((call_id.clone(), call.clone()));
                false
            } else {
                true
            }
        });
        left.sort_by(|a, b| a.0.cmp(&b.0));
        left.into_iter()
            .map(|(call_id, call)| settle(caller, run_id, &call_id, call, Status::Error, at))
            .collect()
    }
}

/// A call refused before it ran: `invalid` (validation) or `denied` (policy), with the reason.
fn refused(
    caller: &Caller,
    run_id: &str,
    call: &ToolCall,
    status: Status,
    reason: &str,
    at: DateTime<Utc>,
) -> AuditRecord {
    let mut record = settle(
        caller,
        run_id,
        &call.id,
        OpenCall::allowed(&call.name, &call.arguments),
        status,
        at,
    );
    record.decision = status.as_str().to_owned();
    record.decision_reason = Some(reason.to_owned());
    record
}

/// The record of a settled call (its seq and hashes are given when it is appended).
fn settle(
    caller: &Caller,
    run_id: &str,
    call_id: &str,
    call: OpenCall,
    status: Status,
    at: DateTime<Utc>,
) -> AuditRecord {
    let waited = call.asked.is_some();
    AuditRecord {
        seq: 0,
        at,
        principal: caller.principal.clone(),
        role: caller.role.clone(),
        run_id: run_id.to_owned(),
        agent_path: caller.agent_path.clone(),
        call_id: call_id.to_owned(),
        sql_fingerprint: sql_fingerprint(&call.arguments),
        tool: call.tool,
        arguments: call.arguments,
        decision: if waited { "approval" } else { "allowed" }.to_owned(),
        decision_reason: call.asked,
        approval: call
            .approved_by
            .is_some()
            .then(|| if call.edited { "edited" } else { "approved" }.to_owned()),
        approval_reason: None,
        approved_by: call.approved_by,
        status: status.as_str().to_owned(),
        surface: caller.surface.clone(),
        prev_hash: String::new(),
        hash: String::new(),
    }
}

/// The call waiting for approval as its `ApprovalRequested` event in the store holds it.
async fn requested(
    tx: &mut Tx,
    run_id: &str,
    call_id: &str,
) -> Result<Option<OpenCall>, StoreError> {
    let rows = tx
        .fetch(
            "SELECT record FROM events WHERE run_id = $1 AND kind = 'approval_requested' ORDER BY seq DESC",
            vec![Arg::from(run_id)],
        )
        .await?;
    for row in rows {
        let text = row.string(0)?;
        let record: EventRecord = serde_json::from_str(&text)
            .map_err(|e| StoreError::Corrupt(format!("an event of run {run_id}: {e}")))?;
        if let Event::ApprovalRequested { call, reason, .. } = &record.event
            && call.id == call_id
        {
            return Ok(Some(OpenCall::waiting(call, reason)));
        }
    }
    Ok(None)
}

/// Who decided the waiting call `call_id` of `run_id`, as the saved approval records it: a sub-run's calls are
/// saved under the top run, qualified by the call that started the sub-run (`top/a1` + `e1` is `top`, `a1/e1`).
async fn decided_by(
    tx: &mut Tx,
    run_id: &str,
    call_id: &str,
) -> Result<Option<String>, StoreError> {
    let (top, qualified) = match run_id.split_once('/') {
        Some((top, rest)) => (top.to_owned(), format!("{rest}/{call_id}")),
        None => (run_id.to_owned(), call_id.to_owned()),
    };
    let rows = tx
        .fetch(
            "SELECT decided_by FROM approvals WHERE run_id = $1 AND call_id = $2",
            vec![Arg::from(top.as_str()), Arg::from(qualified.as_str())],
        )
        .await?;
    Ok(match rows.first() {
        Some(row) => row.text(0)?,
        None => None,
    })
}

/// The arguments of a call as stored with it (empty when it is not stored).
async fn stored_arguments(tx: &mut Tx, run_id: &str, call_id: &str) -> Result<String, StoreError> {
    let rows = tx
        .fetch(
            "SELECT arguments FROM tool_calls WHERE run_id = $1 AND call_id = $2",
            vec![Arg::from(run_id), Arg::from(call_id)],
        )
        .await?;
    Ok(match rows.first() {
        Some(row) => row.string(0)?,
        None => String::new(),
    })
}
