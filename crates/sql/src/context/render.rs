//! Tables as compact DDL-like text, and join hints.

use std::collections::BTreeSet;

use super::rank::terms;
use crate::catalog::{Catalog, Table, TableKind, is_temporal, is_textual};
use crate::dialect::Dialect;

fn ident(dialect: Dialect, name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !(dialect == Dialect::Postgres && name.chars().any(|c| c.is_ascii_uppercase()));
    if plain {
        name.to_owned()
    } else {
        dialect.quote(name)
    }
}

fn table_ident(dialect: Dialect, name: &str) -> String {
    match (dialect, name.split_once('.')) {
        (Dialect::Postgres, Some((s, t))) => format!("{}.{}", ident(dialect, s), ident(dialect, t)),
        _ => ident(dialect, name),
    }
}

/// One table as DDL-like text. With `focus`, only key columns and columns matching those words are listed.
pub(super) fn render_table(
    dialect: Dialect,
    table: &Table,
    focus: Option<&BTreeSet<String>>,
) -> String {
    let keyword = if table.kind == TableKind::View {
        "VIEW"
    } else {
        "TABLE"
    };
    let mut out = format!("CREATE {keyword} {} (", table_ident(dialect, &table.name));
    let mut notes = Vec::new();
    // A compact table (with `focus`) leaves out its size, so that more tables fit.
    if let Some(rows) = table.rows
        && focus.is_none()
    {
        notes.push(format!("~{rows} rows"));
    }
    if let Some(c) = &table.comment {
        notes.push(c.replace('\n', " "));
    }
    if !notes.is_empty() {
        out.push_str(" -- ");
        out.push_str(&notes.join("; "));
    }
    out.push('\n');
    let single_pk = table.primary_key.len() == 1;
    let mut hidden = 0;
    let mut lines = Vec::new();
    for column in &table.columns {
        let fk = table
            .foreign_keys
            .iter()
            .find(|fk| fk.columns.len() == 1 && fk.columns[0] == column.name);
        let is_key = table.primary_key.contains(&column.name) || fk.is_some();
        if let Some(words) = focus
            && !is_key
            && !terms(&column.name).iter().any(|t| words.contains(t))
        {
            hidden += 1;
            continue;
        }
        let mut line = format!("  {} {}", ident(dialect, &column.name), column.data_type);
        if single_pk && table.primary_key[0] == column.name {
            line.push_str(" PRIMARY KEY");
        } else if !column.nullable {
            line.push_str(" NOT NULL");
        }
        if let Some(fk) = fk {
            line.push_str(&format!(
                " REFERENCES {}({})",
                table_ident(dialect, &fk.table),
                fk.referenced
                    .first()
                    .map(|c| ident(dialect, c))
                    .unwrap_or_default()
            ));
        }
        let mut comment = Vec::new();
        if let Some(c) = &column.comment {
            comment.push(c.replace('\n', " "));
        }
        let shows_samples = is_textual(&column.data_type) || is_temporal(&column.data_type);
        if focus.is_none() && shows_samples && !column.samples.is_empty() {
            let quoted: Vec<String> = column
                .samples
                .iter()
                .map(|s| format!("'{}'", s.replace('\'', "''")))
                .collect();
            comment.push(format!("e.g. {}", quoted.join(", ")));
        }
        lines.push((line, comment.join("; ")));
    }
    if table.primary_key.len() > 1 {
        let cols: Vec<String> = table
            .primary_key
            .iter()
            .map(|c| ident(dialect, c))
            .collect();
        lines.push((
            format!("  PRIMARY KEY ({})", cols.join(", ")),
            String::new(),
        ));
    }
    for fk in table.foreign_keys.iter().filter(|fk| fk.columns.len() > 1) {
        let cols: Vec<String> = fk.columns.iter().map(|c| ident(dialect, c)).collect();
        let refs: Vec<String> = fk.referenced.iter().map(|c| ident(dialect, c)).collect();
        lines.push((
            format!(
                "  FOREIGN KEY ({}) REFERENCES {}({})",
                cols.join(", "),
                table_ident(dialect, &fk.table),
                refs.join(", ")
            ),
            String::new(),
        ));
    }
    // The comma goes before a column's comment, never inside it.
    let last = lines.len().saturating_sub(1);
    for (i, (line, comment)) in lines.iter().enumerate() {
        out.push_str(line);
        if i < last {
            out.push(',');
        }
        if !comment.is_empty() {
            out.push_str(" -- ");
            out.push_str(comment);
        }
        out.push('\n');
    }
    if hidden > 0 {
        out.push_str(&format!("  -- … {hidden} more columns\n"));
    }
    out.push_str(");\n");
    out
}

/// `-- Joins:` lines for the foreign keys between included tables.
pub(super) fn join_hints(catalog: &Catalog, included: &[usize]) -> String {
    let names: BTreeSet<&str> = included
        .iter()
        .map(|&i| catalog.tables[i].name.as_str())
        .collect();
    let mut joins = Vec::new();
    for &i in included {
        let t = &catalog.tables[i];
        for fk in &t.foreign_keys {
            if names.contains(fk.table.as_str()) {
                let on: Vec<String> = fk
                    .columns
                    .iter()
                    .zip(&fk.referenced)
                    .map(|(c, r)| format!("{}.{c} = {}.{r}", t.name, fk.table))
                    .collect();
                joins.push(on.join(" AND "));
            }
        }
    }
    if joins.is_empty() {
        String::new()
    } else {
        format!("-- Joins: {}\n", joins.join("; "))
    }
}
