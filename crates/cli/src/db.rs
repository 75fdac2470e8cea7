//! Opening the database given with `--db`, reading its catalog with a spinner on long work.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use steward_sql::{Catalog, Database, IntrospectOptions};

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

/// Says once, on stderr, when the database role may do more than read, with the SQL for a read-only role.
pub(crate) fn note_privileges(db: &Database) {
    if let Some(notice) = db.privileges().and_then(steward_sql::Privileges::notice) {
        crate::out::note!("{}", crate::style::Style::stderr().dim(&notice));
    }
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
