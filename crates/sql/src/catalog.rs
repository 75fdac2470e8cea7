//! The catalog model: tables and views, their columns (type, nullability, default, comment, primary key),
//! foreign keys, row estimates and a few sample values per column, and a fingerprint of the structure.
//!
//! Plain data, no database: reading it from a live database is `introspect`'s job.

use serde::{Deserialize, Serialize};

use crate::dialect::Dialect;

/// Sample values kept per column.
pub const MAX_SAMPLES: usize = 5;
/// Longest sample value kept, in characters.
pub const MAX_SAMPLE_CHARS: usize = 30;

/// Whether a relation is a table or a view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TableKind {
    /// A table (or a foreign or partitioned table).
    Table,
    /// A view (or a materialised view).
    View,
}

/// One column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    /// Its name.
    pub name: String,
    /// Its type as the engine names it.
    pub data_type: String,
    /// Whether it may hold NULL.
    pub nullable: bool,
    /// Its default expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Its comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Up to five distinct values, each cut to 30 characters (not for binary columns).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<String>,
}

/// A foreign key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKey {
    /// The referencing columns.
    pub columns: Vec<String>,
    /// The referenced table (qualified when it is in another schema).
    pub table: String,
    /// The referenced columns.
    pub referenced: Vec<String>,
}

/// One table or view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// Its name as queries should write it (qualified only outside the default schema).
    pub name: String,
    /// Table or view.
    pub kind: TableKind,
    /// Its comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Its columns, in order.
    pub columns: Vec<Column>,
    /// The primary key's columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub primary_key: Vec<String>,
    /// Its foreign keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_keys: Vec<ForeignKey>,
    /// The engine's estimate of its rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
}

impl Table {
    /// The column with that name (case-insensitive).
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name).or_else(|| {
            self.columns
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(name))
        })
    }
}

/// Everything known about a database's schema.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalog {
    /// The dialect.
    pub dialect: Dialect,
    /// Tables and views, by name.
    pub tables: Vec<Table>,
    /// A fingerprint of the structure (not of rows or samples).
    pub fingerprint: String,
}

impl Catalog {
    /// Builds a catalog from tables; computes the fingerprint.
    pub fn new(dialect: Dialect, mut tables: Vec<Table>) -> Self {
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        let fingerprint = fingerprint(dialect, &tables);
        Self {
            dialect,
            tables,
            fingerprint,
        }
    }

    /// The table with that name: exact, then case-insensitive, then by its unqualified name.
    pub fn table(&self, name: &str) -> Option<&Table> {
        let name = name.trim().trim_matches(['"', '`', '[', ']']);
        self.tables
            .iter()
            .find(|t| t.name == name)
            .or_else(|| {
                self.tables
                    .iter()
                    .find(|t| t.name.eq_ignore_ascii_case(name))
            })
            .or_else(|| {
                let bare = name.rsplit('.').next().unwrap_or(name);
                self.tables.iter().find(|t| {
                    t.name
                        .rsplit('.')
                        .next()
                        .is_some_and(|n| n.eq_ignore_ascii_case(bare))
                })
            })
    }

    /// The table names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tables.iter().map(|t| t.name.as_str())
    }

    /// Copies samples from an older catalog of the same structure.
    pub(crate) fn take_samples(&mut self, old: &Catalog) {
        for (table, old_table) in self.tables.iter_mut().zip(&old.tables) {
            for (column, old_column) in table.columns.iter_mut().zip(&old_table.columns) {
                column.samples.clone_from(&old_column.samples);
            }
        }
    }
}

/// FNV-1a over the structure: stable across runs and Rust versions, unlike `DefaultHasher`.
fn fingerprint(dialect: Dialect, tables: &[Table]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |text: &str| {
        for byte in text.bytes().chain([0u8]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(&dialect.to_string());
    for t in tables {
        feed(&t.name);
        feed(if t.kind == TableKind::View { "v" } else { "t" });
        for c in &t.columns {
            feed(&c.name);
            feed(&c.data_type);
            feed(if c.nullable { "n" } else { "nn" });
            feed(c.default.as_deref().unwrap_or(""));
            feed(c.comment.as_deref().unwrap_or(""));
        }
        feed(&t.primary_key.join(","));
        for fk in &t.foreign_keys {
            feed(&format!("{:?}>{}{:?}", fk.columns, fk.table, fk.referenced));
        }
        feed(t.comment.as_deref().unwrap_or(""));
    }
    format!("{hash:016x}")
}

/// Cuts a sample to [`MAX_SAMPLE_CHARS`].
pub(crate) fn cut_sample(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= MAX_SAMPLE_CHARS {
        text.to_owned()
    } else {
        let head: String = text.chars().take(MAX_SAMPLE_CHARS - 1).collect();
        format!("{head}…")
    }
}

/// Whether a column's type holds binary data (never sampled).
pub(crate) fn is_binary(data_type: &str) -> bool {
    let t = data_type.to_ascii_lowercase();
    ["blob", "bytea", "binary", "geometry", "geography", "raster"]
        .iter()
        .any(|k| t.contains(k))
}

/// Whether a column's type holds dates or times (their samples show the format in use).
pub(crate) fn is_temporal(data_type: &str) -> bool {
    let t = data_type.to_ascii_lowercase();
    ["date", "time", "year"].iter().any(|k| t.contains(k)) && !t.contains("[]")
}

/// Whether a column's type holds text worth sampling (names, codes, statuses), as opposed to numbers, dates,
/// binary data or documents.
pub(crate) fn is_textual(data_type: &str) -> bool {
    let t = data_type.to_ascii_lowercase();
    if t.is_empty() {
        return true; // SQLite columns without a declared type
    }
    [
        "char", "text", "clob", "string", "enum", "set(", "name", "citext",
    ]
    .iter()
    .any(|k| t.contains(k))
        && !t.contains("[]")
}
