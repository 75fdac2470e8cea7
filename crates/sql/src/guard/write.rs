//! Statements a person wrote to change rows (a write tool declared in a config file): exactly one `INSERT`,
//! `UPDATE` or `DELETE`, read the way the engine reads it, with no second statement, no schema change, no
//! nested data-modifying statement and no refused function. Model-written SQL never comes here.

use serde::{Deserialize, Serialize};
use sqlparser::ast::{
    OnConflict, OnConflictAction, OnInsert, SetExpr, SqliteOnConflict, Statement, Visit,
};

use super::lex::{self, Kind, Lexed};
use super::walker::{Context, Walker};
use super::{Guard, Reason, bounds, classify, parse, push_once, reason};

/// What a write statement does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WriteKind {
    /// Adds rows.
    Insert,
    /// Adds rows or overwrites existing ones (`ON CONFLICT … DO UPDATE`, `ON DUPLICATE KEY UPDATE`,
    /// `REPLACE`, `INSERT OR REPLACE`).
    Upsert,
    /// Changes rows.
    Update,
    /// Removes rows.
    Delete,
}

impl WriteKind {
    /// True when the statement may overwrite or remove existing data.
    pub fn destructive(self) -> bool {
        !matches!(self, Self::Insert)
    }
}

impl Guard {
    /// Checks a write statement written by a person: exactly one `INSERT`, `UPDATE` or `DELETE`, and nothing
    /// else (no second statement, no DDL, no `SELECT`, no data-modifying CTE, no refused function or
    /// sensitive catalog). Returns what it does, or every reason it is refused.
    ///
    /// ```
    /// use steward_sql::{Dialect, Guard, WriteKind};
    ///
    /// let guard = Guard::new(Dialect::Sqlite);
    /// assert_eq!(guard.check_write("DELETE FROM t WHERE id = ?"), Ok(WriteKind::Delete));
    /// assert!(guard.check_write("DELETE FROM t; DROP TABLE t").is_err());
    /// ```
    pub fn check_write(&self, sql: &str) -> Result<WriteKind, Vec<Reason>> {
        if let Some(r) = bounds::length(sql) {
            return Err(vec![r]);
        }
        if sql.contains('\0') {
            return Err(vec![reason(
                "parse_error",
                "The SQL contains a NUL character; remove it.",
            )]);
        }
        let readings = self.readings(sql).map_err(|r| vec![r])?;
        let mut kind = None;
        let mut reasons = Vec::new();
        for lexed in &readings {
            match self.check_write_lexed(sql, lexed) {
                Ok(k) if kind.is_none_or(|first| first == k) => kind = Some(k),
                Ok(_) => push_once(
                    &mut reasons,
                    reason(
                        "ambiguous_text",
                        "This text reads differently depending on the server's ANSI_QUOTES setting; write strings as '…' and names as `…`.",
                    ),
                ),
                Err(rs) => rs.into_iter().for_each(|r| push_once(&mut reasons, r)),
            }
        }
        match kind {
            Some(kind) if reasons.is_empty() => Ok(kind),
            _ if reasons.is_empty() => Err(vec![empty()]),
            _ => Err(reasons),
        }
    }

    fn check_write_lexed(&self, sql: &str, lexed: &Lexed) -> Result<WriteKind, Vec<Reason>> {
        let mut reasons = lexed.problems.clone();
        if let Some(r) = bounds::depth(sql, &lexed.tokens) {
            reasons.push(r);
            return Err(reasons);
        }
        // Statements as the engine splits them: anything but comments after a `;` is a second one.
        let mut code = lexed.code();
        let mut seen_end = false;
        let mut several = false;
        for t in code.by_ref() {
            if t.kind == Kind::Punct && t.text(sql) == ";" {
                seen_end = true;
            } else if seen_end {
                several = true;
                break;
            }
        }
        if several {
            push_once(&mut reasons, several_statements());
        }
        let canonical = lex::canonical(sql, &lexed.tokens);
        let statements = match parse::parse(self.dialect, &canonical) {
            Ok(s) => s,
            Err(e) => {
                reasons.push(reason(
                    "parse_error",
                    format!(
                        "The SQL could not be parsed as {}: {e}.",
                        self.dialect.name()
                    ),
                ));
                return Err(reasons);
            }
        };
        let statement = match statements.as_slice() {
            [] => {
                reasons.push(empty());
                return Err(reasons);
            }
            [one] => one,
            _ => {
                push_once(&mut reasons, several_statements());
                return Err(reasons);
            }
        };
        let kind = match statement {
            Statement::Insert(insert) => {
                let overwrites = insert.replace_into
                    || matches!(insert.or, Some(SqliteOnConflict::Replace))
                    || matches!(
                        &insert.on,
                        Some(OnInsert::DuplicateKeyUpdate(_))
                            | Some(OnInsert::OnConflict(OnConflict {
                                action: OnConflictAction::DoUpdate(_),
                                ..
                            }))
                    );
                if overwrites {
                    WriteKind::Upsert
                } else {
                    WriteKind::Insert
                }
            }
            Statement::Update { .. } => WriteKind::Update,
            Statement::Delete(_) => WriteKind::Delete,
            Statement::Query(query)
                if matches!(
                    *query.body,
                    SetExpr::Insert(_)
                        | SetExpr::Update(_)
                        | SetExpr::Delete(_)
                        | SetExpr::Merge(_)
                ) =>
            {
                reasons.push(reason(
                    "not_a_write",
                    "A WITH clause before the INSERT, UPDATE or DELETE is not allowed in a write tool; write the statement without WITH.",
                ));
                return Err(reasons);
            }
            Statement::Query(_) => {
                reasons.push(reason(
                    "not_a_write",
                    "This statement only reads; a write tool runs one INSERT, UPDATE or DELETE (declare a reading tool with mode: read).",
                ));
                return Err(reasons);
            }
            other => {
                let first = lexed
                    .code()
                    .find(|t| t.kind == Kind::Word)
                    .map(|t| t.text(sql).to_ascii_uppercase())
                    .unwrap_or_default();
                let (_, why) = classify::classify(other, &first);
                let what = why
                    .first()
                    .map_or_else(|| format!("`{first}`"), |r| r.message.clone());
                reasons.push(reason(
                    "not_a_write",
                    format!(
                        "A write tool runs exactly one INSERT, UPDATE or DELETE; this statement is refused: {what}"
                    ),
                ));
                return Err(reasons);
            }
        };
        let mut walker = Walker::new(Context {
            dialect: self.dialect,
            catalog: self.functions.as_deref(),
            allow_sensitive: self.allow_sensitive,
            current_database: self.settings.current_database.as_deref(),
        });
        let _ = statement.visit(&mut walker);
        for r in std::mem::take(&mut walker.reasons) {
            push_once(&mut reasons, r);
        }
        if reasons.is_empty() {
            Ok(kind)
        } else {
            Err(reasons)
        }
    }
}

