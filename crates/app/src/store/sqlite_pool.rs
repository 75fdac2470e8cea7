//! The SQLite store's pool, which notices when its file goes bad and starts afresh when it can.
//!
//! Three faults of a store file, and what they do here:
//! - **Made read-only** (permissions, an immutable flag, a read-only mount): SQLite opens a connection it cannot
//!   open for writing *read-only* instead, without saying so, and that connection stays read-only after the
//!   file is writable again (`attempt to write a readonly database` for ever). So an error that says the file
//!   cannot be written or opened (`SQLITE_READONLY`, `SQLITE_IOERR`, `SQLITE_CANTOPEN`, `SQLITE_PERM`) marks
//!   the pool *suspect*: the next write transaction replaces the whole pool with a new one (new connections,
//!   opened now) and proves that its connection can write with [`WRITE_PROBE`] before it goes on. The first
//!   write that succeeds that way ends the suspicion, and writes cost nothing extra again.
//! - **Deleted** (or replaced by another file): connections already open keep writing to the deleted file,
//!   and every write "succeeds" until the process stops and takes it with it; a new connection would create
//!   an empty file in its place. So connections are opened with `create_if_missing(false)` once the file
//!   exists, and every transaction and read first checks that the path still names the file this pool opened
//!   (its device and inode): when it does not, it fails with an error naming the path.
//! - **A store deleted between two runs**: [`RunStore::open`](super::RunStore::open) leaves a marker next to
//!   the file (`<file>.created`); a missing file with its marker is refused at the next start instead of
//!   being created anew, empty.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use sqlx::{ConnectOptions as _, Connection as _, Sqlite, SqliteConnection, Transaction};

use super::StoreError;
use super::engine::{one_line, plain};

/// A statement that changes nothing but needs a connection that can write: SQLite refuses it on a
/// connection it opened read-only, PostgreSQL in a read-only transaction or on a standby.
pub(crate) const WRITE_PROBE: &str =
    "UPDATE _sqlx_migrations SET version = version WHERE version < 0";

/// How long the health probe's own connection waits for the write lock.
const PROBE_BUSY_TIMEOUT: Duration = Duration::from_millis(250);

/// SQLite's primary result codes that say the file cannot be opened or written (the connection may be bad
/// for good): `SQLITE_PERM`, `SQLITE_READONLY`, `SQLITE_IOERR`, `SQLITE_CANTOPEN`.
const FILE_FAULTS: [i32; 4] = [3, 8, 10, 14];

/// A file's identity: its device and inode (on Unix; elsewhere only whether it exists).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt as _;
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }

    #[cfg(not(unix))]
    fn of(_meta: &std::fs::Metadata) -> Self {
        Self { dev: 0, ino: 0 }
    }
}

/// What became of the store's file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FileFault {
    /// Nothing is at its path any more.
    Deleted(PathBuf),
    /// Another file is at its path.
    Replaced(PathBuf),
}

impl FileFault {
    /// The error a write or read gets.
    pub(crate) fn error(&self) -> StoreError {
        StoreError::database(match self {
            Self::Deleted(path) => format!(
                "the store file {} was deleted while steward was running; nothing more is written to it \
                 (a new, empty store is not created in its place): restore it from a backup and restart steward",
                path.display()
            ),
            Self::Replaced(path) => format!(
                "the store file {} was replaced by another file while steward was running; nothing more is \
                 written to either: restart steward to open the file now at that path",
                path.display()
            ),
        })
    }
}

/// Why the SQLite write probe failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SqliteProbeFailure {
    /// The file was deleted or replaced.
    File(FileFault),
    /// SQLite refused: its primary result code (when it gave one) and message.
    Refused {
        /// The store's file.
        path: PathBuf,
        /// The primary result code.
        code: Option<i32>,
        /// SQLite's message.
        message: String,
    },
}

/// The pool of a SQLite store (see the module's docs). Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct SqliteStore(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    path: PathBuf,
    /// The file the pool opened; `None` for a database in memory.
    file: Option<FileId>,
    /// For every connection: `create_if_missing(false)` once the file exists.
    options: SqliteConnectOptions,
    max_connections: u32,
    acquire_timeout: Duration,
    pool: RwLock<SqlitePool>,
    /// A connection failed in a way that may leave it unable to write (see the module's docs).
    suspect: AtomicBool,
    closed: AtomicBool,
}

