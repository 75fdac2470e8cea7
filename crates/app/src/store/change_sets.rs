//! Saved change sets: the writes a run staged, kept to be applied or discarded later — by whoever may — exactly
//! once (the decision is a conditional update: the second of two gets nothing).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use steward_core::{Principal, StagedCall};

use super::engine::Arg;
use super::{RunContext, RunStore, StoreError};

/// A saved change set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangeSet {
    /// Its id (the id of the run turn that staged it).
    pub id: String,
    /// The run that staged it.
    pub run_id: String,
    /// The agent of the run.
    pub agent: String,
    /// Who asked.
    pub principal: Principal,
    /// The staged calls, in order.
    pub calls: Vec<StagedCall>,
    /// What the run ran under (its database, model, config).
    pub context: RunContext,
    /// When it was saved.
    pub saved_at: DateTime<Utc>,
    /// `waiting`, `applied` or `discarded`.
    pub status: String,
    /// Who decided, once someone did.
    pub decided_by: Option<String>,
    /// When.
    pub decided_at: Option<DateTime<Utc>>,
    /// What applying it said (the rows created, or why it failed).
    pub result: Option<String>,
    /// The calls applied (the others were discarded), once it was applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<Vec<String>>,
}

/// The columns [`read`] reads, in order.
macro_rules! columns {
    () => {
        "id, run_id, agent, principal, calls, context, saved_at, status, decided_by, decided_at, result, applied"
    };
}

