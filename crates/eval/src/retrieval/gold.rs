//! Gold SQL rewritten to the merged schema's table names, through the syntax tree: each table reference to a
//! table of the question's database is renamed `<db>__<table>` (schema qualifiers dropped), and one without
//! an alias gets its old name as alias, so `author.name` or `Singer.Name` still reads.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use sqlparser::ast::{
    Ident, ObjectName, ObjectNamePart, TableAlias, TableFactor, VisitMut, VisitorMut,
};
use sqlparser::dialect::{GenericDialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;
use steward_sql::Dialect;

/// `sql` with its table references renamed by `map` (lower-case bare name → new name).
pub(super) fn rewrite(
    sql: &str,
    dialect: Dialect,
    map: &BTreeMap<String, String>,
) -> Result<String, String> {
    let parsed = match dialect {
        Dialect::Sqlite => Parser::parse_sql(&SQLiteDialect {}, sql),
        Dialect::Postgres => Parser::parse_sql(&PostgreSqlDialect {}, sql),
        _ => Parser::parse_sql(&GenericDialect {}, sql),
    };
    let mut statements = parsed.map_err(|e| format!("the gold SQL does not parse: {e}"))?;
    let mut renamer = Renamer { map };
    for statement in &mut statements {
        let _ = statement.visit(&mut renamer);
    }
    Ok(statements
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; "))
}

struct Renamer<'a> {
    map: &'a BTreeMap<String, String>,
}

impl VisitorMut for Renamer<'_> {
    type Break = ();

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { name, alias, .. } = factor {
            let Some(bare) = name.0.last().and_then(ObjectNamePart::as_ident).cloned() else {
                return ControlFlow::Continue(());
            };
            let Some(new) = self.map.get(&bare.value.to_lowercase()) else {
                return ControlFlow::Continue(());
            };
            let plain = new.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            let ident = if plain {
                Ident::new(new.clone())
            } else {
                Ident::with_quote('"', new.clone())
            };
            *name = ObjectName(vec![ObjectNamePart::Identifier(ident)]);
            if alias.is_none() {
                *alias = Some(TableAlias {
                    explicit: true,
                    name: bare,
                    columns: Vec::new(),
                    at: None,
                });
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_renamed_and_keep_their_old_name_as_alias() {
        let map = BTreeMap::from([
            ("author".to_owned(), "academic__author".to_owned()),
            ("writes".to_owned(), "academic__writes".to_owned()),
        ]);
        let sql = rewrite(
            "SELECT author.name FROM public.author JOIN writes w ON author.aid = w.aid",
            Dialect::Postgres,
            &map,
        );
        assert_eq!(
            sql.as_deref(),
            Ok(
                "SELECT author.name FROM academic__author AS author JOIN academic__writes w ON author.aid = w.aid"
            )
        );
        let cte = rewrite(
            "WITH a AS (SELECT * FROM Author) SELECT * FROM a",
            Dialect::Sqlite,
            &map,
        );
        assert_eq!(
            cte.as_deref(),
            Ok("WITH a AS (SELECT * FROM academic__author AS Author) SELECT * FROM a")
        );
    }
}