/// True when `options` name a database in memory.
pub(crate) fn in_memory(options: &SqliteConnectOptions) -> bool {
    options
        .to_url_lossy()
        .query_pairs()
        .any(|(key, value)| key == "mode" && value == "memory")
}

/// The primary result code of a SQLite error.
fn primary_code(e: &sqlx::Error) -> Option<i32> {
    let code = e.as_database_error()?.code()?;
    code.parse::<i32>().ok().map(|c| c & 0xff)
}

/// True when `e` says the store's file cannot be opened or written.
fn is_file_fault(e: &sqlx::Error) -> bool {
    primary_code(e).is_some_and(|c| FILE_FAULTS.contains(&c))
}

impl SqliteStore {
    /// A pool on the file at `path` (which must exist unless the database is in memory), opened with `options`
    /// and `create_if_missing(false)`; its first connection is opened now.
    pub(crate) async fn connect(
        path: &Path,
        options: SqliteConnectOptions,
        max_connections: u32,
        acquire_timeout: Duration,
    ) -> Result<Self, sqlx::Error> {
        let memory = in_memory(&options);
        let options = if memory {
            options.create_if_missing(true)
        } else {
            options.create_if_missing(false)
        };
        let pool = SqlitePoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(acquire_timeout)
            .connect_with(options.clone())
            .await?;
        let file = if memory {
            None
        } else {
            std::fs::metadata(path).ok().map(|m| FileId::of(&m))
        };
        Ok(Self(Arc::new(Shared {
            path: path.to_owned(),
            file,
            options,
            max_connections,
            acquire_timeout,
            pool: RwLock::new(pool),
            suspect: AtomicBool::new(false),
            closed: AtomicBool::new(false),
        })))
    }

