//! The guard: reads SQL exactly as the engine will, parses it, classifies it, and refuses what a read-only
//! policy forbids, with a reason for each refusal. It never changes the text that runs.
//!
//! How a text is checked:
//! 1. **Bounds**: text over 1 MiB, or nested or chained too deeply to parse safely, is refused before parsing.
//! 2. **Lexing as the engine does** (`lex`): strings, quoted names, comments and statement ends are found
//!    with the engine's own rules and settings (PostgreSQL `standard_conforming_strings`, MySQL
//!    `NO_BACKSLASH_ESCAPES` and `ANSI_QUOTES`). Offline, where a setting is unknown, text that reads
//!    differently under the possible settings is refused (or, for `ANSI_QUOTES`, checked both ways).
//! 3. **Token checks** (`lexical`): several statements, `INTO`, locking clauses, executable comments,
//!    `:=`, calls of refused functions; these hold even where the parser reads the SQL differently.
//! 4. **Parsing the canonical text** (`parse`): the same text with comments as spaces and every string and
//!    quoted name in a form all lexers agree on (decoded `U&"…"` names, plain `'…'` strings), through a
//!    sqlparser dialect with hooks for syntax the engines accept but sqlparser 0.63 does not.
//! 5. **The walk** (`walker`): data-modifying CTEs, `SELECT … INTO`, locking reads, functions (the static
//!    families in `functions`, and on a live PostgreSQL or MySQL database the engine's catalog in
//!    `catalog`, read from the server by `introspect`), sensitive catalogs (`sensitive`), and the table and
//!    column allowlists.
//!
//! Allowed: exactly one `SELECT`, `WITH`, `VALUES`, `TABLE` or `EXPLAIN` (not `ANALYZE`) statement that passes
//! all of that. The guard is one of two walls: queries also run in the engine's own read-only mode. See
//! `docs/guard.md`.

mod bounds;
mod catalog;
mod classify;
mod free_text;
mod functions;
mod lex;
mod lexical;
pub(crate) mod mask;
mod named;
mod parse;
mod policy;
mod scope;
mod sensitive;
mod settings;
mod verdict;
mod walker;
mod write;

pub use mask::Mask;
pub use named::NamedSql;
pub use policy::GuardPolicy;
pub use scope::{Scope, Scoped};
pub use settings::ServerSettings;
pub use verdict::{GuardVerdict, Reason, StatementClass};
pub use write::WriteKind;

pub(crate) use catalog::{CatalogFunction, FunctionCatalog, Origin};
pub(crate) use policy::same_table;
pub(crate) use verdict::reason;

use std::sync::Arc;

use sqlparser::ast::{ObjectName, ObjectNamePart, Visit};
use sqlparser::parser::ParserError;

use lex::{Kind, Lexed, Mode};
use verdict::verdict;
use walker::{Context, Walker};

use crate::dialect::Dialect;

/// The guard for one dialect, server and policy.
#[derive(Clone, Debug)]
pub struct Guard {
    dialect: Dialect,
    policy: GuardPolicy,
    settings: ServerSettings,
    allow_sensitive: bool,
    functions: Option<Arc<FunctionCatalog>>,
    /// `*` may read a table whose columns are limited: the text is about to be scoped, and the scoped derived
    /// table lists only the allowed columns (see [`Guard::scoped`]).
    wildcard_scoped: bool,
}

impl Guard {
    /// The default read-only guard for a dialect, offline: server settings unknown, no function catalog.
    pub fn new(dialect: Dialect) -> Self {
        Self {
            dialect,
            policy: GuardPolicy::default(),
            settings: ServerSettings::unknown(),
            allow_sensitive: false,
            functions: None,
            wildcard_scoped: false,
        }
    }

