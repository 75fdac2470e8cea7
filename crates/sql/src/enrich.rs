//! Database errors made actionable for the model: an unknown table or column gets the closest names from the
//! catalog, an ambiguous column gets the tables that have it.

use crate::catalog::{Catalog, Table};

/// Most suggestions offered.
const MAX_SUGGESTIONS: usize = 3;
/// Most column names listed per table.
const MAX_LISTED: usize = 30;

/// The error message, with what would fix it appended when it can be found.
pub(crate) fn explain(
    message: &str,
    catalog: Option<&Catalog>,
    tables: &[String],
    aliases: &[(String, String)],
) -> String {
    let Some(catalog) = catalog else {
        return message.to_owned();
    };
    let used: Vec<&Table> = tables.iter().filter_map(|t| catalog.table(t)).collect();
    if let Some(name) = unknown_column(message) {
        // `g.Nme`: look in the table `g` stands for.
        let scope: Vec<&Table> = match name.rsplit_once('.') {
            Some((qualifier, _)) => {
                let target = aliases
                    .iter()
                    .find(|(alias, _)| alias.eq_ignore_ascii_case(qualifier))
                    .map_or(qualifier, |(_, table)| table.as_str());
                catalog
                    .table(target)
                    .map_or_else(|| used.clone(), |t| vec![t])
            }
            None => used.clone(),
        };
        return format!(
            "{message}. {}",
            column_hint(&name, catalog, &scope, aliases)
        );
    }
    if let Some(name) = unknown_table(message) {
        return format!("{message}. {}", table_hint(&name, catalog));
    }
    if let Some(name) = ambiguous_column(message) {
        let having: Vec<String> = used
            .iter()
            .filter(|t| t.column(&name).is_some())
            .map(|t| format!("{}.{name}", written(t, aliases)))
            .collect();
        if having.len() > 1 {
            return format!(
                "{message}. Qualify it with its table: {}.",
                having.join(" or ")
            );
        }
    }
    message.to_owned()
}

/// The text between the first pair of `open`/`close` after `marker`.
fn quoted_after<'a>(message: &'a str, marker: &str, open: char, close: char) -> Option<&'a str> {
    let rest = &message[message.find(marker)? + marker.len()..];
    let start = rest.find(open)? + open.len_utf8();
    let end = rest[start..].find(close)?;
    Some(&rest[start..start + end])
}

fn unknown_column(m: &str) -> Option<String> {
    if let Some(rest) = m.strip_prefix("no such column: ") {
        return Some(rest.trim().to_owned()); // SQLite
    }
    if m.starts_with("column ") && m.contains(" does not exist") {
        let inner = m
            .trim_start_matches("column ")
            .split(" does not exist")
            .next()?;
        return Some(inner.trim_matches('"').to_owned()); // PostgreSQL
    }
    if m.starts_with("Unknown column") {
        return quoted_after(m, "Unknown column", '\'', '\'').map(str::to_owned); // MySQL
    }
    None
}

fn unknown_table(m: &str) -> Option<String> {
    if let Some(rest) = m.strip_prefix("no such table: ") {
        return Some(rest.trim().to_owned());
    }
    if m.starts_with("relation ") && m.contains(" does not exist") {
        return quoted_after(m, "relation", '"', '"').map(str::to_owned);
    }
    if m.starts_with("Table '") && m.contains("doesn't exist") {
        let name = quoted_after(m, "Table", '\'', '\'')?;
        return Some(name.rsplit('.').next().unwrap_or(name).to_owned());
    }
    None
}

fn ambiguous_column(m: &str) -> Option<String> {
    if let Some(rest) = m.strip_prefix("ambiguous column name: ") {
        return Some(rest.trim().to_owned());
    }
    if m.starts_with("column reference") && m.contains("is ambiguous") {
        return quoted_after(m, "column reference", '"', '"').map(str::to_owned);
    }
    if m.starts_with("Column '") && m.contains("is ambiguous") {
        return quoted_after(m, "Column", '\'', '\'').map(str::to_owned);
    }
    None
}

fn similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    let base = strsim::jaro_winkler(&a, &b);
    let contained = (a.contains(&b) || b.contains(&a)) && a.len().min(b.len()) >= 4;
    if contained { base.max(0.85) } else { base }
}

fn closest<'a>(candidates: impl Iterator<Item = (f64, &'a str, String)>) -> Vec<String> {
    let mut scored: Vec<(f64, String)> = candidates
        .filter(|(score, _, _)| *score >= 0.75)
        .map(|(score, _, shown)| (score, shown))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, s)| s)
        .collect()
}

/// How the query refers to a table: by its alias when it has one (`g` for `Genre g`), else by its name.
fn written<'a>(table: &'a Table, aliases: &'a [(String, String)]) -> &'a str {
    aliases
        .iter()
        .find(|(_, t)| {
            t.eq_ignore_ascii_case(&table.name)
                || t.rsplit('.')
                    .next()
                    .is_some_and(|bare| bare.eq_ignore_ascii_case(&table.name))
        })
        .map_or(table.name.as_str(), |(alias, _)| alias.as_str())
}

