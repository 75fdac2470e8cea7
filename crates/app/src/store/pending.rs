//! Runs that wait for a person's approval, saved so that the decision can come from another process
//! (`steward approvals approve ID`) and the run be resumed there (`steward runs resume RUN_ID`).
//!
//! A saved run is the whole [`Run`] as JSON, with every suspended sub-run inside it; each call it waits for is
//! one row of `approvals`, with a short id (the first hex digits of a hash of the run and call ids), its
//! qualified call id (`<agent call>/<call>` for a sub-agent's), the tool, arguments and reason, and, once a
//! person decided, the decision and who gave it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use steward_core::{Approval, ApprovalRequest, Principal, Run};

use super::audit::AuditRecord;
use super::engine::{Arg, Row};
use super::{RunStore, StoreError};

/// One call a saved run waits for (or waited for).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The short id people type.
    pub id: String,
    /// The top run that waits.
    pub run_id: String,
    /// The call's id, qualified by the agent calls above it.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments as the model sent them.
    pub arguments: String,
    /// Why it waits.
    pub reason: String,
    /// What it would do (for a SQL write, the rows it would change), when the tool could tell.
    pub preview: Option<String>,
    /// When it was asked for.
    pub requested_at: DateTime<Utc>,
    /// `approve`, `deny` or `edit`; `None` while undecided.
    pub decision: Option<String>,
    /// The reason given with a denial.
    pub decision_reason: Option<String>,
    /// The arguments of an edit (JSON).
    pub edited: Option<String>,
    /// Who decided.
    pub decided_by: Option<String>,
    /// When.
    pub decided_at: Option<DateTime<Utc>>,
}

impl PendingApproval {
    /// The decision as the runner takes it, once there is one.
    pub fn approval(&self) -> Result<Option<Approval>, StoreError> {
        Ok(match self.decision.as_deref() {
            None => None,
            Some("approve") => Some(Approval::Approve),
            Some("deny") => Some(Approval::Reject {
                reason: self.decision_reason.clone(),
            }),
            Some("edit") => {
                let text = self.edited.as_deref().unwrap_or("{}");
                let arguments = serde_json::from_str(text)
                    .map_err(|e| StoreError::Corrupt(format!("approval {}: {e}", self.id)))?;
                Some(Approval::Edit { arguments })
            }
            Some(other) => {
                return Err(StoreError::Corrupt(format!(
                    "approval {}: unknown decision `{other}`",
                    self.id
                )));
            }
        })
    }
}

/// What a waiting run ran under, saved with it so that resuming it needs no flags, and a change is reported.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunContext {
    /// The business database as the command named it: a name from the config's `databases`, or a URL (`None`:
    /// none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// The model as chosen: a spec or a name from the config's `models` (`None`: as the config and environment
    /// choose).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What names the database the run read and wrote (its URL without a password, SQLite paths absolute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_identity: Option<String>,
    /// A fingerprint of the config the run ran under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// The config file it was read from (`None`: the built-in config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_file: Option<String>,
    /// Where the run came from (`cli`, `api`, `v1`, `mcp`, `eval`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<String>,
}

/// A saved run with the calls it waits for.
#[derive(Clone, Debug)]
pub struct PendingRun {
    /// The run's id.
    pub run_id: String,
    /// Its agent.
    pub agent: String,
    /// Who it runs for.
    pub principal: Principal,
    /// The run, as it was saved.
    pub run: Run,
    /// The calls it waits for, in the order they were asked.
    pub approvals: Vec<PendingApproval>,
    /// When it was resumed, if it was.
    pub resumed_at: Option<DateTime<Utc>>,
    /// When it was saved (a run that waits again after a resume is saved again).
    pub saved_at: DateTime<Utc>,
    /// The tool whose outside data the run had read when it was saved: its resumption must keep treating
    /// writes as coming after untrusted data.
    pub tainted_by: Option<String>,
    /// What it ran under (empty for runs saved before Steward kept it).
    pub context: RunContext,
}

fn approval(row: &Row) -> Result<PendingApproval, StoreError> {
    Ok(PendingApproval {
        id: row.string(0)?,
        run_id: row.string(1)?,
        call_id: row.string(2)?,
        tool: row.string(3)?,
        arguments: row.string(4)?,
        reason: row.string(5)?,
        requested_at: row.instant(6)?,
        decision: row.text(7)?,
        decision_reason: row.text(8)?,
        edited: row.text(9)?,
        decided_by: row.text(10)?,
        decided_at: row.time(11)?,
        preview: row.text(12)?,
    })
}

