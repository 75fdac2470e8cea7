//! The writer task: takes the observer's messages in order and writes each record.
//!
//! Records that arrive together are written in one transaction (one commit instead of one per event). When a
//! write fails, the writer asks the store whether it can be written at all (`Pool::probe`):
//! - it cannot (unreachable, read-only, locked, a PostgreSQL outage): every record is kept, in order, and tried
//!   again with backoff (100 ms, doubling up to 5 s; at once when a flush comes), newer records waiting behind
//!   the older ones, until the store takes them. What is kept is bounded (see `backlog.rs`); a flush waits for
//!   it until its deadline, then reports why it is not written;
//! - it can: the records are written one per transaction, so that one bad record loses only itself.
//!
//! A writer whose observer is gone keeps trying for [`ORPHAN_WAIT`], then gives up; on a closed store it gives
//! up at once. Records are never reordered: the events of a run keep their order, and the audit records their
//! calls settle are appended to the chain in that order.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;
use steward_core::redact::redact_urls;
use steward_core::{Event, EventRecord, Outcome, Usage};
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TryRecvError;
use tokio::time::Instant;

use super::audit::{self, AuditRecord};
use super::backlog::{self, Backlog};
use super::engine::{Arg, Pool, Tx};
use super::observer::{CostFn, Message, Recording, Shared};
use super::trail::{Caller, Trail};
use super::{DIED, RunStore, StoreError, owner};

/// Most messages taken into one transaction.
const MAX_BATCH: usize = 256;

/// Deepest run tree followed when naming a run's agents.
const MAX_DEPTH: usize = 64;

/// The first wait before a write that failed for the store is tried again.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// The longest wait between two tries.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// How long the check that tells a store that cannot be written from a bad record may take.
const PROBE_LIMIT: Duration = Duration::from_secs(2);

/// How long a writer whose observer is gone keeps trying to write what it holds.
const ORPHAN_WAIT: Duration = Duration::from_secs(600);

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
    store: RunStore,
    pool: Pool,
    memory: Memory,
    model: Option<String>,
    principal: Option<String>,
    role: Option<String>,
    surface: Option<String>,
    database: Option<String>,
    cost: Option<CostFn>,
}

/// Why a write failed.
enum Failure {
    /// The store cannot be written now: try again later.
    Store(StoreError),
    /// The store answers; what was written is what it refused.
    Record(StoreError),
}

/// When the next try of a failing store is due, and the wait after it.
#[derive(Clone, Copy, Debug)]
struct Retry {
    at: Instant,
    delay: Duration,
}

impl Retry {
    fn first() -> Self {
        Self {
            at: Instant::now() + FIRST_BACKOFF,
            delay: FIRST_BACKOFF,
        }
    }

    fn next(self) -> Self {
        let delay = (self.delay * 2).min(MAX_BACKOFF);
        Self {
            at: Instant::now() + delay,
            delay,
        }
    }
}

/// The writer's loop state besides the writer itself.
struct Queue {
    receiver: mpsc::UnboundedReceiver<Message>,
    /// False once every sender is gone.
    open: bool,
    backlog: Backlog,
    /// Some while the store cannot be written.
    retry: Option<Retry>,
    shared: Arc<Shared>,
}

impl Queue {
    /// Takes one message; a flush asks for a try now.
    fn take(&mut self, message: Message) {
        match message {
            Message::Record(record) => {
                if !self.backlog.push(*record, self.retry.is_some()) {
                    self.shared.lose(1, overflow());
                }
            }
            Message::Flush { done, deadline } => {
                self.backlog.flush(done, deadline);
                if let Some(retry) = &mut self.retry {
                    retry.at = Instant::now();
                }
            }
        }
    }

    /// Takes what has come, without waiting: one batch while the store takes writes, everything while it
    /// does not (so that what is held is counted).
    fn take_ready(&mut self) {
        while self.open && (self.retry.is_some() || self.backlog.len() < MAX_BATCH) {
            match self.receiver.try_recv() {
                Ok(message) => self.take(message),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => self.open = false,
            }
        }
    }

