//! Where the parse's table references stand in the original text. The parser reads the canonical text (see
//! `lex`), so its positions are mapped back through the tokens the canonical text was built from; a name is
//! located only when the tokens found there spell exactly the name the parser read.

use std::ops::ControlFlow;

use sqlparser::ast::{
    Ident, ObjectName, ObjectNamePart, Query, SetExpr, Statement, TableFactor, Visit, Visitor,
};
use sqlparser::tokenizer::Location;

use super::super::lex::{self, Kind, Lexed};
use super::super::parse;
use crate::dialect::Dialect;

/// A text lexed and parsed, with the canonical positions of its tokens.
pub(super) struct Located<'a> {
    pub(super) sql: &'a str,
    pub(super) lexed: Lexed,
    /// Where each token starts in the canonical text.
    starts: Vec<usize>,
    /// Where each line of the canonical text starts.
    lines: Vec<usize>,
    canonical: String,
    pub(super) statements: Vec<Statement>,
}

impl<'a> Located<'a> {
    /// Parses `sql` as lexed into `lexed`.
    pub(super) fn new(dialect: Dialect, sql: &'a str, lexed: Lexed) -> Result<Self, String> {
        let (canonical, starts) = lex::canonical_located(sql, &lexed.tokens);
        let statements = parse::parse(dialect, &canonical)
            .map_err(|e| format!("The statement could not be parsed: {e}"))?;
        let mut lines = vec![0];
        lines.extend(canonical.match_indices('\n').map(|(i, _)| i + 1));
        Ok(Self {
            sql,
            lexed,
            starts,
            lines,
            canonical,
            statements,
        })
    }

    /// The index of the token that starts at `location` of the canonical text.
    fn token_at(&self, location: Location) -> Option<usize> {
        let line = usize::try_from(location.line).ok()?.checked_sub(1)?;
        let column = usize::try_from(location.column).ok()?.checked_sub(1)?;
        let line_start = *self.lines.get(line)?;
        let rest = self.canonical.get(line_start..)?;
        let offset = line_start
            + match rest.char_indices().nth(column) {
                Some((i, _)) => i,
                None if rest.chars().count() == column => rest.len(),
                None => return None,
            };
        let i = self.starts.partition_point(|&s| s < offset);
        (self.starts.get(i) == Some(&offset)).then_some(i)
    }

    /// The byte range of `name` in the original text: its parts, each the token the parser read it from, with
    /// `.` between them (comments may stand between). `None` when the tokens there do not spell the name.
    pub(super) fn name_span(&self, name: &ObjectName) -> Option<(usize, usize)> {
        let idents: Vec<&Ident> = name
            .0
            .iter()
            .map(|part| match part {
                ObjectNamePart::Identifier(ident) => Some(ident),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let first = idents.first()?;
        let mut i = self.token_at(first.span.start)?;
        let start = self.lexed.tokens.get(i)?.start;
        for (n, ident) in idents.iter().enumerate() {
            if n > 0 {
                i = self.next_code(i)?;
                if !self.lexed.tokens.get(i)?.is_punct(self.sql, ".") {
                    return None;
                }
                i = self.next_code(i)?;
            }
            let token = self.lexed.tokens.get(i)?;
            if token.ident(self.sql) != Some(ident.value.as_str()) {
                return None;
            }
        }
        Some((start, self.lexed.tokens.get(i)?.end))
    }

    /// The next token after `i` that is not a comment.
    fn next_code(&self, i: usize) -> Option<usize> {
        (i + 1..self.lexed.tokens.len()).find(|&j| {
            self.lexed
                .tokens
                .get(j)
                .is_some_and(|t| t.kind != Kind::Comment)
        })
    }
}

/// The relations a statement reads, as the parser found them.
#[derive(Default)]
pub(super) struct Relations {
    /// Table references in FROM and JOIN positions: the name, whether it has an alias, whether it has
    /// arguments (a table function).
    pub(super) factors: Vec<(ObjectName, bool, bool)>,
    /// Every relation name the visitor met (table factors and any other relation position).
    pub(super) relations: Vec<ObjectName>,
    /// `TABLE name` queries: (schema, name).
    pub(super) table_queries: Vec<(Option<String>, String)>,
    /// The names of CTEs.
    pub(super) ctes: Vec<String>,
    /// Table references with index hints, partitions, a sample or a version after the name.
    pub(super) decorated: Vec<ObjectName>,
}

impl Relations {
    /// The relations of `statements`.
    pub(super) fn of(statements: &[Statement]) -> Self {
        let mut relations = Self::default();
        for statement in statements {
            let _ = statement.visit(&mut relations);
        }
        relations
    }
}

impl Visitor for Relations {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if let Some(with) = &query.with {
            self.ctes.extend(
                with.cte_tables
                    .iter()
                    .map(|cte| cte.alias.name.value.clone()),
            );
        }
        let mut pending = vec![query.body.as_ref()];
        while let Some(body) = pending.pop() {
            match body {
                SetExpr::SetOperation { left, right, .. } => {
                    pending.push(left);
                    pending.push(right);
                }
                SetExpr::Table(table) => {
                    self.table_queries.push((
                        table.schema_name.clone(),
                        table.table_name.clone().unwrap_or_default(),
                    ));
                }
                _ => {}
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table {
            name,
            alias,
            args,
            with_hints,
            version,
            with_ordinality,
            partitions,
            json_path,
            sample,
            index_hints,
        } = factor
        {
            self.factors
                .push((name.clone(), alias.is_some(), args.is_some()));
            // What follows the name and applies to the table itself (index hints, partitions, a sample, a
            // version): it cannot follow a derived table.
            if !with_hints.is_empty()
                || version.is_some()
                || *with_ordinality
                || !partitions.is_empty()
                || json_path.is_some()
                || sample.is_some()
                || !index_hints.is_empty()
            {
                self.decorated.push(name.clone());
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<()> {
        self.relations.push(relation.clone());
        ControlFlow::Continue(())
    }
}
