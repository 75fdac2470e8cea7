//! The writer task: takes the observer's messages in order and writes each record.
//!
//! Records that arrive together are written in one transaction (one commit instead of one per event). When a
//! batch fails, it is written again one record per transaction, so one bad record loses only itself.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::Value;
use steward_core::redact::redact_urls;
use steward_core::{Event, EventRecord, Outcome, Usage};
use tokio::sync::mpsc;

use super::audit::{self, AuditRecord};
use super::engine::{Arg, Pool, Tx};
use super::observer::{CostFn, Message, Recording, Shared};
use super::trail::{Caller, Trail};
use super::{RunStore, StoreError};

/// Most messages taken into one transaction.
const MAX_BATCH: usize = 256;

/// Deepest run tree followed when naming a run's agents.
const MAX_DEPTH: usize = 64;

/// What the writer remembers of a run it is writing.
#[derive(Clone, Debug)]
struct RunState {
    root_id: String,
    steps: u64,
    usage: Usage,
    cost: Option<f64>,
    /// Who made its calls, for the audit trail.
    caller: Caller,
}

/// The writer's memory: runs being written, the next event number of each tree and the tool calls not
/// settled yet. Runs are forgotten when they finish and read back from the store if they go on (a
/// conversation's next turn, a resumed approval).
#[derive(Clone, Debug, Default)]
struct Memory {
    runs: HashMap<String, RunState>,
    next_seq: HashMap<String, i64>,
    trail: Trail,
}

struct Writer {
    pool: Pool,
    memory: Memory,
    model: Option<String>,
    principal: Option<String>,
    role: Option<String>,
    surface: Option<String>,
    cost: Option<CostFn>,
}

/// Runs until every sender is gone.
pub(crate) async fn run(
    store: RunStore,
    mut receiver: mpsc::UnboundedReceiver<Message>,
    shared: Arc<Shared>,
    recording: Recording,
) {
    let mut writer = Writer {
        pool: store.pool.clone(),
        memory: Memory::default(),
        model: recording.model,
        principal: recording.principal,
        role: recording.role,
        surface: recording.surface,
        cost: recording.cost,
    };
    while let Some(first) = receiver.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match receiver.try_recv() {
                Ok(message) => batch.push(message),
                Err(_) => break,
            }
        }
        let mut records = Vec::new();
        let mut flushes = Vec::new();
        for message in batch {
            match message {
                Message::Record(record) => records.push(*record),
                Message::Flush(done) => {
                    writer.write(&std::mem::take(&mut records), &shared).await;
                    flushes.push(done);
                }
            }
        }
        writer.write(&records, &shared).await;
        for done in flushes {
            let _ = done.send(());
        }
    }
}

impl Writer {
    /// Writes `records` in one transaction, or, when that fails, one transaction each.
    async fn write(&mut self, records: &[EventRecord], shared: &Shared) {
        if records.is_empty() {
            return;
        }
        let before = self.memory.clone();
        if self.batch(records).await.is_ok() {
            return;
        }
        self.memory = before;
        for record in records {
            if let Err(e) = self.batch(std::slice::from_ref(record)).await {
                shared.fail(e);
            }
        }
    }