impl RunStore {
    /// Saves the change set `calls` staged by the run `run_id` of `agent` for `principal`; its id is returned.
    pub async fn save_change_set(
        &self,
        run_id: &str,
        agent: &str,
        principal: &Principal,
        calls: &[StagedCall],
        context: &RunContext,
    ) -> Result<String, StoreError> {
        let corrupt = |e: serde_json::Error| StoreError::Corrupt(e.to_string());
        let id = steward_core::Run::generate_id();
        let mut tx = self.pool.begin().await?;
        tx.execute(
                "INSERT INTO change_sets (id, run_id, agent, principal, calls, context, saved_at, status) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, 'waiting')",
                vec![
                    Arg::from(id.as_str()),
                    Arg::from(run_id),
                    Arg::from(agent),
                    Arg::from(serde_json::to_string(principal).map_err(corrupt)?),
                    Arg::from(serde_json::to_string(calls).map_err(corrupt)?),
                    Arg::from(serde_json::to_string(context).map_err(corrupt)?),
                    Arg::from(Utc::now()),
                ],
            )
            .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Replaces the change set `id`, while it waits, by a new one with `calls` (a session staging one call after
    /// another): a set someone may be reviewing never changes under them; the old one reads `superseded` and
    /// names the new one. `None` when it was decided meanwhile (or is not there).
    pub async fn supersede_change_set(
        &self,
        id: &str,
        calls: &[StagedCall],
    ) -> Result<Option<String>, StoreError> {
        let corrupt = |e: serde_json::Error| StoreError::Corrupt(e.to_string());
        let old = self.change_set(id).await?;
        let new_id = steward_core::Run::generate_id();
        let mut tx = self.pool.begin().await?;
        let changed = tx
            .execute(
                "UPDATE change_sets SET status = 'superseded', result = $1, decided_at = $2 \
                 WHERE id = $3 AND status = 'waiting'",
                vec![
                    Arg::from(format!("superseded by {new_id}")),
                    Arg::from(Utc::now()),
                    Arg::from(old.id.as_str()),
                ],
            )
            .await?;
        if changed != 1 {
            return Ok(None);
        }
        tx.execute(
            "INSERT INTO change_sets (id, run_id, agent, principal, calls, context, saved_at, status) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, 'waiting')",
            vec![
                Arg::from(new_id.as_str()),
                Arg::from(old.run_id.as_str()),
                Arg::from(old.agent.as_str()),
                Arg::from(serde_json::to_string(&old.principal).map_err(corrupt)?),
                Arg::from(serde_json::to_string(calls).map_err(corrupt)?),
                Arg::from(serde_json::to_string(&old.context).map_err(corrupt)?),
                Arg::from(Utc::now()),
            ],
        )
        .await?;
        tx.commit().await?;
        Ok(Some(new_id))
    }

    /// How many change sets the principal named `name` left waiting (only the asker of each is read).
    pub async fn waiting_change_sets_of(&self, name: &str) -> Result<usize, StoreError> {
        let rows = self
            .pool
            .fetch(
                "SELECT principal FROM change_sets WHERE status = 'waiting'",
                vec![],
            )
            .await?;
        let mut n = 0;
        for row in &rows {
            let asker: steward_core::Principal = serde_json::from_str(&row.string(0)?)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            if asker.name == name {
                n += 1;
            }
        }
        Ok(n)
    }

    /// The change sets, newest first: every waiting one (each principal has at most
    /// [`crate::changes::WAITING_PER_PRINCIPAL`]), or with `all` the last 500 of any status.
    pub async fn change_sets(&self, all: bool) -> Result<Vec<ChangeSet>, StoreError> {
        const ALL: &str = concat!(
            "SELECT ",
            columns!(),
            " FROM change_sets ORDER BY saved_at DESC, id DESC LIMIT 500"
        );
        const WAITING: &str = concat!(
            "SELECT ",
            columns!(),
            " FROM change_sets WHERE status = 'waiting' ORDER BY saved_at DESC, id DESC"
        );
        let rows = self
            .pool
            .fetch(if all { ALL } else { WAITING }, Vec::new())
            .await?;
        rows.iter().map(read).collect()
    }

    /// The change set `id` (or a prefix of it no other shares).
    pub async fn change_set(&self, id: &str) -> Result<ChangeSet, StoreError> {
        let wanted = id.trim();
        if wanted.is_empty() || wanted.contains(['%', '_']) {
            return Err(StoreError::NoChangeSet(id.to_owned()));
        }
        const ONE: &str = concat!(
            "SELECT ",
            columns!(),
            " FROM change_sets WHERE id LIKE $1 ORDER BY id LIMIT 3"
        );
        let rows = self
            .pool
            .fetch(ONE, vec![Arg::from(format!("{wanted}%"))])
            .await?;
        match rows.as_slice() {
            [] => Err(StoreError::NoChangeSet(id.to_owned())),
            [one] => read(one),
            many => Err(StoreError::Ambiguous {
                what: "change sets",
                prefix: id.to_owned(),
                candidates: many.iter().filter_map(|r| r.string(0).ok()).collect(),
            }),
        }
    }

    /// Marks the waiting change set `id` as decided (`applied` or `discarded`) by `by`; false when it was
    /// not waiting any more (someone else decided first).
    pub async fn decide_change_set(
        &self,
        id: &str,
        status: &str,
        by: &str,
        result: Option<&str>,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        let changed = tx
            .execute(
                "UPDATE change_sets SET status = $1, decided_by = $2, decided_at = $3, result = $4 \
                 WHERE id = $5 AND status = 'waiting'",
                vec![
                    Arg::from(status),
                    Arg::from(by),
                    Arg::from(Utc::now()),
                    Arg::from(result.map(str::to_owned)),
                    Arg::from(id),
                ],
            )
            .await?;
        tx.commit().await?;
        Ok(changed == 1)
    }
}

impl RunStore {
    /// Puts a change set whose apply failed back to `waiting`.
    pub async fn reopen_change_set(&self, id: &str) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        tx.execute(
            "UPDATE change_sets SET status = 'waiting', decided_by = NULL, decided_at = NULL \
             WHERE id = $1 AND status = 'applied'",
            vec![Arg::from(id)],
        )
        .await?;
        tx.commit().await
    }

    /// Keeps what applying the change set `id` said.
    pub async fn change_set_result(
        &self,
        id: &str,
        result: Option<&str>,
        applied: &[String],
    ) -> Result<(), StoreError> {
        let applied =
            serde_json::to_string(applied).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let mut tx = self.pool.begin().await?;
        tx.execute(
            "UPDATE change_sets SET result = $1, applied = $2 WHERE id = $3",
            vec![
                Arg::from(result.map(str::to_owned)),
                Arg::from(applied),
                Arg::from(id),
            ],
        )
        .await?;
        tx.commit().await
    }
}

fn read(row: &super::engine::Row) -> Result<ChangeSet, StoreError> {
    let corrupt = |e: serde_json::Error| StoreError::Corrupt(e.to_string());
    Ok(ChangeSet {
        id: row.string(0)?,
        run_id: row.string(1)?,
        agent: row.string(2)?,
        principal: serde_json::from_str(&row.string(3)?).map_err(corrupt)?,
        calls: serde_json::from_str(&row.string(4)?).map_err(corrupt)?,
        context: match row.text(5)? {
            Some(text) => serde_json::from_str(&text).map_err(corrupt)?,
            None => RunContext::default(),
        },
        saved_at: row.instant(6)?,
        status: row.string(7)?,
        decided_by: row.text(8)?,
        decided_at: row.time(9)?,
        result: row.text(10)?,
        applied: match row.text(11)? {
            Some(text) => Some(serde_json::from_str(&text).map_err(corrupt)?),
            None => None,
        },
    })
}
