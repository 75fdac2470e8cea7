//! Connecting to a database by URL: `sqlite://path` (or a path to an existing file), `sqlite::memory:`,
//! `postgres://…`, `mysql://…` (MariaDB too). Pooled; every failure is one clear line without secrets.
//!
//! Where a caller enters sqlx, the future is boxed: sqlx's own futures nest deep enough that a caller holding
//! one inline overflowed the compiler's layout queries in release builds (docs/DESIGN.md, "Async depth").

use std::path::Path;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt as _;
use sqlx::mysql::{MySqlConnectOptions, MySqlPool, MySqlPoolOptions, MySqlSslMode};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgSslMode};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};

use crate::catalog::Catalog;
use crate::connect::{connect_error, probe};
use crate::dialect::Dialect;
use crate::error::SqlError;
use crate::loopback;
use crate::privileges::{self, Privileges};
use crate::session;
use steward_core::redact::redact_url;

/// How long to wait for a connection.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a SQLite statement waits for another process's lock before it fails: writers queue instead of
/// failing with "database is locked".
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(15);

/// The connection pools of one database.
#[derive(Debug, Clone)]
pub(crate) enum Pools {
    /// SQLite: a pool for writes and one opened read-only (`SQLITE_OPEN_READONLY` and `query_only`, whatever
    /// the URL says) for every read.
    Sqlite {
        /// Read and write; keeps one connection open (an in-memory database lives as long as it).
        write: SqlitePool,
        /// Opened read-only.
        read: SqlitePool,
    },
    /// PostgreSQL: reads on connections whose transactions are read-only by default.
    Postgres {
        /// For writes and scripts.
        write: PgPool,
        /// Read-only sessions.
        read: PgPool,
    },
    /// MySQL or MariaDB: reads on connections whose transactions are read-only by default (which, unlike
    /// `START TRANSACTION READ ONLY` alone, also stops DDL and its implicit commit).
    Mysql {
        /// For writes and scripts.
        write: MySqlPool,
        /// Read-only sessions.
        read: MySqlPool,
    },
}

/// A database Steward can introspect and query.
#[derive(Debug)]
pub struct Database {
    url: String,
    dialect: Dialect,
    mariadb: bool,
    privileges: Option<Privileges>,
    pub(crate) pools: Pools,
    pub(crate) catalog: Mutex<Option<Arc<Catalog>>>,
    /// The guard built for this database by [`Database::guard`], once.
    pub(crate) guard: tokio::sync::OnceCell<crate::guard::Guard>,
}

/// Whether a SQLite file exists in rollback-journal mode with no journal beside it: then no connection has a
/// transaction to roll back before readers may use it. A write-ahead-log database is not settled (its readers
/// need the log's files, which its writer makes).
fn sqlite_file_is_settled(path: &std::path::Path) -> bool {
    use std::io::Read as _;
    let mut header = [0u8; 20];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut header));
    // Bytes 18 and 19 are the file format's write and read versions: 1 for a rollback journal, 2 for WAL.
    let journal_mode = read.is_ok() && header.get(18..20) == Some(&[1, 1][..]);
    let mut journal = path.as_os_str().to_owned();
    journal.push("-journal");
    journal_mode && !std::path::Path::new(&journal).exists()
}

impl Database {
    /// Connects by URL.
    pub async fn connect(url: &str) -> Result<Self, SqlError> {
        async move {
        let url = url.trim();
        let shown = redact_url(url);
        let (scheme, _) = url.split_once(':').unwrap_or(("", url));
        match scheme.to_ascii_lowercase().as_str() {
            "sqlite" => Self::sqlite(url, &shown).await,
            "postgres" | "postgresql" => Self::postgres(url, &shown).await,
            "mysql" | "mariadb" => Self::mysql(url, &shown).await,
            _ if !url.contains("://") && Path::new(url).is_file() => {
                Self::sqlite(&format!("sqlite://{url}"), &shown).await
            }
            _ if !url.contains("://") => Err(SqlError::bad_url(format!(
                "`{shown}` is neither a database URL nor an existing file; use sqlite://path, postgres://user@host/db or mysql://user@host/db"
            ))),
            other => Err(SqlError::bad_url(format!(
                "unsupported database URL scheme `{other}` in `{shown}`; use sqlite://, postgres:// or mysql://"
            ))),
        }
    }.boxed().await
    }

