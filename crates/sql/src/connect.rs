//! The first connection to a server, and a failed connection as one line that says what to do.

use crate::database::{CONNECT_TIMEOUT, one_line};
use crate::error::SqlError;

/// Opens one connection, so that a failure is reported with its real cause: with `plain` (a loopback host,
/// no TLS asked for, see [`crate::loopback`]) first without TLS, and as the URL says when the server refuses that.
/// Returns the connection and the options that made it.
pub(crate) async fn probe<C: sqlx::Connection>(
    options: &<C as sqlx::Connection>::Options,
    plain: Option<<C as sqlx::Connection>::Options>,
    target: &str,
    shown: &str,
) -> Result<(C, <C as sqlx::Connection>::Options), SqlError> {
    if let Some(plain) = plain {
        match connect::<C>(&plain).await {
            Ok(conn) => return Ok((conn, plain)),
            // The server refused a plain connection (it may require TLS): as the URL says, below.
            Err(sqlx::Error::Database(_)) => {}
            Err(e) => return Err(connect_error(e, target, shown)),
        }
    }
    match connect::<C>(options).await {
        Ok(conn) => Ok((conn, options.clone())),
        Err(e) => Err(connect_error(e, target, shown)),
    }
}

/// One connection within [`CONNECT_TIMEOUT`].
async fn connect<C: sqlx::Connection>(
    options: &<C as sqlx::Connection>::Options,
) -> Result<C, sqlx::Error> {
    match tokio::time::timeout(CONNECT_TIMEOUT, C::connect_with(options)).await {
        Ok(result) => result,
        Err(_) => Err(sqlx::Error::PoolTimedOut),
    }
}

/// A connection error as one line that says what to do; the driver's error is kept as the cause, except a
/// configuration error, whose text may quote the URL and its password.
pub(crate) fn connect_error(error: sqlx::Error, target: &str, shown: &str) -> SqlError {
    let text = match &error {
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
    match error {
        sqlx::Error::Configuration(_) => SqlError::connect(text),
        error => SqlError::connect(text).caused_by(error),
    }
}
