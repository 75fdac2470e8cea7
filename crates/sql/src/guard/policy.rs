//! Table and column allowlists (`GuardPolicy`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::walker::Walker;
use super::{Reason, reason};

/// Which tables and columns may be read; `None` allows all.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardPolicy {
    /// Tables that may be read.
    #[serde(default)]
    pub tables: Option<Vec<String>>,
    /// Columns that may be read, by table; tables not listed here allow all their columns.
    #[serde(default)]
    pub columns: Option<BTreeMap<String, Vec<String>>>,
}

/// The refusals of `policy` for the tables and columns the walk found.
pub(super) fn check_policy(
    policy: &GuardPolicy,
    wildcard_scoped: bool,
    tables: &[String],
    walker: &Walker<'_>,
    reasons: &mut Vec<Reason>,
) {
    if let Some(allowed) = &policy.tables {
        for table in tables {
            if !allowed.iter().any(|a| same_table(a, table)) {
                reasons.push(reason(
                    "table_not_allowed",
                    format!(
                        "Table `{table}` may not be read. Tables you may read: {}.",
                        allowed.join(", ")
                    ),
                ));
            }
        }
    }
    let Some(columns) = &policy.columns else {
        return;
    };
    let restricted: Vec<(&String, &Vec<String>)> = columns
        .iter()
        .filter(|(t, _)| tables.iter().any(|used| same_table(t, used)))
        .collect();
    if restricted.is_empty() {
        return;
    }
    if walker.wildcard && !wildcard_scoped {
        reasons.push(reason(
            "column_not_allowed",
            "`*` would read columns outside the allowed ones; name the columns.".to_owned(),
        ));
    }
    // A qualified column (`c.email`) belongs to the table its qualifier names, through a table alias or not.
    for (qualifier, column) in &walker.qualified {
        let table = walker
            .aliased
            .iter()
            .find(|(alias, _)| alias.eq_ignore_ascii_case(qualifier))
            .map_or(qualifier.as_str(), |(_, table)| table.as_str());
        let Some((_, allowed)) = restricted.iter().find(|(t, _)| same_table(t, table)) else {
            continue;
        };
        if !allowed.iter().any(|c| c.eq_ignore_ascii_case(column)) {
            reasons.push(reason(
                "column_not_allowed",
                format!(
                    "Column `{qualifier}.{column}` may not be read. Columns of {table} you may read: {}.",
                    allowed.join(", ")
                ),
            ));
        }
    }
    // A column is fine when an alias defines it, when a referenced table without a column list may have
    // it, or when one of the restricted tables allows it.
    let unrestricted = tables
        .iter()
        .any(|t| !columns.keys().any(|k| same_table(k, t)));
    if unrestricted {
        return;
    }
    for column in &walker.columns {
        let ok = walker.aliases.contains(&column.to_ascii_lowercase())
            || restricted
                .iter()
                .any(|(_, cols)| cols.iter().any(|c| c.eq_ignore_ascii_case(column)));
        if !ok {
            let allowed: BTreeSet<&str> = restricted
                .iter()
                .flat_map(|(_, c)| c.iter().map(String::as_str))
                .collect();
            reasons.push(reason(
                "column_not_allowed",
                format!(
                    "Column `{column}` may not be read. Columns you may read: {}.",
                    allowed.into_iter().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
}

/// Whether two table names name the same table: equal but for case, or equal but for a schema one of them
/// leaves out (`orders` and `sales.orders`).
pub(crate) fn same_table(a: &str, b: &str) -> bool {
    let last = |s: &str| s.rsplit('.').next().unwrap_or(s).to_ascii_lowercase();
    a.eq_ignore_ascii_case(b) || (!a.contains('.') || !b.contains('.')) && last(a) == last(b)
}
