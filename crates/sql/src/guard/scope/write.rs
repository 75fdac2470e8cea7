//! Writes limited to a scope, by located insertions: an UPDATE or DELETE of a filtered table gets
//! `(filter) AND (` after its WHERE and `)` after the condition (or `WHERE (filter)` where it has none), and a
//! preview gets `RETURNING *`, each inserted into the person's statement, which is otherwise left as written.

use std::collections::BTreeMap;

use sqlparser::ast::{
    AssignmentTarget, BinaryOperator, Expr, FromTable, ObjectName, ObjectNamePart, Statement,
    TableFactor, TableObject,
};

use super::super::lex::{Kind, Lexed, Token};
use super::super::{Guard, Reason, reason};
use super::locate::Located;
use super::verify::unchanged_outside;
use super::{Numbering, Scope, Scoped, key};

/// The table a write changes and the columns it sets (`None`: the statement names none, so every column).
fn write_target(statement: &Statement) -> Option<(String, Option<Vec<String>>)> {
    let last = |name: &ObjectName| match name.0.last() {
        Some(ObjectNamePart::Identifier(ident)) => Some(ident.value.clone()),
        _ => None,
    };
    match statement {
        Statement::Insert(insert) => {
            let TableObject::TableName(name) = &insert.table else {
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
                    AssignmentTarget::ColumnName(c) => columns.extend(last(c)),
                    AssignmentTarget::Tuple(cs) => columns.extend(cs.iter().filter_map(last)),
                }
            }
            Some((last(name)?, Some(columns)))
        }
        Statement::Delete(delete) => {
            let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) = &delete.from;
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

/// The code tokens at parenthesis depth 0, with the index of each in `lexed.tokens`.
fn top_level<'t>(sql: &str, lexed: &'t Lexed) -> Vec<&'t Token> {
    let mut depth = 0usize;
    let mut out = Vec::new();
    for t in lexed.code() {
        if t.is_punct(sql, "(") || t.is_punct(sql, "[") {
            depth += 1;
        } else if t.is_punct(sql, ")") || t.is_punct(sql, "]") {
            depth = depth.saturating_sub(1);
        } else if depth == 0 {
            out.push(t);
        }
    }
    out
}

/// Where the statement's tail starts (a top-level RETURNING, ORDER BY, LIMIT or `;`), as a token index into
/// `top`, after `from`.
fn tail(sql: &str, top: &[&Token], from: usize) -> usize {
    top.iter()
        .enumerate()
        .skip(from)
        .find(|(_, t)| {
            ["RETURNING", "ORDER", "LIMIT"]
                .iter()
                .any(|w| t.is_word(sql, w))
                || t.is_punct(sql, ";")
        })
        .map_or(top.len(), |(i, _)| i)
}

/// The end of the last code token before `top[index]` in the original text (or of the text's last code token).
fn end_before(sql: &str, lexed: &Lexed, top: &[&Token], index: usize) -> usize {
    let limit = top.get(index).map_or(sql.len(), |t| t.start);
    lexed
        .code()
        .filter(|t| t.end <= limit)
        .map(|t| t.end)
        .max()
        .unwrap_or(0)
}

