//! Parsing the canonical text with sqlparser, through a dialect that adds the syntax sqlparser 0.63 lacks but
//! the engines accept, so that ordinary SQL is not refused: MySQL/MariaDB `a MOD b`,
//! `INTERVAL '1:30' HOUR_MINUTE`, `EXTRACT(YEAR_MONTH FROM d)`, `CAST(x AS CHAR(10) CHARACTER SET utf8mb4)`;
//! SQLite `a IS NOT 'x'`; PostgreSQL and MySQL `TABLE t`; and columns named like keyword functions (`trim`).
//! The tree is only checked, never printed back into SQL that runs.

use std::any::TypeId;

use sqlparser::ast::{BinaryOperator, CastKind, DateTimeField, Expr, Ident, Interval, Statement};
use sqlparser::dialect::{
    Dialect as SqlDialect, MySqlDialect, PostgreSqlDialect, Precedence, SQLiteDialect,
};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use crate::dialect::Dialect;

/// Parses canonical SQL of `dialect` into statements.
pub(crate) fn parse(dialect: Dialect, sql: &str) -> Result<Vec<Statement>, ParserError> {
    let hooked = Hooked {
        inner: dialect.parser(),
        engine: dialect,
    };
    Parser::new(&hooked).try_with_sql(sql)?.parse_statements()
}

/// MySQL's compound interval units.
const MYSQL_UNITS: &[&str] = &[
    "DAY_HOUR",
    "DAY_MICROSECOND",
    "DAY_MINUTE",
    "DAY_SECOND",
    "HOUR_MICROSECOND",
    "HOUR_MINUTE",
    "HOUR_SECOND",
    "MINUTE_MICROSECOND",
    "MINUTE_SECOND",
    "SECOND_MICROSECOND",
    "YEAR_MONTH",
];

/// Keywords sqlparser parses as special functions; without `(` after them they are plain names.
const FUNCTION_KEYWORDS: &[Keyword] = &[
    Keyword::TRIM,
    Keyword::POSITION,
    Keyword::SUBSTRING,
    Keyword::SUBSTR,
    Keyword::EXTRACT,
    Keyword::CEIL,
    Keyword::FLOOR,
    Keyword::OVERLAY,
    Keyword::CONVERT,
    Keyword::TRY_CAST,
    Keyword::SAFE_CAST,
];

/// A sqlparser dialect with the guard's parse hooks. Everything else is the engine's dialect's (`inner`, from
/// [`Dialect::parser`]): it reports that dialect's type, so sqlparser's dialect-specific parsing applies
/// unchanged.
#[derive(Debug)]
struct Hooked {
    inner: Box<dyn SqlDialect>,
    engine: Dialect,
}

/// `Some(Ok(x))` for a parse that worked, `None` to let sqlparser parse it its way.
fn attempt<T>(
    parser: &mut Parser<'_>,
    f: impl FnMut(&mut Parser<'_>) -> Result<T, ParserError>,
) -> Option<Result<T, ParserError>> {
    parser.maybe_parse(f).transpose()
}

fn word(token: &Token) -> Option<&sqlparser::tokenizer::Word> {
    match token {
        Token::Word(w) if w.quote_style.is_none() => Some(w),
        _ => None,
    }
}

fn fail<T>(what: &str) -> Result<T, ParserError> {
    Err(ParserError::ParserError(what.to_owned()))
}

/// `INTERVAL <expr> HOUR_MINUTE` and the other compound units.
fn mysql_interval(parser: &mut Parser<'_>) -> Result<Expr, ParserError> {
    parser.expect_keyword_is(Keyword::INTERVAL)?;
    let value = parser.parse_expr()?;
    let unit = match word(&parser.peek_token_ref().token) {
        Some(w) if MYSQL_UNITS.iter().any(|u| w.value.eq_ignore_ascii_case(u)) => {
            w.value.to_ascii_uppercase()
        }
        _ => return fail("not a compound interval unit"),
    };
    parser.next_token();
    Ok(Expr::Interval(Interval {
        value: Box::new(value),
        leading_field: Some(DateTimeField::Custom(Ident::new(unit))),
        leading_precision: None,
        last_field: None,
        fractional_seconds_precision: None,
    }))
}

/// `CAST(x AS CHAR(10) CHARACTER SET utf8mb4)` (also `CHARSET x`, `CHAR SET x`).
fn mysql_cast(parser: &mut Parser<'_>) -> Result<Expr, ParserError> {
    parser.expect_keyword_is(Keyword::CAST)?;
    parser.expect_token(&Token::LParen)?;
    let expr = parser.parse_expr()?;
    parser.expect_keyword_is(Keyword::AS)?;
    let data_type = parser.parse_data_type()?;
    let charset = parser.parse_keywords(&[Keyword::CHARACTER, Keyword::SET])
        || parser.parse_keywords(&[Keyword::CHAR, Keyword::SET])
        || parser.parse_keyword(Keyword::CHARSET);
    if !charset {
        return fail("no character set");
    }
    parser.parse_identifier()?;
    parser.expect_token(&Token::RParen)?;
    Ok(Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(expr),
        data_type,
        format: None,
    })
}

