//! Connecting to a database by URL: `sqlite://path` (or a path to an existing file), `sqlite::memory:`,
//! `postgres://…`, `mysql://…` (MariaDB too). Pooled; every failure is one clear line without secrets.

use std::path::Path;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::mysql::{MySqlConnectOptions, MySqlPool, MySqlPoolOptions};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};

use crate::catalog::Catalog;
use crate::dialect::Dialect;
use crate::error::SqlError;

/// How long to wait for a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The connection pools of one database.
#[derive(Debug, Clone)]
pub(crate) enum Pools {
    /// SQLite: a pool for writes and one opened read-only for queries (the same pool for `:memory:`).
    Sqlite {
        /// Read and write.
        write: SqlitePool,
        /// Opened with `SQLITE_OPEN_READONLY` (file databases); the write pool for `:memory:`.
        read: SqlitePool,
        /// True for `:memory:`, whose one connection both reads and writes.
        memory: bool,
    },
    /// PostgreSQL.
    Postgres(PgPool),
    /// MySQL or MariaDB.
    Mysql(MySqlPool),
}

/// A database Steward can introspect and query.
#[derive(Debug)]
pub struct Database {
    url: String,
    dialect: Dialect,
    mariadb: bool,
    pub(crate) pools: Pools,
    pub(crate) catalog: Mutex<Option<Arc<Catalog>>>,
    /// The guard built for this database by [`Database::guard`], once.
    pub(crate) guard: tokio::sync::OnceCell<crate::guard::Guard>,
}

impl Database {
    /// Connects by URL.
    pub async fn connect(url: &str) -> Result<Self, SqlError> {
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
            _ if !url.contains("://") => Err(SqlError::BadUrl(format!(
                "`{shown}` is neither a database URL nor an existing file; use sqlite://path, postgres://user@host/db or mysql://user@host/db"
            ))),
            other => Err(SqlError::BadUrl(format!(
                "unsupported database URL scheme `{other}` in `{shown}`; use sqlite://, postgres:// or mysql://"
            ))),
        }
    }

    async fn sqlite(url: &str, shown: &str) -> Result<Self, SqlError> {
        let memory = url.contains(":memory:") || url.contains("mode=memory");
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| SqlError::BadUrl(format!("invalid SQLite URL `{shown}`: {e}")))?
            .busy_timeout(Duration::from_secs(5));
        if !memory {
            let path = options.get_filename();
            if !path.exists() && !url.contains("mode=rwc") {
                return Err(SqlError::Connect(format!(
                    "SQLite database file not found: {} (add ?mode=rwc to the URL to create it)",
                    path.display()
                )));
            }
        }
        let pool_options = || SqlitePoolOptions::new().acquire_timeout(CONNECT_TIMEOUT);
        let fail = |e: sqlx::Error| {
            SqlError::Connect(format!("cannot open {shown}: {}", one_line(&e.to_string())))
        };
        let write = pool_options()
            .max_connections(if memory { 1 } else { 4 })
            // An in-memory database lives as long as its connection.
            .idle_timeout(if memory {
                None
            } else {
                Some(Duration::from_secs(600))
            })
            .max_lifetime(if memory {
                None
            } else {
                Some(Duration::from_secs(1800))
            })
            .connect_with(options.clone())
            .await
            .map_err(fail)?;
        let read = if memory {
            write.clone()
        } else {
            pool_options()
                .max_connections(4)
                .connect_with(options.read_only(true).create_if_missing(false))
                .await
                .map_err(fail)?
        };
        Ok(Self::new(
            shown,
            Dialect::Sqlite,
            false,
            Pools::Sqlite {
                write,
                read,
                memory,
            },
        ))
    }

    async fn postgres(url: &str, shown: &str) -> Result<Self, SqlError> {
        let options = PgConnectOptions::from_str(url).map_err(|e| {
            SqlError::BadUrl(format!(
                "invalid PostgreSQL URL `{shown}`: {}",
                one_line(&e.to_string())
            ))
        })?;
        let target = format!("{}:{}", options.get_host(), options.get_port());
        // One direct connection first: a pool retries until its timeout and hides why it failed.
        probe::<sqlx::PgConnection>(&options, &target, shown).await?;
        let pool = PgPoolOptions::new()
            .max_connections(5)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_lazy_with(options);
        Ok(Self::new(
            shown,
            Dialect::Postgres,
            false,
            Pools::Postgres(pool),
        ))
    }

    async fn mysql(url: &str, shown: &str) -> Result<Self, SqlError> {
        let url = url.replacen("mariadb://", "mysql://", 1);
        let options = MySqlConnectOptions::from_str(&url).map_err(|e| {
            SqlError::BadUrl(format!(
                "invalid MySQL URL `{shown}`: {}",
                one_line(&e.to_string())
            ))
        })?;
        let target = format!("{}:{}", options.get_host(), options.get_port());
        probe::<sqlx::MySqlConnection>(&options, &target, shown).await?;
        let pool = MySqlPoolOptions::new()
            .max_connections(5)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_lazy_with(options);
        let version: String = sqlx::query_scalar("SELECT VERSION()")
            .fetch_one(&pool)
            .await
            .map_err(|e| connect_error(&e, &target, shown))?;
        let mariadb = version.to_ascii_lowercase().contains("mariadb");
        Ok(Self::new(
            shown,
            Dialect::Mysql,
            mariadb,
            Pools::Mysql(pool),
        ))
    }

    fn new(shown: &str, dialect: Dialect, mariadb: bool, pools: Pools) -> Self {
        Self {
            url: shown.to_owned(),
            dialect,
            mariadb,
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

    /// Runs statements that change the database (setup, migrations, the demo data), outside the guard and
    /// the read-only mode. Never call this with text a model wrote.
    pub async fn execute_script(&self, sql: &str) -> Result<(), SqlError> {
        let script = sqlx::AssertSqlSafe(sql.to_owned());
        let result = match &self.pools {
            Pools::Sqlite { write, .. } => sqlx::raw_sql(script).execute(write).await.map(|_| ()),
            Pools::Postgres(pool) => sqlx::raw_sql(script).execute(pool).await.map(|_| ()),
            Pools::Mysql(pool) => sqlx::raw_sql(script).execute(pool).await.map(|_| ()),
        };
        result.map_err(|e| SqlError::Query(one_line(&e.to_string())))
    }

    /// Closes every connection.
    pub async fn close(&self) {
        match &self.pools {
            Pools::Sqlite { write, read, .. } => {
                read.close().await;
                write.close().await;
            }
            Pools::Postgres(pool) => pool.close().await,
            Pools::Mysql(pool) => pool.close().await,
        }
    }
}

/// Opens and closes one connection, so that a failure is reported with its real cause.
async fn probe<C: sqlx::Connection>(
    options: &<C as sqlx::Connection>::Options,
    target: &str,
    shown: &str,
) -> Result<(), SqlError> {
    match tokio::time::timeout(CONNECT_TIMEOUT, C::connect_with(options)).await {
        Ok(Ok(conn)) => {
            let _ = conn.close().await;
            Ok(())
        }
        Ok(Err(e)) => Err(connect_error(&e, target, shown)),
        Err(_) => Err(connect_error(&sqlx::Error::PoolTimedOut, target, shown)),
    }
}

/// A URL with its password replaced by `***`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// One line: the first line of a message, trimmed.
pub(crate) fn one_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_owned()
}

