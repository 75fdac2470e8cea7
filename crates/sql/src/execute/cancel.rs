//! Stopping a statement on the server when the future that ran it is dropped before it finished: Ctrl-C, a
//! client that went away, a caller's time limit.
//!
//! Dropping the future only closes the client's side of the connection (see `lease`); a PostgreSQL or
//! MySQL/MariaDB server does not read the socket while a statement runs, so the statement would run on to
//! its time limit. Each read therefore learns its session's id in the round trip that opens its transaction
//! (`pg_backend_pid()`, `CONNECTION_ID()`) and arms a [`Cancel`]; the read disarms it when it returns, in
//! any way. Dropped armed, it spawns a task on the current Tokio runtime that opens a separate connection
//! with the pool's options and sends `SELECT pg_cancel_backend(pid)` or `KILL QUERY id` (sqlx keeps
//! PostgreSQL's cancel key to itself, so the wire protocol's CancelRequest is not available). The dropping
//! thread never waits. A process about to exit waits for the tasks still in flight with
//! [`settle_cancellations`], which never waits longer than [`CANCEL_BOUND`].
//!
//! SQLite needs none of this: its statement runs on sqlx's worker thread under a progress handler that
//! stops it once the read's future is gone (see `sqlite`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use sqlx::mysql::{MySqlConnectOptions, MySqlConnection};
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{AssertSqlSafe, Connection as _};
use tokio::sync::Notify;

/// The longest one cancellation may take (connecting included), and the longest [`settle_cancellations`]
/// waits.
pub const CANCEL_BOUND: Duration = Duration::from_secs(2);

/// Cancellations sent and not yet finished.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
/// Woken when [`IN_FLIGHT`] falls to zero.
static SETTLED: Notify = Notify::const_new();

/// Waits until every cancellation sent so far for a dropped query has reached its server (or failed), at
/// most [`CANCEL_BOUND`]; true when none is left in flight.
///
/// Cancellations are sent from tasks on the Tokio runtime, so that dropping a query never blocks; a process
/// that exits right after dropping one (Ctrl-C) calls this first, or the task dies with the process and the
/// statement runs on until the engine's own time limit stops it.
///
/// ```no_run
/// # async fn demo(db: &steward_sql::Database) {
/// let limits = steward_sql::QueryLimits::default();
/// tokio::select! {
///     _ = db.query_read_only("SELECT pg_sleep(30)", &[], &limits) => {}
///     _ = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
/// }
/// // The query's future is dropped: its cancellation is on its way.
/// steward_sql::settle_cancellations().await;
/// # }
/// ```
pub async fn settle_cancellations() -> bool {
    let settled = async {
        loop {
            // Registered before the count is read: a wake-up between the two is not lost.
            let notified = SETTLED.notified();
            if IN_FLIGHT.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    };
    tokio::time::timeout(CANCEL_BOUND, settled).await.is_ok()
}

/// The session running a statement, and how to reach its server from another connection.
pub(crate) enum Target {
    /// A PostgreSQL backend.
    Postgres {
        /// The options of the pool the connection came from.
        options: Arc<PgConnectOptions>,
        /// `pg_backend_pid()` of the session.
        pid: i32,
    },
    /// A MySQL or MariaDB connection.
    Mysql {
        /// The options of the pool the connection came from.
        options: Arc<MySqlConnectOptions>,
        /// `CONNECTION_ID()` of the session.
        id: u64,
    },
}

impl Target {
    /// Asks the server, over a connection of its own, to stop what the session is running.
    async fn send(self) -> Result<(), sqlx::Error> {
        match self {
            Self::Postgres { options, pid } => {
                let mut conn = PgConnection::connect_with(&options).await?;
                sqlx::raw_sql(AssertSqlSafe(format!("SELECT pg_cancel_backend({pid})")))
                    .execute(&mut conn)
                    .await?;
                conn.close().await
            }
            Self::Mysql { options, id } => {
                let mut conn = MySqlConnection::connect_with(&options).await?;
                sqlx::raw_sql(AssertSqlSafe(format!("KILL QUERY {id}")))
                    .execute(&mut conn)
                    .await?;
                conn.close().await
            }
        }
    }
}

/// Cancels its session's statement when dropped armed, that is, before the read that armed it returned.
pub(crate) struct Cancel(Option<Target>);

impl Cancel {
    /// Armed for `target`; unarmed when the session's id could not be read.
    pub(crate) fn arm(target: Option<Target>) -> Self {
        Self(target)
    }

    /// The statement ended on its own: nothing to cancel.
    pub(crate) fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for Cancel {
    fn drop(&mut self) {
        let Some(target) = self.0.take() else {
            return;
        };
        // Without a runtime there is nowhere to send from: the engine's time limit stays the bound.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let in_flight = InFlight::start();
        runtime.spawn(async move {
            // Counted until this task ends, also when the runtime drops it unfinished.
            let _in_flight = in_flight;
            // Best effort: a failure leaves the statement to the engine's own time limit.
            let _ = tokio::time::timeout(CANCEL_BOUND, target.send()).await;
        });
    }
}

/// One cancellation in flight, counted from creation to drop.
struct InFlight;

impl InFlight {
    fn start() -> Self {
        IN_FLIGHT.fetch_add(1, Ordering::AcqRel);
        Self
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if IN_FLIGHT.fetch_sub(1, Ordering::AcqRel) == 1 {
            SETTLED.notify_waiters();
        }
    }
}
