//! The durable run store: every run (a router's sub-runs included), its events in order and its tool calls,
//! in SQLite by default (one file in the user's data directory) or PostgreSQL by URL.
//!
//! A [`StoreObserver`] attached to a runner writes each event as it happens, so a process that dies mid-run
//! leaves the run stored up to its last event; whoever opens the store next on the same host marks it
//! [`DIED`] (see `owner.rs`). A write that fails is kept and tried again until the store answers (see
//! `writer.rs`). [`RunStore::list`] and
//! [`RunStore::get`] read runs back; a stored run's events parse back into [`EventRecord`]s, so any trace
//! renderer can replay them.
//!
//! The schema is created and upgraded by migrations embedded in the binary (see `migrate.rs`):
//! - `runs`: one row per run; `root_id` is the top run of the tree (its own id for a top run), `outcome` the
//!   outcome's name and `outcome_json` the whole outcome (NULL while the run has not ended; `outcome` is
//!   [`DIED`] and `outcome_json` NULL for a run whose process died), token counts and `steps` the run's own,
//!   `cost_usd` NULL when the price is unknown, `owner` the process that writes it;
//! - `events`: `(run_id, seq)` with `seq` counted across the whole tree, so ordering a tree's events by `seq`
//!   gives the order they happened in; `record` is the [`EventRecord`] as JSON;
//! - `tool_calls`: one row per call (refused calls included), with its raw arguments and its result;
//! - `audit_trail`: one record per settled tool call, in one hash chain for the whole store (see
//!   [`RunStore::audit`] and [`RunStore::verify_audit`]; the chain is described in `audit.rs`);
//! - `verified_examples`: questions with the SQL that answered them, per database (see `examples.rs`).
//!
//! Provider errors in outcomes and tool diagnostics are stored with URL secrets redacted.

mod audit;
mod backlog;
mod change_sets;
mod conversations;
mod engine;
mod examples;
mod health;
mod knowledge;
mod migrate;
mod observer;
mod owner;
mod pending;
mod query;
mod sqlite_pool;
mod trail;
mod writer;

use std::path::{Path, PathBuf};
use std::str::FromStr as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::Connection as _;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use steward_core::redact::{redact_url, redact_urls};
use steward_core::{EventRecord, Outcome, Usage};

pub use audit::{AuditRecord, AuditReport, ChainBreak, GENESIS, sql_fingerprint};
pub use change_sets::ChangeSet;
pub use conversations::{Conversation, ConversationMessage, Deleted, Reply, TurnRefused};
pub use examples::{Added, ExampleSource, NewExample, SavedExample};
pub use health::{StoreFault, StoreFaultKind};
pub use knowledge::StoredKnowledge;
pub use observer::{CostFn, FLUSH_WAIT, Recording, StoreObserver};
pub use pending::{PendingApproval, PendingRun, RunContext};
pub use query::RunFilter;

use engine::{Pool, one_line};

