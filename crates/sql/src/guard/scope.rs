//! What one principal may see: the tables and columns it may read and the rows of each table, applied to a
//! query's syntax tree.
//!
//! Every reference to a scoped table — in the main query, a subquery, a CTE or a join, under any alias — is
//! replaced in the tree by a derived table of the same name that selects only the allowed columns and only the
//! rows the filter lets through: `FROM orders o` becomes
//! `FROM (SELECT * FROM orders WHERE customer_id = 1) AS o`. The principal's values enter the filter's tree as
//! literals, never as text spliced into the query. The tree is printed back to SQL, and that text is checked
//! by the guard again before it runs: the text that runs is the text that was checked.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use serde_json::Value as Json;
use sqlparser::ast::{
    Expr, Ident, ObjectNamePart, Query, SetExpr, Statement, TableAlias, TableFactor, Value,
    ValueWithSpan, VisitMut, VisitorMut, visit_expressions_mut,
};
use sqlparser::parser::Parser;

use super::{Guard, Verdict, lex, parse, reason, verdict};
use crate::dialect::Dialect;

/// The prefix a `{principal.NAME}` placeholder is parsed as, before the principal's value replaces it.
const PLACEHOLDER: &str = "__steward_principal__";

/// What a principal may see of each table it is scoped on (tables not named here are not touched).
#[derive(Clone, Debug, Default)]
pub struct Scope {
    tables: BTreeMap<String, TableScope>,
}

/// One table's scope.
#[derive(Clone, Debug, Default)]
struct TableScope {
    /// The columns the principal may read (`None`: all).
    columns: Option<Vec<String>>,
    /// The row filter, with the principal's values in it, and its text as configured.
    filter: Option<(Expr, String)>,
}

impl Scope {
    /// No scope: queries run as they are.
    pub fn new() -> Self {
        Self::default()
    }

    /// True when nothing is scoped.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// Lets the principal read only `columns` of `table`.
    pub fn columns(&mut self, table: &str, columns: Vec<String>) {
        self.tables.entry(key(table)).or_default().columns = Some(columns);
    }

    /// Lets the principal see only the rows of `table` where `condition` holds; `{principal.NAME}` in it
    /// stands for the principal's attribute `NAME` (a missing attribute is an error: the table would otherwise
    /// show every row).
    pub fn filter(
        &mut self,
        dialect: Dialect,
        table: &str,
        condition: &str,
        attributes: &BTreeMap<String, Json>,
    ) -> Result<(), String> {
        let expr = filter_expr(dialect, condition, attributes)?;
        self.tables.entry(key(table)).or_default().filter = Some((expr, condition.to_owned()));
        Ok(())
    }

    /// The same scope with its row filters only (no column limits): for the application's own tools, whose
    /// SQL is fixed and whose output the role's `tools` list governs, but which must not show other principals'
    /// rows.
    pub fn rows_only(&self) -> Self {
        let tables = self
            .tables
            .iter()
            .filter(|(_, s)| s.filter.is_some())
            .map(|(t, s)| {
                let scope = TableScope {
                    columns: None,
                    filter: s.filter.clone(),
                };
                (t.clone(), scope)
            })
            .collect();
        Self { tables }
    }

    /// The row filters, as configured, by table (for telling the model that rows were filtered).
    pub fn filters(&self) -> Vec<(String, String)> {
        self.tables
            .iter()
            .filter_map(|(t, s)| s.filter.as_ref().map(|(_, text)| (t.clone(), text.clone())))
            .collect()
    }
}

/// A query made to fit a scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scoped {
    /// The text to run (already checked by the guard).
    pub sql: String,
    /// The tables whose rows were filtered, with their filters as configured.
    pub filtered: Vec<(String, String)>,
}

fn key(table: &str) -> String {
    table
        .rsplit('.')
        .next()
        .unwrap_or(table)
        .trim_matches(['"', '`', '[', ']'])
        .to_ascii_lowercase()
}