impl Hooked {
    fn prefix(&self, parser: &mut Parser<'_>) -> Option<Result<Expr, ParserError>> {
        let w = word(&parser.peek_token_ref().token)?;
        let keyword = w.keyword;
        if FUNCTION_KEYWORDS.contains(&keyword)
            && parser.peek_nth_token_ref(1).token != Token::LParen
        {
            let ident = Ident::new(w.value.clone());
            parser.next_token();
            return Some(Ok(Expr::Identifier(ident)));
        }
        match (self.engine, keyword) {
            (Dialect::Mysql, Keyword::INTERVAL) => attempt(parser, mysql_interval),
            (Dialect::Mysql, Keyword::CAST) => attempt(parser, mysql_cast),
            _ => None,
        }
    }

    fn infix(
        &self,
        parser: &mut Parser<'_>,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        let keyword = word(&parser.peek_token_ref().token)?.keyword;
        match (self.engine, keyword) {
            (Dialect::Mysql, Keyword::MOD) => attempt(parser, |p| {
                p.next_token();
                let right = p.parse_subexpr(precedence)?;
                Ok(Expr::BinaryOp {
                    left: Box::new(expr.clone()),
                    op: BinaryOperator::Modulo,
                    right: Box::new(right),
                })
            }),
            (Dialect::Sqlite, Keyword::IS) => {
                let not = parser.peek_nth_token_ref(1).token.clone();
                let negated = word(&not).is_some_and(|w| w.keyword == Keyword::NOT);
                let operand = parser
                    .peek_nth_token_ref(1 + usize::from(negated))
                    .token
                    .clone();
                let special = word(&operand).is_some_and(|w| {
                    matches!(
                        w.keyword,
                        Keyword::NULL
                            | Keyword::TRUE
                            | Keyword::FALSE
                            | Keyword::UNKNOWN
                            | Keyword::DISTINCT
                            | Keyword::JSON
                            | Keyword::NORMALIZED
                            | Keyword::NFC
                            | Keyword::NFD
                            | Keyword::NFKC
                            | Keyword::NFKD
                    )
                });
                if special {
                    return None;
                }
                attempt(parser, |p| {
                    p.next_token();
                    if negated {
                        p.next_token();
                    }
                    let right = Box::new(p.parse_subexpr(precedence)?);
                    let left = Box::new(expr.clone());
                    Ok(if negated {
                        Expr::IsDistinctFrom(left, right)
                    } else {
                        Expr::IsNotDistinctFrom(left, right)
                    })
                })
            }
            _ => None,
        }
    }

    fn precedence(&self, parser: &Parser<'_>) -> Option<Result<u8, ParserError>> {
        let w = word(&parser.peek_token_ref().token)?;
        (self.engine == Dialect::Mysql && w.keyword == Keyword::MOD)
            .then(|| Ok(self.inner.prec_value(Precedence::MulDivModOp)))
    }

    fn statement(&self, parser: &mut Parser<'_>) -> Option<Result<Statement, ParserError>> {
        let w = word(&parser.peek_token_ref().token)?;
        (w.keyword == Keyword::TABLE && self.engine != Dialect::Sqlite)
            .then(|| parser.parse_query().map(Statement::Query))
    }
}

/// Forwards the methods that PostgreSQL's, MySQL's or SQLite's dialect overrides.
macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        $(fn $name(&self, $($arg: $ty),*) -> $ret { self.inner.$name($($arg),*) })*
    };
}

impl SqlDialect for Hooked {
    fn dialect(&self) -> TypeId {
        self.inner.dialect()
    }

    /// The canonical text's strings have no backslash escapes.
    fn supports_string_literal_backslash_escape(&self) -> bool {
        false
    }

    fn allow_extract_custom(&self) -> bool {
        self.engine == Dialect::Mysql || self.inner.allow_extract_custom()
    }

    fn parse_prefix(&self, parser: &mut Parser<'_>) -> Option<Result<Expr, ParserError>> {
        self.prefix(parser)
    }

    fn parse_infix(
        &self,
        parser: &mut Parser<'_>,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        self.infix(parser, expr, precedence)
            .or_else(|| self.inner.parse_infix(parser, expr, precedence))
    }

