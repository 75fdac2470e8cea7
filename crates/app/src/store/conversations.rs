//! Conversations of the server: each a list of messages (the user's and the assistant's answers, with the
//! events of the turn that answered), its owner, agent and settings, and whether a turn is in flight.
//!
//! A turn in flight is *leased*: the server running it holds the conversation until `lease_until` and renews
//! the lease while the run goes on. Every server can read and post to every conversation, so several servers
//! share one store; a turn whose lease ran out belonged to a server that stopped and is marked failed (with a
//! message saying so) by [`RunStore::reap_expired`] — never run a second time, since its tools may have
//! acted.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::engine::{Arg, Row};
use super::{RunStore, StoreError};

/// A conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// Its id.
    pub id: String,
    /// The principal who owns it.
    pub owner: String,
    /// Its title (the first question, shortened, unless set).
    pub title: String,
    /// The agent that answers.
    pub agent: String,
    /// The settings of its runs (JSON object: model, temperature, …).
    pub settings: serde_json::Value,
    /// `idle`, `running` (a turn is in flight), `waiting` (a turn waits for approval) or `failed` (the last
    /// turn failed; a new message may be posted).
    pub status: String,
    /// The run of the turn in flight or waiting.
    pub run_id: Option<String>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConversationMessage {
    /// Its place in the conversation, from 1.
    pub seq: i64,
    /// `user` or `assistant`.
    pub role: String,
    /// The text (an assistant message that reports a failure says what went wrong).
    pub content: String,
    /// The run that answered (assistant messages) or was started by it (user messages).
    pub run_id: Option<String>,
    /// The events of the turn, as the API streamed them (assistant messages).
    pub events: Option<serde_json::Value>,
    /// The tool whose result first brought outside data into the turn (assistant messages): a later turn of
    /// the conversation has that data in its history, so it starts tainted by it.
    pub tainted_by: Option<String>,
    /// When it was added.
    pub at: DateTime<Utc>,
}

/// What a turn that ends adds to its conversation: the assistant's message.
#[derive(Clone, Copy, Debug)]
pub struct Reply<'a> {
    /// The text (the answer, or what went wrong).
    pub content: &'a str,
    /// The events of the turn, as the API streamed them.
    pub events: &'a serde_json::Value,
    /// The tool whose result first brought outside data into the turn, if one did.
    pub tainted_by: Option<&'a str>,
}

/// What deleting a conversation did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deleted {
    /// It is gone, with its messages.
    Deleted,
    /// There was none.
    NotFound,
    /// A turn is in flight: nothing was deleted.
    Busy,
}

/// Why a turn could not begin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnRefused {
    /// There is no such conversation.
    NotFound,
    /// Another turn is in flight.
    Busy,
    /// The last turn waits for approval of a call.
    Waiting,
}

const COLUMNS: &str = "id, owner, title, agent, settings, status, run_id, created_at, updated_at";

fn conversation(row: &Row) -> Result<Conversation, StoreError> {
    let settings = row.string(4)?;
    Ok(Conversation {
        id: row.string(0)?,
        owner: row.string(1)?,
        title: row.string(2)?,
        agent: row.string(3)?,
        settings: serde_json::from_str(&settings)
            .map_err(|e| StoreError::Corrupt(format!("conversation settings: {e}")))?,
        status: row.string(5)?,
        run_id: row.text(6)?,
        created_at: row.instant(7)?,
        updated_at: row.instant(8)?,
    })
}

fn message(row: &Row) -> Result<ConversationMessage, StoreError> {
    let events = match row.text(5)? {
        Some(text) => Some(
            serde_json::from_str(&text)
                .map_err(|e| StoreError::Corrupt(format!("conversation events: {e}")))?,
        ),
        None => None,
    };
    Ok(ConversationMessage {
        seq: row.int(0)?,
        role: row.string(1)?,
        content: row.string(2)?,
        run_id: row.text(3)?,
        at: row.instant(4)?,
        events,
        tainted_by: row.text(6)?,
    })
}

fn json_text(value: &serde_json::Value) -> String {
    value.to_string()
}