/// Parses a filter condition, with each `{principal.NAME}` replaced in the tree by the attribute's value.
fn filter_expr(
    dialect: Dialect,
    condition: &str,
    attributes: &BTreeMap<String, Json>,
) -> Result<Expr, String> {
    let mut text = String::new();
    let mut rest = condition;
    while let Some(start) = rest.find("{principal.") {
        text.push_str(&rest[..start]);
        let after = &rest[start + "{principal.".len()..];
        let end = after.find('}').ok_or_else(|| {
            format!("the row filter `{condition}` has a `{{principal.` without `}}`")
        })?;
        let name = &after[..end];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "the row filter `{condition}` names `{{principal.{name}}}`: attribute names are letters, digits and _"
            ));
        }
        text.push_str(PLACEHOLDER);
        text.push_str(name);
        rest = &after[end + 1..];
    }
    text.push_str(rest);
    let parser_dialect = dialect.parser();
    let mut expr = Parser::new(parser_dialect.as_ref())
        .try_with_sql(&text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| format!("the row filter `{condition}` is not a SQL condition: {e}"))?;
    let mut missing = None;
    let _ = visit_expressions_mut(&mut expr, |e| {
        if let Expr::Identifier(ident) = e
            && let Some(name) = ident.value.strip_prefix(PLACEHOLDER)
        {
            match attributes.get(name).and_then(literal) {
                Some(value) => *e = Expr::Value(ValueWithSpan::from(value)),
                None => missing = Some(name.to_owned()),
            }
        }
        ControlFlow::<()>::Continue(())
    });
    match missing {
        Some(name) => Err(format!(
            "the row filter `{condition}` needs the principal's `{name}`, which this principal does not have"
        )),
        None => Ok(expr),
    }
}

/// A principal's attribute as a SQL literal (numbers, strings, booleans; nothing else).
fn literal(value: &Json) -> Option<Value> {
    match value {
        Json::Number(n) => Some(Value::Number(n.to_string(), false)),
        Json::String(s) => Some(Value::SingleQuotedString(s.clone())),
        Json::Bool(b) => Some(Value::Boolean(*b)),
        _ => None,
    }
}

/// Replaces every reference to a scoped table with its scoped derived table.
struct Rewriter<'a> {
    dialect: Dialect,
    scope: &'a Scope,
    filtered: BTreeMap<String, String>,
    error: Option<String>,
}

impl VisitorMut for Rewriter<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        if let SetExpr::Table(table) = query.body.as_ref()
            && let Some(name) = &table.table_name
            && self.scope.tables.contains_key(&key(name))
        {
            self.error = Some(format!(
                "`TABLE {name}` cannot be limited to what you may see; write SELECT … FROM {name}"
            ));
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    // After the children: the derived table put in its place is not visited again.
    fn post_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        let TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = factor
        else {
            return ControlFlow::Continue(());
        };
        let Some(ObjectNamePart::Identifier(last)) = name.0.last() else {
            return ControlFlow::Continue(());
        };
        let Some(scope) = self.scope.tables.get(&key(&last.value)) else {
            return ControlFlow::Continue(());
        };
        let columns = match &scope.columns {
            Some(columns) => columns
                .iter()
                .map(|c| quoted(self.dialect, c))
                .collect::<Vec<_>>()
                .join(", "),
            None => "*".to_owned(),
        };
        let filter = scope
            .filter
            .as_ref()
            .map(|(expr, _)| format!(" WHERE {expr}"))
            .unwrap_or_default();
        let text = format!("SELECT {columns} FROM {name}{filter}");
        let subquery = match parse::parse(self.dialect, &text).map(|mut s| s.pop()) {
            Ok(Some(Statement::Query(query))) => query,
            _ => {
                self.error = Some(format!("the scope of `{name}` could not be applied"));
                return ControlFlow::Break(());
            }
        };
        if let Some((_, text)) = &scope.filter {
            self.filtered.insert(key(&last.value), text.clone());
        }
        let alias = alias.clone().unwrap_or_else(|| TableAlias {
            explicit: true,
            name: last.clone(),
            columns: Vec::new(),
            at: None,
        });
        *factor = TableFactor::Derived {
            lateral: false,
            subquery,
            alias: Some(alias),
            sample: None,
        };
        ControlFlow::Continue(())
    }
}

