//! Whether a connection first tries without TLS: only to a loopback host, and only when neither the URL nor
//! `PGSSLMODE` says anything about TLS.
//!
//! Why: sqlx 0.9 sets no `TCP_NODELAY` on its sockets (launchbadge/sqlx#4335) and rustls writes the handshake in
//! small records, so Nagle's algorithm and the peer's delayed ACK add about 40 ms twice to every TLS handshake —
//! ~90 ms per connection where a plain one takes ~2 ms. sqlx offers no hook to set the option. At the default
//! `sslmode=prefer` the TLS bought nothing against an active attacker anyway (certificates are not checked), and
//! on loopback the bytes never leave the machine.
//!
//! This is libpq's `sslmode=allow` (which sqlx does not implement: it treats `allow` as `disable`): plain first;
//! when the server refuses a plain connection (pg_hba `hostssl`, MySQL's `require_secure_transport` or a user
//! `REQUIRE SSL`), the connection is made again exactly as the URL says. An explicit `sslmode`/`ssl-mode` (or any
//! other `ssl…` parameter, or `PGSSLMODE`) is always obeyed, and hosts other than loopback are never touched.

use std::net::IpAddr;

/// True when a PostgreSQL connection to `host` (not a Unix socket) from `url` should try plain TCP first.
pub(crate) fn postgres_plain_first(url: &str, host: &str, socket: bool) -> bool {
    !socket && std::env::var_os("PGSSLMODE").is_none() && plain_first(url, host)
}

/// True when a MySQL/MariaDB connection to `host` (not a Unix socket) from `url` should try plain TCP first.
pub(crate) fn mysql_plain_first(url: &str, host: &str, socket: bool) -> bool {
    !socket && plain_first(url, host)
}

/// A loopback host and a URL whose query names no TLS parameter.
fn plain_first(url: &str, host: &str) -> bool {
    is_loopback(host) && !names_tls(url)
}

/// Whether the URL's query has a parameter about TLS (`sslmode`, `ssl-mode`, `sslrootcert`, `ssl-ca`, …).
fn names_tls(url: &str) -> bool {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let query = query.split_once('#').map_or(query, |(q, _)| q);
    query.split('&').any(|pair| {
        let key = pair.split_once('=').map_or(pair, |(k, _)| k);
        key.trim().to_ascii_lowercase().starts_with("ssl")
    })
}

/// `localhost` or a loopback address (127.0.0.0/8, `::1`).
fn is_loopback(host: &str) -> bool {
    let host = host.trim().trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_without_tls_parameters_go_plain_first() {
        let url = "postgres://u@127.0.0.1:5432/db";
        assert!(plain_first(url, "127.0.0.1"));
        assert!(plain_first("postgres://u@localhost/db", "localhost"));
        assert!(plain_first("postgres://u@[::1]/db", "::1"));
        assert!(plain_first("postgres://u@[::1]/db", "[::1]"));
        assert!(plain_first(
            "postgres://u@127.0.0.2/db?application_name=x",
            "127.0.0.2"
        ));
        // Not loopback: left to the URL (sqlx's default, TLS preferred).
        assert!(!plain_first(
            "postgres://u@db.example.com/db",
            "db.example.com"
        ));
        assert!(!plain_first("postgres://u@10.0.0.5/db", "10.0.0.5"));
        assert!(!plain_first(
            "postgres://u@localhost.example.com/db",
            "localhost.example.com"
        ));
        // Any TLS parameter is obeyed as given.
        for query in [
            "sslmode=prefer",
            "sslmode=require",
            "sslmode=disable",
            "SSLMODE=verify-full",
            "x=1&ssl-mode=REQUIRED",
            "sslrootcert=/etc/ca.pem",
            "ssl-ca=/etc/ca.pem",
        ] {
            let url = format!("postgres://u@127.0.0.1/db?{query}");
            assert!(!plain_first(&url, "127.0.0.1"), "{url}");
        }
        // A Unix socket has no TLS to skip.
        assert!(!postgres_plain_first(url, "127.0.0.1", true));
        assert!(!mysql_plain_first(
            "mysql://root@localhost/db",
            "localhost",
            true
        ));
        assert!(mysql_plain_first(
            "mysql://root@127.0.0.1:3306/db",
            "127.0.0.1",
            false
        ));
    }
}