    async fn sqlite(url: &str, shown: &str) -> Result<Self, SqlError> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| SqlError::bad_url(format!("invalid SQLite URL `{shown}`: {e}")))?
            .busy_timeout(SQLITE_BUSY_TIMEOUT);
        // Only for the message below: whether the database is a file is the driver's business.
        let memory = url.contains(":memory:") || url.contains("mode=memory");
        if !memory {
            let path = options.get_filename();
            if !path.exists() && !url.contains("mode=rwc") {
                return Err(SqlError::connect(format!(
                    "SQLite database file not found: {} (add ?mode=rwc to the URL to create it)",
                    path.display()
                )));
            }
        }
        let fail = |e: sqlx::Error| {
            SqlError::connect(format!("cannot open {shown}: {}", one_line(&e.to_string())))
                .caused_by(e)
        };
        // One writer: SQLite writes one transaction at a time anyway; in one process they queue for this
        // connection, across processes they wait on the busy timeout.
        let write_options = SqlitePoolOptions::new()
            .after_connect(|conn, _| Box::pin(register_sqlite_functions(conn)))
            .acquire_timeout(SQLITE_BUSY_TIMEOUT)
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None);
        // The writer opens first and reads the schema when the file must be created, or when a journal beside
        // it may be hot: a writer killed mid-transaction leaves one, and it must be rolled back before any
        // read-only connection meets it. Otherwise it opens on the first write: each connection parses the
        // whole schema when it opens (a quarter of a second and tens of MB at 10,000 tables), which a
        // process that only reads need not pay twice.
        let write = if memory || !sqlite_file_is_settled(options.get_filename()) {
            let write = write_options
                .min_connections(1)
                .connect_with(options.clone())
                .await
                .map_err(fail)?;
            sqlx::query("SELECT count(*) FROM sqlite_master")
                .fetch_one(&write)
                .await
                .map_err(fail)?;
            write
        } else {
            write_options.connect_lazy_with(options.clone())
        };
        // Opened on first use: no reader holds the file while setup scripts change it.
        let read = SqlitePoolOptions::new()
            .after_connect(|conn, _| Box::pin(register_sqlite_functions(conn)))
            .acquire_timeout(CONNECT_TIMEOUT)
            .max_connections(4)
            .connect_lazy_with(
                options
                    .read_only(true)
                    .create_if_missing(false)
                    .pragma("query_only", "ON"),
            );
        Ok(Self::new(
            shown,
            Dialect::Sqlite,
            false,
            None,
            Pools::Sqlite { write, read },
        ))
    }

    async fn postgres(url: &str, shown: &str) -> Result<Self, SqlError> {
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| {
                SqlError::bad_url(format!(
                    "invalid PostgreSQL URL `{shown}`: {}",
                    one_line(&e.to_string())
                ))
            })?
            // The server's own float output, not a driver's preference.
            .extra_float_digits(None)
            .application_name("steward");
        let target = format!("{}:{}", options.get_host(), options.get_port());
        let plain =
            loopback::postgres_plain_first(url, options.get_host(), options.get_socket().is_some())
                .then(|| options.clone().ssl_mode(PgSslMode::Disable));
        // One direct connection first: a pool retries until its timeout and hides why it failed. It also
        // reads the session defaults the database would give a client that did not ask for any, and settles
        // whether the pools connect with TLS.
        let (mut probe, options) =
            probe::<sqlx::PgConnection>(&options, plain, &target, shown).await?;
        let defaults = session::pg_defaults(&mut probe, options.get_options())
            .await
            .map_err(|e| connect_error(e, &target, shown))?;
        let privileges = privileges::postgres(&mut probe).await.ok();
        let _ = sqlx::Connection::close(probe).await;
        let defaults = Arc::new(defaults);
        let pool = |read_only: bool, size: u32| {
            let defaults = defaults.clone();
            PgPoolOptions::new()
                .max_connections(size)
                .acquire_timeout(CONNECT_TIMEOUT)
                .after_connect(move |conn, _| {
                    let defaults = defaults.clone();
                    Box::pin(async move {
                        defaults.apply(conn).await?;
                        if read_only {
                            sqlx::raw_sql("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                                .execute(conn)
                                .await?;
                        }
                        Ok(())
                    })
                })
                .connect_lazy_with(options.clone())
        };
        Ok(Self::new(
            shown,
            Dialect::Postgres,
            false,
            privileges,
            Pools::Postgres {
                write: pool(false, 3),
                read: pool(true, 5),
            },
        ))
    }

    async fn mysql(url: &str, shown: &str) -> Result<Self, SqlError> {
        let url = url.replacen("mariadb://", "mysql://", 1);
        let options = MySqlConnectOptions::from_str(&url)
            .map_err(|e| {
                SqlError::bad_url(format!(
                    "invalid MySQL URL `{shown}`: {}",
                    one_line(&e.to_string())
                ))
            })?
            // The server's own sql_mode and time zone: `||`, `"…"` and TIMESTAMP values mean what they mean
            // for every other client of this server.
            .pipes_as_concat(false)
            .no_engine_substitution(false)
            .timezone(None);
        let target = format!("{}:{}", options.get_host(), options.get_port());
        let plain =
            loopback::mysql_plain_first(&url, options.get_host(), options.get_socket().is_some())
                .then(|| options.clone().ssl_mode(MySqlSslMode::Disabled));
        let (mut probe, options) =
            probe::<sqlx::MySqlConnection>(&options, plain, &target, shown).await?;
        session::mysql_defaults(&mut probe, false)
            .await
            .map_err(|e| connect_error(e, &target, shown))?;
        let version: String = sqlx::query_scalar("SELECT VERSION()")
            .fetch_one(&mut probe)
            .await
            .map_err(|e| connect_error(e, &target, shown))?;
        let privileges = privileges::mysql(&mut probe).await.ok();
        let _ = sqlx::Connection::close(probe).await;
        let mariadb = version.to_ascii_lowercase().contains("mariadb");
        let pool = |read_only: bool, size: u32| {
            MySqlPoolOptions::new()
                .max_connections(size)
                .acquire_timeout(CONNECT_TIMEOUT)
                .after_connect(move |conn, _| Box::pin(session::mysql_defaults(conn, read_only)))
                .connect_lazy_with(options.clone())
        };
        Ok(Self::new(
            shown,
            Dialect::Mysql,
            mariadb,
            privileges,
            Pools::Mysql {
                write: pool(false, 3),
                read: pool(true, 5),
            },
        ))
    }

    fn new(
        shown: &str,
        dialect: Dialect,
        mariadb: bool,
        privileges: Option<Privileges>,
        pools: Pools,
    ) -> Self {
        Self {
            url: shown.to_owned(),
            dialect,
            mariadb,
            privileges,
            pools,
            catalog: Mutex::new(None),
            guard: tokio::sync::OnceCell::new(),
        }
    }

    /// The URL with any password replaced by `***`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The SQL dialect.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// True for MariaDB (as opposed to MySQL).
    pub fn is_mariadb(&self) -> bool {
        self.mariadb
    }

    /// What the database role Steward connected as may do, when the server could tell (PostgreSQL, MySQL,
    /// MariaDB; SQLite has no roles).
    pub fn privileges(&self) -> Option<&Privileges> {
        self.privileges.as_ref()
    }

    /// Runs statements that change the database (setup, migrations, the demo data), outside the guard and
    /// the read-only mode. Never call this with text a model wrote.
    pub async fn execute_script(&self, sql: &str) -> Result<(), SqlError> {
        async move {
            let script = sqlx::AssertSqlSafe(sql.to_owned());
            let result = match &self.pools {
                Pools::Sqlite { write, .. } => {
                    sqlx::raw_sql(script).execute(write).await.map(|_| ())
                }
                Pools::Postgres { write, .. } => {
                    sqlx::raw_sql(script).execute(write).await.map(|_| ())
                }
                Pools::Mysql { write, .. } => {
                    sqlx::raw_sql(script).execute(write).await.map(|_| ())
                }
            };
            result.map_err(crate::execute::db_error)
        }
        .boxed()
        .await
    }

    /// Closes every connection.
    pub async fn close(&self) {
        match &self.pools {
            Pools::Sqlite { write, read, .. } => {
                read.close().await;
                write.close().await;
            }
            Pools::Postgres { write, read } => {
                read.close().await;
                write.close().await;
            }
            Pools::Mysql { write, read } => {
                read.close().await;
                write.close().await;
            }
        }
    }
}

