//! Change sets, decided: the writes a run staged ([`steward_core::Run::staged`]) are applied together, in one
//! transaction, or discarded; either way each call is chained in the audit trail with who decided.

use std::sync::Arc;

use serde::Serialize;
use steward_core::{AppliedChanges, Applier, Principal, RowChange, StagedCall};

use crate::audited::Surface;
use crate::store::{AuditRecord, ChangeSet};
use crate::{App, AppError};

/// How a decided change set settled, for its audit records.
#[derive(Clone, Copy)]
enum Settled {
    Applied,
    Failed,
    Discarded,
}

/// What deciding a saved change set came to.
#[derive(Clone, Debug)]
pub struct Decided {
    /// The change set, as decided.
    pub set: ChangeSet,
    /// What applying it did (`None`: discarded).
    pub applied: Option<AppliedChanges>,
}

/// The rows a change set writes in one table, in the order of its calls.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableDiff {
    /// The table.
    pub table: String,
    /// Each row written, with the call that writes it.
    pub rows: Vec<RowDiff>,
}

/// One row of a [`TableDiff`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RowDiff {
    /// The call that writes it.
    pub call_id: String,
    /// Its place in the change set (1 for the first call).
    pub step: usize,
    /// What it does to the row.
    #[serde(flatten)]
    pub change: RowChange,
}

/// The diff of a change set grouped by table, tables in the order they are first written.
pub fn diff_by_table(staged: &[StagedCall]) -> Vec<TableDiff> {
    let mut tables: Vec<TableDiff> = Vec::new();
    for (i, s) in staged.iter().enumerate() {
        for change in &s.output.changes {
            let row = RowDiff {
                call_id: s.call.id.clone(),
                step: i + 1,
                change: change.clone(),
            };
            match tables.iter_mut().find(|t| t.table == change.table) {
                Some(t) => t.rows.push(row),
                None => tables.push(TableDiff {
                    table: change.table.clone(),
                    rows: vec![row],
                }),
            }
        }
    }
    tables
}

impl App {
    /// Applies the change set `staged` of a run of `agent` for `principal`, decided by `by` from `surface`: the
    /// principal's role must still allow every call, every call must be one the same database applies, and
    /// they are written in one transaction that checks each result against the staged one (else
    /// [`AppError::Conflict`], and nothing is written).
    /// With `chosen` (call ids), only those are applied, with the earlier calls whose results they use; the
    /// others are discarded.
    pub async fn apply_staged(
        &self,
        surface: Surface,
        principal: &Principal,
        agent: &str,
        staged: &[StagedCall],
        by: &str,
        chosen: Option<&[String]>,
    ) -> Result<AppliedChanges, AppError> {
        let Some(applier) = self.applier_of(principal, staged)? else {
            return Ok(AppliedChanges::default());
        };
        match applier.apply(staged, chosen).await {
            Ok(applied) => {
                let (made, left): (Vec<StagedCall>, Vec<StagedCall>) = staged
                    .iter()
                    .cloned()
                    .partition(|s| applied.calls.contains(&s.call.id));
                self.chain_decided(surface, principal, agent, &made, by, Settled::Applied)
                    .await?;
                self.chain_decided(surface, principal, agent, &left, by, Settled::Discarded)
                    .await?;
                Ok(applied)
            }
            Err(e) => {
                // The person's yes, and that nothing was written, are in the trail too.
                self.chain_decided(surface, principal, agent, staged, by, Settled::Failed)
                    .await?;
                Err(AppError::Conflict(e.message))
            }
        }
    }

    /// Discards the change set `staged` (nothing was written): each call is chained as `rejected`, decided by
    /// `by`.
    pub async fn discard_staged(
        &self,
        surface: Surface,
        principal: &Principal,
        agent: &str,
        staged: &[StagedCall],
        by: &str,
    ) -> Result<(), AppError> {
        self.chain_decided(surface, principal, agent, staged, by, Settled::Discarded)
            .await
    }

