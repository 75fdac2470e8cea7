//! Column masks: a role may read a column only masked. The scoped derived table selects the mask expression
//! under the column's own name, so filters, joins and aggregates run on the masked value and the original never
//! leaves the engine.

use serde::{Deserialize, Serialize};

use crate::dialect::Dialect;

/// How a masked column is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mask {
    /// The first character, `***`, and for an e-mail address its `@domain` (`a***@example.com`).
    Partial,
    /// The SHA-256 of the value's text in hex (equal values stay equal: joins and `count(DISTINCT …)` still
    /// work), the same on every engine.
    Hash,
    /// Always NULL.
    Null,
}

impl Mask {
    /// The mask's name as configured.
    pub fn name(self) -> &'static str {
        match self {
            Mask::Partial => "partial",
            Mask::Hash => "hash",
            Mask::Null => "null",
        }
    }

    /// The SQL expression that masks `column` (already quoted by the caller) on `dialect`.
    pub fn expression(self, dialect: Dialect, column: &str) -> String {
        match (self, dialect) {
            (Mask::Null, _) => "NULL".to_owned(),
            (Mask::Hash, Dialect::Postgres) => {
                format!("encode(sha256(convert_to(CAST({column} AS text), 'UTF8')), 'hex')")
            }
            (Mask::Hash, Dialect::Mysql) => format!("SHA2(CAST({column} AS CHAR), 256)"),
            // SQLite has no digest function: Steward registers this one on every connection.
            (Mask::Hash, Dialect::Sqlite) => format!("steward_mask_hash(CAST({column} AS TEXT))"),
            (Mask::Partial, Dialect::Postgres) => format!(
                "CASE WHEN {column} IS NULL THEN NULL ELSE left(CAST({column} AS text), 1) || '***' || \
                 CASE WHEN strpos(CAST({column} AS text), '@') > 0 \
                 THEN substr(CAST({column} AS text), strpos(CAST({column} AS text), '@')) ELSE '' END END"
            ),
            (Mask::Partial, Dialect::Mysql) => format!(
                "CASE WHEN {column} IS NULL THEN NULL ELSE CONCAT(LEFT(CAST({column} AS CHAR), 1), '***', \
                 CASE WHEN LOCATE('@', CAST({column} AS CHAR)) > 0 \
                 THEN SUBSTRING(CAST({column} AS CHAR), LOCATE('@', CAST({column} AS CHAR))) ELSE '' END) END"
            ),
            (Mask::Partial, Dialect::Sqlite) => format!(
                "CASE WHEN {column} IS NULL THEN NULL ELSE substr(CAST({column} AS TEXT), 1, 1) || '***' || \
                 CASE WHEN instr(CAST({column} AS TEXT), '@') > 0 \
                 THEN substr(CAST({column} AS TEXT), instr(CAST({column} AS TEXT), '@')) ELSE '' END END"
            ),
        }
    }
}