/// A connection error as one line that says what to do.
fn connect_error(error: &sqlx::Error, target: &str, shown: &str) -> SqlError {
    let text = match error {
        sqlx::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            format!(
                "could not connect to {target}: connection refused; is the database server running there?"
            )
        }
        sqlx::Error::Io(io) => format!("could not connect to {target}: {io}"),
        sqlx::Error::PoolTimedOut => {
            format!(
                "could not connect to {target} within {} s; check the host and port",
                CONNECT_TIMEOUT.as_secs()
            )
        }
        sqlx::Error::Database(db) => {
            let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
            let message = one_line(db.message());
            match code.as_str() {
                "28P01" | "28000" | "1045" | "28000 (1045)" => {
                    format!("authentication failed at {target}: {message}")
                }
                "3D000" | "1049" | "42000"
                    if message.contains("database") || message.contains("Unknown database") =>
                {
                    format!("{message} at {target}; create it or fix the database name in the URL")
                }
                _ => format!("{shown}: {message}"),
            }
        }
        sqlx::Error::Tls(e) => format!("TLS with {target} failed: {}", one_line(&e.to_string())),
        other => format!(
            "could not connect to {shown}: {}",
            one_line(&other.to_string())
        ),
    };
    SqlError::Connect(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redact_url("postgres://bob:s3cret@db:5432/app"),
            "postgres://bob:***@db:5432/app"
        );
        assert_eq!(
            redact_url("mysql://root@127.0.0.1/test"),
            "mysql://root@127.0.0.1/test"
        );
        assert_eq!(
            redact_url("postgres://u:p@ss@h/db?sslmode=require"),
            "postgres://u:***@h/db?sslmode=require"
        );
        assert_eq!(redact_url("sqlite://./x.db"), "sqlite://./x.db");
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
