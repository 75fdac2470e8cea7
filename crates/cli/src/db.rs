//! Opening the database given with `--db`, reading its catalog with a spinner on long work.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use steward_sql::{Catalog, Database, Dialect, IntrospectOptions, Param, QueryLimits};

/// The directory where catalogs are cached by fingerprint: `$XDG_CACHE_HOME/steward` or `~/.cache/steward`.
fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("steward"))
}

/// A spinner on stderr when it is a terminal.
pub(crate) fn spinner(message: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
        bar.set_style(style.tick_chars("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ "));
    }
    bar.set_message(message.to_owned());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// The directory for Steward's state across runs: `$XDG_STATE_HOME/steward` or `~/.local/state/steward`.
pub(crate) fn state_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .map(|d| d.join("steward"))
}

/// How often the note on the role's privileges is said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Repeat {
    /// Every time (`steward init`, where a database is set up).
    Always,
    /// The first time for a database and what its role may do (`steward schema`, `steward sql run`): it is
    /// remembered in the state directory, so a role that gains a power is named again.
    Once,
}

/// Says on stderr when the database role may do more than read, with the SQL for a read-only role: always, or
/// once per database (`url`, keyed without its password) and notice.
pub(crate) fn note_privileges(db: &Database, url: &str, repeat: Repeat) {
    let Some(notice) = db.privileges().and_then(steward_sql::Privileges::notice) else {
        return;
    };
    let style = crate::style::Style::stderr();
    if repeat == Repeat::Always {
        crate::out::note!("{}", style.dim(&notice));
        return;
    }
    say_once(url, &notice, "once per database and role");
}

/// Says `notice` on stderr the first time for the database `url` (keyed without its password) and this very
/// text, remembered in the state directory; `per` says how often, in the line that tells how to see it again.
pub(crate) fn say_once(url: &str, notice: &str, per: &str) {
    let style = crate::style::Style::stderr();
    let shown = steward_sql::redact_url(url);
    let Some(dir) = state_dir().map(|d| d.join("noted")) else {
        crate::out::note!("{}", style.dim(notice));
        return;
    };
    let marker = dir.join(note_key(&shown, notice));
    if marker.exists() {
        return;
    }
    // When the marker cannot be written, the note is said again next time: better twice than never.
    let remembered = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&marker, format!("said a note for {shown}\n")))
        .is_ok();
    if remembered {
        crate::out::note!(
            "{}",
            style.dim(&format!(
                "{notice}\n(Steward says this {per}; delete {} to see it again.)",
                marker.display()
            ))
        );
    } else {
        crate::out::note!("{}", style.dim(notice));
    }
}

/// Says once per database, before a write tool's first write creates it, where Steward records each write
/// (`steward_tool_calls` in the user's database, or where the tool's `ledger:` places it).
pub(crate) async fn note_ledgers(app: &steward_app::App) {
    for (url, note) in app.ledger_notes().await {
        say_once(
            &url,
            &format!("note: {note}"),
            "once per database and table",
        );
    }
}

/// The marker's file name: a digest of the database's URL without secrets and the notice, so that nothing
/// about the database can be read from it.
fn note_key(url: &str, notice: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::new()
        .chain_update(url.as_bytes())
        .chain_update([0])
        .chain_update(notice.as_bytes())
        .finalize();
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// Connects without reading the catalog (a query reads it only to explain an error).
pub(crate) async fn connect(url: &str) -> anyhow::Result<Database> {
    let bar = spinner("connecting");
    let db = Database::connect(url).await;
    bar.finish_and_clear();
    Ok(db?)
}

/// Connects and reads the catalog (cached across runs while the schema is unchanged).
pub(crate) async fn open(url: &str) -> anyhow::Result<(Arc<Database>, Arc<Catalog>)> {
    let bar = spinner("connecting");
    let db = Database::connect(url).await;
    let db = match db {
        Ok(db) => Arc::new(db),
        Err(e) => {
            bar.finish_and_clear();
            return Err(e.into());
        }
    };
    bar.set_message("reading the schema");
    let options = IntrospectOptions {
        cache_dir: cache_dir(),
        ..IntrospectOptions::default()
    };
    let catalog = db.refresh_catalog(&options).await;
    bar.finish_and_clear();
    Ok((db, catalog?))
}

/// Creates the database a `postgres://` or `mysql://` URL names when its server does not have it yet, through
/// the server's maintenance database (`postgres` on PostgreSQL, none on MySQL/MariaDB). Returns the
/// database's name when it created it, `None` when there was nothing to create (a SQLite URL, a URL without a
/// database name, a database that exists, a server that cannot be reached: the caller's own error says why).
pub(crate) async fn create_if_missing(url: &str) -> anyhow::Result<Option<String>> {
    let Ok(parsed) = url::Url::parse(url.trim()) else {
        return Ok(None);
    };
    let dialect = match parsed.scheme().to_ascii_lowercase().as_str() {
        "postgres" | "postgresql" => Dialect::Postgres,
        "mysql" | "mariadb" => Dialect::Mysql,
        _ => return Ok(None),
    };
    let path = parsed.path().trim_start_matches('/');
    let name = percent_decode(path);
    if name.is_empty() || name.contains('/') {
        return Ok(None);
    }
    let mut maintenance = parsed.clone();
    maintenance.set_path(if dialect == Dialect::Postgres {
        "/postgres"
    } else {
        ""
    });
    let Ok(server) = Database::connect(maintenance.as_str()).await else {
        return Ok(None);
    };
    let result = create_on(&server, dialect, &name).await;
    server.close().await;
    Ok(result?.then_some(name))
}

/// Creates `name` on the server unless it exists; true when it created it.
async fn create_on(server: &Database, dialect: Dialect, name: &str) -> anyhow::Result<bool> {
    if exists(server, dialect, name).await? {
        return Ok(false);
    }
    let create = format!("CREATE DATABASE {}", dialect.quote(name));
    if let Err(error) = server.execute_script(&create).await {
        // Someone else may have created it meanwhile.
        if exists(server, dialect, name).await? {
            return Ok(false);
        }
        anyhow::bail!("cannot create the database `{name}`: {error}");
    }
    Ok(true)
}

async fn exists(server: &Database, dialect: Dialect, name: &str) -> anyhow::Result<bool> {
    let sql = match dialect {
        Dialect::Postgres => "SELECT 1 FROM pg_catalog.pg_database WHERE datname = $1",
        _ => "SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
    };
    let found = server
        .query_prepared(
            sql,
            &[Param::Text(name.to_owned())],
            &QueryLimits::default(),
        )
        .await?;
    Ok(!found.rows.is_empty())
}

/// `%xx` escapes of a URL path decoded (as the drivers read the database name); invalid UTF-8 is replaced.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                let value = hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0);
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_names_are_decoded_from_the_path() {
        assert_eq!(percent_decode("shop"), "shop");
        assert_eq!(percent_decode("my%20shop%22x"), "my shop\"x");
        assert_eq!(percent_decode("caf%C3%A9"), "café");
        assert_eq!(percent_decode("100%"), "100%");
    }
}
