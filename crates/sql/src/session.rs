//! Session settings as the database would give them to any client: the driver's own choices are undone so
//! that SQL means what it means in `psql` or `mariadb`.
//!
//! - PostgreSQL: sqlx sends `TimeZone=UTC` and `DateStyle=ISO, MDY` in every startup packet, and `RESET`
//!   returns to those. The values the server would otherwise use are read once at connect — per-database and
//!   per-role settings (`ALTER DATABASE … SET`, `ALTER ROLE … SET`), then the configuration file — and set on
//!   every new connection. Settings the URL asks for itself (`?options=-c timezone=…`) are left alone.
//! - MySQL/MariaDB: sqlx announces `CLIENT_IGNORE_SPACE`, which adds `IGNORE_SPACE` to the session's
//!   `sql_mode`; every new connection takes the server's global `sql_mode` back. The driver is also told not to
//!   add `PIPES_AS_CONCAT` nor to set `time_zone` (see `Database::connect`).

use sqlx::{MySqlConnection, PgConnection, Row as _};

/// The PostgreSQL settings put back on every connection.
const PG_SETTINGS: &[&str] = &["TimeZone", "DateStyle"];

/// The session defaults of one PostgreSQL database.
#[derive(Clone, Debug, Default)]
pub(crate) struct PgDefaults {
    /// (name, value) pairs, set with `set_config` on each new connection.
    settings: Vec<(String, String)>,
}

impl PgDefaults {
    /// Sets the defaults on a new connection.
    pub(crate) async fn apply(&self, conn: &mut PgConnection) -> Result<(), sqlx::Error> {
        for (name, value) in &self.settings {
            sqlx::query("SELECT set_config($1, $2, false)")
                .bind(name)
                .bind(value)
                .execute(&mut *conn)
                .await?;
        }
        Ok(())
    }
}

/// Reads what `TimeZone` and `DateStyle` would be for a client that sent none. `explicit` is the URL's own
/// `options` startup parameter: a setting named there is the user's choice and is kept.
pub(crate) async fn pg_defaults(
    conn: &mut PgConnection,
    explicit: Option<&str>,
) -> Result<PgDefaults, sqlx::Error> {
    let explicit = explicit.unwrap_or("").to_ascii_lowercase();
    let wanted: Vec<&str> = PG_SETTINGS
        .iter()
        .copied()
        .filter(|name| !explicit.contains(&name.to_ascii_lowercase()))
        .collect();
    if wanted.is_empty() {
        return Ok(PgDefaults::default());
    }
    // Per-database and per-role settings: role in database (3) > role (2) > database (1) > all (0).
    let overrides = sqlx::query(
        "SELECT split_part(cfg, '=', 1) AS name, substr(cfg, strpos(cfg, '=') + 1) AS value, \
                (s.setdatabase <> 0)::int + 2 * (s.setrole <> 0)::int AS rank \
         FROM pg_db_role_setting s, unnest(s.setconfig) AS cfg \
         WHERE s.setdatabase IN (0, (SELECT oid FROM pg_database WHERE datname = current_database())) \
           AND s.setrole IN (0, (SELECT oid FROM pg_roles WHERE rolname = session_user))",
    )
    .fetch_all(&mut *conn)
    .await?;
    // The configuration file, readable by superusers and members of pg_read_all_settings.
    let file =
        sqlx::query("SELECT name, setting FROM pg_file_settings WHERE applied ORDER BY seqno DESC")
            .fetch_all(&mut *conn)
            .await
            .unwrap_or_default();
    let mut settings = Vec::new();
    for name in wanted {
        let from_overrides = overrides
            .iter()
            .filter(|row| {
                row.try_get::<String, _>("name")
                    .is_ok_and(|n| n.eq_ignore_ascii_case(name))
            })
            .max_by_key(|row| row.try_get::<i32, _>("rank").unwrap_or(0))
            .and_then(|row| row.try_get::<String, _>("value").ok());
        let from_file = || {
            file.iter()
                .find(|row| {
                    row.try_get::<String, _>("name")
                        .is_ok_and(|n| n.eq_ignore_ascii_case(name))
                })
                .and_then(|row| row.try_get::<String, _>("setting").ok())
        };
        let value = match from_overrides.or_else(from_file) {
            Some(value) => value,
            None => server_default(conn, name).await?,
        };
        settings.push((name.to_owned(), value));
    }
    Ok(PgDefaults { settings })
}

/// The server's value when the configuration file cannot be read: `log_timezone` comes from the same line
/// `initdb` writes for `timezone` and no client can change it; `DateStyle` falls back to its built-in default.
async fn server_default(conn: &mut PgConnection, name: &str) -> Result<String, sqlx::Error> {
    let sql = if name == "TimeZone" {
        "SELECT current_setting('log_timezone')"
    } else {
        "SELECT boot_val FROM pg_settings WHERE name = 'DateStyle'"
    };
    sqlx::query_scalar(sql).fetch_one(conn).await
}

/// Puts the server's global `sql_mode` back on a MySQL/MariaDB connection; with `read_only`, makes every
/// transaction of the session read-only.
pub(crate) async fn mysql_defaults(
    conn: &mut MySqlConnection,
    read_only: bool,
) -> Result<(), sqlx::Error> {
    let sql = if read_only {
        "SET SESSION sql_mode = @@GLOBAL.sql_mode; SET SESSION TRANSACTION READ ONLY"
    } else {
        "SET SESSION sql_mode = @@GLOBAL.sql_mode"
    };
    sqlx::raw_sql(sql).execute(conn).await.map(|_| ())
}