/// One line: the first line of a message, trimmed.
pub(crate) fn one_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_owned()
}

/// The functions Steward adds to every SQLite connection (see `execute::sqlite_mask`).
async fn register_sqlite_functions(conn: &mut sqlx::SqliteConnection) -> Result<(), sqlx::Error> {
    let mut handle = conn.lock_handle().await?;
    crate::execute::sqlite_mask::register(handle.as_raw_handle()).map_err(|status| {
        sqlx::Error::Protocol(format!(
            "SQLite refused to register {} (status {status})",
            crate::execute::sqlite_mask::NAME
        ))
    })
}

impl Database {
    /// Asks the engine to prepare `sql` without running it (on a read-only connection, or, for a `write`
    /// statement, which MariaDB will not prepare in a read-only session, on a writing one): a table or a column
    /// the database lacks, or a syntax the engine refuses, is an error now. The caller checks the text first
    /// (the guard); nothing is executed here.
    pub async fn prepares(&self, sql: &str, write: bool) -> Result<(), SqlError> {
        async move {
            use sqlx::{Executor as _, SqlSafeStr as _};
            let text = sqlx::AssertSqlSafe(sql.to_owned()).into_sql_str();
            // One connection of the pool, asked to prepare (each engine's pool is its own type).
            macro_rules! prepare {
                ($read:expr, $write:expr) => {
                    if write { $write } else { $read }
                        .acquire()
                        .await
                        .map_err(crate::execute::errors::db_error)?
                        .prepare(text)
                        .await
                        .map(drop)
                };
            }
            let prepared = match &self.pools {
                Pools::Sqlite { read, write: w } => prepare!(read, w),
                Pools::Postgres { read, write: w } => prepare!(read, w),
                Pools::Mysql { read, write: w } => prepare!(read, w),
            };
            prepared.map_err(crate::execute::errors::db_error)
        }
        .boxed()
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a rollback-journal file with no journal beside it lets the writer open lazily.
    #[tokio::test]
    async fn a_file_is_settled_only_without_a_journal_or_wal() {
        let dir = std::env::temp_dir().join(format!("steward-settled-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.sqlite");
        assert!(!sqlite_file_is_settled(&path), "missing file");
        let url = format!("sqlite://{}?mode=rwc", path.display());
        let db = Database::connect(&url).await.unwrap();
        db.execute_script("PRAGMA journal_mode=DELETE; CREATE TABLE t (x INTEGER)")
            .await
            .unwrap();
        db.close().await;
        assert!(
            sqlite_file_is_settled(&path),
            "rollback journal, none beside it"
        );
        let journal = dir.join("a.sqlite-journal");
        std::fs::write(&journal, b"").unwrap();
        assert!(
            !sqlite_file_is_settled(&path),
            "a journal beside it may be hot"
        );
        std::fs::remove_file(&journal).unwrap();
        let db = Database::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        db.execute_script("PRAGMA journal_mode=WAL").await.unwrap();
        db.close().await;
        assert!(!sqlite_file_is_settled(&path), "a WAL database");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn bad_urls_and_missing_files_are_clear() {
        let e = Database::connect("oracle://x/y")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unsupported database URL scheme `oracle`"),
            "{e}"
        );
        let e = Database::connect("./nope.sqlite")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("neither a database URL nor an existing file"),
            "{e}"
        );
        let e = Database::connect("sqlite://./definitely-missing.db")
            .await
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("SQLite database file not found"), "{e}");
        let db = Database::connect("sqlite::memory:").await.unwrap();
        assert_eq!(db.dialect(), Dialect::Sqlite);
    }
}