impl RunStore {
    /// Creates a conversation owned by `owner`.
    pub async fn create_conversation(
        &self,
        id: &str,
        owner: &str,
        title: &str,
        agent: &str,
        settings: &serde_json::Value,
    ) -> Result<Conversation, StoreError> {
        let now = Utc::now();
        let mut tx = self.pool.begin().await?;
        tx.execute(
            "INSERT INTO conversations (id, owner, title, agent, settings, status, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, 'idle', $6, $7)",
            vec![
                Arg::from(id),
                Arg::from(owner),
                Arg::from(title),
                Arg::from(agent),
                Arg::from(json_text(settings)),
                Arg::from(now),
                Arg::from(now),
            ],
        )
        .await?;
        tx.commit().await?;
        self.conversation(id).await
    }

    /// The conversation `id`.
    pub async fn conversation(&self, id: &str) -> Result<Conversation, StoreError> {
        const ONE: &str = "SELECT id, owner, title, agent, settings, status, run_id, created_at, updated_at \
            FROM conversations WHERE id = $1";
        debug_assert!(ONE.contains(COLUMNS));
        let rows = self.pool.fetch(ONE, vec![Arg::from(id)]).await?;
        match rows.first() {
            Some(row) => conversation(row),
            None => Err(StoreError::NotFound(id.to_owned())),
        }
    }

    /// The conversation whose turn is the run `run_id`, if any.
    pub async fn conversation_of_run(
        &self,
        run_id: &str,
    ) -> Result<Option<Conversation>, StoreError> {
        const BY_RUN: &str = "SELECT id, owner, title, agent, settings, status, run_id, created_at, updated_at \
            FROM conversations WHERE run_id = $1";
        let rows = self.pool.fetch(BY_RUN, vec![Arg::from(run_id)]).await?;
        rows.first().map(conversation).transpose()
    }

    /// Conversations, newest first: `owner`'s, or everyone's when `None`.
    pub async fn conversations(
        &self,
        owner: Option<&str>,
        limit: u32,
    ) -> Result<Vec<Conversation>, StoreError> {
        const MINE: &str = "SELECT id, owner, title, agent, settings, status, run_id, created_at, updated_at \
            FROM conversations WHERE owner = $1 ORDER BY updated_at DESC, id DESC LIMIT $2";
        const ALL: &str = "SELECT id, owner, title, agent, settings, status, run_id, created_at, updated_at \
            FROM conversations ORDER BY updated_at DESC, id DESC LIMIT $1";
        let rows = match owner {
            Some(owner) => {
                self.pool
                    .fetch(MINE, vec![Arg::from(owner), Arg::from(i64::from(limit))])
                    .await?
            }
            None => {
                self.pool
                    .fetch(ALL, vec![Arg::from(i64::from(limit))])
                    .await?
            }
        };
        rows.iter().map(conversation).collect()
    }

    /// The messages of conversation `id`, in order.
    pub async fn conversation_messages(
        &self,
        id: &str,
    ) -> Result<Vec<ConversationMessage>, StoreError> {
        let rows = self
            .pool
            .fetch(
                "SELECT seq, role, content, run_id, at, events, tainted_by FROM conversation_messages \
                 WHERE conversation_id = $1 ORDER BY seq",
                vec![Arg::from(id)],
            )
            .await?;
        rows.iter().map(message).collect()
    }

    /// Changes a conversation's title, agent or settings (those given).
    pub async fn update_conversation(
        &self,
        id: &str,
        title: Option<&str>,
        agent: Option<&str>,
        settings: Option<&serde_json::Value>,
    ) -> Result<Conversation, StoreError> {
        let mut tx = self.pool.begin().await?;
        let changed = tx
            .execute(
                "UPDATE conversations SET title = COALESCE($1, title), agent = COALESCE($2, agent), \
                 settings = COALESCE($3, settings), updated_at = $4 WHERE id = $5",
                vec![
                    Arg::from(title.map(str::to_owned)),
                    Arg::from(agent.map(str::to_owned)),
                    Arg::from(settings.map(json_text)),
                    Arg::from(Utc::now()),
                    Arg::from(id),
                ],
            )
            .await?;
        tx.commit().await?;
        if changed == 0 {
            return Err(StoreError::NotFound(id.to_owned()));
        }
        self.conversation(id).await
    }