    /// Writes `records` and the audit records of the calls they settle in one transaction. On SQLite it holds
    /// the write lock from its start (`BEGIN IMMEDIATE`), so the audit chain's head, read last, is the newest.
    async fn batch(&mut self, records: &[EventRecord]) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let mut last: HashMap<String, DateTime<Utc>> = HashMap::new();
        let mut settled = Vec::new();
        for record in records {
            let root = self.record(&mut tx, record, &mut settled).await?;
            let at = last.entry(root).or_insert(record.at);
            *at = (*at).max(record.at);
        }
        for (root, at) in last {
            tx.execute(
                "UPDATE runs SET last_event_at = $1 WHERE id = $2",
                vec![Arg::from(at), Arg::from(root)],
            )
            .await?;
        }
        audit::append(&mut tx, &mut settled).await?;
        tx.commit().await
    }

    /// Writes one record, adding the audit records of the calls it settles to `settled`; returns the id of its
    /// tree's top run.
    async fn record(
        &mut self,
        tx: &mut Tx,
        record: &EventRecord,
        settled: &mut Vec<AuditRecord>,
    ) -> Result<String, StoreError> {
        let record = redacted(record);
        let event = &record.event;
        let Some(run_id) = run_of(event) else {
            return Ok(String::new());
        };
        let parent = record.parent_run_id.as_deref();
        let at = record.at;
        let root = self
            .state(tx, run_id, parent, at, event)
            .await?
            .root_id
            .clone();
        let seq = self.next_seq(tx, &root).await?;
        let json = serde_json::to_value(&*record)
            .map_err(|e| StoreError::Database(format!("an event cannot be stored: {e}")))?;
        let kind = json
            .get("event")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_owned();
        tx.execute(
            "INSERT INTO events (run_id, seq, root_id, at, kind, record) VALUES ($1, $2, $3, $4, $5, $6)",
            vec![
                Arg::from(run_id),
                Arg::Int(Some(seq)),
                Arg::from(root.as_str()),
                Arg::from(at),
                Arg::from(kind),
                Arg::from(json.to_string()),
            ],
        )
        .await?;
        self.audit(tx, run_id, &record, settled).await?;
        match event {
            Event::FollowUp { .. } => {
                tx.execute(
                    "UPDATE runs SET outcome = NULL, outcome_json = NULL, finished_at = NULL WHERE id = $1",
                    vec![Arg::from(run_id)],
                )
                .await?;
            }
            Event::ModelResponse { step, usage, .. } => {
                let model = self.model.clone();
                let cost = self.cost.clone();
                let state = self.known(run_id)?;
                state.steps = u64::from(*step).max(state.steps);
                state.usage.add(*usage);
                state.cost = match (&cost, &model) {
                    (Some(price), Some(model)) => state
                        .cost
                        .and_then(|c| price(model, *usage).map(|add| c + add)),
                    _ => None,
                };
                let (steps, usage, cost) = (state.steps, state.usage, state.cost);
                tx.execute(
                    "UPDATE runs SET steps = $1, input_tokens = $2, output_tokens = $3, cost_usd = $4 \
                     WHERE id = $5",
                    vec![
                        Arg::from(steps),
                        Arg::from(usage.input_tokens),
                        Arg::from(usage.output_tokens),
                        Arg::from(cost),
                        Arg::from(run_id),
                    ],
                )
                .await?;
            }
            Event::ToolCall { call, .. } => {
                tool_call(tx, run_id, seq, &call.id, &call.name, &call.arguments, None).await?;
            }
            Event::ValidationError {
                call, rejection, ..
            } => {
                let refused = Some(rejection.observation.as_str());
                tool_call(
                    tx,
                    run_id,
                    seq,
                    &call.id,
                    &call.name,
                    &call.arguments,
                    refused,
                )
                .await?;
            }
            Event::ToolDenied { call, reason, .. } => {
                let refused = Some(reason.as_str());
                tool_call(
                    tx,
                    run_id,
                    seq,
                    &call.id,
                    &call.name,
                    &call.arguments,
                    refused,
                )
                .await?;
            }
            Event::ToolResult {
                call_id,
                tool,
                content,
                is_error,
                duration_ms,
                ..
            } => {
                tx.execute(
                    "INSERT INTO tool_calls (run_id, call_id, seq, tool, arguments, result, is_error, duration_ms) \
                     VALUES ($1, $2, $3, $4, '', $5, $6, $7) \
                     ON CONFLICT (run_id, call_id) DO UPDATE SET result = excluded.result, \
                     is_error = excluded.is_error, duration_ms = excluded.duration_ms",
                    vec![
                        Arg::from(run_id),
                        Arg::from(call_id.as_str()),
                        Arg::Int(Some(seq)),
                        Arg::from(tool.as_str()),
                        Arg::from(content.as_str()),
                        Arg::from(*is_error),
                        Arg::from(*duration_ms),
                    ],
                )
                .await?;
            }
            Event::Finished {
                outcome,
                usage,
                steps,
                ..
            } => {
                let outcome_json = serde_json::to_string(outcome).map_err(|e| {
                    StoreError::Database(format!("an outcome cannot be stored: {e}"))
                })?;
                tx.execute(
                    "UPDATE runs SET outcome = $1, outcome_json = $2, finished_at = $3, steps = $4, \
                     input_tokens = $5, output_tokens = $6 WHERE id = $7",
                    vec![
                        Arg::from(outcome.name()),
                        Arg::from(outcome_json),
                        Arg::from(at),
                        Arg::from(u64::from(*steps)),
                        Arg::from(usage.input_tokens),
                        Arg::from(usage.output_tokens),
                        Arg::from(run_id),
                    ],
                )
                .await?;
                // A finished run is forgotten; its next turn (if any) reads it back.
                self.memory.runs.remove(run_id);
                if parent.is_none() {
                    self.memory.next_seq.remove(&root);
                }
            }
            _ => {}
        }
        Ok(root)
    }

    fn known(&mut self, run_id: &str) -> Result<&mut RunState, StoreError> {
        self.memory
            .runs
            .get_mut(run_id)
            .ok_or_else(|| StoreError::Database(format!("run {run_id} was forgotten")))
    }

    /// The writer's memory of `run_id`: remembered, read back from the store, or new (and its row inserted).
    async fn state(
        &mut self,
        tx: &mut Tx,
        run_id: &str,
        parent: Option<&str>,
        at: DateTime<Utc>,
        event: &Event,
    ) -> Result<&mut RunState, StoreError> {
        if !self.memory.runs.contains_key(run_id) {
            let state = self.load(tx, run_id, parent, at, event).await?;
            self.memory.runs.insert(run_id.to_owned(), state);
        }
        self.known(run_id)
    }

    async fn load(
        &mut self,
        tx: &mut Tx,
        run_id: &str,
        parent: Option<&str>,
        at: DateTime<Utc>,
        event: &Event,
    ) -> Result<RunState, StoreError> {
        let rows = tx
            .fetch(
                "SELECT root_id, steps, input_tokens, output_tokens, cost_usd, principal, role FROM runs \
                 WHERE id = $1",
                vec![Arg::from(run_id)],
            )
            .await?;
        if let Some(row) = rows.first() {
            return Ok(RunState {
                root_id: row.string(0)?,
                steps: row.count(1)?,
                usage: Usage {
                    input_tokens: row.count(2)?,
                    output_tokens: row.count(3)?,
                },
                cost: row.real(4)?,
                caller: Caller {
                    principal: row.text(5)?.unwrap_or_default(),
                    role: row.text(6)?,
                    agent_path: self.agent_path(tx, run_id).await?,
                    surface: self.surface.clone(),
                },
            });
        }
        let root_id = match parent {
            None => run_id.to_owned(),
            Some(parent) => match self.memory.runs.get(parent) {
                Some(state) => state.root_id.clone(),
                None => tx
                    .fetch(
                        "SELECT root_id FROM runs WHERE id = $1",
                        vec![Arg::from(parent)],
                    )
                    .await?
                    .first()
                    .map(|row| row.string(0))
                    .transpose()?
                    .unwrap_or_else(|| parent.to_owned()),
            },
        };
        // A run seen first through another event than its start (it began before this observer) still gets
        // a row, so that its events belong to something.
        let (agent, input) = match event {
            Event::RunStarted { agent, input, .. } => (agent.as_str(), input.as_str()),
            _ => ("", ""),
        };
        // A sub-run asks for the same principal as the run that started it.
        let (principal, role) = match parent.and_then(|p| self.memory.runs.get(p)) {
            Some(state) => (
                Some(state.caller.principal.clone()).filter(|p| !p.is_empty()),
                state.caller.role.clone(),
            ),
            None => (self.principal.clone(), self.role.clone()),
        };
        let agent_path = match parent {
            Some(parent) => format!("{}/{agent}", self.agent_path(tx, parent).await?),
            None => agent.to_owned(),
        };
        tx.execute(
            "INSERT INTO runs (id, parent_id, root_id, agent, input, started_at, last_event_at, model, principal, \
             role, cost_usd) VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING",
            vec![
                Arg::from(run_id),
                Arg::Text(parent.map(str::to_owned)),
                Arg::from(root_id.as_str()),
                Arg::from(agent),
                Arg::from(input),
                Arg::from(at),
                Arg::Text(self.model.clone()),
                Arg::Text(principal.clone()),
                Arg::Text(role.clone()),
                Arg::from(self.priced().then_some(0.0)),
            ],
        )
        .await?;
        Ok(RunState {
            root_id,
            steps: 0,
            usage: Usage::default(),
            cost: self.priced().then_some(0.0),
            caller: Caller {
                principal: principal.unwrap_or_default(),
                role,
                agent_path,
                surface: self.surface.clone(),
            },
        })
    }

    /// The agents from the top of `run_id`'s tree down to its own, `/`-separated: from memory where the writer
    /// knows a run, else from the store.
    async fn agent_path(&self, tx: &mut Tx, run_id: &str) -> Result<String, StoreError> {
        let mut agents = Vec::new();
        let mut next = Some(run_id.to_owned());
        // Run trees are shallow; the bound only guards against a cycle in a damaged store.
        for _ in 0..MAX_DEPTH {
            let Some(id) = next.take() else { break };
            if let Some(state) = self.memory.runs.get(&id) {
                agents.push(state.caller.agent_path.clone());
                break;
            }
            let rows = tx
                .fetch(
                    "SELECT parent_id, agent FROM runs WHERE id = $1",
                    vec![Arg::from(id.as_str())],
                )
                .await?;
            let Some(row) = rows.first() else { break };
            agents.push(row.string(1)?);
            next = row.text(0)?;
        }
        agents.reverse();
        Ok(agents.join("/"))
    }

    /// Follows the tool calls of `record` (see `trail.rs`), adding the audit records of those it settles to
    /// `settled`.
    async fn audit(
        &mut self,
        tx: &mut Tx,
        run_id: &str,
        record: &EventRecord,
        settled: &mut Vec<AuditRecord>,
    ) -> Result<(), StoreError> {
        let runs = &self.memory.runs;
        let caller_of = |id: &str| runs.get(id).map(|state| state.caller.clone());
        self.memory
            .trail
            .follow(tx, &caller_of, run_id, record, settled)
            .await
    }

    /// True when model calls can be priced.
    fn priced(&self) -> bool {
        self.cost.is_some() && self.model.is_some()
    }

    async fn next_seq(&mut self, tx: &mut Tx, root: &str) -> Result<i64, StoreError> {
        let next = match self.memory.next_seq.get(root) {
            Some(n) => *n,
            None => {
                let rows = tx
                    .fetch(
                        "SELECT MAX(seq) FROM events WHERE root_id = $1",
                        vec![Arg::from(root)],
                    )
                    .await?;
                match rows.first() {
                    Some(row) => row.int(0)? + 1,
                    None => 1,
                }
            }
        };
        self.memory.next_seq.insert(root.to_owned(), next + 1);
        Ok(next)
    }
}

