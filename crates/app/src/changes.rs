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

/// How a staging error begins when the change set's earlier writes no longer apply (the data changed under it).
pub use steward_domains::changes::STALE;

/// The most change sets one principal may leave waiting: the next is refused until they (or an approver) decide
/// some, so that no one can bury everyone else's.
pub const WAITING_PER_PRINCIPAL: usize = 50;

/// The changes chosen from `set` (`only`, call ids) must be some of its own, named once each, and go with
/// applying (discarding takes the whole set).
fn check_chosen(set: &ChangeSet, apply: bool, only: Option<&[String]>) -> Result<(), AppError> {
    let Some(only) = only else {
        return Ok(());
    };
    if !apply {
        return Err(AppError::Invalid(
            "choosing changes goes with applying: discarding takes the whole change set".to_owned(),
        ));
    }
    if only.is_empty() {
        return Err(AppError::Invalid(
            "no change was chosen: name at least one, or discard the change set".to_owned(),
        ));
    }
    let ids: Vec<&str> = set.calls.iter().map(|s| s.call.id.as_str()).collect();
    if let Some(unknown) = only.iter().find(|c| !ids.contains(&c.as_str())) {
        return Err(AppError::Invalid(format!(
            "`{unknown}` is not a change of change set {}; its changes are: {}",
            set.id,
            ids.join(", ")
        )));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = ids.iter().find(|id| !seen.insert(**id)) {
        return Err(AppError::Invalid(format!(
            "two changes of change set {} have the id `{twice}` (the model reused a call id), so they cannot be \
             chosen apart: apply them all, or discard the change set",
            set.id
        )));
    }
    Ok(())
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
        if set.status == "superseded" {
            return Err(AppError::Conflict(format!(
                "change set {} grew after it was saved: it was {}, with the changes staged since; look at that \
                 one and decide it",
                set.id,
                set.result.as_deref().unwrap_or("superseded")
            )));
        }
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
        check_chosen(&set, apply, only)?;
        if apply {
            self.may_apply_for(&set.principal, decider)?;
            self.check_change_set_database(&set.context)?;
            if self.hides_rows_from(&set, decider).await {
                return Err(AppError::Forbidden(format!(
                    "change set {} changes rows your role does not see (or sees only in part); someone who sees them must decide it",
                    set.id
                )));
            }
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
    /// as MCP's are) while it waits: a new set with its calls and this one supersedes it (a set never changes
    /// under someone reviewing it); a set that was decided (or none) is started anew. Returns the set's id and
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
            && let Some(new) = store.supersede_change_set(id, &calls).await?
        {
            return Ok((new, calls));
        }
        // Started anew: only the call just staged (the earlier ones were decided with their set).
        self.room_for_change_set(principal).await?;
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

    /// Refuses a new change set for `principal` when they already have [`WAITING_PER_PRINCIPAL`] waiting.
    pub(crate) async fn room_for_change_set(&self, principal: &Principal) -> Result<(), AppError> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        let waiting = store.waiting_change_sets_of(&principal.name).await?;
        if waiting >= WAITING_PER_PRINCIPAL {
            return Err(AppError::Conflict(format!(
                "{} has {waiting} change sets waiting, the most one may; decide or discard some first \
                 (`steward changes list`)",
                if principal.name.is_empty() {
                    "the local user"
                } else {
                    principal.name.as_str()
                }
            )));
        }
        Ok(())
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

    /// Whether `principal` may see and decide the change set `set` (see [`crate::Config::reviews`]).
    /// (Administrators see every set; the surface knows who they are.)
    pub fn may_review(&self, set: &ChangeSet, principal: &Principal) -> bool {
        self.config.reviews(&set.principal, principal)
    }

    /// Whether the change set `set` writes a row `viewer` (a reviewer other than its asker) may not see, their
    /// role filtering rows: then its titles, values and decision are not theirs. Its asker staged it under their
    /// own filters and sees it.
    pub async fn hides_rows_from(&self, set: &ChangeSet, viewer: &Principal) -> bool {
        if viewer.name == set.principal.name && viewer.role == set.principal.role {
            return false;
        }
        // What the set shows (titles, values before and after) is of the tables it changes: a reviewer who
        // reads them only in part (a column list, a mask) is not shown it.
        let tables: Vec<String> = set
            .calls
            .iter()
            .flat_map(|c| c.output.changes.iter().map(|r| r.table.clone()))
            .collect();
        if let Some(business) = self.business()
            && !self.reads_whole(viewer, business.db.dialect(), &tables)
        {
            return true;
        }
        let Ok(Some(applier)) = self.applier_of(&set.principal, &set.calls) else {
            return false;
        };
        hidden(applier.as_ref(), &set.calls, viewer).await
    }

    /// True when `viewer` reads every column of each of `tables` as it is (no column list, no mask); an
    /// access that cannot be worked out reads nothing whole.
    fn reads_whole(
        &self,
        viewer: &Principal,
        dialect: steward_sql::Dialect,
        tables: &[String],
    ) -> bool {
        match crate::roles::access_fn(&self.config.roles).of(viewer, dialect) {
            Ok(None) => true,
            Ok(Some(access)) => tables.iter().all(|t| access.reads_whole(t)),
            Err(_) => false,
        }
    }

    /// The tables a call of `tool` writes, and its database's dialect: the built-in writes' own, a declared
    /// SQL tool's statement's. `None` when it is not known (a tool that writes no table of a database).
    async fn tables_written_by(&self, tool: &str) -> Option<(steward_sql::Dialect, Vec<String>)> {
        let own: &[&str] = match tool {
            "add_expense" => &["expenses", "expense_categories"],
            "create_project" => &["projects"],
            "move_task" | "add_task" | "complete_task" => &["tasks", "projects"],
            _ => &[],
        };
        if !own.is_empty() {
            let dialect = self.business()?.db.dialect();
            return Some((dialect, own.iter().map(|t| (*t).to_owned()).collect()));
        }
        let value = self.config.tools.get(tool)?;
        let crate::tools::ToolDef::Sql(sql) = serde_yaml::from_value(value.clone()).ok()? else {
            return None;
        };
        let db = self.database(&sql.database)?;
        let guard = db.guard().await.ok()?;
        let named = guard.bind_named(&sql.statement).ok()?;
        let table = guard.write_table(&named.sql)?;
        Some((db.dialect(), vec![table]))
    }

    /// Whether the call of `tool` with `arguments` that `asker` waits on writes a row `viewer` (a reviewer other
    /// than the asker) may not see, as [`App::hides_rows_from`] for a change set.
    pub async fn call_hides_rows_from(
        &self,
        asker: &Principal,
        tool: &str,
        arguments: &str,
        viewer: &Principal,
    ) -> bool {
        if viewer.name == asker.name && viewer.role == asker.role {
            return false;
        }
        // Its preview shows rows of the tables it writes: a reviewer who reads them only in part is not shown it.
        if let Some((dialect, tables)) = self.tables_written_by(tool).await
            && !self.reads_whole(viewer, dialect, &tables)
        {
            return true;
        }
        let Some(applier) = self
            .build_tool(tool, None, Some(asker))
            .ok()
            .and_then(|t| t.applier())
        else {
            return false;
        };
        let call = StagedCall {
            run_id: "review".to_owned(),
            call: steward_core::ToolCall::new("review", tool, arguments),
            args: serde_json::from_str(arguments).unwrap_or(serde_json::Value::Null),
            reason: String::new(),
            output: steward_core::ToolOutput::default(),
        };
        hidden(applier.as_ref(), &[call], viewer).await
    }

    /// Four eyes ([`crate::Config::four_eyes`]): whether `decider` may apply what `asker` asked for.
    pub fn may_apply_for(&self, asker: &Principal, decider: &Principal) -> Result<(), AppError> {
        self.config
            .four_eyes(asker, decider)
            .map_err(AppError::Forbidden)
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

/// Whether `applier`'s writes `staged` touch a row `viewer`'s role hides from them. Unable to tell (the database
/// is down): hidden, as nothing could be shown or applied anyway.
async fn hidden(applier: &dyn Applier, staged: &[StagedCall], viewer: &Principal) -> bool {
    let ctx = steward_core::ToolContext::new("review", "review", "review")
        .with_principal(Arc::new(viewer.clone()));
    applier.hidden_from(staged, &ctx).await.unwrap_or(true)
}