    /// Deletes a conversation and its messages, unless a turn is in flight; a turn waiting for approval is
    /// cancelled with it (its approvals can no longer be decided).
    pub async fn delete_conversation(&self, id: &str) -> Result<Deleted, StoreError> {
        let mut tx = self.pool.begin().await?;
        let found = tx
            .fetch(
                "SELECT status, run_id FROM conversations WHERE id = $1",
                vec![Arg::from(id)],
            )
            .await?;
        let Some(row) = found.first() else {
            return Ok(Deleted::NotFound);
        };
        let (status, run_id) = (row.string(0)?, row.text(1)?);
        let gone = tx
            .execute(
                "DELETE FROM conversations WHERE id = $1 AND status <> 'running'",
                vec![Arg::from(id)],
            )
            .await?;
        if gone == 0 {
            return Ok(Deleted::Busy);
        }
        tx.execute(
            "DELETE FROM conversation_messages WHERE conversation_id = $1",
            vec![Arg::from(id)],
        )
        .await?;
        if let (Some(run_id), "waiting") = (run_id, status.as_str()) {
            tx.execute(
                "UPDATE pending_runs SET resumed_at = $1 WHERE run_id = $2 AND resumed_at IS NULL",
                vec![Arg::from(Utc::now()), Arg::from(run_id)],
            )
            .await?;
        }
        tx.commit().await?;
        Ok(Deleted::Deleted)
    }

    /// Begins a turn: leases the conversation to `lease_owner` until `until` for the run `run_id` and saves
    /// the user's message — unless another turn is in flight (with a live lease) or waits for approval.
    pub async fn begin_turn(
        &self,
        id: &str,
        content: &str,
        run_id: &str,
        lease_owner: &str,
        until: DateTime<Utc>,
    ) -> Result<Result<(), TurnRefused>, StoreError> {
        let now = Utc::now();
        let mut tx = self.pool.begin().await?;
        let taken = tx
            .execute(
                "UPDATE conversations SET status = 'running', run_id = $1, lease_owner = $2, lease_until = $3, \
                 updated_at = $4 WHERE id = $5 AND (status IN ('idle', 'failed') \
                 OR (status = 'running' AND lease_until < $6))",
                vec![
                    Arg::from(run_id),
                    Arg::from(lease_owner),
                    Arg::from(until),
                    Arg::from(now),
                    Arg::from(id),
                    Arg::from(now),
                ],
            )
            .await?;
        if taken == 0 {
            let rows = tx
                .fetch(
                    "SELECT status FROM conversations WHERE id = $1",
                    vec![Arg::from(id)],
                )
                .await?;
            return Ok(Err(match rows.first() {
                None => TurnRefused::NotFound,
                Some(row) if row.string(0)? == "waiting" => TurnRefused::Waiting,
                Some(_) => TurnRefused::Busy,
            }));
        }
        let message = NewMessage {
            role: "user",
            content,
            run_id: Some(run_id),
            events: None,
            tainted_by: None,
        };
        append(&mut tx, id, message, now).await?;
        tx.commit().await?;
        Ok(Ok(()))
    }

    /// Takes the conversation whose turn `run_id` waits for approval, to resume it: true when this caller got
    /// it (exactly one server does).
    pub async fn lease_waiting(
        &self,
        run_id: &str,
        lease_owner: &str,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        let taken = tx
            .execute(
                "UPDATE conversations SET status = 'running', lease_owner = $1, lease_until = $2, updated_at = $3 \
                 WHERE run_id = $4 AND status = 'waiting'",
                vec![
                    Arg::from(lease_owner),
                    Arg::from(until),
                    Arg::from(Utc::now()),
                    Arg::from(run_id),
                ],
            )
            .await?;
        tx.commit().await?;
        Ok(taken > 0)
    }

    /// Renews the lease of the turn `run_id` in flight; false when the lease is no longer `lease_owner`'s
    /// for that run (its server must then stop the run: another may have marked it failed).
    pub async fn renew_lease(
        &self,
        id: &str,
        lease_owner: &str,
        run_id: &str,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        let kept = tx
            .execute(
                "UPDATE conversations SET lease_until = $1 WHERE id = $2 AND lease_owner = $3 AND run_id = $4 \
                 AND status = 'running'",
                vec![
                    Arg::from(until),
                    Arg::from(id),
                    Arg::from(lease_owner),
                    Arg::from(run_id),
                ],
            )
            .await?;
        tx.commit().await?;
        Ok(kept > 0)
    }

