//! The databases the benchmark attacks: a SQLite file in a temporary folder of its own, or a database of its
//! own on the PostgreSQL or MariaDB server given, created for one pass, loaded with the fixtures and dropped at
//! its end (also when the pass fails). A database an interrupted run left behind is dropped by a later run
//! once it is two hours old.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use steward_sql::{Database, Dialect, QueryLimits, SqlError, cell_text, redact_url};

use super::corpus::GuardEngine;
use crate::error::EvalError;

/// The prefix of every database the benchmark creates; the creation time (Unix seconds) follows.
const PREFIX: &str = "steward_guard_";
/// The scratch SQLite file's name, in its temporary folder.
const SQLITE_FILE: &str = "guard.sqlite";
/// Age after which a database of an earlier run counts as abandoned.
const ABANDONED: Duration = Duration::from_secs(2 * 60 * 60);

/// One database made for a pass, with its fixtures.
pub(crate) struct Scratch {
    /// The database, connected.
    pub(crate) db: Database,
    /// What made it, to be undone.
    made: Made,
}

enum Made {
    /// A folder holding the SQLite file.
    Folder(PathBuf),
    /// A database on a server, and the statement that drops it.
    Database(String),
}

impl Scratch {
    /// A SQLite database in a fresh temporary folder, with `setup` run.
    pub(crate) async fn sqlite(setup: &str) -> Result<Self, EvalError> {
        let dir = std::env::temp_dir().join(format!("steward-guard-{}", unique()));
        std::fs::create_dir_all(&dir).map_err(|e| EvalError::io(&dir, e))?;
        let url = format!("sqlite://{}?mode=rwc", dir.join(SQLITE_FILE).display());
        let made = Made::Folder(dir.clone());
        let db = match Database::connect(&url).await {
            Ok(db) => db,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(setup_error("cannot create the scratch SQLite database", &e));
            }
        };
        let scratch = Self { db, made };
        scratch.load(setup, None).await
    }

    /// Runs the fixtures; on failure the scratch database is removed again.
    async fn load(self, setup: &str, server: Option<&Server>) -> Result<Self, EvalError> {
        match self.db.execute_script(setup).await {
            Ok(()) => Ok(self),
            Err(e) => {
                let _ = self.remove(server).await;
                Err(setup_error("the fixtures (setup script) failed", &e))
            }
        }
    }

    /// Where it is: the SQLite file, or the database's name on its server.
    pub(crate) fn name(&self) -> String {
        match &self.made {
            Made::Folder(dir) => dir.join(SQLITE_FILE).display().to_string(),
            Made::Database(name) => name.clone(),
        }
    }

    /// Closes it and removes what made it; a failure to remove is returned as a warning.
    pub(crate) async fn remove(self, server: Option<&Server>) -> Result<(), String> {
        self.db.close().await;
        match (self.made, server) {
            (Made::Folder(dir), _) => std::fs::remove_dir_all(&dir)
                .map_err(|e| format!("cannot remove {}: {e}", dir.display())),
            (Made::Database(name), Some(server)) => server.drop_database(&name).await,
            (Made::Database(name), None) => Err(format!("the database {name} was left behind")),
        }
    }
}

/// A PostgreSQL or MariaDB server, through the URL given: scratch databases are made and dropped there.
pub(crate) struct Server {
    admin: Database,
    url: url::Url,
    /// The URL shown (without its password).
    pub(crate) shown: String,
    /// Whether a file the server writes under `/tmp` is on this machine: a server on a loopback address
    /// or a Unix socket.
    pub(crate) local: bool,
}

impl Server {
    /// Connects to the server at `url`, and drops the databases abandoned by earlier runs.
    pub(crate) async fn open(url: &str) -> Result<Self, EvalError> {
        let shown = redact_url(url);
        let parsed = url::Url::parse(url)
            .map_err(|e| EvalError::Setup(format!("`{shown}` is not a URL: {e}")))?;
        let admin = Database::connect(url)
            .await
            .map_err(|e| setup_error(&format!("cannot connect to {shown}"), &e))?;
        if admin.dialect() == Dialect::Sqlite {
            admin.close().await;
            return Err(EvalError::Setup(
                "for SQLite leave out --db: the benchmark makes a scratch SQLite database of its own"
                    .to_owned(),
            ));
        }
        let local = is_local(&parsed);
        let server = Self {
            admin,
            url: parsed,
            shown,
            local,
        };
        server.drop_abandoned().await;
        Ok(server)
    }

    /// The dialect of the server.
    pub(crate) fn dialect(&self) -> Dialect {
        self.admin.dialect()
    }