    /// Applies (`apply`) or discards the saved change set `id` (or a prefix of it), decided by `by` from
    /// `surface`, exactly once: a set someone else decided is [`AppError::Conflict`]. It must be applied on the
    /// database it was staged on. When applying fails (the data changed), nothing is written and the set waits
    /// again, to be discarded (or staged anew by running the request again).
    pub async fn decide_change_set(
        &self,
        surface: Surface,
        id: &str,
        apply: bool,
        decider: &Principal,
        only: Option<&[String]>,
    ) -> Result<Decided, AppError> {
        let by = if decider.name.is_empty() {
            "local user"
        } else {
            decider.name.as_str()
        };
        let Some(store) = &self.store else {
            return Err(AppError::Conflict(
                "there is no run store, so there are no saved change sets".to_owned(),
            ));
        };
        let set = store.change_set(id).await?;
        if set.status != "waiting" {
            return Err(AppError::Conflict(format!(
                "change set {} was already {}{}",
                set.id,
                set.status,
                set.decided_by
                    .as_deref()
                    .map(|b| format!(" by {b}"))
                    .unwrap_or_default()
            )));
        }
        let status = if apply { "applied" } else { "discarded" };
        if apply {
            self.may_apply(&set, decider)?;
            self.check_same_database(&set.context)?;
        }
        // Taken first, so that two people deciding at once cannot both act.
        if !store.decide_change_set(&set.id, status, by, None).await? {
            return Err(AppError::Conflict(format!(
                "change set {} was decided by someone else just now",
                set.id
            )));
        }
        let applied = if apply {
            match self
                .apply_staged(surface, &set.principal, &set.agent, &set.calls, by, only)
                .await
            {
                Ok(applied) => Some(applied),
                Err(e) => {
                    store.reopen_change_set(&set.id).await?;
                    return Err(e);
                }
            }
        } else {
            self.discard_staged(surface, &set.principal, &set.agent, &set.calls, by)
                .await?;
            None
        };
        if let Some(applied) = &applied {
            let created = applied.created.join(", ");
            store
                .change_set_result(
                    &set.id,
                    (!created.is_empty()).then_some(created.as_str()),
                    &applied.calls,
                )
                .await?;
        }
        Ok(Decided {
            set: store.change_set(&set.id).await?,
            applied,
        })
    }

    /// Adds the staged call `staged` to the change set `id` of a session of `surface` (calls staged one by one,
    /// as MCP's are) while it waits; a set that was decided (or none) is started anew. Returns the set's id and
    /// its calls so far (the next staged call replays them first).
    pub async fn add_to_change_set(
        &self,
        surface: Surface,
        id: Option<&str>,
        principal: &Principal,
        agent: &str,
        earlier: Vec<StagedCall>,
        staged: StagedCall,
    ) -> Result<(String, Vec<StagedCall>), AppError> {
        let Some(store) = &self.store else {
            return Err(AppError::Conflict(
                "there is no run store to keep the change set in".to_owned(),
            ));
        };
        let run_id = staged.run_id.clone();
        let mut calls = earlier;
        calls.push(staged);
        if let Some(id) = id
            && store.extend_change_set(id, &calls).await?
        {
            return Ok((id.to_owned(), calls));
        }
        // Started anew: only the call just staged (the earlier ones were decided with their set).
        let calls = calls.split_off(calls.len() - 1);
        let id = store
            .save_change_set(
                &run_id,
                agent,
                principal,
                &calls,
                &self.run_context(surface, None),
            )
            .await?;
        Ok((id, calls))
    }

    /// The calls of the change set `id` while it waits (empty when it was decided, or is not there).
    pub async fn waiting_calls(&self, id: &str) -> Vec<StagedCall> {
        let Some(store) = &self.store else {
            return Vec::new();
        };
        match store.change_set(id).await {
            Ok(set) if set.status == "waiting" => set.calls,
            _ => Vec::new(),
        }
    }

    /// Whether `principal` may see and decide the change set `set`: it is theirs, or their role is one of the
    /// roles that apply its asker's changes (`approve_by`). (Administrators see every set; the surface knows
    /// who they are.)
    pub fn may_review(&self, set: &ChangeSet, principal: &Principal) -> bool {
        if set.principal.name == principal.name {
            return true;
        }
        let approvers = self
            .role(&set.principal)
            .and_then(|(_, role)| role.approve_by.as_ref());
        let theirs = self.role(principal).map(|(name, _)| name);
        matches!((approvers, theirs), (Some(roles), Some(name)) if roles.iter().any(|r| r == name))
    }