fn quoted(dialect: Dialect, name: &str) -> String {
    let quote = if dialect == Dialect::Mysql { '`' } else { '"' };
    Ident::with_quote(quote, name).to_string()
}

impl Guard {
    /// The statements of `sql` as the guard reads them, for rewriting: one reading of the text (a text that
    /// reads two ways cannot be rewritten safely), its canonical form parsed.
    fn tree(&self, sql: &str) -> Result<Vec<Statement>, super::Reason> {
        let readings = self.readings(sql)?;
        let [lexed] = readings.as_slice() else {
            return Err(reason(
                "scope",
                "This text reads two ways on this server (ANSI_QUOTES), so it cannot be limited to what you may \
                 see; write names as `…`.",
            ));
        };
        let canonical = lex::canonical(sql, &lexed.tokens);
        parse::parse(self.dialect, &canonical).map_err(|e| {
            reason(
                "scope",
                format!("The statement could not be parsed again: {e}"),
            )
        })
    }

    /// The text of `sql` limited to `scope`: checked as it is first (the refusals name the tables and columns
    /// that may not be read), then rewritten so that every scoped table shows only its allowed columns and
    /// rows, and the rewritten text checked again. Returns the text to run, or the refusal.
    pub fn scoped(&self, sql: &str, scope: &Scope) -> Result<Scoped, Verdict> {
        let first = self.check(sql);
        if !first.allowed || scope.is_empty() {
            return if first.allowed {
                Ok(Scoped {
                    sql: sql.to_owned(),
                    filtered: Vec::new(),
                })
            } else {
                Err(first)
            };
        }
        let refuse = |why: String| verdict(first.class, vec![reason("scope", why)], Vec::new());
        let mut statements = self
            .tree(sql)
            .map_err(|r| verdict(first.class, vec![r], Vec::new()))?;
        let mut rewriter = Rewriter {
            dialect: self.dialect,
            scope,
            filtered: BTreeMap::new(),
            error: None,
        };
        let _ = statements.visit(&mut rewriter);
        if let Some(error) = rewriter.error {
            return Err(refuse(error));
        }
        let text = statements
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        // The derived tables list their allowed columns themselves: what reads them needs no column list.
        let second = self.without_columns().check(&text);
        if !second.allowed {
            return Err(second);
        }
        Ok(Scoped {
            sql: text,
            filtered: rewriter.filtered.into_iter().collect(),
        })
    }
}

/// The table a write changes and the columns it sets (`None`: the statement names none, so every column).
fn write_target(statement: &Statement) -> Option<(String, Option<Vec<String>>)> {
    let last = |name: &sqlparser::ast::ObjectName| match name.0.last() {
        Some(ObjectNamePart::Identifier(ident)) => Some(ident.value.clone()),
        _ => None,
    };
    match statement {
        Statement::Insert(insert) => {
            let sqlparser::ast::TableObject::TableName(name) = &insert.table else {
                return None;
            };
            let columns: Vec<String> = insert.columns.iter().filter_map(last).collect();
            Some((last(name)?, (!columns.is_empty()).then_some(columns)))
        }
        Statement::Update(update) => {
            let TableFactor::Table { name, .. } = &update.table.relation else {
                return None;
            };
            let mut columns = Vec::new();
            for assignment in &update.assignments {
                match &assignment.target {
                    sqlparser::ast::AssignmentTarget::ColumnName(c) => columns.extend(last(c)),
                    sqlparser::ast::AssignmentTarget::Tuple(cs) => {
                        columns.extend(cs.iter().filter_map(last));
                    }
                }
            }
            Some((last(name)?, Some(columns)))
        }
        Statement::Delete(delete) => {
            let (sqlparser::ast::FromTable::WithFromKeyword(from)
            | sqlparser::ast::FromTable::WithoutKeyword(from)) = &delete.from;
            let [one] = from.as_slice() else {
                return None;
            };
            let TableFactor::Table { name, .. } = &one.relation else {
                return None;
            };
            Some((last(name)?, Some(Vec::new())))
        }
        _ => None,
    }
}

