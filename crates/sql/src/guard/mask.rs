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
    /// The SHA-256 in hex of a secret key and the value's text (equal values stay equal: joins and
    /// `count(DISTINCT …)` still work; without the key a reader cannot test a guess).
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

    /// The SQL expression that masks `column` (already quoted by the caller) on `dialect`; `key` is the
    /// placeholder of the hash's secret key (`STEWARD_MASK_KEY`, else random per process), unused by the
    /// other masks.
    pub fn expression(self, dialect: Dialect, column: &str, key: &str) -> String {
        match (self, dialect) {
            (Mask::Null, _) => "NULL".to_owned(),
            // Keyed: the digest of the key and the value, so that a reader cannot test guesses by hashing them.
            (Mask::Hash, Dialect::Postgres) => format!(
                "encode(sha256(convert_to(CAST({key} AS text) || CAST({column} AS text), 'UTF8')), 'hex')"
            ),
            (Mask::Hash, Dialect::Mysql) => {
                format!("SHA2(CONCAT({key}, CAST({column} AS CHAR)), 256)")
            }
            // SQLite has no digest function: Steward registers this one on every connection.
            (Mask::Hash, Dialect::Sqlite) => {
                format!("steward_mask_hash({key} || CAST({column} AS TEXT))")
            }
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

impl Mask {
    /// The value `cell` masked as [`Mask::expression`] masks it in SQL, for values Steward holds already (the
    /// rows a write's preview returned): the same text the database would give.
    pub fn apply(self, cell: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        let text = match cell {
            Value::Null => return Value::Null,
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match self {
            Mask::Null => Value::Null,
            Mask::Hash => {
                use sha2::{Digest, Sha256};
                let digest = Sha256::digest(format!("{}{text}", mask_key()).as_bytes());
                Value::String(digest.iter().map(|b| format!("{b:02x}")).collect())
            }
            Mask::Partial => {
                let first: String = text.chars().take(1).collect();
                let domain = text.find('@').map_or("", |at| &text[at..]);
                Value::String(format!("{first}***{domain}"))
            }
        }
    }
}

/// The secret key of `hash` masks: `STEWARD_MASK_KEY` when set (several processes then mask alike), else a
/// random key for this process's life.
pub(crate) fn mask_key() -> &'static str {
    static KEY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    KEY.get_or_init(|| match std::env::var("STEWARD_MASK_KEY") {
        Ok(key) if !key.is_empty() => key,
        _ => {
            use std::hash::{BuildHasher, Hasher};
            let random = |salt: u64| {
                let mut h = std::collections::hash_map::RandomState::new().build_hasher();
                h.write_u64(salt);
                h.finish()
            };
            format!("{:016x}{:016x}", random(1), random(2))
        }
    })
}
