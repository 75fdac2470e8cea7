//! The catalog model: tables and views, their columns (type, nullability, default, comment, primary key),
//! foreign keys, row estimates and a few sample values per column, and a fingerprint of the structure.
//!
//! Plain data, no database: reading it from a live database is `introspect`'s job.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

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
    pub data_type: std::sync::Arc<str>,
    /// Whether it may hold NULL.
    pub nullable: bool,
    /// Its default expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Box<str>>,
    /// Its comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<Box<str>>,
    /// Up to five distinct values, each cut to 30 characters (not for binary columns).
    #[serde(default, skip_serializing_if = "Samples::is_empty")]
    pub samples: Samples,
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

/// Cuts a sample to [`MAX_SAMPLE_CHARS`] (trimmed; a cut one ends in `…`). Cutting twice changes nothing.
pub(crate) fn cut_sample(text: &str) -> Cow<'_, str> {
    let text = text.trim();
    match text.char_indices().nth(MAX_SAMPLE_CHARS) {
        None => Cow::Borrowed(text),
        Some(_) => {
            let head: String = text.chars().take(MAX_SAMPLE_CHARS - 1).collect();
            Cow::Owned(format!("{head}…"))
        }
    }
}

/// A column's sample values: at most [`MAX_SAMPLES`], each cut to [`MAX_SAMPLE_CHARS`] characters, in one
/// allocation. A catalog of 10,000 tables × 20 columns holds 200,000 of these; one `String` per value (and a
/// `Vec` of them) took four allocations per column and tens of MB more.
///
/// Built from any strings (`collect()`, `From<Vec<String>>`): each is cut as [`MAX_SAMPLE_CHARS`] says and
/// those past [`MAX_SAMPLES`] are dropped. It reads and writes as a JSON list of strings.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Samples {
    /// The values, one after another.
    text: Box<str>,
    /// Each value's length in bytes (a cut value has at most 30 characters, so at most 120 bytes).
    lens: [u8; MAX_SAMPLES],
    /// How many values there are.
    count: u8,
}

impl Samples {
    /// How many values.
    pub fn len(&self) -> usize {
        usize::from(self.count)
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The values, in order.
    pub fn iter(&self) -> SampleIter<'_> {
        SampleIter {
            rest: &self.text,
            lens: self.lens[..self.len()].iter(),
        }
    }

    /// Drops every value.
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

/// The values of [`Samples`], in order.
#[derive(Clone, Debug)]
pub struct SampleIter<'a> {
    rest: &'a str,
    lens: std::slice::Iter<'a, u8>,
}

impl<'a> Iterator for SampleIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let (value, rest) = self
            .rest
            .split_at_checked(usize::from(*self.lens.next()?))?;
        self.rest = rest;
        Some(value)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.lens.size_hint()
    }
}

impl ExactSizeIterator for SampleIter<'_> {}

impl<'a> IntoIterator for &'a Samples {
    type Item = &'a str;
    type IntoIter = SampleIter<'a>;

    fn into_iter(self) -> SampleIter<'a> {
        self.iter()
    }
}

impl<S: AsRef<str>> FromIterator<S> for Samples {
    fn from_iter<I: IntoIterator<Item = S>>(values: I) -> Self {
        let mut text = String::new();
        let mut lens = [0u8; MAX_SAMPLES];
        let mut count = 0u8;
        for value in values {
            let Some(slot) = lens.get_mut(usize::from(count)) else {
                break;
            };
            let value = cut_sample(value.as_ref());
            // Always true for a cut value; a value that did not fit would be left out, never mis-split.
            if let Ok(len) = u8::try_from(value.len()) {
                *slot = len;
                text.push_str(&value);
                count += 1;
            }
        }
        Self {
            text: text.into_boxed_str(),
            lens,
            count,
        }
    }
}

impl From<Vec<String>> for Samples {
    fn from(values: Vec<String>) -> Self {
        values.iter().collect()
    }
}

impl std::fmt::Debug for Samples {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Samples {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Samples {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<String>::deserialize(deserializer).map(Self::from)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_keep_five_values_in_order_each_cut_to_thirty_characters() {
        let long = "ü".repeat(40);
        let values = [
            "a",
            "  spaced  ",
            "",
            long.as_str(),
            "日本",
            "sixth",
            "seventh",
        ];
        let samples: Samples = values.iter().collect();
        let cut = format!("{}…", "ü".repeat(29));
        assert_eq!(
            samples.iter().collect::<Vec<_>>(),
            ["a", "spaced", "", cut.as_str(), "日本"]
        );
        assert_eq!(samples.len(), 5);
        assert_eq!(samples.iter().len(), 5);
        // Cutting again changes nothing, so a catalog read back from JSON equals the one written.
        let json = serde_json::to_string(&samples).unwrap_or_default();
        assert_eq!(json, format!(r#"["a","spaced","","{cut}","日本"]"#));
        assert_eq!(
            serde_json::from_str::<Samples>(&json).ok(),
            Some(samples.clone())
        );
        assert_eq!(
            format!("{samples:?}"),
            format!(r#"["a", "spaced", "", "{cut}", "日本"]"#)
        );
        let mut samples = samples;
        samples.clear();
        assert!(samples.is_empty());
        assert_eq!(samples.iter().next(), None);
        assert_eq!(
            Samples::from(vec!["x".to_owned()])
                .iter()
                .collect::<Vec<_>>(),
            ["x"]
        );
    }
}