    /// Answers the flushes whose records are written, and, while the store cannot be written, those past
    /// their deadline.
    fn answer_flushes(&mut self) {
        for flush in self.backlog.flushed() {
            let _ = flush.done.send(self.shared.lost().map_or(Ok(()), Err));
        }
        if self.retry.is_some() {
            for flush in self.backlog.overdue(Instant::now()) {
                let error = self
                    .shared
                    .lost()
                    .or_else(|| self.shared.unwritten())
                    .unwrap_or(StoreError::WriterStopped);
                let _ = flush.done.send(Err(error));
            }
        }
    }

    /// Waits until `until`, or for a message before then.
    async fn wait(&mut self, until: Instant) {
        if !self.open {
            tokio::time::sleep_until(until).await;
            return;
        }
        match tokio::time::timeout_at(until, self.receiver.recv()).await {
            Ok(Some(message)) => self.take(message),
            Ok(None) => self.open = false,
            Err(_) => {}
        }
    }

    /// Gives up every record held, for `error`.
    fn give_up(&mut self, error: StoreError) {
        let n = self.backlog.clear();
        if n > 0 {
            self.shared.lose(n as u64, error);
        }
    }
}

/// The error of a record dropped because the records held for a failing store reached their bound.
fn overflow() -> StoreError {
    StoreError::database(format!(
        "the store could not be written for a while, and the records kept meanwhile reached their bound ({} \
         records or {} MiB in this process): newer records were dropped",
        backlog::MAX_RECORDS,
        backlog::MAX_BYTES / (1024 * 1024)
    ))
}

/// Runs until every sender is gone and every record is written (or given up).
pub(crate) async fn run(
    store: RunStore,
    receiver: mpsc::UnboundedReceiver<Message>,
    shared: Arc<Shared>,
    recording: Recording,
) {
    let mut writer = Writer {
        pool: store.pool.clone(),
        store,
        memory: Memory::default(),
        model: recording.model,
        principal: recording.principal,
        role: recording.role,
        surface: recording.surface,
        database: recording.database,
        cost: recording.cost,
    };
    let mut queue = Queue {
        receiver,
        open: true,
        backlog: Backlog::new(&backlog::PROCESS),
        retry: None,
        shared,
    };
    let mut orphaned: Option<Instant> = None;
    loop {
        // Flushes whose records the last try wrote (or gave up) are answered before waiting for more.
        queue.answer_flushes();
        if queue.open && queue.backlog.is_empty() {
            match queue.receiver.recv().await {
                Some(message) => queue.take(message),
                None => queue.open = false,
            }
        }
        queue.take_ready();
        if !queue.open && orphaned.is_none() {
            orphaned = Some(Instant::now());
        }
        queue.answer_flushes();
        if queue.backlog.is_empty() {
            if queue.open {
                continue;
            }
            return;
        }
        if let Some(retry) = queue.retry {
            let give_up_at = orphaned.map(|since| since + ORPHAN_WAIT);
            if give_up_at.is_some_and(|at| Instant::now() >= at) {
                queue.give_up(StoreError::database(format!(
                    "the store could not be written for {} minutes after the run's observer was dropped",
                    ORPHAN_WAIT.as_secs() / 60
                )));
                queue.answer_flushes();
                return;
            }
            if Instant::now() < retry.at {
                let until = [Some(retry.at), queue.backlog.next_deadline(), give_up_at]
                    .into_iter()
                    .flatten()
                    .min()
                    .unwrap_or(retry.at);
                queue.wait(until).await;
                continue;
            }
        }
        match writer.attempt(&mut queue.backlog, &queue.shared).await {
            Ok(()) => {
                queue.retry = None;
                queue.shared.waiting(None);
            }
            Err(e) if writer.store.is_closed() => queue.give_up(e),
            Err(e) => {
                if queue.retry.is_none() {
                    let dropped = queue.backlog.count_all();
                    if dropped > 0 {
                        queue.shared.lose(dropped as u64, overflow());
                    }
                }
                queue.shared.waiting(Some((e, queue.backlog.len())));
                queue.retry = Some(queue.retry.map_or_else(Retry::first, Retry::next));
            }
        }
    }
}