impl Guard {
    /// A write statement (checked as [`Guard::check_write`] does) limited to what a principal may write:
    /// `write` lists the tables (and columns) it may change (`None`: any), and an UPDATE or DELETE of a table
    /// `scope` filters changes only the rows the filter lets it see (the filter is joined to the statement's
    /// WHERE in its syntax tree). An INSERT into a filtered table is refused: the rows it adds cannot be
    /// checked against the filter. Returns the text to run, checked again.
    pub fn scoped_write(
        &self,
        sql: &str,
        scope: &Scope,
        write: Option<&BTreeMap<String, Option<Vec<String>>>>,
    ) -> Result<Scoped, Vec<super::Reason>> {
        self.check_write(sql)?;
        let refuse = |why: String| vec![reason("scope", why)];
        let mut statements = self.tree(sql).map_err(|r| vec![r])?;
        let Some(statement) = statements.first_mut() else {
            return Err(refuse("There is no statement.".to_owned()));
        };
        let Some((table, columns)) = write_target(statement) else {
            return Err(refuse(
                "The table this statement changes could not be told; write one INSERT INTO t, UPDATE t or DELETE FROM t."
                    .to_owned(),
            ));
        };
        if let Some(allowed) = write {
            let Some((_, allowed_columns)) = allowed.iter().find(|(t, _)| key(t) == key(&table))
            else {
                return Err(vec![reason(
                    "table_not_allowed",
                    format!(
                        "Table `{table}` may not be changed. Tables you may change: {}.",
                        allowed.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                )]);
            };
            if let Some(allowed_columns) = allowed_columns {
                let named = columns.clone().unwrap_or_default();
                if columns.is_none() {
                    return Err(vec![reason(
                        "column_not_allowed",
                        format!(
                            "Name the columns of `{table}` this statement sets; you may set: {}.",
                            allowed_columns.join(", ")
                        ),
                    )]);
                }
                for column in named {
                    if !allowed_columns
                        .iter()
                        .any(|c| c.eq_ignore_ascii_case(&column))
                    {
                        return Err(vec![reason(
                            "column_not_allowed",
                            format!(
                                "Column `{column}` of `{table}` may not be set. Columns you may set: {}.",
                                allowed_columns.join(", ")
                            ),
                        )]);
                    }
                }
            }
        }
        let Some((filter, text)) = scope
            .tables
            .get(&key(&table))
            .and_then(|s| s.filter.clone())
        else {
            return Ok(Scoped {
                sql: sql.to_owned(),
                filtered: Vec::new(),
            });
        };
        let selection = match statement {
            Statement::Update(update) => &mut update.selection,
            Statement::Delete(delete) => &mut delete.selection,
            _ => {
                return Err(refuse(format!(
                    "Rows added to `{table}` cannot be checked against the row filter `{text}`; this role may not insert into it."
                )));
            }
        };
        let filter = Expr::Nested(Box::new(filter));
        *selection = Some(match selection.take() {
            Some(existing) => Expr::BinaryOp {
                left: Box::new(filter),
                op: sqlparser::ast::BinaryOperator::And,
                right: Box::new(Expr::Nested(Box::new(existing))),
            },
            None => filter,
        });
        let rewritten = statement.to_string();
        self.check_write(&rewritten)?;
        Ok(Scoped {
            sql: rewritten,
            filtered: vec![(key(&table), text)],
        })
    }
}

impl Guard {
    /// The table a write statement changes (as written, without schema), when it is one INSERT, UPDATE or
    /// DELETE that passes [`Guard::check_write`].
    pub fn write_table(&self, sql: &str) -> Option<String> {
        self.check_write(sql).ok()?;
        let statements = self.tree(sql).ok()?;
        write_target(statements.first()?).map(|(table, _)| table)
    }

