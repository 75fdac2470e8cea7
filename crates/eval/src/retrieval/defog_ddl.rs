//! defog's PostgreSQL load scripts read as SQLite tables: `CREATE TABLE` gives the columns (types as written,
//! `SERIAL` as `INTEGER`), `NOT NULL`, primary and foreign keys (schema qualifiers dropped); `INSERT … VALUES`
//! gives the rows, each value a literal: casts are dropped, and an expression such as
//! `CURRENT_DATE - INTERVAL '5 days'` becomes the fixed date `'2024-01-01'` so the build is the same every
//! day. Other statements (`CREATE SCHEMA`, indexes, comments) are skipped.

use sqlparser::ast::{
    ColumnOption, CreateTable, Expr, Insert, ObjectName, ObjectNamePart, SetExpr, Statement,
    TableConstraint, TableObject, UnaryOperator, Value,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

use super::merge::{ColumnDef, FkDef, TableDef, string_literal};
use crate::sqltext::split_statements;

/// What a non-literal value (`NOW()`, `CURRENT_DATE - INTERVAL '1 day'`) becomes.
const FIXED_DATE: &str = "'2024-01-01'";

/// The tables of a defog script, with at most `rows` rows each.
pub(super) fn parse(script: &str, rows: usize) -> Result<Vec<TableDef>, String> {
    let mut tables: Vec<TableDef> = Vec::new();
    for text in split_statements(script) {
        let Ok(statements) = Parser::parse_sql(&PostgreSqlDialect {}, &text) else {
            // Statements SQLite would not need (functions, settings) may not parse; tables and rows do.
            if starts_with_word(&text, "CREATE TABLE") || starts_with_word(&text, "INSERT") {
                return Err(format!(
                    "cannot parse: {}",
                    text.chars().take(80).collect::<String>()
                ));
            }
            continue;
        };
        for statement in statements {
            match statement {
                Statement::CreateTable(create) => tables.push(table(&create)),
                Statement::Insert(insert) => add_rows(&mut tables, &insert, rows)?,
                _ => {}
            }
        }
    }
    Ok(tables)
}

fn starts_with_word(text: &str, word: &str) -> bool {
    let body: String = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("--"))
        .collect::<Vec<_>>()
        .join(" ");
    body.to_ascii_uppercase().starts_with(word)
}

/// The last part of a name: `public.author` → `author`.
fn bare(name: &ObjectName) -> String {
    name.0
        .last()
        .and_then(ObjectNamePart::as_ident)
        .map(|i| i.value.clone())
        .unwrap_or_default()
}

fn table(create: &CreateTable) -> TableDef {
    let mut def = TableDef {
        name: bare(&create.name),
        ..TableDef::default()
    };
    for column in &create.columns {
        let written = column.data_type.to_string();
        let data_type = match written.to_ascii_uppercase().as_str() {
            "SERIAL" => "INTEGER".to_owned(),
            "BIGSERIAL" => "BIGINT".to_owned(),
            _ => written,
        };
        let mut not_null = false;
        for option in &column.options {
            match &option.option {
                ColumnOption::NotNull => not_null = true,
                ColumnOption::PrimaryKey(_) => def.primary_key.push(column.name.value.clone()),
                ColumnOption::ForeignKey(fk) => def.foreign_keys.push(FkDef {
                    columns: vec![column.name.value.clone()],
                    table: bare(&fk.foreign_table),
                    referenced: fk
                        .referred_columns
                        .iter()
                        .map(|c| c.value.clone())
                        .collect(),
                }),
                _ => {}
            }
        }
        def.columns.push(ColumnDef {
            name: column.name.value.clone(),
            data_type,
            not_null,
        });
    }
    for constraint in &create.constraints {
        match constraint {
            TableConstraint::PrimaryKey(pk) => {
                def.primary_key = pk
                    .columns
                    .iter()
                    .map(|c| match &c.column.expr {
                        Expr::Identifier(i) => i.value.clone(),
                        other => other.to_string(),
                    })
                    .collect();
            }
            TableConstraint::ForeignKey(fk) => def.foreign_keys.push(FkDef {
                columns: fk.columns.iter().map(|c| c.value.clone()).collect(),
                table: bare(&fk.foreign_table),
                referenced: fk
                    .referred_columns
                    .iter()
                    .map(|c| c.value.clone())
                    .collect(),
            }),
            _ => {}
        }
    }
    def.row_columns = def.columns.iter().map(|c| c.name.clone()).collect();
    def
}