impl Writer {
    /// Writes the oldest records held: a batch in one transaction, or, when that fails and the store can be
    /// written, one record per transaction, dropping (and counting in `shared`) each one the store refuses.
    /// An error means the store cannot be written now: what was not written is still held.
    async fn attempt(&mut self, backlog: &mut Backlog, shared: &Shared) -> Result<(), StoreError> {
        let n = backlog.len().min(MAX_BATCH);
        let failure = match self.write(&backlog.front(n)).await {
            Ok(()) => {
                backlog.pop(n);
                return Ok(());
            }
            Err(failure) => failure,
        };
        match failure {
            Failure::Store(e) => return Err(e),
            Failure::Record(e) if !self.writable().await => return Err(e),
            Failure::Record(_) => {}
        }
        for _ in 0..n {
            match self.write(&backlog.front(1)).await {
                Ok(()) => backlog.pop(1),
                Err(Failure::Store(e)) => return Err(e),
                Err(Failure::Record(e)) => {
                    if !self.writable().await {
                        return Err(e);
                    }
                    backlog.pop(1);
                    shared.lose(1, e);
                }
            }
        }
        Ok(())
    }

    /// True when the store can be written now.
    async fn writable(&self) -> bool {
        if self.store.is_closed() {
            return false;
        }
        matches!(
            tokio::time::timeout(PROBE_LIMIT, self.pool.probe(PROBE_LIMIT)).await,
            Ok(Ok(()))
        )
    }

    /// Writes `records` in one transaction; on failure the writer's memory is as it was before.
    async fn write(&mut self, records: &[&EventRecord]) -> Result<(), Failure> {
        if records.is_empty() {
            return Ok(());
        }
        let before = self.memory.clone();
        let mut tx = match self.pool.begin().await {
            Ok(tx) => tx,
            Err(e) => return Err(Failure::Store(e)),
        };
        match self.batch(&mut tx, records).await {
            Ok(()) => match tx.commit().await {
                Ok(()) => Ok(()),
                Err(e) => {
                    self.memory = before;
                    Err(Failure::Record(e))
                }
            },
            Err(e) => {
                self.memory = before;
                Err(Failure::Record(e))
            }
        }
    }

    /// Writes `records` and the audit records of the calls they settle in `tx`. On SQLite it holds the write
    /// lock from its start (`BEGIN IMMEDIATE`), so the audit chain's head, read last, is the newest.
    async fn batch(&mut self, tx: &mut Tx, records: &[&EventRecord]) -> Result<(), StoreError> {
        let mut last: HashMap<String, DateTime<Utc>> = HashMap::new();
        let mut settled = Vec::new();
        for record in records {
            let root = self.record(tx, record, &mut settled).await?;
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
        audit::append(tx, &mut settled).await
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
            .map_err(|e| StoreError::database(format!("an event cannot be stored: {e}")))?;
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
                    StoreError::database(format!("an outcome cannot be stored: {e}"))
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
            .ok_or_else(|| StoreError::database(format!("run {run_id} was forgotten")))
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
            // The run goes on in this process, which owns it from now on; one marked died has no outcome
            // again until it ends.
            tx.execute(
                "UPDATE runs SET owner = $1, outcome = CASE WHEN outcome = $2 THEN NULL ELSE outcome END \
                 WHERE id = $3",
                vec![
                    Arg::from(owner::this_process()),
                    Arg::from(DIED),
                    Arg::from(run_id),
                ],
            )
            .await?;
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
             role, cost_usd, owner, database) VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, $10, $11, $12) \
             ON CONFLICT (id) DO NOTHING",
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
                Arg::from(owner::this_process()),
                Arg::Text(self.database.clone()),
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
        | Event::CallStaged { run_id, .. }
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
