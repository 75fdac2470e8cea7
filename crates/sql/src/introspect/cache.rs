//! Catalogs cached on disk by fingerprint, so that another process reading an unchanged schema reuses its
//! samples instead of gathering them again. A cache that cannot be read or written only costs time.

use std::path::{Path, PathBuf};

use crate::catalog::Catalog;

/// Bumped whenever what a cached catalog holds changes (so old caches are not read).
const CACHE_VERSION: u32 = 2;

fn cache_path(dir: &Path, fingerprint: &str) -> PathBuf {
    dir.join(format!("catalog-v{CACHE_VERSION}-{fingerprint}.json"))
}

/// The catalog cached in `dir` under `fingerprint`, when there is one and it is intact.
pub(super) fn load(dir: &Path, fingerprint: &str) -> Option<Catalog> {
    let text = std::fs::read_to_string(cache_path(dir, fingerprint)).ok()?;
    serde_json::from_str::<Catalog>(&text)
        .ok()
        .filter(|c| c.fingerprint == fingerprint)
}

/// Saves `catalog` in `dir` under its fingerprint.
pub(super) fn save(dir: &Path, catalog: &Catalog) {
    // A cache that cannot be written only costs time next run.
    if std::fs::create_dir_all(dir).is_ok()
        && let Ok(text) = serde_json::to_string(catalog)
    {
        let _ = std::fs::write(cache_path(dir, &catalog.fingerprint), text);
    }
}