    /// Four eyes: whether `decider` may apply `set`, by the role of the principal who asked (its `approve_by`
    /// roles, and `self_approval: false`). Discarding writes nothing and is always allowed.
    fn may_apply(&self, set: &ChangeSet, decider: &Principal) -> Result<(), AppError> {
        let Some((role_name, role)) = self.role(&set.principal) else {
            return Ok(());
        };
        if !role.self_approval
            && !set.principal.name.is_empty()
            && decider.name == set.principal.name
        {
            return Err(AppError::Forbidden(format!(
                "the role `{role_name}` does not let {} apply their own changes: someone else must{}",
                set.principal.name,
                match &role.approve_by {
                    Some(roles) => format!(" (a principal with the role {})", roles.join(" or ")),
                    None => String::new(),
                }
            )));
        }
        if let Some(roles) = &role.approve_by {
            let theirs = self.role(decider).map(|(name, _)| name);
            if !theirs.is_some_and(|name| roles.iter().any(|r| r == name)) {
                return Err(AppError::Forbidden(format!(
                    "changes asked by the role `{role_name}` are applied by a principal with the role {}{}",
                    roles.join(" or "),
                    match theirs {
                        Some(name) => format!("; {by} has the role `{name}`", by = decider.name),
                        None => String::new(),
                    }
                )));
            }
        }
        Ok(())
    }

    /// What applies `staged` for `principal`; `None` for an empty set.
    fn applier_of(
        &self,
        principal: &Principal,
        staged: &[StagedCall],
    ) -> Result<Option<Arc<dyn Applier>>, AppError> {
        self.check_role(principal)?;
        let policy = self.policy(principal);
        let mut found: Option<Arc<dyn Applier>> = None;
        for s in staged {
            let name = s.call.name.as_str();
            if !policy.allows_tool(name) {
                return Err(AppError::Forbidden(format!(
                    "`{name}` is no longer allowed for this principal's role; the changes cannot be applied"
                )));
            }
            let tool = self.build_tool(name, None, Some(principal))?;
            let Some(applier) = tool.applier() else {
                return Err(AppError::Invalid(format!(
                    "`{name}` cannot be applied as part of a change set"
                )));
            };
            match &found {
                Some(first) if first.target() != applier.target() => {
                    return Err(AppError::Invalid(format!(
                        "the changes write to two databases ({} and {}); they cannot be applied in one \
                         transaction",
                        first.target(),
                        applier.target()
                    )));
                }
                Some(_) => {}
                None => found = Some(applier),
            }
        }
        Ok(found)
    }

    /// Chains each call of `staged` as decided by `by`: `ok` when applied, `error` when applying failed (nothing
    /// was written), `rejected` when discarded.
    async fn chain_decided(
        &self,
        surface: Surface,
        principal: &Principal,
        agent: &str,
        staged: &[StagedCall],
        by: &str,
        settled: Settled,
    ) -> Result<(), AppError> {
        let (status, approval) = match settled {
            Settled::Applied => ("ok", "applied"),
            Settled::Failed => ("error", "applied"),
            Settled::Discarded => ("rejected", "discarded"),
        };
        let Some(store) = &self.store else {
            return Ok(());
        };
        let records: Vec<AuditRecord> = staged
            .iter()
            .map(|s| {
                let mut record = AuditRecord::of_call(
                    principal,
                    &s.run_id,
                    agent,
                    &s.call,
                    Some(surface.as_str().to_owned()),
                    status,
                );
                record.arguments = s.args.to_string();
                record.decision = "approval".to_owned();
                record.decision_reason = Some(s.reason.clone());
                record.approval = Some(approval.to_owned());
                record.approved_by = Some(by.to_owned());
                record
            })
            .collect();
        if !records.is_empty() {
            store.append_audit(records).await?;
        }
        Ok(())
    }
}
