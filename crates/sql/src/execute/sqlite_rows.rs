//! Rows read straight from a SQLite statement on a connection sqlx has locked for us, for work that reads
//! many small statements: sampling 10,000 tables through sqlx copies every value into a row on sqlx's worker
//! thread (`sqlite3_value_dup`), sends the row across a channel and frees it on another thread, which cost
//! more than SQLite's own work. Here each cell is read in place ([`SqliteCell`]) and decoded by the same
//! function as sqlx's rows ([`decode::sqlite_value`](super::decode::sqlite_value)), so values are identical.
//!
//! Like `sqlite_check`, this is `unsafe` code over `libsqlite3-sys`: prepare, step, read columns, finalize.
#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_int};
use std::ptr::{NonNull, null_mut};

use libsqlite3_sys::{
    SQLITE_BLOB, SQLITE_DONE, SQLITE_FLOAT, SQLITE_INTEGER, SQLITE_OK, SQLITE_ROW, SQLITE_TEXT,
    sqlite3, sqlite3_column_blob, sqlite3_column_bytes, sqlite3_column_count,
    sqlite3_column_double, sqlite3_column_int64, sqlite3_column_type, sqlite3_errmsg,
    sqlite3_finalize, sqlite3_prepare_v3, sqlite3_step, sqlite3_stmt,
};

use super::decode::SqliteCell;

/// How many SQLite VM steps pass between two looks at the clock, for a progress handler that enforces a time
/// limit (a query's, or a sample statement's).
pub(crate) const STEPS_PER_CHECK: i32 = 10_000;

/// A prepared statement, finalized when dropped.
struct Statement(NonNull<sqlite3_stmt>);

impl Drop for Statement {
    fn drop(&mut self) {
        // SAFETY: the pointer came from sqlite3_prepare_v3 and is finalized exactly once, here.
        unsafe {
            sqlite3_finalize(self.0.as_ptr());
        }
    }
}

/// The current row of a statement.
pub(crate) struct Row<'s> {
    stmt: &'s Statement,
    width: usize,
}

impl Row<'_> {
    /// How many columns.
    pub(crate) fn len(&self) -> usize {
        self.width
    }

    /// Column `i` (0-based); NULL past the last.
    pub(crate) fn cell(&self, i: usize) -> SqliteCell<'_> {
        let Some(i) = (i < self.width).then(|| c_int::try_from(i).ok()).flatten() else {
            return SqliteCell::Null;
        };
        let stmt = self.stmt.0.as_ptr();
        // SAFETY: `stmt` is live and positioned on a row (sqlite3_step returned SQLITE_ROW, and `Row` borrows
        // the statement only until the next step), and `i` is below its column count.
        match unsafe { sqlite3_column_type(stmt, i) } {
            SQLITE_INTEGER => SqliteCell::Integer(unsafe { sqlite3_column_int64(stmt, i) }),
            SQLITE_FLOAT => SqliteCell::Real(unsafe { sqlite3_column_double(stmt, i) }),
            SQLITE_TEXT => SqliteCell::Text(self.bytes(i)),
            SQLITE_BLOB => SqliteCell::Blob(self.bytes(i)),
            _ => SqliteCell::Null,
        }
    }

    /// The value's bytes as `sqlite3_value_blob` gives them (what sqlx decodes `&[u8]` from).
    fn bytes(&self, i: c_int) -> &[u8] {
        let stmt = self.stmt.0.as_ptr();
        // SAFETY: as in `cell`; sqlite3_column_blob is called before sqlite3_column_bytes, as SQLite asks.
        let (data, len) = unsafe { (sqlite3_column_blob(stmt, i), sqlite3_column_bytes(stmt, i)) };
        match usize::try_from(len) {
            Ok(len) if len > 0 && !data.is_null() => {
                // SAFETY: SQLite guarantees `len` readable bytes at `data` until the statement is stepped,
                // reset or finalized, none of which can happen while `self` borrows it.
                unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }
            }
            _ => &[],
        }
    }
}

/// Runs the one statement `sql` on `db`, giving each row to `row` until it returns false or the rows end.
/// An error (SQLite's message) if it does not compile or fails while stepping (an interrupt by the progress
/// handler included).
///
/// The caller must hold sqlx's lock on the connection (`SqliteConnection::lock_handle`), so that no other
/// thread uses `db` meanwhile.
pub(crate) fn each_row(
    db: NonNull<sqlite3>,
    sql: &str,
    mut row: impl FnMut(&Row<'_>) -> bool,
) -> Result<(), String> {
    let len =
        c_int::try_from(sql.len()).map_err(|_| "the SQL text is too long for SQLite".to_owned())?;
    let mut stmt = null_mut();
    // SAFETY: `db` is a live connection locked by the caller; `sql` is `len` readable bytes that outlive the
    // call; `stmt` is a valid out-pointer (the tail is not wanted).
    let status = unsafe {
        sqlite3_prepare_v3(
            db.as_ptr(),
            sql.as_ptr().cast::<c_char>(),
            len,
            0,
            &mut stmt,
            null_mut(),
        )
    };
    let stmt = NonNull::new(stmt).map(Statement);
    if status != SQLITE_OK {
        return Err(message(db));
    }
    let Some(stmt) = stmt else {
        return Ok(());
    };
    let width = usize::try_from(unsafe { sqlite3_column_count(stmt.0.as_ptr()) }).unwrap_or(0);
    loop {
        // SAFETY: `stmt` is live; no `Row` borrowing it outlives the previous iteration.
        match unsafe { sqlite3_step(stmt.0.as_ptr()) } {
            SQLITE_ROW => {
                if !row(&Row { stmt: &stmt, width }) {
                    return Ok(());
                }
            }
            SQLITE_DONE => return Ok(()),
            _ => return Err(message(db)),
        }
    }
}

/// The connection's last error message.
fn message(db: NonNull<sqlite3>) -> String {
    // SAFETY: `db` is live; sqlite3_errmsg returns a NUL-terminated string owned by SQLite, copied here before
    // any other call on the connection.
    unsafe { CStr::from_ptr(sqlite3_errmsg(db.as_ptr())) }
        .to_string_lossy()
        .into_owned()
}