    /// `mariadb`, `mysql` or `postgres`.
    pub(crate) fn kind(&self) -> &'static str {
        match self.admin.dialect() {
            Dialect::Postgres => "postgres",
            _ if self.admin.is_mariadb() => "mariadb",
            _ => "mysql",
        }
    }

    /// A database of its own for a pass on `engine`, with `setup` run.
    pub(crate) async fn scratch(
        &self,
        engine: GuardEngine,
        setup: &str,
    ) -> Result<Scratch, EvalError> {
        let born = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let name = format!("{PREFIX}{born}_{}", unique());
        // One statement at a time: PostgreSQL runs several sent together in one transaction, where CREATE
        // DATABASE may not run.
        let mut script = vec![format!("CREATE DATABASE {name}")];
        if engine == GuardEngine::PostgresScsOff {
            script.push(format!(
                "ALTER DATABASE {name} SET standard_conforming_strings = off"
            ));
        }
        let mut created = Ok(());
        for statement in &script {
            created = self.admin.execute_script(statement).await;
            if created.is_err() {
                break;
            }
        }
        if let Err(e) = created {
            let _ = self.drop_database(&name).await;
            return Err(setup_error(
                &format!(
                    "cannot create a database on {} (the role needs the right to create databases)",
                    self.shown
                ),
                &e,
            ));
        }
        let mut url = self.url.clone();
        url.set_path(&format!("/{name}"));
        let db = match Database::connect(url.as_str()).await {
            Ok(db) => db,
            Err(e) => {
                let _ = self.drop_database(&name).await;
                return Err(setup_error(&format!("cannot connect to {name}"), &e));
            }
        };
        let scratch = Scratch {
            db,
            made: Made::Database(name),
        };
        scratch.load(setup, Some(self)).await
    }

    /// Drops the database `name` (PostgreSQL: ending what is still connected to it).
    async fn drop_database(&self, name: &str) -> Result<(), String> {
        let result = if self.dialect() == Dialect::Postgres {
            match self
                .admin
                .execute_script(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .await
            {
                // Before PostgreSQL 13 there is no FORCE; the pass's connections are closed by now.
                Err(_) => {
                    self.admin
                        .execute_script(&format!("DROP DATABASE IF EXISTS {name}"))
                        .await
                }
                done => done,
            }
        } else {
            self.admin
                .execute_script(&format!("DROP DATABASE IF EXISTS {name}"))
                .await
        };
        result.map_err(|e| format!("cannot drop the database {name} on {}: {e}", self.shown))
    }

    /// Drops the databases of earlier runs that are older than two hours (runs that were killed).
    async fn drop_abandoned(&self) {
        let list = if self.dialect() == Dialect::Postgres {
            "SELECT datname::text FROM pg_database WHERE datname LIKE 'steward!_guard!_%' ESCAPE '!'"
        } else {
            "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'steward!_guard!_%' ESCAPE '!'"
        };
        let limits = QueryLimits {
            max_rows: 10_000,
            ..QueryLimits::default()
        };
        let Ok(found) = self.admin.query_read_only(list, &[], &limits).await else {
            return;
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        for row in found.rows {
            let Some(name) = row.first().map(cell_text) else {
                continue;
            };
            let born = name
                .strip_prefix(PREFIX)
                .and_then(|rest| rest.split('_').next())
                .and_then(|secs| secs.parse::<u64>().ok());
            let safe = name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if let Some(born) = born
                && safe
                && now.saturating_sub(born) > ABANDONED.as_secs()
            {
                let _ = self.drop_database(&name).await;
            }
        }
    }

    /// Closes the connection to the server.
    pub(crate) async fn close(self) {
        self.admin.close().await;
    }
}

/// True for a loopback address, `localhost` or a Unix socket.
fn is_local(url: &url::Url) -> bool {
    let socket = url
        .query_pairs()
        .any(|(k, v)| k == "host" && v.starts_with('/'));
    let host = url.host_str().unwrap_or_default();
    socket
        || host.is_empty()
        || host.eq_ignore_ascii_case("localhost")
        || host.starts_with("127.")
        || host == "[::1]"
        || host.starts_with("%2F")
        || host.starts_with('/')
}

/// A name no other run uses (lowercase hexadecimal digits): the process, the clock and a counter.
pub(crate) fn unique() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{:x}{nanos:08x}{:x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn setup_error(what: &str, e: &SqlError) -> EvalError {
    EvalError::Setup(format!("{what}: {e}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn local_servers_are_told_apart() {
        let local = |u: &str| is_local(&url::Url::parse(u).unwrap());
        assert!(local("postgres://postgres@127.0.0.1:5432/postgres"));
        assert!(local("mysql://root@localhost/test"));
        assert!(local("postgres:///db?host=/var/run/postgresql"));
        assert!(local("postgres://u@[::1]/db"));
        assert!(!local("postgres://u@db.example.com/db"));
    }

    #[test]
    fn names_are_unique_and_plain() {
        let (a, b) = (unique(), unique());
        assert_ne!(a, b);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
    }
}
