//! `steward_mask_hash(x)`: the SHA-256 of a value's text, in lowercase hex (NULL for NULL), registered on every
//! SQLite connection so that a role's `hash` mask works there as PostgreSQL's `sha256` and MySQL's `SHA2` do:
//! SQLite has no digest function of its own.
//!
//! Like `sqlite_check` and `sqlite_rows`, this is `unsafe` code over `libsqlite3-sys`: one scalar function.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int};
use std::ptr::NonNull;

use libsqlite3_sys::{
    SQLITE_DETERMINISTIC, SQLITE_INNOCUOUS, SQLITE_NULL, SQLITE_OK, SQLITE_TRANSIENT, SQLITE_UTF8,
    sqlite3, sqlite3_context, sqlite3_create_function_v2, sqlite3_result_null, sqlite3_result_text,
    sqlite3_value, sqlite3_value_bytes, sqlite3_value_text, sqlite3_value_type,
};
use sha2::{Digest, Sha256};

/// The function's name, as SQL calls it.
pub(crate) const NAME: &str = "steward_mask_hash";

/// Registers the function on `db`; SQLite's status code when it could not.
///
/// The caller must hold sqlx's lock on the connection (`SqliteConnection::lock_handle`).
pub(crate) fn register(db: NonNull<sqlite3>) -> Result<(), c_int> {
    // SAFETY: `db` is a live connection locked by the caller; the name is NUL-terminated and static; the
    // function keeps no user data, so there is nothing to destroy.
    let status = unsafe {
        sqlite3_create_function_v2(
            db.as_ptr(),
            c"steward_mask_hash".as_ptr(),
            1,
            SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
            std::ptr::null_mut(),
            Some(mask_hash),
            None,
            None,
            None,
        )
    };
    if status == SQLITE_OK {
        Ok(())
    } else {
        Err(status)
    }
}

/// The function SQLite calls: one argument, its text's digest.
unsafe extern "C" fn mask_hash(ctx: *mut sqlite3_context, n: c_int, args: *mut *mut sqlite3_value) {
    // SAFETY: SQLite calls this with `n` (1, as registered) valid argument pointers and a live context.
    unsafe {
        if n != 1 || args.is_null() {
            sqlite3_result_null(ctx);
            return;
        }
        let value = *args;
        if sqlite3_value_type(value) == SQLITE_NULL {
            sqlite3_result_null(ctx);
            return;
        }
        let text = sqlite3_value_text(value);
        let len = usize::try_from(sqlite3_value_bytes(value)).unwrap_or(0);
        let bytes: &[u8] = if text.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts(text, len)
        };
        let digest = Sha256::digest(bytes);
        let mut hex = String::with_capacity(64);
        for b in digest.iter() {
            hex.push_str(&format!("{b:02x}"));
        }
        sqlite3_result_text(
            ctx,
            hex.as_ptr().cast::<c_char>(),
            c_int::try_from(hex.len()).unwrap_or(0),
            SQLITE_TRANSIENT(),
        );
    }
}
