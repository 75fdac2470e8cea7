//! Writes: one transaction on the read-write connection, for code (domain tools, the demo generator) — never
//! for SQL a model wrote. Statements use `?` placeholders in every dialect (turned into `$n` for PostgreSQL).
//!
//! On SQLite a write transaction starts with `BEGIN IMMEDIATE`: it takes the write lock first, waiting for
//! other writers (the busy timeout) instead of failing half-way with "database is locked".
//!
//! Where a caller enters sqlx, the future is boxed: sqlx's own futures nest deep enough that a caller holding
//! one inline overflowed the compiler's layout queries in release builds (docs/DESIGN.md, "Async depth").

use futures_util::FutureExt as _;
use sqlx::{MySql, Postgres, Row as _, Sqlite, Transaction};

use crate::database::{Database, Pools};
use crate::dialect::{Dialect, numbered};
use crate::error::SqlError;
use crate::execute::sqlite_check::{Shape, shape};
use crate::execute::{Collector, bind_all, db_error, decode, sqlite_error};
use crate::query::{Param, QueryLimits, QueryResult};

enum Inner {
    Sqlite(Transaction<'static, Sqlite>),
    Postgres(Transaction<'static, Postgres>),
    Mysql(Transaction<'static, MySql>),
}

/// A write transaction. Dropped without [`WriteTx::commit`], it rolls back.
pub struct WriteTx {
    inner: Inner,
    dialect: Dialect,
}

impl std::fmt::Debug for WriteTx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteTx")
            .field("dialect", &self.dialect)
            .finish_non_exhaustive()
    }
}

impl Database {
    /// Begins a write transaction.
    pub async fn begin_write(&self) -> Result<WriteTx, SqlError> {
        async move {
            let inner = match &self.pools {
                Pools::Sqlite { write, .. } => Inner::Sqlite(
                    write
                        .begin_with("BEGIN IMMEDIATE")
                        .await
                        .map_err(db_error)?,
                ),
                Pools::Postgres { write, .. } => {
                    Inner::Postgres(write.begin().await.map_err(db_error)?)
                }
                Pools::Mysql { write, .. } => Inner::Mysql(write.begin().await.map_err(db_error)?),
            };
            Ok(WriteTx {
                inner,
                dialect: self.dialect(),
            })
        }
        .boxed()
        .await
    }
}

/// Errors from writes: a broken constraint is told apart.
fn write_error(e: sqlx::Error) -> SqlError {
    if let sqlx::Error::Database(db) = &e
        && matches!(
            db.kind(),
            sqlx::error::ErrorKind::UniqueViolation | sqlx::error::ErrorKind::ForeignKeyViolation
        )
    {
        let message = crate::database::one_line(db.message());
        return SqlError::constraint(message).caused_by(e);
    }
    db_error(e)
}

impl WriteTx {
    /// The dialect.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Runs the `SELECT` `sql` (of one table, no join) that reads rows this transaction goes on to write,
    /// locking them until it ends: `FOR UPDATE` on PostgreSQL and MariaDB, where it waits for a writer holding
    /// them and then reads their latest committed values (a plain read would see a snapshot, and a commit
    /// landing between the read and the write would be lost); SQLite's write transaction holds the whole
    /// database already.
    pub async fn fetch_locked(
        &mut self,
        sql: &str,
        params: &[Param],
    ) -> Result<QueryResult, SqlError> {
        match self.dialect {
            Dialect::Sqlite => self.fetch(sql, params).await,
            _ => self.fetch(&format!("{sql} FOR UPDATE"), params).await,
        }
    }

    /// Runs a statement that returns rows.
    pub async fn fetch(&mut self, sql: &str, params: &[Param]) -> Result<QueryResult, SqlError> {
        match self.dialect {
            Dialect::Postgres => self.fetch_prepared(&numbered(sql), params).await,
            _ => self.fetch_prepared(sql, params).await,
        }
    }