/// How long SQLite waits for another writer before giving up.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(15);
/// Connections of a PostgreSQL store's pool.
const PG_CONNECTIONS: u32 = 16;
/// How long opening a PostgreSQL store may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a statement waits for a connection of a PostgreSQL store's pool: while the server does not
/// answer, requests fail after this long instead of hanging (the pool keeps trying to connect meanwhile).
const PG_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// What went wrong with the run store.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The URL names no engine the store runs on.
    #[error("unsupported run store URL `{0}`: use sqlite://path or postgres://user@host/db")]
    BadUrl(String),
    /// The store could not be opened or created.
    #[error("cannot open the run store {url}: {reason}")]
    Open {
        /// The store's URL, secrets redacted.
        url: String,
        /// Why.
        reason: String,
    },
    /// The store's schema is newer than this build.
    #[error(
        "the run store {url} has schema version {found}, newer than this steward knows ({known}); upgrade steward"
    )]
    TooNew {
        /// The store's URL, secrets redacted.
        url: String,
        /// The store's version.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// A statement failed.
    #[error("run store: {message}")]
    Database {
        /// What failed, on one line.
        message: String,
        /// The driver's error, when one caused it.
        #[source]
        source: Option<Arc<sqlx::Error>>,
    },
    /// Something stored cannot be read back.
    #[error("run store: a stored value cannot be read: {0}")]
    Corrupt(String),
    /// No run has this id or id prefix.
    #[error("no stored run matches `{0}` (`steward runs list` shows the runs)")]
    NotFound(String),
    /// No change set has this id or id prefix.
    #[error("no change set matches `{0}` (`steward changes list` shows the ones that wait)")]
    NoChangeSet(String),
    /// Several runs (or approvals, or change sets: `what`) start with this prefix.
    #[error("`{prefix}` matches several {what}: {}; give more of the id", candidates.join(", "))]
    Ambiguous {
        /// What it names: `runs`, `approvals`, `change sets`.
        what: &'static str,
        /// The prefix given.
        prefix: String,
        /// Some of the runs it matches, newest first.
        candidates: Vec<String>,
    },
    /// The store observer needs a Tokio runtime for its writer task.
    #[error("the run store's writer needs a Tokio runtime")]
    NoRuntime,
    /// The writer task is gone; what was sent since could not be written.
    #[error("the run store's writer stopped")]
    WriterStopped,
}

impl StoreError {
    /// A failed statement, said as `message`.
    pub(crate) fn database(message: impl Into<String>) -> Self {
        Self::Database {
            message: message.into(),
            source: None,
        }
    }

    /// A failed statement, said as `message`, caused by the driver's `error`.
    pub(crate) fn driver(message: impl Into<String>, error: sqlx::Error) -> Self {
        Self::Database {
            message: message.into(),
            source: Some(Arc::new(error)),
        }
    }
}

/// A top run as `steward runs list` shows it: totals include its sub-runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The run's id.
    pub id: String,
    /// The agent that ran it.
    pub agent: String,
    /// The user's question (the first one, for a conversation).
    pub input: String,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// When it last ended (a conversation ends once per turn); `None` while it has not.
    pub finished_at: Option<DateTime<Utc>>,
    /// When its last event (of any run in its tree) happened.
    pub last_event_at: DateTime<Utc>,
    /// The outcome's name (`answered`, `max_steps`, …), [`DIED`] for a run whose process died before it
    /// ended, or [`INCOMPLETE`] for a run that has not ended: still going, waiting for approval, or its process
    /// died and no one opened the store on its host since.
    pub outcome: String,
    /// Model calls, sub-runs included.
    pub steps: u64,
    /// Tokens, sub-runs included.
    pub usage: Usage,
    /// Cost in US dollars, sub-runs included; `None` when a price is unknown.
    pub cost_usd: Option<f64>,
    /// The model, when it was known.
    pub model: Option<String>,
    /// How many sub-runs it started.
    pub sub_runs: u64,
}

/// The outcome name of a run that has not ended.
pub const INCOMPLETE: &str = "incomplete";

/// The outcome name of a run whose process died before it ended (marked when the store is opened next on its
/// host: see [`RunStore::mark_died`]).
pub const DIED: &str = "died";

impl RunSummary {
    /// True once the run has ended: with an outcome, or because its process died.
    pub fn is_complete(&self) -> bool {
        self.outcome != INCOMPLETE
    }

    /// True when its process died before it ended.
    pub fn died(&self) -> bool {
        self.outcome == DIED
    }

    /// From its start to its end, or to its last event when it has not ended.
    pub fn duration(&self) -> chrono::Duration {
        self.finished_at.unwrap_or(self.last_event_at) - self.started_at
    }
}