fn add_rows(tables: &mut [TableDef], insert: &Insert, rows: usize) -> Result<(), String> {
    let TableObject::TableName(name) = &insert.table else {
        return Ok(());
    };
    let name = bare(name);
    let Some(table) = tables
        .iter_mut()
        .find(|t| t.name.eq_ignore_ascii_case(&name))
    else {
        return Err(format!(
            "INSERT into `{name}`, which the script does not create"
        ));
    };
    let Some(SetExpr::Values(values)) = insert.source.as_ref().map(|q| q.body.as_ref()) else {
        return Ok(());
    };
    let columns: Vec<String> = if insert.columns.is_empty() {
        table.columns.iter().map(|c| c.name.clone()).collect()
    } else {
        insert.columns.iter().map(bare).collect()
    };
    for row in &values.rows {
        if table.rows.len() >= rows {
            break;
        }
        // Rows are kept in the table's column order; a column the INSERT does not name is NULL.
        let mut out = vec!["NULL".to_owned(); table.row_columns.len()];
        for (column, expr) in columns.iter().zip(&row.content) {
            if let Some(i) = table
                .row_columns
                .iter()
                .position(|c| c.eq_ignore_ascii_case(column))
            {
                out[i] = literal(expr);
            }
        }
        table.rows.push(out);
    }
    Ok(())
}

/// A value as a SQLite literal.
fn literal(expr: &Expr) -> String {
    match expr {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s)
            | Value::EscapedStringLiteral(s)
            | Value::DoubleQuotedString(s) => string_literal(s),
            Value::Boolean(b) => if *b { "1" } else { "0" }.to_owned(),
            Value::Null => "NULL".to_owned(),
            Value::Number(..) => v.to_string(),
            other => string_literal(&other.to_string()),
        },
        Expr::Cast { expr, .. } | Expr::Nested(expr) => literal(expr),
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } if matches!(expr.as_ref(), Expr::Value(_)) => format!("-{}", literal(expr)),
        _ => FIXED_DATE.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_keys_and_rows_are_read() {
        let script = "CREATE SCHEMA IF NOT EXISTS s;\n\
            CREATE TABLE s.cars (id SERIAL PRIMARY KEY, make TEXT NOT NULL -- a comment\n);\n\
            CREATE TABLE s.sales (id SERIAL PRIMARY KEY, car_id INTEGER NOT NULL REFERENCES s.cars(id), \
              sold_on DATE, PRIMARY KEY (id));\n\
            INSERT INTO s.cars (id, make) VALUES (1, 'Tesla'), (2, 'O''Brien');\n\
            INSERT INTO s.sales (id, car_id, sold_on) VALUES (1, 1::bigint, CURRENT_DATE - INTERVAL '5 days');";
        let tables = parse(script, 200).unwrap_or_default();
        assert_eq!(tables.len(), 2);
        assert_eq!(tables[0].name, "cars");
        assert_eq!(tables[0].columns[0].data_type, "INTEGER");
        assert!(tables[0].columns[1].not_null);
        assert_eq!(tables[0].rows[1], ["2", "'O''Brien'"]);
        assert_eq!(tables[1].foreign_keys[0].table, "cars");
        assert_eq!(tables[1].rows[0], ["1", "1", "'2024-01-01'"]);
        assert_eq!(parse(script, 1).unwrap_or_default()[0].rows.len(), 1);
    }
}