/// The short id of a waiting call.
fn short_id(run_id: &str, call_id: &str) -> String {
    let digest = Sha256::digest(format!("{run_id}\n{call_id}").as_bytes());
    digest.iter().take(5).map(|b| format!("{b:02x}")).collect()
}

impl RunStore {
    /// Saves `run`, which waits for `requests`, for `agent` and `principal`, with what it ran under; returns
    /// the short ids of the requests. Saving a run again (it waits for more after a resume) replaces its state
    /// and keeps the decisions already taken. Each waiting call is chained in the audit trail (`waiting`) in
    /// the same transaction.
    #[allow(clippy::too_many_arguments)]
    pub async fn save_pending(
        &self,
        run: &Run,
        agent: &str,
        principal: &Principal,
        requests: &[ApprovalRequest],
        previews: &[Option<String>],
        tainted_by: Option<&str>,
        context: &RunContext,
    ) -> Result<Vec<String>, StoreError> {
        let state = serde_json::to_string(run).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let who =
            serde_json::to_string(principal).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let saved_context =
            serde_json::to_string(context).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let now = Utc::now();
        let mut tx = self.pool.begin().await?;
        tx.execute(
            "DELETE FROM pending_runs WHERE run_id = $1",
            vec![Arg::from(run.id())],
        )
        .await?;
        tx.execute(
            "INSERT INTO pending_runs (run_id, agent, principal, state, saved_at, tainted_by, context) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            vec![
                Arg::from(run.id()),
                Arg::from(agent),
                Arg::from(who),
                Arg::from(state),
                Arg::from(now),
                Arg::from(tainted_by.map(str::to_owned)),
                Arg::from(saved_context),
            ],
        )
        .await?;
        let mut ids = Vec::new();
        for (i, request) in requests.iter().enumerate() {
            let id = short_id(run.id(), &request.call.id);
            tx.execute(
                "INSERT INTO approvals (id, run_id, call_id, tool, arguments, reason, requested_at, preview) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING",
                vec![
                    Arg::from(id.as_str()),
                    Arg::from(run.id()),
                    Arg::from(request.call.id.as_str()),
                    Arg::from(request.call.name.as_str()),
                    Arg::from(request.call.arguments.as_str()),
                    Arg::from(request.reason.as_str()),
                    Arg::from(now),
                    Arg::from(previews.get(i).cloned().flatten()),
                ],
            )
            .await?;
            ids.push(id);
        }
        let mut records: Vec<AuditRecord> = requests
            .iter()
            .map(|request| {
                let mut record = AuditRecord::of_call(
                    principal,
                    run.id(),
                    agent,
                    &request.call,
                    context.surface.clone(),
                    "waiting",
                );
                record.decision = "approval".to_owned();
                record.decision_reason = Some(request.reason.clone());
                record
            })
            .collect();
        super::audit::append(&mut tx, &mut records).await?;
        tx.commit().await?;
        Ok(ids)
    }

    /// The calls saved runs wait for, oldest first; with `all`, also decided ones and those of resumed runs.
    pub async fn approvals(&self, all: bool) -> Result<Vec<PendingApproval>, StoreError> {
        self.approvals_of(all, None, None).await
    }

    /// [`RunStore::approvals`] of the runs of `agent` on the database `database` (its identity: see
    /// [`crate::database_identity`]); `None` is any.
    pub async fn approvals_of(
        &self,
        all: bool,
        agent: Option<&str>,
        database: Option<&str>,
    ) -> Result<Vec<PendingApproval>, StoreError> {
        const WAITING: &str = "SELECT a.id, a.run_id, a.call_id, a.tool, a.arguments, a.reason, a.requested_at, \
            a.decision, a.decision_reason, a.edited, a.decided_by, a.decided_at, a.preview \
            FROM approvals a JOIN pending_runs p ON p.run_id = a.run_id LEFT JOIN runs r ON r.id = a.run_id \
            WHERE p.resumed_at IS NULL AND a.decision IS NULL \
              AND COALESCE(r.agent, '') = COALESCE($1, r.agent, '') \
              AND COALESCE(r.database, '') = COALESCE($2, r.database, '') \
            ORDER BY a.requested_at, a.id";
        const ALL: &str = "SELECT a.id, a.run_id, a.call_id, a.tool, a.arguments, a.reason, a.requested_at, \
            a.decision, a.decision_reason, a.edited, a.decided_by, a.decided_at, a.preview \
            FROM approvals a LEFT JOIN runs r ON r.id = a.run_id \
            WHERE COALESCE(r.agent, '') = COALESCE($1, r.agent, '') \
              AND COALESCE(r.database, '') = COALESCE($2, r.database, '') \
            ORDER BY a.requested_at, a.id";
        let rows = self
            .pool
            .fetch(
                if all { ALL } else { WAITING },
                vec![
                    Arg::Text(agent.map(str::to_owned)),
                    Arg::Text(database.map(str::to_owned)),
                ],
            )
            .await?;
        rows.iter().map(approval).collect()
    }

    /// Records a person's decision on the waiting call `id` (or a prefix of it no other call shares).
    pub async fn decide_approval(
        &self,
        id: &str,
        decision: &Approval,
        by: &str,
    ) -> Result<PendingApproval, StoreError> {
        let found = self.approval_by_prefix(id).await?;
        if let Some(taken) = &found.decision {
            return Err(StoreError::database(format!(
                "approval {} was already decided ({taken}{})",
                found.id,
                found
                    .decided_by
                    .as_deref()
                    .map(|b| format!(" by {b}"))
                    .unwrap_or_default()
            )));
        }
        let (kind, reason, edited) = match decision {
            Approval::Approve => ("approve", None, None),
            Approval::Reject { reason } => ("deny", reason.clone(), None),
            Approval::Edit { arguments } => ("edit", None, Some(arguments.to_string())),
            _ => {
                return Err(StoreError::database(
                    "this decision cannot be stored".to_owned(),
                ));
            }
        };
        let mut record = self
            .decision_record(&found, kind, reason.clone(), by)
            .await?;
        let mut tx = self.pool.begin().await?;
        super::audit::append(&mut tx, std::slice::from_mut(&mut record)).await?;
        tx.execute(
            "UPDATE approvals SET decision = $1, decision_reason = $2, edited = $3, decided_by = $4, decided_at = $5 \
             WHERE id = $6 AND decision IS NULL",
            vec![
                Arg::from(kind),
                Arg::from(reason),
                Arg::from(edited),
                Arg::from(by),
                Arg::from(Utc::now()),
                Arg::from(found.id.as_str()),
            ],
        )
        .await?;
        tx.commit().await?;
        self.approval_by_prefix(&found.id).await
    }

    /// The audit record of a person's decision on a waiting call: who made the run, the decision, who gave it.
    async fn decision_record(
        &self,
        found: &PendingApproval,
        kind: &str,
        reason: Option<String>,
        by: &str,
    ) -> Result<AuditRecord, StoreError> {
        let pending = self.pending_run(&found.run_id).await?;
        let call = steward_core::ToolCall::new(
            found.call_id.as_str(),
            found.tool.as_str(),
            found.arguments.as_str(),
        );
        let mut record = AuditRecord::of_call(
            &pending.principal,
            &found.run_id,
            &pending.agent,
            &call,
            pending.context.surface.clone(),
            "decided",
        );
        record.decision = "approval".to_owned();
        record.decision_reason = Some(found.reason.clone());
        record.approval = Some(
            match kind {
                "approve" => "approved",
                "deny" => "rejected",
                _ => "edited",
            }
            .to_owned(),
        );
        record.approval_reason = reason;
        record.approved_by = Some(by.to_owned());
        Ok(record)
    }

    async fn approval_by_prefix(&self, id: &str) -> Result<PendingApproval, StoreError> {
        const BY_PREFIX: &str = "SELECT id, run_id, call_id, tool, arguments, reason, requested_at, decision, \
            decision_reason, edited, decided_by, decided_at, preview FROM approvals WHERE id LIKE $1 ORDER BY id LIMIT 3";
        let wanted = id.trim().to_ascii_lowercase();
        if wanted.is_empty() || !wanted.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(StoreError::NotFound(id.to_owned()));
        }
        let rows = self
            .pool
            .fetch(BY_PREFIX, vec![Arg::from(format!("{wanted}%"))])
            .await?;
        let found: Vec<PendingApproval> = rows.iter().map(approval).collect::<Result<_, _>>()?;
        match found.as_slice() {
            [] => Err(StoreError::NotFound(id.to_owned())),
            [one] => Ok(one.clone()),
            many => Err(StoreError::Ambiguous {
                what: "approvals",
                prefix: id.to_owned(),
                candidates: many.iter().map(|a| a.id.clone()).collect(),
            }),
        }
    }

    /// The saved run `run_id` (or a prefix of it) with its approvals.
    pub async fn pending_run(&self, run_id: &str) -> Result<PendingRun, StoreError> {
        const RUN: &str = "SELECT run_id, agent, principal, state, resumed_at, saved_at, tainted_by, context FROM pending_runs \
            WHERE run_id LIKE $1 ORDER BY run_id LIMIT 3";
        let wanted = run_id.trim();
        if wanted.is_empty() || wanted.contains(['%', '_']) {
            return Err(StoreError::NotFound(run_id.to_owned()));
        }
        let rows = self
            .pool
            .fetch(RUN, vec![Arg::from(format!("{wanted}%"))])
            .await?;
        let row = match rows.as_slice() {
            [] => return Err(StoreError::NotFound(run_id.to_owned())),
            [one] => one,
            many => {
                return Err(StoreError::Ambiguous {
                    what: "runs",
                    prefix: run_id.to_owned(),
                    candidates: many.iter().filter_map(|r| r.string(0).ok()).collect(),
                });
            }
        };
        let corrupt = |e: serde_json::Error| StoreError::Corrupt(e.to_string());
        let id = row.string(0)?;
        let run: Run = serde_json::from_str(&row.string(3)?).map_err(corrupt)?;
        let principal: Principal = serde_json::from_str(&row.string(2)?).map_err(corrupt)?;
        let approvals = self
            .pool
            .fetch(
                "SELECT id, run_id, call_id, tool, arguments, reason, requested_at, decision, decision_reason, \
                 edited, decided_by, decided_at, preview FROM approvals WHERE run_id = $1 ORDER BY requested_at, id",
                vec![Arg::from(id.as_str())],
            )
            .await?
            .iter()
            .map(approval)
            .collect::<Result<Vec<_>, _>>()?;
        let tainted_by = row.text(6)?;
        // A run saved before runs kept their taint has it in its row only.
        let run = run.with_taint(tainted_by.as_deref());
        Ok(PendingRun {
            run_id: id,
            agent: row.string(1)?,
            principal,
            run,
            approvals,
            resumed_at: row.time(4)?,
            saved_at: row.instant(5)?,
            tainted_by,
            context: match row.text(7)? {
                Some(text) => serde_json::from_str(&text).map_err(corrupt)?,
                None => RunContext::default(),
            },
        })
    }

    /// The waiting call `id` (or a prefix of it no other call shares).
    pub async fn approval(&self, id: &str) -> Result<PendingApproval, StoreError> {
        self.approval_by_prefix(id).await
    }

    /// Takes the saved run `run_id`, as saved at `saved_at`, to resume it: true for exactly one caller, and
    /// only while the run was neither resumed nor saved again since.
    pub async fn claim_resume(
        &self,
        run_id: &str,
        saved_at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        let taken = tx
            .execute(
                "UPDATE pending_runs SET resumed_at = $1 WHERE run_id = $2 AND resumed_at IS NULL AND saved_at = $3",
                vec![Arg::from(Utc::now()), Arg::from(run_id), Arg::from(saved_at)],
            )
            .await?;
        tx.commit().await?;
        Ok(taken == 1)
    }

    /// Marks the saved run as resumed (its approvals are then history).
    pub async fn mark_resumed(&self, run_id: &str) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        tx.execute(
            "UPDATE pending_runs SET resumed_at = $1 WHERE run_id = $2",
            vec![Arg::from(Utc::now()), Arg::from(run_id)],
        )
        .await?;
        tx.commit().await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn short_ids_are_ten_hex_digits_and_differ_by_call() {
        let a = super::short_id("run", "c1");
        assert_eq!(a.len(), 10);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, super::short_id("run", "c2"));
        assert_eq!(a, super::short_id("run", "c1"));
    }
}