    /// Ends the turn `run_id` that `lease_owner` holds: sets the status (`idle`, `waiting` or `failed`),
    /// releases the lease and adds the assistant's message, if any. False (and nothing written) when the lease
    /// was lost.
    pub async fn end_turn(
        &self,
        id: &str,
        lease_owner: &str,
        run_id: &str,
        status: &str,
        reply: Option<Reply<'_>>,
    ) -> Result<bool, StoreError> {
        let now = Utc::now();
        let mut tx = self.pool.begin().await?;
        let ended = tx
            .execute(
                "UPDATE conversations SET status = $1, lease_owner = NULL, lease_until = NULL, updated_at = $2 \
                 WHERE id = $3 AND lease_owner = $4 AND run_id = $5 AND status = 'running'",
                vec![
                    Arg::from(status),
                    Arg::from(now),
                    Arg::from(id),
                    Arg::from(lease_owner),
                    Arg::from(run_id),
                ],
            )
            .await?;
        if ended == 0 {
            return Ok(false);
        }
        if let Some(reply) = reply {
            let message = NewMessage {
                role: "assistant",
                content: reply.content,
                run_id: Some(run_id),
                events: Some(reply.events),
                tainted_by: reply.tainted_by,
            };
            append(&mut tx, id, message, now).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Marks every turn whose lease ran out before `now` as failed, with a message saying its server stopped;
    /// returns the conversations marked. The turns of `alive` (the instance reaping, whose turns are still
    /// being driven: their leases ran out only because the store could not be reached to renew them) are
    /// left alone.
    pub async fn reap_expired(
        &self,
        now: DateTime<Utc>,
        alive: &str,
    ) -> Result<Vec<String>, StoreError> {
        let rows = self
            .pool
            .fetch(
                "SELECT id FROM conversations WHERE status = 'running' AND lease_until < $1 \
                 AND (lease_owner IS NULL OR lease_owner <> $2)",
                vec![Arg::from(now), Arg::from(alive)],
            )
            .await?;
        let mut reaped = Vec::new();
        for row in rows {
            let id = row.string(0)?;
            let mut tx = self.pool.begin().await?;
            let taken = tx
                .execute(
                    "UPDATE conversations SET status = 'failed', lease_owner = NULL, lease_until = NULL, \
                     updated_at = $1 WHERE id = $2 AND status = 'running' AND lease_until < $3",
                    vec![Arg::from(Utc::now()), Arg::from(id.as_str()), Arg::from(now)],
                )
                .await?;
            if taken > 0 {
                let note = serde_json::json!([{"type": "error", "outcome": "interrupted",
                    "message": "the server answering this stopped before it finished"}]);
                let message = NewMessage {
                    role: "assistant",
                    content: "The server answering this stopped before it finished; the run was not repeated (its \
                              tools may have acted). Send the message again to retry.",
                    run_id: None,
                    events: Some(&note),
                    tainted_by: None,
                };
                append(&mut tx, &id, message, Utc::now()).await?;
                reaped.push(id);
            }
            tx.commit().await?;
        }
        Ok(reaped)
    }
}

/// A message to add to a conversation.
struct NewMessage<'a> {
    role: &'a str,
    content: &'a str,
    run_id: Option<&'a str>,
    events: Option<&'a serde_json::Value>,
    tainted_by: Option<&'a str>,
}

async fn append(
    tx: &mut super::engine::Tx,
    id: &str,
    message: NewMessage<'_>,
    at: DateTime<Utc>,
) -> Result<(), StoreError> {
    let next = tx
        .fetch(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM conversation_messages WHERE conversation_id = $1",
            vec![Arg::from(id)],
        )
        .await?;
    let seq = next.first().map(|r| r.int(0)).transpose()?.unwrap_or(1);
    tx.execute(
        "INSERT INTO conversation_messages (conversation_id, seq, role, content, run_id, events, at, tainted_by) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        vec![
            Arg::from(id),
            Arg::from(seq),
            Arg::from(message.role),
            Arg::from(message.content),
            Arg::from(message.run_id.map(str::to_owned)),
            Arg::from(message.events.map(json_text)),
            Arg::from(at),
            Arg::from(message.tainted_by.map(str::to_owned)),
        ],
    )
    .await?;
    Ok(())
}
