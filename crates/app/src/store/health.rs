//! Whether the store can be written now ([`RunStore::health`]), and what to do when it cannot.
//!
//! The check writes nothing. A SQLite store: the path still names the file the store opened, and a connection
//! of its own (the pool's may have been opened before a fault) takes the write lock (`BEGIN IMMEDIATE`) and
//! runs an `UPDATE` that changes no row, which SQLite refuses on a file it could only open read-only; then it
//! rolls back. PostgreSQL: the same `UPDATE` in a transaction that is rolled back, which fails on a server that
//! does not answer, a read-only server or transaction, or a role without the right. Faults found here also
//! make the store's pool start afresh on its next write.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::RunStore;
use super::engine::ProbeFailure;
use super::sqlite_pool::{FileFault, SqliteProbeFailure};

/// What kind of fault keeps the store from being written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StoreFaultKind {
    /// The SQLite file the store opened was deleted.
    Deleted,
    /// Another file is now at the SQLite store's path.
    Replaced,
    /// The store can be read, not written (permissions, an immutable or read-only file, a read-only server).
    ReadOnly,
    /// The file cannot be opened, or its disk fails.
    Io,
    /// The database server does not answer or refuses connections.
    Unreachable,
    /// Another writer holds the store's write lock.
    Busy,
    /// No answer within the time allowed.
    Timeout,
    /// Anything else the database said.
    Failed,
}

/// Why the run store cannot be written now, and what an operator can do about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StoreFault {
    /// What kind of fault.
    pub kind: StoreFaultKind,
    /// What is wrong, naming the store's file or URL (secrets redacted).
    pub cause: String,
    /// What to do about it.
    pub action: String,
}

impl std::fmt::Display for StoreFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; {}", self.cause, self.action)
    }
}

/// What to do when a SQLite file cannot be written.
fn sqlite_access(path: &Path) -> String {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    format!(
        "give the user steward runs as write access to {} and to its directory {} (SQLite writes {name}-wal and \
         {name}-shm there), and clear any immutable flag (chattr -i) or read-only mount; steward reconnects by \
         itself once it can write, without a restart",
        path.display(),
        dir.display()
    )
}

fn fault(kind: StoreFaultKind, cause: String, action: String) -> StoreFault {
    StoreFault {
        kind,
        cause,
        action,
    }
}

/// The fault a failed probe of the store shown as `shown` stands for.
fn classify(shown: &str, failure: ProbeFailure) -> StoreFault {
    use StoreFaultKind as K;
    let reconnects = "steward reconnects by itself once it answers, without a restart";
    match failure {
        ProbeFailure::Sqlite(SqliteProbeFailure::File(FileFault::Deleted(path))) => fault(
            K::Deleted,
            format!(
                "the run store file {} was deleted while steward was running",
                path.display()
            ),
            "restore it from a backup and restart steward; until then nothing is saved (steward does not create \
             a new, empty store in its place)"
                .to_owned(),
        ),
        ProbeFailure::Sqlite(SqliteProbeFailure::File(FileFault::Replaced(path))) => fault(
            K::Replaced,
            format!(
                "the run store file {} was replaced by another file while steward was running",
                path.display()
            ),
            "restart steward to open the file now at that path; until then nothing is saved".to_owned(),
        ),
        ProbeFailure::Sqlite(SqliteProbeFailure::Refused {
            path,
            code,
            message,
        }) => {
            let path = path.as_path();
            match code {
                Some(3 | 8) => fault(
                    K::ReadOnly,
                    format!("the run store {shown} cannot be written: {message}"),
                    sqlite_access(path),
                ),
                Some(10 | 14) => fault(
                    K::Io,
                    format!("the run store {shown} cannot be opened or written: {message}"),
                    format!(
                        "check the disk and the file system that hold it (space, errors), then: {}",
                        sqlite_access(path)
                    ),
                ),
                Some(5 | 6) => fault(
                    K::Busy,
                    format!("the run store {shown} is locked by another writer: {message}"),
                    "look for a process holding a long write transaction on the file (another steward, a \
                     sqlite3 shell)"
                        .to_owned(),
                ),
                _ => fault(
                    K::Failed,
                    format!("the run store {shown} failed its write check: {message}"),
                    format!(
                        "check the file with `sqlite3 {} 'PRAGMA integrity_check'`",
                        path.display()
                    ),
                ),
            }
        }
        ProbeFailure::PostgresBusy => fault(
            K::Busy,
            format!(
                "the run store {shown} takes connections, but its write check did not finish in time: every \
                 connection of steward's pool is in use, or a lock on the store's tables is held"
            ),
            "look for long transactions on the store's tables (pg_stat_activity, pg_locks); if the server is \
             only busy, allow the store more connections"
                .to_owned(),
        ),
        ProbeFailure::Postgres { code, message } => match code.as_deref() {
            Some("25006" | "25P02" | "25000") => fault(
                K::ReadOnly,
                format!("the run store {shown} is read-only: {message}"),
                "point the store at the primary server, or turn off default_transaction_read_only for its \
                 database and role"
                    .to_owned(),
            ),
            Some("42501") => fault(
                K::ReadOnly,
                format!("the run store {shown} may not be written by its role: {message}"),
                "grant the store's role the right to write its tables".to_owned(),
            ),
            Some(c) if c.starts_with("28") => fault(
                K::Unreachable,
                format!("the run store {shown} refuses steward's credentials: {message}"),
                "check the user and password of the store's URL".to_owned(),
            ),
            Some(c) if c.starts_with("40") || c == "55P03" => fault(
                K::Busy,
                format!("the run store {shown} could not take the check's lock: {message}"),
                "look for a long transaction holding locks on the store's tables".to_owned(),
            ),
            Some(c) if c.starts_with("42") => fault(
                K::Failed,
                format!("the run store {shown} failed its write check: {message}"),
                "check that the URL names steward's store database (its _sqlx_migrations table)".to_owned(),
            ),
            _ => fault(
                K::Unreachable,
                format!("the run store {shown} does not answer: {message}"),
                format!(
                    "check that PostgreSQL is running and accepts connections to this database (pg_isready; \
                     ALLOW_CONNECTIONS, max_connections); {reconnects}"
                ),
            ),
        },
    }
}

impl RunStore {
    /// Checks, within `limit`, that the store can be written now, writing nothing; `Err` says what is wrong
    /// and what to do about it.
    ///
    /// A SQLite store: the path still names the file the store opened (not deleted, not replaced), and a
    /// connection of its own takes the write lock and runs an `UPDATE` that changes no row, which SQLite
    /// refuses on a file it can only open read-only, then rolls back. PostgreSQL: the same `UPDATE` in a
    /// transaction of the pool that is rolled back; when the pool cannot get a connection in time, one direct
    /// connection says why (refused, not accepting connections, bad credentials). A fault found here also
    /// makes a SQLite store's pool start afresh on its next write, so a file that is writable again is written
    /// again without a restart.
    pub async fn health(&self, limit: Duration) -> Result<(), StoreFault> {
        match tokio::time::timeout(limit, self.pool.probe(limit)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(failure)) => Err(classify(&self.shown, failure)),
            Err(_) => Err(fault(
                StoreFaultKind::Timeout,
                format!(
                    "the run store {} did not answer within {} ms",
                    self.shown,
                    limit.as_millis()
                ),
                "check the database: a server or disk that does not answer, the network, or a long \
                 transaction holding the store's write lock; steward reconnects by itself once it answers"
                    .to_owned(),
            )),
        }
    }
}
