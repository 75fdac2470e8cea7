//! Reading what a live database is: its catalog (tables, columns, keys, row estimates, samples) and, for the
//! guard, its server's text settings and function catalog.
//!
//! The structure comes from a handful of catalog queries per engine (not one round trip per table), streamed;
//! samples come from one small bounded statement per table, up to 50 tables per round trip. A fingerprint of the structure keys a
//! cache, so samples are not gathered again while the schema is unchanged.
//!
//! This is the driver side of the catalog and the guard: what it reads becomes the plain data of
//! [`crate::Catalog`] and [`crate::Guard`], which know nothing of connections.
//!
//! Where a caller enters sqlx, the future is boxed: sqlx's own futures nest deep enough that a caller holding
//! one inline overflowed the compiler's layout queries in release builds (docs/DESIGN.md, "Async depth").

mod cache;
mod guard;
mod mysql;
mod postgres;
mod samples;
mod sqlite;

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::FutureExt as _;

use crate::catalog::Catalog;
use crate::database::{Database, Pools, one_line};
use crate::error::SqlError;

/// Column types shared: a schema of 10,000 tables × 20 columns names a handful of types 200,000 times, and one
/// `Arc<str>` each instead of a `String` each saves some 8 MB.
#[derive(Default)]
pub(super) struct Types(std::collections::HashSet<Arc<str>>);

impl Types {
    /// The shared copy of `name`.
    pub(super) fn get(&mut self, name: &str) -> Arc<str> {
        if let Some(shared) = self.0.get(name) {
            return shared.clone();
        }
        let shared: Arc<str> = name.into();
        self.0.insert(shared.clone());
        shared
    }
}

/// How introspection runs.
#[derive(Clone, Debug, Default)]
pub struct IntrospectOptions {
    /// Do not gather sample values (faster; schema context then shows none).
    pub skip_samples: bool,
    /// A directory where catalogs are cached by fingerprint across processes.
    pub cache_dir: Option<PathBuf>,
}

impl Database {
    /// The catalog, read once and then kept (see [`Database::refresh_catalog`]).
    pub async fn catalog(&self) -> Result<Arc<Catalog>, SqlError> {
        async move {
            if let Some(catalog) = self.cached_catalog() {
                return Ok(catalog);
            }
            self.refresh_catalog(&IntrospectOptions::default()).await
        }
        .boxed()
        .await
    }

    fn cached_catalog(&self) -> Option<Arc<Catalog>> {
        self.catalog
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Reads the catalog again. Samples are reused when the structure's fingerprint did not change (from
    /// memory, or from `cache_dir`).
    pub async fn refresh_catalog(
        &self,
        options: &IntrospectOptions,
    ) -> Result<Arc<Catalog>, SqlError> {
        async move {
            let tables = match &self.pools {
                Pools::Sqlite { read, .. } => sqlite::tables(read).await,
                Pools::Postgres { read, .. } => postgres::tables(read).await,
                Pools::Mysql { read, .. } => mysql::tables(read).await,
            }
            .map_err(|e| SqlError::catalog(one_line(&e.to_string())).caused_by(e))?;
            let mut catalog = Catalog::new(self.dialect(), tables);
            // Samples are reused while the structure is unchanged: from this process's last catalog, else from the
            // cache on disk, else gathered (and cached).
            if let Some(old) = self
                .cached_catalog()
                .filter(|c| c.fingerprint == catalog.fingerprint)
            {
                catalog.take_samples(&old);
            } else if let Some(cached) = options
                .cache_dir
                .as_deref()
                .and_then(|dir| cache::load(dir, &catalog.fingerprint))
            {
                cached.give_to(&mut catalog);
            } else if !options.skip_samples {
                samples::gather(self, &mut catalog).await;
                if let Some(dir) = &options.cache_dir {
                    cache::save(dir, &catalog);
                }
            }
            let catalog = Arc::new(catalog);
            *self
                .catalog
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(catalog.clone());
            Ok(catalog)
        }
        .boxed()
        .await
    }
}