/// One stored run (a top run or a sub-run).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    /// The run's id.
    pub id: String,
    /// The run that started it.
    pub parent_id: Option<String>,
    /// The top run of its tree (its own id for a top run).
    pub root_id: String,
    /// The agent.
    pub agent: String,
    /// The user's input (or the request a router sent).
    pub input: String,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// When it last ended.
    pub finished_at: Option<DateTime<Utc>>,
    /// When the last event of its tree was written (kept on top runs).
    pub last_event_at: DateTime<Utc>,
    /// How it ended; `None` while it has not, and for a run whose process died.
    pub outcome: Option<Outcome>,
    /// True when its process died before it ended (see [`RunStore::mark_died`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub died: bool,
    /// Its own model calls.
    pub steps: u64,
    /// Its own tokens.
    pub usage: Usage,
    /// Its own cost in US dollars, when known.
    pub cost_usd: Option<f64>,
    /// The model.
    pub model: Option<String>,
    /// Who asked (`None`: the local user).
    pub principal: Option<String>,
    /// The role it ran with, when one applied.
    pub role: Option<String>,
}

/// A tool call of a stored run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The run that made it.
    pub run_id: String,
    /// The call's id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments exactly as the model sent them.
    pub arguments: String,
    /// The result (or the refusal) as the tool or the validator gave it; `None` while it runs.
    pub result: Option<String>,
    /// True when the call failed or was refused.
    pub is_error: Option<bool>,
    /// How long it ran.
    pub duration_ms: Option<u64>,
}

/// A stored run with everything under it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunDetail {
    /// The run asked for.
    pub run: StoredRun,
    /// Every run it started, directly or not, in the order they started.
    pub sub_runs: Vec<StoredRun>,
    /// The tool calls of all of them, in the order they were made.
    pub tool_calls: Vec<ToolCallRecord>,
    /// The events of all of them, in the order they happened.
    pub events: Vec<EventRecord>,
}

/// The run store: a handle on one SQLite file or PostgreSQL database. Cheap to clone.
#[derive(Clone, Debug)]
pub struct RunStore {
    pool: Pool,
    shown: String,
    /// Set by [`RunStore::close`] (for every clone).
    closed: Arc<AtomicBool>,
}

/// Where the store lives by default: `<data dir>/steward/store.sqlite` (see [`crate::data_dir`]).
pub fn default_path() -> PathBuf {
    crate::data_dir().join("steward").join("store.sqlite")
}