impl Guard {
    fn located<'a>(&self, sql: &'a str) -> Result<Located<'a>, Vec<Reason>> {
        let lexed = self
            .one_reading(sql)
            .map_err(|why| vec![reason("scope", why)])?;
        Located::new(self.dialect, sql, lexed).map_err(|why| vec![reason("scope", why)])
    }

    /// A write statement (checked as [`Guard::check_write`] does) limited to what a principal may write:
    /// `write` lists the tables (and columns) it may change (`None`: any), and an UPDATE or DELETE of a table
    /// `scope` filters changes only the rows the filter lets it see (the filter is inserted into the
    /// statement's WHERE, its values bound as parameters). An INSERT into a filtered table is refused: the rows
    /// it adds cannot be checked against the filter. Returns the text to run, checked again.
    pub fn scoped_write(
        &self,
        sql: &str,
        scope: &Scope,
        write: Option<&BTreeMap<String, Option<Vec<String>>>>,
    ) -> Result<Scoped, Vec<Reason>> {
        self.check_write(sql)?;
        let refuse = |why: String| vec![reason("scope", why)];
        let located = self.located(sql)?;
        let Some(statement) = located.statements.first() else {
            return Err(refuse("There is no statement.".to_owned()));
        };
        let Some((table, columns)) = write_target(statement) else {
            return Err(refuse(
                "The table this statement changes could not be told; write one INSERT INTO t, UPDATE t or DELETE FROM t."
                    .to_owned(),
            ));
        };
        if let Some(allowed) = write {
            allowed_write(allowed, &table, columns.as_deref())?;
        }
        let Some(filter) = scope.get(&table).and_then(|s| s.filter.as_ref()) else {
            return Ok(Scoped::unchanged(sql));
        };
        let has_where = match statement {
            Statement::Update(update) => update.selection.is_some(),
            Statement::Delete(delete) => delete.selection.is_some(),
            _ => {
                return Err(refuse(format!(
                    "Rows added to `{table}` cannot be checked against the row filter `{}`; this role may not insert into it.",
                    filter.configured
                )));
            }
        };
        let lexed = &located.lexed;
        let top = top_level(sql, lexed);
        let where_at = top.iter().position(|t| t.is_word(sql, "WHERE"));
        if where_at.is_some() != has_where {
            return Err(refuse(format!(
                "The WHERE clause of this statement on `{table}` could not be located."
            )));
        }
        let own: Vec<&Token> = lexed
            .tokens
            .iter()
            .filter(|t| t.kind == Kind::Param)
            .collect();
        let texts: Vec<&str> = own.iter().map(|t| t.text(sql)).collect();
        let mut numbering = super::splice::numbering(self.dialect, &texts, true)
            .map_err(|why| vec![reason("scope", why)])?;
        let own_count = super::splice::own_values(&numbering, lexed);
        // (insertion point, text) pairs, in order.
        let (condition, bound) = filter.render(&mut numbering);
        // (insertion point, text) pairs, in order.
        let inserts: Vec<(usize, String)> =
            match where_at.and_then(|w| top.get(w).map(|t| (w, t.end))) {
                Some((w, after_where)) => {
                    let end = end_before(sql, lexed, &top, tail(sql, &top, w + 1));
                    vec![
                        (after_where, format!(" ({condition}) AND (")),
                        (end, ") ".to_owned()),
                    ]
                }
                None => {
                    let end = end_before(sql, lexed, &top, tail(sql, &top, 0));
                    vec![(end, format!(" WHERE ({condition}) "))]
                }
            };
        let at = inserts.first().map_or(0, |(p, _)| *p);
        let positional = matches!(numbering, Numbering::Positional)
            .then(|| own.iter().filter(|t| t.start < at).count());
        let (out, generated) = insert(sql, &inserts);
        let replaced: Vec<(usize, usize)> = inserts.iter().map(|(p, _)| (*p, *p)).collect();
        let changed = || {
            refuse("The row filter could not be added to this statement without changing how it reads.".to_owned())
        };
        let final_lexed =
            unchanged_outside(self, sql, lexed, &replaced, &out, &generated).ok_or_else(changed)?;
        self.check_write(&out)?;
        let again = Located::new(self.dialect, &out, final_lexed).map_err(|_| changed())?;
        let selection = match again.statements.first() {
            Some(Statement::Update(u)) => u.selection.as_ref(),
            Some(Statement::Delete(d)) => d.selection.as_ref(),
            _ => None,
        };
        let filtered_first = match selection {
            Some(Expr::BinaryOp {
                left,
                op: BinaryOperator::And,
                right,
            }) if has_where => {
                matches!(**left, Expr::Nested(_)) && matches!(**right, Expr::Nested(_))
            }
            Some(Expr::Nested(_)) => !has_where,
            _ => false,
        };
        if !filtered_first
            || again
                .statements
                .first()
                .and_then(write_target)
                .map(|(t, _)| key(&t))
                != Some(key(&table))
        {
            return Err(changed());
        }
        Ok(Scoped {
            sql: out,
            filtered: vec![(key(&table), filter.configured.clone())],
            values: bound.into_iter().map(|v| (positional, v)).collect(),
            own: own_count,
        })
    }

    /// The table a write statement changes (as written, without schema), when it is one INSERT, UPDATE or
    /// DELETE that passes [`Guard::check_write`].
    pub fn write_table(&self, sql: &str) -> Option<String> {
        self.check_write(sql).ok()?;
        let located = self.located(sql).ok()?;
        write_target(located.statements.first()?).map(|(table, _)| table)
    }

    /// A checked write statement with `RETURNING *` (its changed rows) in place of any RETURNING it had, for a
    /// preview run in a transaction that is rolled back; `None` when it cannot be had. The clause is inserted
    /// into the statement's text, which is otherwise left as written.
    pub fn returning_all(&self, sql: &str) -> Option<String> {
        self.check_write(sql).ok()?;
        let located = self.located(sql).ok()?;
        let lexed = &located.lexed;
        let top = top_level(sql, lexed);
        let returning = top.iter().position(|t| t.is_word(sql, "RETURNING"));
        let (start, end) = match returning {
            Some(r) => {
                let start = top.get(r)?.start;
                let semicolon = top
                    .iter()
                    .skip(r)
                    .position(|t| t.is_punct(sql, ";"))
                    .map(|i| i + r);
                (
                    start,
                    end_before(sql, lexed, &top, semicolon.unwrap_or(top.len())),
                )
            }
            None => {
                let semicolon = top.iter().position(|t| t.is_punct(sql, ";"));
                let end = end_before(sql, lexed, &top, semicolon.unwrap_or(top.len()));
                (end, end)
            }
        };
        let text = " RETURNING * ";
        let out = format!("{}{text}{}", sql.get(..start)?, sql.get(end..)?);
        let generated = [(start, start + text.len())];
        unchanged_outside(self, sql, lexed, &[(start, end)], &out, &generated)?;
        self.check_write(&out).ok()?;
        Some(out)
    }
}