    /// A checked write statement with `RETURNING *` (its changed rows) in place of any RETURNING it had, for a
    /// preview run in a transaction that is rolled back; `None` when it cannot be had (the text does not parse,
    /// or the result does not pass [`Guard::check_write`]).
    pub fn returning_all(&self, sql: &str) -> Option<String> {
        self.check_write(sql).ok()?;
        let mut statements = self.tree(sql).ok()?;
        let all = || {
            Some(vec![sqlparser::ast::SelectItem::Wildcard(
                sqlparser::ast::WildcardAdditionalOptions::default(),
            )])
        };
        match statements.first_mut()? {
            Statement::Insert(insert) => insert.returning = all(),
            Statement::Update(update) => update.returning = all(),
            Statement::Delete(delete) => delete.returning = all(),
            _ => return None,
        }
        let text = statements.first()?.to_string();
        self.check_write(&text).ok()?;
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::GuardPolicy;

    fn ada(dialect: Dialect) -> Scope {
        let attributes: BTreeMap<String, Json> = [("customer_id".to_owned(), Json::from(1))].into();
        let mut scope = Scope::new();
        scope
            .filter(
                dialect,
                "orders",
                "customer_id = {principal.customer_id}",
                &attributes,
            )
            .unwrap();
        scope.columns("customers", vec!["id".into(), "name".into(), "city".into()]);
        scope
            .filter(
                dialect,
                "customers",
                "id = {principal.customer_id}",
                &attributes,
            )
            .unwrap();
        scope
    }

    #[test]
    fn every_reference_to_a_scoped_table_is_filtered_whatever_its_alias_or_depth() {
        let guard = Guard::new(Dialect::Sqlite);
        let scoped = guard
            .scoped(
                "WITH mine AS (SELECT o.id FROM orders AS o) \
                 SELECT count(*) FROM mine JOIN (SELECT * FROM orders) x ON x.id = mine.id \
                 WHERE EXISTS (SELECT 1 FROM main.orders WHERE orders.id = x.id)",
                &ada(Dialect::Sqlite),
            )
            .unwrap();
        assert_eq!(
            scoped.sql.matches("WHERE customer_id = 1").count(),
            3,
            "{}",
            scoped.sql
        );
        assert!(!scoped.sql.contains("FROM orders AS o)"), "{}", scoped.sql);
        assert_eq!(
            scoped.filtered,
            [(
                "orders".to_owned(),
                "customer_id = {principal.customer_id}".to_owned()
            )]
        );
    }

    #[test]
    fn columns_outside_the_scope_are_refused_and_values_enter_as_literals() {
        let guard = Guard::new(Dialect::Postgres).with_policy(GuardPolicy {
            tables: Some(vec!["orders".into(), "customers".into()]),
            columns: Some(
                [(
                    "customers".to_owned(),
                    vec!["id".into(), "name".into(), "city".into()],
                )]
                .into(),
            ),
        });
        let refused = guard
            .scoped("SELECT email FROM customers", &ada(Dialect::Postgres))
            .unwrap_err();
        assert!(
            refused
                .reasons
                .iter()
                .any(|r| r.message.contains("Column `email` may not be read"))
        );
        let scoped = guard
            .scoped("SELECT name FROM customers", &ada(Dialect::Postgres))
            .unwrap();
        assert_eq!(
            scoped.sql,
            "SELECT name FROM (SELECT \"id\", \"name\", \"city\" FROM customers WHERE id = 1) AS customers"
        );

        // A string attribute is one literal, quotes and all.
        let attributes: BTreeMap<String, Json> =
            [("dept".to_owned(), Json::from("R&D'; DROP TABLE x; --"))].into();
        let mut scope = Scope::new();
        scope
            .filter(
                Dialect::Postgres,
                "expenses",
                "department = {principal.dept}",
                &attributes,
            )
            .unwrap();
        let scoped = Guard::new(Dialect::Postgres)
            .scoped("SELECT count(*) FROM expenses", &scope)
            .unwrap();
        assert!(
            scoped
                .sql
                .contains("WHERE department = 'R&D''; DROP TABLE x; --'"),
            "{}",
            scoped.sql
        );
    }

    #[test]
    fn a_filter_needing_a_missing_attribute_is_an_error() {
        let error = Scope::new()
            .filter(
                Dialect::Sqlite,
                "orders",
                "customer_id = {principal.customer_id}",
                &BTreeMap::new(),
            )
            .unwrap_err();
        assert!(
            error.contains("needs the principal's `customer_id`"),
            "{error}"
        );
    }

    #[test]
    fn writes_change_only_allowed_tables_columns_and_rows() {
        let guard = Guard::new(Dialect::Postgres);
        let scope = ada(Dialect::Postgres);
        let write: BTreeMap<String, Option<Vec<String>>> =
            [("orders".to_owned(), Some(vec!["status".to_owned()]))].into();
        let scoped = guard
            .scoped_write(
                "UPDATE orders SET status = $1 WHERE id = $2",
                &scope,
                Some(&write),
            )
            .unwrap();
        assert_eq!(
            scoped.sql,
            "UPDATE orders SET status = $1 WHERE (customer_id = 1) AND (id = $2)"
        );
        let scoped = guard
            .scoped_write("DELETE FROM orders", &scope, None)
            .unwrap();
        assert_eq!(scoped.sql, "DELETE FROM orders WHERE (customer_id = 1)");
        let refused = guard
            .scoped_write(
                "UPDATE orders SET total = 0 WHERE id = $1",
                &scope,
                Some(&write),
            )
            .unwrap_err();
        assert!(
            refused[0]
                .message
                .contains("Column `total` of `orders` may not be set"),
            "{refused:?}"
        );
        let refused = guard
            .scoped_write("DELETE FROM products", &scope, Some(&write))
            .unwrap_err();
        assert!(
            refused[0]
                .message
                .contains("Table `products` may not be changed"),
            "{refused:?}"
        );
        let refused = guard
            .scoped_write("INSERT INTO orders (status) VALUES ($1)", &scope, None)
            .unwrap_err();
        assert!(
            refused[0]
                .message
                .contains("this role may not insert into it"),
            "{refused:?}"
        );
        // Unfiltered, unlisted: as written.
        let scoped = guard
            .scoped_write("INSERT INTO notes (body) VALUES ($1)", &scope, None)
            .unwrap();
        assert_eq!(scoped.sql, "INSERT INTO notes (body) VALUES ($1)");
    }
}

#[cfg(test)]
mod rows_only_tests {
    use super::*;

    #[test]
    fn rows_only_keeps_filters_and_drops_column_limits() {
        let attributes: BTreeMap<String, Json> = [("customer_id".to_owned(), Json::from(1))].into();
        let mut scope = Scope::new();
        scope.columns("customers", vec!["id".into()]);
        scope
            .filter(
                Dialect::Sqlite,
                "customers",
                "id = {principal.customer_id}",
                &attributes,
            )
            .unwrap();
        let scoped = Guard::new(Dialect::Sqlite)
            .scoped(
                "SELECT c.email FROM orders o JOIN customers c ON c.id = o.customer_id",
                &scope.rows_only(),
            )
            .unwrap();
        assert!(
            scoped
                .sql
                .contains("(SELECT * FROM customers WHERE id = 1) c ON"),
            "{}",
            scoped.sql
        );
    }
}