fn several_statements() -> Reason {
    reason(
        "multiple_statements",
        "More than one statement was given; a write tool runs exactly one INSERT, UPDATE or DELETE.",
    )
}

fn empty() -> Reason {
    reason(
        "empty",
        "There is no SQL statement; write one INSERT, UPDATE or DELETE.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Dialect;
    use crate::guard::ServerSettings;

    fn check(dialect: Dialect, sql: &str) -> Result<WriteKind, Vec<Reason>> {
        let settings = match dialect {
            Dialect::Postgres => ServerSettings::postgres(true),
            Dialect::Mysql => ServerSettings::mysql("", true),
            _ => ServerSettings::unknown(),
        };
        Guard::new(dialect).with_settings(settings).check_write(sql)
    }

    fn codes(r: Result<WriteKind, Vec<Reason>>) -> Vec<String> {
        r.err()
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.code)
            .collect()
    }

    #[test]
    fn one_insert_update_or_delete_passes() {
        for dialect in [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql] {
            let p = if dialect == Dialect::Postgres {
                "$1"
            } else {
                "?"
            };
            assert_eq!(
                check(
                    dialect,
                    &format!("INSERT INTO t (a, b) VALUES ({p}, 'x;y');")
                ),
                Ok(WriteKind::Insert)
            );
            assert_eq!(
                check(dialect, &format!("UPDATE t SET a = {p} WHERE b = 1")),
                Ok(WriteKind::Update)
            );
            assert_eq!(
                check(dialect, "DELETE FROM t WHERE a = 1 -- ; DROP TABLE t"),
                Ok(WriteKind::Delete)
            );
        }
        assert_eq!(
            check(
                Dialect::Postgres,
                "INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET a = 2"
            ),
            Ok(WriteKind::Upsert)
        );
        assert_eq!(
            check(Dialect::Mysql, "REPLACE INTO t (a) VALUES (1)"),
            Ok(WriteKind::Upsert)
        );
    }

    #[test]
    fn everything_else_is_refused_with_a_reason() {
        for (dialect, sql, code) in [
            (
                Dialect::Sqlite,
                "INSERT INTO t VALUES (1); DELETE FROM t",
                "multiple_statements",
            ),
            (
                Dialect::Mysql,
                "DELETE FROM t; DROP TABLE t",
                "multiple_statements",
            ),
            (Dialect::Sqlite, "DROP TABLE t", "not_a_write"),
            (Dialect::Postgres, "CREATE TABLE x (a int)", "not_a_write"),
            (Dialect::Postgres, "SELECT * FROM t", "not_a_write"),
            (Dialect::Sqlite, "", "empty"),
            (
                Dialect::Postgres,
                "WITH d AS (DELETE FROM u RETURNING id) INSERT INTO t SELECT id FROM d",
                "not_a_write",
            ),
            (
                Dialect::Postgres,
                "INSERT INTO t WITH d AS (DELETE FROM u RETURNING id) SELECT id FROM d",
                "data_modifying_cte",
            ),
            (
                Dialect::Postgres,
                "INSERT INTO t SELECT pg_sleep(10)",
                "forbidden_function",
            ),
            (
                Dialect::Mysql,
                "INSERT INTO t /*! , u */ VALUES (1)",
                "executable_comment",
            ),
        ] {
            let codes = codes(check(dialect, sql));
            assert!(codes.iter().any(|c| c == code), "{sql}: {codes:?}");
        }
    }
}