/// Refuses a write outside the tables and columns `allowed`.
fn allowed_write(
    allowed: &BTreeMap<String, Option<Vec<String>>>,
    table: &str,
    columns: Option<&[String]>,
) -> Result<(), Vec<Reason>> {
    let Some((_, allowed_columns)) = allowed.iter().find(|(t, _)| key(t) == key(table)) else {
        return Err(vec![reason(
            "table_not_allowed",
            format!(
                "Table `{table}` may not be changed. Tables you may change: {}.",
                allowed.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        )]);
    };
    let Some(allowed_columns) = allowed_columns else {
        return Ok(());
    };
    let Some(named) = columns else {
        return Err(vec![reason(
            "column_not_allowed",
            format!(
                "Name the columns of `{table}` this statement sets; you may set: {}.",
                allowed_columns.join(", ")
            ),
        )]);
    };
    for column in named {
        if !allowed_columns
            .iter()
            .any(|c| c.eq_ignore_ascii_case(column))
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
    Ok(())
}

/// `sql` with each text inserted at its point (points in order), and where each inserted text stands in the
/// result.
fn insert(sql: &str, inserts: &[(usize, String)]) -> (String, Vec<(usize, usize)>) {
    let mut out = String::with_capacity(sql.len() + 64);
    let mut generated = Vec::with_capacity(inserts.len());
    let mut pos = 0;
    for (at, text) in inserts {
        out.push_str(sql.get(pos..*at).unwrap_or(""));
        generated.push((out.len(), out.len() + text.len()));
        out.push_str(text);
        pos = *at;
    }
    out.push_str(sql.get(pos..).unwrap_or(""));
    (out, generated)
}