/// Inserts a tool call (a refused one with its refusal as an error result); a call stored already stays.
async fn tool_call(
    tx: &mut Tx,
    run_id: &str,
    seq: i64,
    call_id: &str,
    tool: &str,
    arguments: &str,
    refused: Option<&str>,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO tool_calls (run_id, call_id, seq, tool, arguments, result, is_error, duration_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (run_id, call_id) DO NOTHING",
        vec![
            Arg::from(run_id),
            Arg::from(call_id),
            Arg::Int(Some(seq)),
            Arg::from(tool),
            Arg::from(arguments),
            Arg::Text(refused.map(str::to_owned)),
            Arg::Bool(refused.map(|_| true)),
            Arg::Int(refused.map(|_| 0)),
        ],
    )
    .await?;
    Ok(())
}

/// The run an event belongs to.
fn run_of(event: &Event) -> Option<&str> {
    Some(match event {
        Event::RunStarted { run_id, .. }
        | Event::FollowUp { run_id, .. }
        | Event::ModelRequest { run_id, .. }
        | Event::ModelDelta { run_id, .. }
        | Event::ModelResponse { run_id, .. }
        | Event::ToolCall { run_id, .. }
        | Event::ValidationError { run_id, .. }
        | Event::ToolDenied { run_id, .. }
        | Event::ToolResult { run_id, .. }
        | Event::ApprovalRequested { run_id, .. }
        | Event::ApprovalDecided { run_id, .. }
        | Event::Finished { run_id, .. } => run_id,
        _ => return None,
    })
}

/// The record with URL secrets taken out of what can hold provider and engine errors: a failed outcome's
/// error, a failed tool's message and an operator diagnostic.
fn redacted(record: &EventRecord) -> Cow<'_, EventRecord> {
    let candidate = matches!(
        &record.event,
        Event::Finished {
            outcome: Outcome::ModelFailed { .. },
            ..
        } | Event::ToolResult { is_error: true, .. }
            | Event::ToolResult {
                diagnostic: Some(_),
                ..
            }
    );
    if !candidate {
        return Cow::Borrowed(record);
    }
    let mut copy = record.clone();
    match &mut copy.event {
        Event::Finished {
            outcome: Outcome::ModelFailed { error, .. },
            ..
        } => redact_in(error),
        Event::ToolResult {
            content,
            is_error,
            diagnostic,
            ..
        } => {
            if *is_error {
                redact_in(content);
            }
            if let Some(d) = diagnostic {
                redact_in(d);
            }
        }
        _ => {}
    }
    Cow::Owned(copy)
}

/// Redacts URL secrets in place.
fn redact_in(text: &mut String) {
    *text = redact_urls(text);
}