    /// Runs a statement that returns rows, written with the database's own placeholders (`$1` on
    /// PostgreSQL): a text the guard limited to a principal's rows ([`crate::Guard::scoped`]).
    pub async fn fetch_prepared(
        &mut self,
        sql: &str,
        params: &[Param],
    ) -> Result<QueryResult, SqlError> {
        async move {
            let limits = QueryLimits {
                max_rows: 10_000,
                max_bytes: usize::MAX,
                ..QueryLimits::default()
            };
            let mut collector = Collector::new(&limits);
            match &mut self.inner {
                Inner::Sqlite(tx) => {
                    let query = bind_all!(sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())), params);
                    collector
                        .drain(query.fetch(&mut **tx), decode::sqlite, true)
                        .await
                }
                Inner::Postgres(tx) => {
                    let query = bind_all!(sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())), params);
                    collector
                        .drain(query.fetch(&mut **tx), decode::postgres, true)
                        .await
                }
                Inner::Mysql(tx) => {
                    let query = bind_all!(sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())), params);
                    collector
                        .drain(query.fetch(&mut **tx), decode::mysql, true)
                        .await
                }
            }
            .map_err(write_error)?;
            Ok(collector.finish())
        }
        .boxed()
        .await
    }

    /// Runs a statement; returns the rows it changed.
    pub async fn execute(&mut self, sql: &str, params: &[Param]) -> Result<u64, SqlError> {
        async move {
            Ok(match &mut self.inner {
                Inner::Sqlite(tx) => {
                    bind_all!(sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())), params)
                        .execute(&mut **tx)
                        .await
                        .map_err(write_error)?
                        .rows_affected()
                }
                Inner::Postgres(tx) => {
                    bind_all!(sqlx::query(sqlx::AssertSqlSafe(numbered(sql))), params)
                        .execute(&mut **tx)
                        .await
                        .map_err(write_error)?
                        .rows_affected()
                }
                Inner::Mysql(tx) => {
                    bind_all!(sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())), params)
                        .execute(&mut **tx)
                        .await
                        .map_err(write_error)?
                        .rows_affected()
                }
            })
        }
        .boxed()
        .await
    }

    /// Runs exactly `sql`, with the engine's own placeholders (`$1` on PostgreSQL, `?` elsewhere; the text is
    /// not rewritten), once the engine has proved it is one statement: PostgreSQL and MySQL/MariaDB prepare
    /// it (a prepared statement holds one), SQLite compiles it and must find nothing after the first. For
    /// statements a person wrote and [`crate::Guard::check_write`] passed; returns the rows it changed.
    pub async fn execute_exact(&mut self, sql: &str, params: &[Param]) -> Result<u64, SqlError> {
        async move {
        if sql.contains('\0') {
            return Err(SqlError::refused(
                "The SQL contains a NUL byte; remove it.".to_owned(),
            ));
        }
        let query = sqlx::AssertSqlSafe(sql.to_owned());
        Ok(match &mut self.inner {
            Inner::Sqlite(tx) => {
                {
                    let mut handle = tx.lock_handle().await.map_err(db_error)?;
                    match shape(handle.as_raw_handle(), sql) {
                        Shape::ReadOnly | Shape::Writes => {}
                        Shape::Several(at) => {
                            return Err(SqlError::refused(format!(
                                "SQLite reads a second statement starting at byte {at}; exactly one statement may run."
                            )));
                        }
                        Shape::Empty => {
                            return Err(SqlError::refused("There is no SQL statement.".to_owned()));
                        }
                        Shape::Error(message) => return Err(sqlite_error(message)),
                    }
                }
                bind_all!(sqlx::query(query), params)
                    .execute(&mut **tx)
                    .await
                    .map_err(write_error)?
                    .rows_affected()
            }
            Inner::Postgres(tx) => bind_all!(sqlx::query(query), params)
                .execute(&mut **tx)
                .await
                .map_err(write_error)?
                .rows_affected(),
            Inner::Mysql(tx) => bind_all!(sqlx::query(query), params)
                .execute(&mut **tx)
                .await
                .map_err(write_error)?
                .rows_affected(),
        })
    }.boxed().await
    }

    /// Runs an `INSERT` into a table whose key is an `id` column it generates; returns the new id.
    pub async fn insert(&mut self, sql: &str, params: &[Param]) -> Result<i64, SqlError> {
        async move {
            match &mut self.inner {
                Inner::Sqlite(tx) => Ok(bind_all!(
                    sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())),
                    params
                )
                .execute(&mut **tx)
                .await
                .map_err(write_error)?
                .last_insert_rowid()),
                Inner::Postgres(tx) => {
                    let sql = format!("{} RETURNING id", numbered(sql));
                    let row = bind_all!(sqlx::query(sqlx::AssertSqlSafe(sql)), params)
                        .fetch_one(&mut **tx)
                        .await
                        .map_err(write_error)?;
                    row.try_get::<i64, _>(0)
                        .or_else(|_| row.try_get::<i32, _>(0).map(i64::from))
                        .map_err(db_error)
                }
                Inner::Mysql(tx) => {
                    let id = bind_all!(sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())), params)
                        .execute(&mut **tx)
                        .await
                        .map_err(write_error)?
                        .last_insert_id();
                    i64::try_from(id)
                        .map_err(|_| SqlError::query(format!("the new id {id} is out of range")))
                }
            }
        }
        .boxed()
        .await
    }

    /// Commits.
    pub async fn commit(self) -> Result<(), SqlError> {
        async move {
            match self.inner {
                Inner::Sqlite(tx) => tx.commit().await,
                Inner::Postgres(tx) => tx.commit().await,
                Inner::Mysql(tx) => tx.commit().await,
            }
            .map_err(write_error)
        }
        .boxed()
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::SqlErrorKind;

    #[tokio::test]
    async fn exact_statements_run_as_written_and_only_alone() {
        let db = Database::connect("sqlite::memory:").await.unwrap();
        db.execute_script("CREATE TABLE t (a TEXT)").await.unwrap();
        let mut tx = db.begin_write().await.unwrap();
        let hostile = "x'); DELETE FROM t; --";
        let n = tx
            .execute_exact(
                "INSERT INTO t (a) VALUES (?)",
                &[Param::Text(hostile.into())],
            )
            .await
            .unwrap();
        assert_eq!(n, 1);
        let e = tx
            .execute_exact("INSERT INTO t (a) VALUES ('y'); DELETE FROM t", &[])
            .await
            .unwrap_err();
        assert!(e.is(SqlErrorKind::Refused), "{e}");
        let rows = tx.fetch("SELECT a FROM t", &[]).await.unwrap();
        assert_eq!(rows.rows, vec![vec![serde_json::json!(hostile)]]);
    }

    #[tokio::test]
    async fn a_transaction_commits_or_rolls_back() {
        let db = Database::connect("sqlite::memory:").await.unwrap();
        db.execute_script("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, day DATE)")
            .await
            .unwrap();
        let mut tx = db.begin_write().await.unwrap();
        let day = chrono::NaiveDate::from_ymd_opt(2026, 11, 21).unwrap();
        let id = tx
            .insert(
                "INSERT INTO t (name, day) VALUES (?, ?)",
                &[Param::Text("a".into()), Param::Date(day)],
            )
            .await
            .unwrap();
        assert_eq!(id, 1);
        tx.commit().await.unwrap();
        let mut tx = db.begin_write().await.unwrap();
        tx.insert(
            "INSERT INTO t (name) VALUES (?)",
            &[Param::Text("b".into())],
        )
        .await
        .unwrap();
        let dup = tx
            .insert(
                "INSERT INTO t (name) VALUES (?)",
                &[Param::Text("a".into())],
            )
            .await
            .unwrap_err();
        assert!(dup.is(SqlErrorKind::Constraint), "{dup}");
        drop(tx);
        let mut tx = db.begin_write().await.unwrap();
        let rows = tx
            .fetch("SELECT name, day FROM t ORDER BY id", &[])
            .await
            .unwrap();
        assert_eq!(
            rows.rows,
            vec![vec![
                serde_json::json!("a"),
                serde_json::json!("2026-11-21")
            ]]
        );
    }
}