    /// The pool as it is now.
    fn pool(&self) -> SqlitePool {
        self.0
            .pool
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the pool by a new one whose connections are opened from now on; connections of the old pool
    /// in use finish what they do and are closed when they come back.
    fn renew(&self) {
        if self.0.closed.load(Ordering::Acquire) {
            return;
        }
        let fresh = SqlitePoolOptions::new()
            .max_connections(self.0.max_connections)
            .acquire_timeout(self.0.acquire_timeout)
            .connect_lazy_with(self.0.options.clone());
        let old = std::mem::replace(
            &mut *self.0.pool.write().unwrap_or_else(PoisonError::into_inner),
            fresh,
        );
        drop(old);
    }

    /// Checks that the path still names the file the pool opened.
    pub(crate) fn check_file(&self) -> Result<(), FileFault> {
        let Some(opened) = self.0.file else {
            return Ok(());
        };
        match std::fs::metadata(&self.0.path) {
            Ok(meta) if FileId::of(&meta) == opened => Ok(()),
            Ok(_) => Err(FileFault::Replaced(self.0.path.clone())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(FileFault::Deleted(self.0.path.clone()))
            }
            // Not allowed to look (a directory's permissions): SQLite's own error will say more.
            Err(_) => Ok(()),
        }
    }

    /// The error for `e`; one that says the file cannot be written makes the pool suspect.
    pub(crate) fn fail(&self, e: sqlx::Error) -> StoreError {
        if !is_file_fault(&e) {
            return StoreError::driver(one_line(&e.to_string()), e);
        }
        self.0.suspect.store(true, Ordering::Release);
        if let Err(fault) = self.check_file() {
            return fault.error();
        }
        let message = format!(
            "the store file {} cannot be written ({}): check the permissions of the file and of its directory, \
             and the disk; steward reconnects by itself once it can write",
            self.0.path.display(),
            plain(&e)
        );
        StoreError::driver(message, e)
    }

    /// The pool for a read, once the file is checked.
    pub(crate) fn for_read(&self) -> Result<SqlitePool, StoreError> {
        self.check_file().map_err(|f| f.error())?;
        Ok(self.pool())
    }

    /// Begins a write transaction (`BEGIN IMMEDIATE`). When the pool is suspect, it is renewed first and the
    /// transaction's connection must pass [`WRITE_PROBE`] (renewed once more when it does not).
    pub(crate) async fn begin(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        self.check_file().map_err(|f| f.error())?;
        if !self.0.suspect.load(Ordering::Acquire) {
            return self
                .pool()
                .begin_with("BEGIN IMMEDIATE")
                .await
                .map_err(|e| self.fail(e));
        }
        let mut last = None;
        for _ in 0..2 {
            self.renew();
            let mut tx = self
                .pool()
                .begin_with("BEGIN IMMEDIATE")
                .await
                .map_err(|e| self.fail(e))?;
            match sqlx::query(WRITE_PROBE).execute(&mut *tx).await {
                Ok(_) => {
                    self.0.suspect.store(false, Ordering::Release);
                    return Ok(tx);
                }
                Err(e) if is_file_fault(&e) => last = Some(e),
                Err(e) => return Err(self.fail(e)),
            }
        }
        Err(match last {
            Some(e) => self.fail(e),
            None => StoreError::database("the store could not be written"),
        })
    }

    /// Proves, on a connection of its own (not one of the pool's, which may have been opened before the
    /// fault), that the file can be opened and written: `BEGIN IMMEDIATE`, [`WRITE_PROBE`], rolled back.
    pub(crate) async fn probe(&self) -> Result<(), SqliteProbeFailure> {
        self.check_file().map_err(SqliteProbeFailure::File)?;
        let refused = |e: sqlx::Error| {
            if is_file_fault(&e) {
                self.0.suspect.store(true, Ordering::Release);
            }
            SqliteProbeFailure::Refused {
                path: self.0.path.clone(),
                code: primary_code(&e),
                message: plain(&e),
            }
        };
        let options = self.0.options.clone().busy_timeout(PROBE_BUSY_TIMEOUT);
        let mut conn = SqliteConnection::connect_with(&options)
            .await
            .map_err(refused)?;
        let outcome = async {
            let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
            sqlx::query(WRITE_PROBE).execute(&mut *tx).await?;
            tx.rollback().await
        }
        .await;
        let _ = conn.close().await;
        outcome.map_err(refused)?;
        // The path may have changed while the probe ran.
        self.check_file().map_err(SqliteProbeFailure::File)
    }

    /// Closes every connection; the pool is not renewed after.
    pub(crate) async fn close(&self) {
        self.0.closed.store(true, Ordering::Release);
        self.pool().close().await;
    }
}

/// The marker [`RunStore::open`](super::RunStore::open) leaves next to a store file it opened:
/// `<file>.created`.
pub(crate) fn marker_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".created");
    path.with_file_name(name)
}

/// Refuses to create a store where the marker says one was: the file was deleted or moved.
pub(crate) fn check_not_deleted(path: &Path) -> Result<(), String> {
    if path.try_exists().unwrap_or(true) {
        return Ok(());
    }
    let marker = marker_path(path);
    if !marker.try_exists().unwrap_or(false) {
        return Ok(());
    }
    Err(format!(
        "the store file {} is missing, but steward had a store there ({} says so): it was deleted or moved, \
         and with it the conversations, runs and audit trail. Restore it from a backup; to start a new, empty \
         store at that path instead, delete {}",
        path.display(),
        marker.display(),
        marker.display()
    ))
}

/// Leaves the marker next to the store file, when it is not there yet. Best effort: a directory steward
/// cannot write to only loses this check.
pub(crate) fn leave_marker(path: &Path) {
    let marker = marker_path(path);
    if marker.try_exists().unwrap_or(true) {
        return;
    }
    let text = format!(
        "steward opened the run store {} at {}.\nIf that file is missing, it was deleted or moved: steward then \
         refuses to start rather than create an empty store in its place. Restore the file from a backup, or \
         delete this file to start a new, empty store.\n",
        path.display(),
        chrono::Utc::now().to_rfc3339()
    );
    let _ = std::fs::write(marker, text);
}