impl RunStore {
    /// Opens (creating when needed) the store at `url`: `sqlite://path`, `postgres://…`, or, for `None`, the
    /// SQLite file at [`default_path`]. The schema is brought up to date, and the runs of processes of this
    /// host that died are marked [`DIED`] ([`RunStore::mark_died`]; best effort: a failure there leaves them
    /// for the next open).
    pub async fn open(url: Option<&str>) -> Result<Self, StoreError> {
        let url = url.map(str::trim).filter(|u| !u.is_empty());
        let Some(url) = url else {
            let path = default_path();
            let options = SqliteConnectOptions::new().filename(&path);
            return Self::sqlite(options, &path, format!("sqlite://{}", path.display())).await;
        };
        let shown = redact_url(url);
        let scheme = url.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            Some("sqlite") => {
                let options =
                    SqliteConnectOptions::from_str(url).map_err(|e| StoreError::Open {
                        url: shown.clone(),
                        reason: one_line(&e.to_string()),
                    })?;
                let path = options.get_filename().to_owned();
                Self::sqlite(options, &path, shown).await
            }
            Some("postgres" | "postgresql") => Self::postgres(url, shown).await,
            _ => Err(StoreError::BadUrl(shown)),
        }
    }

    /// Opens a SQLite store. A file that does not exist is created, unless the marker left next to it by an
    /// earlier open says that a store was there (it was deleted or moved: refused, see `sqlite_pool.rs`).
    /// Connections are opened with `create_if_missing(false)` once the file exists, so a file deleted while
    /// steward runs is reported, never silently created anew.
    async fn sqlite(
        options: SqliteConnectOptions,
        path: &Path,
        shown: String,
    ) -> Result<Self, StoreError> {
        let fail = |reason: String| StoreError::Open {
            url: shown.clone(),
            reason,
        };
        let memory = sqlite_pool::in_memory(&options);
        if !memory {
            sqlite_pool::check_not_deleted(path).map_err(&fail)?;
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
            }
        }
        let options = options
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(SQLITE_BUSY_TIMEOUT);
        // Several processes opening a new store at once race to switch it to WAL, which SQLite reports as
        // "database is locked" at once rather than through the busy timeout: try again for a while.
        let started = std::time::Instant::now();
        let mut delay = Duration::from_millis(10);
        loop {
            let attempt = async {
                if !memory && !path.try_exists().unwrap_or(true) {
                    // The one connection that may create the file.
                    let first = sqlx::SqliteConnection::connect_with(
                        &options.clone().create_if_missing(true),
                    )
                    .await
                    .map_err(|e| fail(one_line(&e.to_string())))?;
                    let _ = first.close().await;
                }
                let store = sqlite_pool::SqliteStore::connect(
                    path,
                    options.clone(),
                    4,
                    SQLITE_BUSY_TIMEOUT,
                )
                .await
                .map_err(|e| fail(one_line(&e.to_string())))?;
                Self::ready(Pool::Sqlite(store), shown.clone()).await
            };
            match attempt.await {
                Err(StoreError::Open { reason, .. })
                    if reason.contains("database is locked")
                        && started.elapsed() < SQLITE_BUSY_TIMEOUT =>
                {
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_millis(500));
                }
                Ok(store) => {
                    if !memory {
                        sqlite_pool::leave_marker(path);
                    }
                    return Ok(store);
                }
                other => return other,
            }
        }
    }

    async fn postgres(url: &str, shown: String) -> Result<Self, StoreError> {
        let fail = |e: sqlx::Error| StoreError::Open {
            url: shown.clone(),
            reason: redact_urls(&one_line(&e.to_string())),
        };
        let options = PgConnectOptions::from_str(url)
            .map_err(fail)?
            .application_name("steward-store");
        // One direct connection first: a pool retries until its timeout and hides why it failed.
        let probe =
            tokio::time::timeout(CONNECT_TIMEOUT, sqlx::PgConnection::connect_with(&options))
                .await
                .map_err(|_| StoreError::Open {
                    url: shown.clone(),
                    reason: format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
                })?
                .map_err(fail)?;
        let _ = probe.close().await;
        // Every run writes through its own writer task; a server runs many at once, and PostgreSQL commits
        // concurrent transactions together (one log flush for several), so more connections mean more runs
        // per flush. SQLite has one writer whatever the pool.
        // Each idle connection is tested before it is lent (a session the server ended is dropped, and a new
        // one opened): the pool reconnects by itself after an outage.
        let pool = PgPoolOptions::new()
            .max_connections(PG_CONNECTIONS)
            .acquire_timeout(PG_ACQUIRE_TIMEOUT)
            .test_before_acquire(true)
            .connect_lazy_with(options);
        Self::ready(Pool::Postgres(pool), shown).await
    }

    async fn ready(pool: Pool, shown: String) -> Result<Self, StoreError> {
        if let Err(e) = migrate::migrate(&pool, &shown).await {
            pool.close().await;
            return Err(match e {
                // The driver's error stays out: its text was not redacted.
                StoreError::Database { message, .. } => StoreError::Open {
                    url: shown,
                    reason: message,
                },
                other => other,
            });
        }
        let store = Self {
            pool,
            shown,
            closed: Arc::default(),
        };
        // Best effort: the store opened, and runs not marked now are marked by the next open.
        let _ = store.mark_died().await;
        Ok(store)
    }

    /// The store's URL, secrets redacted.
    pub fn url(&self) -> &str {
        &self.shown
    }

    /// The schema version this build writes.
    pub fn schema_version() -> i64 {
        migrate::latest()
    }

    /// Closes the store's connections (handles cloned from this one close too).
    pub async fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.pool.close().await;
    }

    /// True once [`RunStore::close`] was called on this handle or a clone.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}
