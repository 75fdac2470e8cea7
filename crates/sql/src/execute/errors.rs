//! Engine errors sorted by whose fault they are: the statement's (`SqlError::Query`), a value's
//! (`SqlError::Invalid`: SQLSTATE class 22, MySQL's value errors, SQLite's overflow) or an outage
//! (`SqlError::Unavailable`: lost connections, shutdowns, exhausted resources), so that the model is told what to
//! fix and "unavailable" means an outage.

use crate::database::one_line;
use crate::error::SqlError;

/// What kind of failure an engine error is; the driver's error is kept as the cause.
pub(crate) fn db_error(e: sqlx::Error) -> SqlError {
    let error = match &e {
        sqlx::Error::Database(db) => {
            let message = engine_message(db.message());
            let number = mysql_number(db.as_ref());
            match classify(db.code().as_deref(), number, &message) {
                Kind::Input => SqlError::invalid(message),
                Kind::Outage => SqlError::unavailable(message),
                Kind::Statement => SqlError::query(message),
            }
        }
        sqlx::Error::Encode(_) => SqlError::invalid(one_line(&e.to_string())),
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => SqlError::unavailable(one_line(&e.to_string())),
        _ => SqlError::query(engine_message(&one_line(&e.to_string()))),
    };
    error.caused_by(e)
}

enum Kind {
    /// The statement was wrong (syntax, names, permissions, read-only).
    Statement,
    /// A value was wrong (overflow, out of range, bad encoding, bad date).
    Input,
    /// The database could not be used (connection lost, shutting down, out of resources).
    Outage,
}

/// The MySQL/MariaDB error number of an engine error.
pub(crate) fn mysql_number(db: &dyn sqlx::error::DatabaseError) -> Option<u16> {
    db.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
        .map(sqlx::mysql::MySqlDatabaseError::number)
}

/// Sorts an engine error by its SQLSTATE (PostgreSQL and MySQL), its MySQL error number, or its message.
fn classify(sqlstate: Option<&str>, number: Option<u16>, message: &str) -> Kind {
    // MySQL/MariaDB numbers for bad values and lost servers whose SQLSTATE is the generic HY000.
    match number {
        Some(
            1264 | 1265 | 1292 | 1365 | 1366 | 1367 | 1406 | 1411 | 1441 | 1690 | 3140 | 3141
            | 4025 | 4078,
        ) => {
            return Kind::Input;
        }
        Some(1040 | 1053 | 1205 | 2002 | 2006 | 2013) => return Kind::Outage,
        _ => {}
    }
    // SQLSTATE classes: 22 is a data exception; 08 a connection exception; 53, 57P0x and 58 are resources,
    // shutdowns and system errors.
    let code = sqlstate.unwrap_or("");
    if code.len() == 5 && code.is_ascii() {
        match code.get(..2) {
            Some("22") => return Kind::Input,
            Some("08" | "53" | "58") => return Kind::Outage,
            Some("57") if code.starts_with("57P0") => return Kind::Outage,
            _ => {}
        }
    }
    // SQLite: codes are primary result codes; messages tell the kind.
    let lower = message.to_ascii_lowercase();
    if [
        "integer overflow",
        "too big",
        "out of range",
        "datatype mismatch",
        "invalid utf",
        "malformed json",
    ]
    .iter()
    .any(|m| lower.contains(m))
    {
        return Kind::Input;
    }
    if [
        "disk i/o error",
        "unable to open database",
        "database disk image is malformed",
        "out of memory",
    ]
    .iter()
    .any(|m| lower.contains(m))
    {
        return Kind::Outage;
    }
    Kind::Statement
}

/// An engine's message without the driver's prefixes: `error returned from database: `, SQLite's
/// `(code: 1) `, MySQL's `1054 (42S22): `.
fn engine_message(text: &str) -> String {
    let text = one_line(text);
    let text = text.trim_start_matches("error returned from database: ");
    let text = match text.strip_prefix("(code: ") {
        Some(rest) => rest.split_once(") ").map_or(rest, |(_, m)| m),
        None => text,
    };
    let text = match text.split_once("): ") {
        Some((code, m))
            if code
                .split(' ')
                .next()
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) =>
        {
            m
        }
        _ => text,
    };
    text.to_owned()
}

/// A SQLite error message, sorted like the others.
pub(crate) fn sqlite_error(message: String) -> SqlError {
    match classify(None, None, &message) {
        Kind::Input => SqlError::invalid(message),
        Kind::Outage => SqlError::unavailable(message),
        Kind::Statement => SqlError::query(message),
    }
}