    /// The same guard with table and column allowlists.
    pub fn with_policy(mut self, policy: GuardPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The same guard without column allowlists (for text whose tables already show only allowed columns,
    /// see [`Guard::scoped`]).
    pub fn without_columns(&self) -> Self {
        let mut guard = self.clone();
        guard.policy.columns = None;
        guard
    }

    /// The same guard for a server whose text settings are known.
    pub fn with_settings(mut self, settings: ServerSettings) -> Self {
        self.settings = settings;
        self
    }

    /// The same guard, letting queries read sensitive catalogs (credentials, other sessions' SQL, server
    /// configuration) when `allow` is true. Refused by default.
    pub fn allow_sensitive_catalogs(mut self, allow: bool) -> Self {
        self.allow_sensitive = allow;
        self
    }

    /// The same guard with a database's function catalog.
    pub(crate) fn with_functions(mut self, catalog: FunctionCatalog) -> Self {
        self.functions = Some(Arc::new(catalog));
        self
    }

    /// The dialect.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The server settings the guard reads text with.
    pub fn settings(&self) -> &ServerSettings {
        &self.settings
    }

    /// How many function names the database's own catalog makes it refuse (0 without a catalog).
    pub fn catalog_refusals(&self) -> usize {
        self.functions.as_ref().map_or(0, |c| c.len())
    }

    /// How the text is read when the settings are not in doubt (unknown settings take the engines' defaults).
    fn default_mode(&self) -> Mode {
        let backslash = match self.dialect {
            Dialect::Postgres => !self.settings.standard_conforming_strings.unwrap_or(true),
            Dialect::Mysql => self.settings.backslash_escapes.unwrap_or(true),
            Dialect::Sqlite => false,
        };
        Mode {
            dialect: self.dialect,
            backslash,
            ansi_quotes: self.settings.ansi_quotes.unwrap_or(false),
        }
    }

    /// The verdict on a SQL text.
    pub fn check(&self, sql: &str) -> GuardVerdict {
        if let Some(r) = bounds::length(sql) {
            return verdict(StatementClass::Other, vec![r], Vec::new());
        }
        if sql.contains('\0') {
            return verdict(
                StatementClass::Other,
                vec![reason(
                    "parse_error",
                    "The SQL contains a NUL character; remove it.",
                )],
                Vec::new(),
            );
        }
        let readings = match self.readings(sql) {
            Ok(r) => r,
            Err(r) => return verdict(StatementClass::Other, vec![r], Vec::new()),
        };
        let mut verdicts = readings.iter().map(|lexed| self.check_lexed(sql, lexed));
        let Some(mut first) = verdicts.next() else {
            return verdict(StatementClass::Other, Vec::new(), Vec::new());
        };
        for other in verdicts {
            if first.allowed != other.allowed {
                first.reasons.push(reason(
                    "ambiguous_text",
                    "This text reads differently depending on the server's ANSI_QUOTES setting (\"…\" is a string without it, a name with it); write strings as '…' and names as `…`.",
                ));
            }
            first.allowed &= other.allowed;
            if first.class == StatementClass::Read {
                first.class = other.class;
            }
            for r in other.reasons {
                if !first.reasons.contains(&r) {
                    first.reasons.push(r);
                }
            }
        }
        first
    }

    /// The ways the engine may read `sql`: one when the settings are known or do not matter; two when
    /// MySQL's `ANSI_QUOTES` is unknown and the text has `"`. A refusal when an unknown backslash setting
    /// changes where strings end.
    fn readings(&self, sql: &str) -> Result<Vec<Lexed>, Reason> {
        let mode = self.default_mode();
        let backslash_known = match self.dialect {
            Dialect::Postgres => self.settings.standard_conforming_strings.is_some(),
            Dialect::Mysql => self.settings.backslash_escapes.is_some(),
            Dialect::Sqlite => true,
        };
        let ansi = if self.dialect == Dialect::Mysql
            && self.settings.ansi_quotes.is_none()
            && sql.contains('"')
        {
            vec![false, true]
        } else {
            vec![mode.ansi_quotes]
        };
        let mut readings: Vec<Lexed> = Vec::with_capacity(ansi.len());
        for ansi_quotes in ansi {
            let mode = Mode {
                ansi_quotes,
                ..mode
            };
            let lexed = lex::lex(sql, mode);
            if !backslash_known && sql.contains('\\') {
                let other = lex::lex(
                    sql,
                    Mode {
                        backslash: !mode.backslash,
                        ..mode
                    },
                );
                if !lexed.same_shape(&other) {
                    return Err(self.ambiguous_backslash());
                }
            }
            if !readings.iter().any(|r| r.same_shape(&lexed)) {
                readings.push(lexed);
            }
        }
        Ok(readings)
    }

    /// The names `sql` mentions, as the engine reads them (quoted names decoded), lowercase: for telling whether a
    /// view's definition reads a table. Every unquoted word counts, keywords included.
    pub fn names(&self, sql: &str) -> Vec<String> {
        let lexed = lex::lex(sql, self.default_mode());
        lexed
            .code()
            .filter_map(|t| t.ident(sql))
            .map(str::to_ascii_lowercase)
            .collect()
    }

    /// The one way the engine reads `sql`, for locating edits in it: a text that reads two ways (MySQL's
    /// `ANSI_QUOTES` unknown) cannot be edited safely.
    fn one_reading(&self, sql: &str) -> Result<Lexed, String> {
        let mut readings = self.readings(sql).map_err(|r| r.message)?;
        match (readings.pop(), readings.is_empty()) {
            (Some(lexed), true) => Ok(lexed),
            _ => Err(
                "This text reads two ways on this server (ANSI_QUOTES), so it cannot be limited to what you may \
                 see; write names as `…` and strings as '…'."
                    .to_owned(),
            ),
        }
    }

    fn ambiguous_backslash(&self) -> Reason {
        let how = match self.dialect {
            Dialect::Postgres => {
                "whether a backslash escapes the next character in '…' depends on the server's standard_conforming_strings setting; write E'…' when you mean an escape, or avoid a backslash before a quote"
            }
            _ => {
                "whether a backslash escapes the next character depends on the server's NO_BACKSLASH_ESCAPES setting; write a quote inside a string as '' (two quotes) and avoid a backslash before a quote or at the end of a string"
            }
        };
        reason(
            "ambiguous_text",
            format!("Where a string ends in this text is ambiguous: {how}."),
        )
    }

    /// The verdict on one reading of the text.
    fn check_lexed(&self, sql: &str, lexed: &Lexed) -> GuardVerdict {
        let mut reasons = lexed.problems.clone();
        if let Some(r) = bounds::depth(sql, &lexed.tokens) {
            reasons.push(r);
            return verdict(StatementClass::Other, reasons, Vec::new());
        }
        let findings = lexical::findings(sql, &lexed.tokens, self.allow_sensitive);
        if let Some(catalog) = &self.functions {
            for t in lexed.code().filter(|t| t.kind == Kind::Op) {
                let op = t.text(sql);
                if catalog.operator(op) {
                    push_once(
                        &mut reasons,
                        reason(
                            "forbidden_function",
                            format!("Operator `{op}` calls a function that is not allowed."),
                        ),
                    );
                }
            }
        }
        let canonical = lex::canonical(sql, &lexed.tokens);
        let first_word = |i: usize| findings.first_words.get(i).map_or("", String::as_str);
        let statements = match parse::parse(self.dialect, &canonical) {
            Ok(s) => s,
            Err(e) => {
                let (class, lexical) = classify::lexical_class(first_word(0));
                for r in lexical.into_iter().chain(findings.reasons) {
                    push_once(&mut reasons, r);
                }
                push_once(&mut reasons, self.parse_error(&e));
                return verdict(class, reasons, Vec::new());
            }
        };
        for r in findings.reasons {
            push_once(&mut reasons, r);
        }
        match statements.len() {
            0 => {
                reasons.push(reason(
                    "empty",
                    "There is no SQL statement. Write one SELECT statement.",
                ));
                return verdict(StatementClass::Other, reasons, Vec::new());
            }
            1 => {}
            n => push_once(
                &mut reasons,
                reason(
                    "multiple_statements",
                    format!(
                        "{n} statements were given; send exactly one SELECT statement, without `;` in between."
                    ),
                ),
            ),
        }
        let mut class = StatementClass::Read;
        let mut walker = Walker::new(Context {
            dialect: self.dialect,
            catalog: self.functions.as_deref(),
            allow_sensitive: self.allow_sensitive,
            current_database: self.settings.current_database.as_deref(),
        });
        for (i, statement) in statements.iter().enumerate() {
            let (c, r) = classify::classify(statement, first_word(i));
            if class == StatementClass::Read {
                class = c;
            }
            for r in r {
                push_once(&mut reasons, r);
            }
            let _ = statement.visit(&mut walker);
        }
        if walker.modifying {
            class = StatementClass::Write;
        }
        for r in std::mem::take(&mut walker.reasons) {
            push_once(&mut reasons, r);
        }
        let tables = walker.tables();
        policy::check_policy(
            &self.policy,
            self.wildcard_scoped,
            &tables,
            &walker,
            &mut reasons,
        );
        let mut result = verdict(class, reasons, tables);
        result.aliases = std::mem::take(&mut walker.aliased);
        result
    }

    fn parse_error(&self, e: &ParserError) -> Reason {
        match e {
            ParserError::RecursionLimitExceeded => bounds::too_deep(true),
            other => reason(
                "parse_error",
                format!(
                    "The SQL could not be parsed as {}: {other}. Write a single standard SELECT statement.",
                    self.dialect.name()
                ),
            ),
        }
    }
}

fn push_once(reasons: &mut Vec<Reason>, r: Reason) {
    if !reasons.contains(&r) {
        reasons.push(r);
    }
}

/// A name as written, without quotes: `schema.table`.
pub(crate) fn object_name(name: &ObjectName) -> String {
    name.0
        .iter()
        .map(|part| match part {
            ObjectNamePart::Identifier(ident) => ident.value.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests;
