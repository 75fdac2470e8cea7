//! Reading runs back: the newest top runs with their trees' totals, and one run with everything under it.

use std::collections::HashSet;

use steward_core::{EventRecord, Outcome, Usage};

use super::engine::{Arg, Row};
use super::{
    DIED, INCOMPLETE, RunDetail, RunStore, RunSummary, StoreError, StoredRun, ToolCallRecord,
};

/// Most candidates named when a prefix is ambiguous.
const CANDIDATES: usize = 10;

const LIST: &str = "WITH page AS (
    SELECT id, agent, input, started_at, finished_at, last_event_at, outcome, model
    FROM runs WHERE parent_id IS NULL
      AND agent = COALESCE($3, agent)
      AND COALESCE(outcome, 'incomplete') = COALESCE($4, outcome, 'incomplete')
      AND started_at >= COALESCE($5, started_at)
      AND COALESCE(database, '') = COALESCE($6, database, '')
    ORDER BY started_at DESC, id DESC
    LIMIT $1 OFFSET $2
)
SELECT p.id, p.agent, p.input, p.started_at, p.finished_at, p.last_event_at, p.outcome, p.model,
       CAST(SUM(t.steps) AS BIGINT), CAST(SUM(t.input_tokens) AS BIGINT), CAST(SUM(t.output_tokens) AS BIGINT),
       CASE WHEN COUNT(t.cost_usd) = COUNT(*) THEN SUM(t.cost_usd) END,
       COUNT(*) - 1
FROM page p JOIN runs t ON t.root_id = p.id
GROUP BY p.id, p.agent, p.input, p.started_at, p.finished_at, p.last_event_at, p.outcome, p.model
ORDER BY p.started_at DESC, p.id DESC";

const TREE: &str = "SELECT id, parent_id, root_id, agent, input, started_at, finished_at, last_event_at, \
    outcome_json, steps, input_tokens, output_tokens, cost_usd, model, principal, role, outcome \
    FROM runs WHERE root_id = $1 ORDER BY started_at, id";

const TOOL_CALLS: &str = "SELECT c.run_id, c.call_id, c.tool, c.arguments, c.result, c.is_error, c.duration_ms \
    FROM tool_calls c JOIN runs r ON r.id = c.run_id WHERE r.root_id = $1 ORDER BY c.seq";

const EVENTS: &str = "SELECT run_id, record FROM events WHERE root_id = $1 ORDER BY seq";

/// Which top runs [`RunStore::list_where`] lists; every field left `None` lets every run through.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunFilter {
    /// Only runs of this agent.
    pub agent: Option<String>,
    /// Only runs with this outcome (`answered`, `incomplete`, `died`, `max_steps`, …).
    pub outcome: Option<String>,
    /// Only runs started at or after this time.
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    /// Only runs on this database (its identity: see [`crate::database_identity`]).
    pub database: Option<String>,
}

impl RunFilter {
    /// A filter of these parts.
    pub fn new(
        agent: Option<String>,
        outcome: Option<String>,
        since: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Self {
        Self {
            agent,
            outcome,
            since,
            database: None,
        }
    }

    /// The same filter, only runs on the database `identity` too.
    pub fn on_database(mut self, identity: String) -> Self {
        self.database = Some(identity);
        self
    }
}

impl RunStore {
    /// The newest top runs first (sub-runs are counted in their top run's totals), `limit` of them after
    /// skipping `offset`.
    pub async fn list(&self, limit: u32, offset: u32) -> Result<Vec<RunSummary>, StoreError> {
        self.list_where(&RunFilter::default(), limit, offset).await
    }

