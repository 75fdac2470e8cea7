//! Catalogs cached on disk by fingerprint, so that another process reading an unchanged schema reuses its
//! samples instead of gathering them again. A cache that cannot be read or written only costs time.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write as _};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::catalog::{Catalog, Samples};

/// Bumped whenever what a cached catalog holds changes (so old caches are not read).
const CACHE_VERSION: u32 = 2;

fn cache_path(dir: &Path, fingerprint: &str) -> PathBuf {
    dir.join(format!("catalog-v{CACHE_VERSION}-{fingerprint}.json"))
}

/// The samples of a cached catalog: read from the same file as a [`Catalog`], every other field skipped, so a
/// process that reuses them does not hold a second catalog (at 10,000 tables, some 75 MB) while it does.
#[derive(Debug, Deserialize, PartialEq)]
pub(super) struct CachedSamples {
    fingerprint: String,
    tables: Vec<CachedTable>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct CachedTable {
    columns: Vec<CachedColumn>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct CachedColumn {
    #[serde(default)]
    samples: Samples,
}

impl CachedSamples {
    /// Moves the samples into `catalog`, whose structure has the same fingerprint (so the same tables and
    /// columns in the same order).
    pub(super) fn give_to(self, catalog: &mut Catalog) {
        for (table, cached) in catalog.tables.iter_mut().zip(self.tables) {
            for (column, cached) in table.columns.iter_mut().zip(cached.columns) {
                column.samples = cached.samples;
            }
        }
    }
}

/// The samples cached in `dir` under `fingerprint`, when there is such a file and it is intact.
/// Parsed as it is read: the file (19 MB at 10,000 tables) is never held whole beside the catalog.
pub(super) fn load(dir: &Path, fingerprint: &str) -> Option<CachedSamples> {
    let file = File::open(cache_path(dir, fingerprint)).ok()?;
    serde_json::from_reader::<_, CachedSamples>(BufReader::with_capacity(1 << 16, file))
        .ok()
        .filter(|c| c.fingerprint == fingerprint)
}

/// Saves `catalog` in `dir` under its fingerprint: written to a temporary file and renamed, streamed (the JSON
/// of a large catalog is never held whole in memory).
pub(super) fn save(dir: &Path, catalog: &Catalog) {
    // A cache that cannot be written only costs time next run.
    let _ = write(dir, catalog);
}

fn write(dir: &Path, catalog: &Catalog) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let path = cache_path(dir, &catalog.fingerprint);
    let temporary = path.with_extension(format!("{}.tmp", std::process::id()));
    let mut out = BufWriter::new(File::create(&temporary)?);
    let written = serde_json::to_writer(&mut out, catalog)
        .map_err(std::io::Error::other)
        .and_then(|()| out.flush());
    drop(out);
    match written {
        Ok(()) => std::fs::rename(&temporary, &path),
        Err(e) => {
            let _ = std::fs::remove_file(&temporary);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Column, Table, TableKind};
    use crate::dialect::Dialect;

    #[test]
    fn a_saved_catalog_loads_back_and_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("steward-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let table = Table {
            name: "t".to_owned(),
            kind: TableKind::Table,
            comment: None,
            columns: vec![Column {
                name: "c".to_owned(),
                data_type: "TEXT".into(),
                nullable: true,
                default: None,
                comment: None,
                samples: ["x"].into_iter().collect(),
            }],
            primary_key: Vec::new(),
            foreign_keys: Vec::new(),
            rows: Some(1),
        };
        let catalog = Catalog::new(Dialect::Sqlite, vec![table]);
        save(&dir, &catalog);
        let mut fresh = catalog.clone();
        fresh.tables[0].columns[0].samples.clear();
        load(&dir, &catalog.fingerprint)
            .expect("the saved samples load back")
            .give_to(&mut fresh);
        assert_eq!(fresh, catalog);
        assert_eq!(load(&dir, "0000"), None);
        let files: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert_eq!(files.len(), 1, "{files:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