fn column_hint(
    name: &str,
    catalog: &Catalog,
    used: &[&Table],
    aliases: &[(String, String)],
) -> String {
    let bare = name.rsplit('.').next().unwrap_or(name);
    let scope: Vec<&Table> = if used.is_empty() {
        catalog.tables.iter().collect()
    } else {
        used.to_vec()
    };
    let suggestions = closest(scope.iter().flat_map(|t| {
        let prefix = written(t, aliases);
        t.columns.iter().map(move |c| {
            (
                similarity(bare, &c.name),
                c.name.as_str(),
                format!("{prefix}.{}", c.name),
            )
        })
    }));
    let mut hint = match suggestions.as_slice() {
        [] => format!("There is no column `{bare}`."),
        [one] => format!("There is no column `{bare}`; did you mean {one}?"),
        many => format!(
            "There is no column `{bare}`; did you mean {}?",
            many.join(" or ")
        ),
    };
    if !used.is_empty() {
        let listed: Vec<String> = used
            .iter()
            .map(|t| {
                let names: Vec<&str> = t
                    .columns
                    .iter()
                    .take(MAX_LISTED)
                    .map(|c| c.name.as_str())
                    .collect();
                match written(t, aliases) {
                    alias if alias != t.name => {
                        format!("{} AS {alias}({})", t.name, names.join(", "))
                    }
                    _ => format!("{}({})", t.name, names.join(", ")),
                }
            })
            .collect();
        hint.push_str(&format!(
            " Columns of the tables in the query: {}.",
            listed.join("; ")
        ));
    }
    hint
}

fn table_hint(name: &str, catalog: &Catalog) -> String {
    let bare = name.rsplit('.').next().unwrap_or(name);
    let suggestions = closest(catalog.tables.iter().map(|t| {
        let tail = t.name.rsplit('.').next().unwrap_or(&t.name);
        (similarity(bare, tail), t.name.as_str(), t.name.clone())
    }));
    let mut hint = match suggestions.as_slice() {
        [] => format!("There is no table `{bare}`."),
        many => format!(
            "There is no table `{bare}`; did you mean {}?",
            many.join(" or ")
        ),
    };
    if catalog.tables.is_empty() {
        hint.push_str(" The database has no tables.");
    } else if catalog.tables.len() <= 40 {
        let names: Vec<&str> = catalog.names().collect();
        hint.push_str(&format!(" Tables: {}.", names.join(", ")));
    }
    hint
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Column, TableKind};
    use crate::dialect::Dialect;

    fn table(name: &str, columns: &[&str]) -> Table {
        Table {
            name: name.into(),
            kind: TableKind::Table,
            comment: None,
            columns: columns
                .iter()
                .map(|c| Column {
                    name: (*c).into(),
                    data_type: "INTEGER".into(),
                    nullable: true,
                    default: None,
                    comment: None,
                    samples: Default::default(),
                })
                .collect(),
            primary_key: vec![],
            foreign_keys: vec![],
            rows: None,
        }
    }

    fn catalog() -> Catalog {
        Catalog::new(
            Dialect::Sqlite,
            vec![
                table("orders", &["id", "customer_id", "total"]),
                table("customers", &["id", "name", "email"]),
            ],
        )
    }

    #[test]
    fn unknown_columns_in_every_dialect() {
        let used = vec!["orders".to_owned()];
        for message in [
            "no such column: custmer_id",
            "column \"custmer_id\" does not exist",
            "column o.custmer_id does not exist",
            "Unknown column 'o.custmer_id' in 'field list'",
        ] {
            let out = explain(
                message,
                Some(&catalog()),
                &used,
                &[("o".into(), "orders".into())],
            );
            // The query calls orders `o`: the hint must use what works in it.
            assert!(
                out.contains("did you mean o.customer_id?"),
                "{message} -> {out}"
            );
            assert!(
                out.contains(
                    "Columns of the tables in the query: orders AS o(id, customer_id, total)."
                ),
                "{out}"
            );
        }
    }

    #[test]
    fn without_aliases_tables_are_named() {
        let out = explain(
            "no such column: custmer_id",
            Some(&catalog()),
            &["orders".to_owned()],
            &[],
        );
        assert!(out.contains("did you mean orders.customer_id?"), "{out}");
        let out = explain(
            "column reference \"id\" is ambiguous",
            Some(&catalog()),
            &["orders".to_owned(), "customers".to_owned()],
            &[("c".into(), "customers".into())],
        );
        assert!(
            out.ends_with("Qualify it with its table: orders.id or c.id."),
            "{out}"
        );
    }

    #[test]
    fn unknown_tables_and_ambiguous_columns() {
        let out = explain(
            "relation \"custmers\" does not exist",
            Some(&catalog()),
            &[],
            &[],
        );
        assert!(out.contains("did you mean customers?"), "{out}");
        assert!(out.contains("Tables: customers, orders."), "{out}");
        let out = explain(
            "Table 'test.ordres' doesn't exist",
            Some(&catalog()),
            &[],
            &[],
        );
        assert!(out.contains("did you mean orders?"), "{out}");
        let used = vec!["orders".to_owned(), "customers".to_owned()];
        let out = explain("ambiguous column name: id", Some(&catalog()), &used, &[]);
        assert!(
            out.ends_with("Qualify it with its table: orders.id or customers.id."),
            "{out}"
        );
        assert_eq!(
            explain("disk full", Some(&catalog()), &used, &[]),
            "disk full"
        );
    }
}