    /// [`RunStore::list`] of the top runs that pass `filter`.
    pub async fn list_where(
        &self,
        filter: &RunFilter,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<RunSummary>, StoreError> {
        let rows = self
            .pool
            .fetch(
                LIST,
                vec![
                    Arg::Int(Some(limit.into())),
                    Arg::Int(Some(offset.into())),
                    Arg::Text(filter.agent.clone()),
                    Arg::Text(filter.outcome.clone()),
                    Arg::Time(filter.since),
                    Arg::Text(filter.database.clone()),
                ],
            )
            .await?;
        rows.iter().map(summary).collect()
    }

    /// A run by its id or by a prefix of a top run's id that no other top run shares, with its sub-runs, tool
    /// calls and events. An unknown id and an ambiguous prefix are errors that say what matched.
    pub async fn get(&self, id_or_prefix: &str) -> Result<RunDetail, StoreError> {
        let wanted = id_or_prefix.trim();
        if wanted.is_empty() {
            return Err(StoreError::NotFound(String::new()));
        }
        let id = self.resolve(wanted).await?;
        let root = self
            .pool
            .fetch(
                "SELECT root_id FROM runs WHERE id = $1",
                vec![Arg::from(id.as_str())],
            )
            .await?
            .first()
            .map(|r| r.string(0))
            .transpose()?
            .ok_or_else(|| StoreError::NotFound(wanted.to_owned()))?;
        let runs = self
            .pool
            .fetch(TREE, vec![Arg::from(root.as_str())])
            .await?
            .iter()
            .map(stored_run)
            .collect::<Result<Vec<_>, _>>()?;
        let members = subtree(&runs, &id);
        let mut run = None;
        let mut sub_runs = Vec::new();
        for r in runs.into_iter().filter(|r| members.contains(&r.id)) {
            if r.id == id {
                run = Some(r);
            } else {
                sub_runs.push(r);
            }
        }
        let run = run.ok_or_else(|| StoreError::NotFound(wanted.to_owned()))?;
        let tool_calls = self
            .pool
            .fetch(TOOL_CALLS, vec![Arg::from(root.as_str())])
            .await?
            .iter()
            .map(tool_call)
            .filter(|c| c.as_ref().map_or(true, |c| members.contains(&c.run_id)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut events = Vec::new();
        for row in self
            .pool
            .fetch(EVENTS, vec![Arg::from(root.as_str())])
            .await?
        {
            if !members.contains(&row.string(0)?) {
                continue;
            }
            let text = row.string(1)?;
            let record: EventRecord = serde_json::from_str(&text)
                .map_err(|e| StoreError::Corrupt(format!("an event of run {id}: {e}")))?;
            events.push(record);
        }
        Ok(RunDetail {
            run,
            sub_runs,
            tool_calls,
            events,
        })
    }

    /// The full id of the run `wanted` names: an exact id, or the one top run whose id starts with it.
    async fn resolve(&self, wanted: &str) -> Result<String, StoreError> {
        let exact = self
            .pool
            .fetch("SELECT id FROM runs WHERE id = $1", vec![Arg::from(wanted)])
            .await?;
        if !exact.is_empty() {
            return Ok(wanted.to_owned());
        }
        let rows = self
            .pool
            .fetch(
                "SELECT id FROM runs WHERE parent_id IS NULL AND substr(id, 1, length($1)) = $1 \
                 ORDER BY started_at DESC, id DESC LIMIT $2",
                vec![Arg::from(wanted), Arg::Int(Some(CANDIDATES as i64 + 1))],
            )
            .await?;
        let mut ids = rows
            .iter()
            .map(|r| r.string(0))
            .collect::<Result<Vec<_>, _>>()?;
        match ids.len() {
            0 => Err(StoreError::NotFound(wanted.to_owned())),
            1 => Ok(ids.remove(0)),
            n => {
                ids.truncate(CANDIDATES);
                if n > CANDIDATES {
                    ids.push("…".to_owned());
                }
                Err(StoreError::Ambiguous {
                    what: "runs",
                    prefix: wanted.to_owned(),
                    candidates: ids,
                })
            }
        }
    }
}

/// `id` and every run under it.
fn subtree(runs: &[StoredRun], id: &str) -> HashSet<String> {
    let mut members = HashSet::from([id.to_owned()]);
    // Runs come in start order, and a parent starts before its children: one pass finds them all.
    for run in runs {
        if run.parent_id.as_ref().is_some_and(|p| members.contains(p)) {
            members.insert(run.id.clone());
        }
    }
    members
}

fn summary(row: &Row) -> Result<RunSummary, StoreError> {
    Ok(RunSummary {
        id: row.string(0)?,
        agent: row.string(1)?,
        input: row.string(2)?,
        started_at: row.instant(3)?,
        finished_at: row.time(4)?,
        last_event_at: row.instant(5)?,
        outcome: row.text(6)?.unwrap_or_else(|| INCOMPLETE.to_owned()),
        model: row.text(7)?,
        steps: row.count(8)?,
        usage: Usage {
            input_tokens: row.count(9)?,
            output_tokens: row.count(10)?,
        },
        cost_usd: row.real(11)?,
        sub_runs: row.count(12)?,
    })
}

fn stored_run(row: &Row) -> Result<StoredRun, StoreError> {
    let id = row.string(0)?;
    let outcome = row
        .text(8)?
        .map(|json| serde_json::from_str::<Outcome>(&json))
        .transpose()
        .map_err(|e| StoreError::Corrupt(format!("the outcome of run {id}: {e}")))?;
    Ok(StoredRun {
        parent_id: row.text(1)?,
        root_id: row.string(2)?,
        agent: row.string(3)?,
        input: row.string(4)?,
        started_at: row.instant(5)?,
        finished_at: row.time(6)?,
        last_event_at: row.instant(7)?,
        outcome,
        died: row.text(16)?.as_deref() == Some(DIED),
        steps: row.count(9)?,
        usage: Usage {
            input_tokens: row.count(10)?,
            output_tokens: row.count(11)?,
        },
        cost_usd: row.real(12)?,
        model: row.text(13)?,
        principal: row.text(14)?,
        role: row.text(15)?,
        id,
    })
}

fn tool_call(row: &Row) -> Result<ToolCallRecord, StoreError> {
    Ok(ToolCallRecord {
        run_id: row.string(0)?,
        call_id: row.string(1)?,
        tool: row.string(2)?,
        arguments: row.string(3)?,
        result: row.text(4)?,
        is_error: row.boolean(5)?,
        duration_ms: row
            .opt_int(6)?
            .map(|ms| u64::try_from(ms).unwrap_or_default()),
    })
}
