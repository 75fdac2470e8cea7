//! SQLite's own verdict on a text, before it runs: exactly one statement (the engine's parser finds nothing
//! but spaces and comments after it) and a read-only one (`sqlite3_stmt_readonly`).
//!
//! sqlx runs every statement of a multi-statement text on SQLite, so the guard's "one statement" is checked a
//! second time here by SQLite itself. sqlx offers no safe call for it; this module is one of the crate's two
//! `unsafe` modules (with `sqlite_rows`, which reads introspection's sample rows in place): it compiles the
//! text with `sqlite3_prepare_v3` on the connection sqlx locked for us, reads the tail pointer and the
//! read-only flag, and finalizes the statement. Nothing is stepped.
#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_int};
use std::ptr::{NonNull, null, null_mut};

use libsqlite3_sys::{
    SQLITE_OK, sqlite3, sqlite3_errmsg, sqlite3_finalize, sqlite3_prepare_v3, sqlite3_stmt_readonly,
};

/// What SQLite found in a text.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// One statement that does not write.
    ReadOnly,
    /// One statement that writes or changes the database.
    Writes,
    /// More than one statement; the byte offset where the second begins.
    Several(usize),
    /// Nothing but spaces and comments.
    Empty,
    /// SQLite could not compile it: its message.
    Error(String),
}

/// Compiles `sql` on `db` and says what it is.
///
/// The caller must hold sqlx's lock on the connection (`SqliteConnection::lock_handle`), so that no other
/// thread uses `db` meanwhile.
pub(crate) fn shape(db: NonNull<sqlite3>, sql: &str) -> Shape {
    let Ok(len) = c_int::try_from(sql.len()) else {
        return Shape::Error("the SQL text is too long for SQLite".to_owned());
    };
    let start = sql.as_ptr().cast::<c_char>();
    let first = match compile(db, start, len) {
        Ok(c) => c,
        Err(message) => return Shape::Error(message),
    };
    let Some(stmt) = first.stmt else {
        return Shape::Empty;
    };
    let read_only = readonly_and_finalize(stmt);
    // Whatever follows the first statement must compile to nothing (spaces, comments, `;`).
    let mut offset = first.consumed;
    while offset < sql.len() {
        let Ok(rest) = c_int::try_from(sql.len() - offset) else {
            return Shape::Error("the SQL text is too long for SQLite".to_owned());
        };
        // SAFETY: `offset < sql.len()`, so the pointer stays inside `sql`.
        let tail = unsafe { start.add(offset) };
        match compile(db, tail, rest) {
            Ok(Compiled {
                stmt: Some(stmt), ..
            }) => {
                readonly_and_finalize(stmt);
                return Shape::Several(offset);
            }
            Ok(Compiled {
                stmt: None,
                consumed,
            }) => {
                if consumed == 0 {
                    break;
                }
                offset += consumed;
            }
            // A second statement that does not even compile is still a second statement.
            Err(_) => return Shape::Several(offset),
        }
    }
    if read_only {
        Shape::ReadOnly
    } else {
        Shape::Writes
    }
}

struct Compiled {
    stmt: Option<NonNull<libsqlite3_sys::sqlite3_stmt>>,
    consumed: usize,
}

fn compile(db: NonNull<sqlite3>, text: *const c_char, len: c_int) -> Result<Compiled, String> {
    let mut stmt = null_mut();
    let mut tail: *const c_char = null();
    // SAFETY: `db` is a live connection locked by the caller; `text` points to `len` readable bytes of a
    // `&str` that outlives this call; `stmt` and `tail` are valid out-pointers. With a positive `len`, SQLite
    // reads at most `len` bytes and sets `tail` within them.
    let status = unsafe { sqlite3_prepare_v3(db.as_ptr(), text, len, 0, &mut stmt, &mut tail) };
    if status != SQLITE_OK {
        // SAFETY: `db` is live; sqlite3_errmsg returns a NUL-terminated string owned by SQLite, copied here
        // before any other call on the connection.
        let message = unsafe { CStr::from_ptr(sqlite3_errmsg(db.as_ptr())) }
            .to_string_lossy()
            .into_owned();
        if let Some(stmt) = NonNull::new(stmt) {
            readonly_and_finalize(stmt);
        }
        return Err(message);
    }
    let consumed = if tail.is_null() {
        usize::try_from(len).unwrap_or(0)
    } else {
        (tail as usize).saturating_sub(text as usize)
    };
    Ok(Compiled {
        stmt: NonNull::new(stmt),
        consumed,
    })
}

/// Whether the statement only reads; finalizes it.
fn readonly_and_finalize(stmt: NonNull<libsqlite3_sys::sqlite3_stmt>) -> bool {
    // SAFETY: `stmt` came from sqlite3_prepare_v3 and is finalized exactly once, here, after its last use.
    unsafe {
        let read_only = sqlite3_stmt_readonly(stmt.as_ptr()) != 0;
        sqlite3_finalize(stmt.as_ptr());
        read_only
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Connection as _;

    async fn shape_of(sql: &str) -> Shape {
        let mut conn = sqlx::SqliteConnection::connect("sqlite::memory:")
            .await
            .unwrap();
        sqlx::raw_sql("CREATE TABLE t (a INTEGER)")
            .execute(&mut conn)
            .await
            .unwrap();
        let mut handle = conn.lock_handle().await.unwrap();
        shape(handle.as_raw_handle(), sql)
    }

    #[tokio::test]
    async fn sqlite_itself_counts_the_statements() {
        assert_eq!(shape_of("SELECT a FROM t").await, Shape::ReadOnly);
        assert_eq!(
            shape_of("SELECT 1; -- done\n /* c */ ;").await,
            Shape::ReadOnly
        );
        for sql in [
            "SELECT 1; SELECT 2",
            "SELECT 'a''b'; ATTACH 'x.db' AS x",
            "SELECT 1; nonsense here",
            "SELECT 1;;; VACUUM",
        ] {
            let found = shape_of(sql).await;
            assert!(
                matches!(found, Shape::Several(at) if at > sql.find(';').unwrap()),
                "{sql}: {found:?}"
            );
        }
        assert_eq!(shape_of("DELETE FROM t").await, Shape::Writes);
        assert_eq!(shape_of("VACUUM INTO '/tmp/never.db'").await, Shape::Writes);
        assert_eq!(shape_of("  -- only a comment").await, Shape::Empty);
        assert!(
            matches!(shape_of("SELECT nope FROM t").await, Shape::Error(m) if m.contains("no such column"))
        );
    }
}