    fn get_next_precedence(&self, parser: &Parser<'_>) -> Option<Result<u8, ParserError>> {
        self.precedence(parser)
            .or_else(|| self.inner.get_next_precedence(parser))
    }

    fn parse_statement(&self, parser: &mut Parser<'_>) -> Option<Result<Statement, ParserError>> {
        self.statement(parser)
            .or_else(|| self.inner.parse_statement(parser))
    }

    // Called for every character: dispatched statically to the engine's dialect.
    fn is_identifier_start(&self, ch: char) -> bool {
        match self.engine {
            Dialect::Postgres => PostgreSqlDialect {}.is_identifier_start(ch),
            Dialect::Mysql => MySqlDialect {}.is_identifier_start(ch),
            Dialect::Sqlite => SQLiteDialect {}.is_identifier_start(ch),
        }
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        match self.engine {
            Dialect::Postgres => PostgreSqlDialect {}.is_identifier_part(ch),
            Dialect::Mysql => MySqlDialect {}.is_identifier_part(ch),
            Dialect::Sqlite => SQLiteDialect {}.is_identifier_part(ch),
        }
    }

    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.inner.identifier_quote_style(identifier)
    }

    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser<'_>) -> bool {
        self.inner.is_table_factor_alias(explicit, kw, parser)
    }

    fn is_table_alias(&self, kw: &Keyword, parser: &mut Parser<'_>) -> bool {
        self.inner.is_table_alias(kw, parser)
    }

    forward! {
        is_delimited_identifier_start(ch: char) -> bool;
        is_custom_operator_part(ch: char) -> bool;
        is_reserved_for_identifier(kw: Keyword) -> bool;
        prec_value(prec: Precedence) -> u8;
        supports_set_names() -> bool;
        supports_numeric_literal_underscores() -> bool;
        supports_notnull_operator() -> bool;
        supports_limit_comma() -> bool;
        supports_left_associative_joins_without_parens() -> bool;
        supports_filter_during_aggregation() -> bool;
        supports_comment_optimizer_hint() -> bool;
        supports_comma_separated_trim() -> bool;
        supports_bitwise_shift_operators() -> bool;
        supports_xml_expressions() -> bool;
        supports_user_host_grantee() -> bool;
        supports_update_order_by() -> bool;
        supports_unicode_string_literal() -> bool;
        supports_table_hints() -> bool;
        supports_string_literal_concatenation() -> bool;
        supports_string_escape_constant() -> bool;
        supports_start_transaction_modifier() -> bool;
        supports_select_wildcard_with_alias() -> bool;
        supports_select_modifiers() -> bool;
        supports_order_by_using_operator() -> bool;
        supports_numeric_prefix() -> bool;
        supports_nested_comments() -> bool;
        supports_named_fn_args_with_expr_name() -> bool;
        supports_named_fn_args_with_colon_operator() -> bool;
        supports_multiline_comment_hints() -> bool;
        supports_match_against() -> bool;
        supports_load_extension() -> bool;
        supports_listen_notify() -> bool;
        supports_key_column_option() -> bool;
        supports_interval_options() -> bool;
        supports_insert_table_alias() -> bool;
        supports_insert_set() -> bool;
        supports_in_empty_list() -> bool;
        supports_group_by_with_modifier() -> bool;
        supports_group_by_expr() -> bool;
        supports_geometric_types() -> bool;
        supports_factorial_operator() -> bool;
        supports_explain_with_utility_options() -> bool;
        supports_exclude_constraint() -> bool;
        supports_empty_projections() -> bool;
        supports_double_ampersand_operator() -> bool;
        supports_dollar_placeholder() -> bool;
        supports_data_type_signed_suffix() -> bool;
        supports_cross_join_constraint() -> bool;
        supports_create_table_select() -> bool;
        supports_create_table_like_parenthesized() -> bool;
        supports_create_index_with_clause() -> bool;
        supports_constraint_keyword_without_name() -> bool;
        supports_comment_on() -> bool;
        supports_comma_separated_set_assignments() -> bool;
        supports_binary_kw_as_cast() -> bool;
        supports_asc_desc_in_column_definition() -> bool;
        supports_array_typedef_with_brackets() -> bool;
        supports_alter_user_as_alter_role() -> bool;
        supports_alter_column_type_using() -> bool;
        supports_aliased_function_args() -> bool;
        requires_single_line_comment_whitespace() -> bool;
        require_interval_qualifier() -> bool;
        ignores_wildcard_escapes() -> bool;
        allow_extract_single_quotes() -> bool;
    }
}
