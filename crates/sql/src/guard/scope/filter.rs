//! A row filter as configured (`customer_id = {principal.customer_id}`): the operator's condition, with each
//! `{principal.NAME}` turned into a bound parameter carrying the principal's value. The value never enters the
//! text: a claim holding `x\' OR 1=1 --` is one parameter, compared as a whole.

use std::collections::BTreeMap;
use steward_core::template::{Piece as TemplatePiece, Template};

use serde_json::Value as Json;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token as ParserToken;

use super::super::lex::{self, Kind, Mode};
use crate::dialect::Dialect;
use crate::query::Param;

/// One piece of a filter: the operator's text, or a principal's value.
#[derive(Clone, Debug)]
enum Piece {
    Text(String),
    Value(Param),
}

/// A row filter bound to one principal.
#[derive(Clone, Debug)]
pub(crate) struct Filter {
    /// The condition as configured.
    pub(crate) configured: String,
    pieces: Vec<Piece>,
}

/// How generated placeholders are written and where their values go.
#[derive(Clone, Debug)]
pub(crate) enum Numbering {
    /// PostgreSQL `$N` or SQLite `?N`, numbered after the text's own (`next` is the next free number).
    Numbered { dollar: bool, next: usize },
    /// `?`: each value goes in the order the placeholders stand in the text.
    Positional,
}

impl Numbering {
    /// The next generated placeholder.
    pub(crate) fn placeholder(&mut self) -> String {
        match self {
            Numbering::Numbered { dollar, next } => {
                let text = if *dollar {
                    format!("${next}")
                } else {
                    format!("?{next}")
                };
                *next += 1;
                text
            }
            Numbering::Positional => "?".to_owned(),
        }
    }
}

impl Filter {
    /// Parses `condition` for `dialect`, binding each `{principal.NAME}` to `attributes[NAME]`. The condition
    /// must be one SQL expression without comments or placeholders of its own; an attribute the principal lacks,
    /// or one that is not a number, string or boolean, is an error (the table would otherwise show every row).
    pub(crate) fn parse(
        dialect: Dialect,
        condition: &str,
        attributes: &BTreeMap<String, Json>,
    ) -> Result<Self, String> {
        // The one template syntax: `{principal.NAME}` for a value, `{{` and `}}` for braces.
        let template =
            Template::parse(condition).map_err(|e| format!("the row filter `{condition}`: {e}"))?;
        let mut pieces = Vec::new();
        for piece in template.pieces() {
            match piece {
                TemplatePiece::Text(text) => pieces.push(Piece::Text(text.clone())),
                TemplatePiece::Name(placeholder) => {
                    let name = placeholder
                        .strip_prefix("principal.")
                        .filter(|n| !n.contains('.'))
                        .ok_or_else(|| {
                            format!(
                                "the row filter `{condition}` names `{{{placeholder}}}`: a row filter's values are \
                                 the principal's attributes, `{{principal.NAME}}`"
                            )
                        })?;
                    let value = attributes.get(name).ok_or_else(|| {
                        format!(
                            "the row filter `{condition}` needs the principal's `{name}`, which this principal does not have"
                        )
                    })?;
                    pieces.push(Piece::Value(param(value).ok_or_else(|| {
                        format!(
                            "the principal's `{name}` (used by the row filter `{condition}`) must be a number, a string or true/false"
                        )
                    })?));
                }
            }
        }
        let filter = Self {
            configured: condition.to_owned(),
            pieces,
        };
        filter.validate(dialect)?;
        Ok(filter)
    }

    /// The condition with placeholders written by `numbering`, and the values in their order.
    pub(crate) fn render(&self, numbering: &mut Numbering) -> (String, Vec<Param>) {
        let mut text = String::new();
        let mut values = Vec::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => text.push_str(t),
                Piece::Value(v) => {
                    text.push_str(&numbering.placeholder());
                    values.push(v.clone());
                }
            }
        }
        (text, values)
    }

    /// The condition must read, as the engine reads it, as one expression whose only placeholders are the
    /// principal's values: no comment (it could hide the text Steward puts after it), no string left open.
    fn validate(&self, dialect: Dialect) -> Result<(), String> {
        let mut numbering = match dialect {
            Dialect::Postgres => Numbering::Numbered {
                dollar: true,
                next: 1,
            },
            _ => Numbering::Positional,
        };
        let (probe, values) = self.render(&mut numbering);
        let bad = |why: &str| Err(format!("the row filter `{}` {why}", self.configured));
        for mode in modes(dialect) {
            let lexed = lex::lex(&probe, mode);
            if lexed.unclosed || !lexed.problems.is_empty() {
                return bad("is not valid SQL (a string, name or comment is left open)");
            }
            if lexed.tokens.iter().any(|t| t.kind == Kind::Comment) {
                return bad("has a comment; remove it");
            }
            if lexed
                .tokens
                .iter()
                .any(|t| t.kind == Kind::Punct && t.text(&probe) == ";")
            {
                return bad("has a `;`; write one condition");
            }
            let params = lexed
                .tokens
                .iter()
                .filter(|t| t.kind == Kind::Param)
                .count();
            if params != values.len() {
                return bad(
                    "has placeholders of its own or a {principal.…} inside a string; write {principal.NAME} where a value goes, outside quotes",
                );
            }
        }
        let parser_dialect = dialect.parser();
        let mut parser = Parser::new(parser_dialect.as_ref())
            .try_with_sql(&probe)
            .map_err(|e| {
                format!(
                    "the row filter `{}` is not a SQL condition: {e}",
                    self.configured
                )
            })?;
        parser.parse_expr().map_err(|e| {
            format!(
                "the row filter `{}` is not a SQL condition: {e}",
                self.configured
            )
        })?;
        if parser.peek_token().token != ParserToken::EOF {
            return bad("is not one SQL condition");
        }
        Ok(())
    }
}

/// Every way the engine may read the text (settings unknown here): the condition must read the same under all.
fn modes(dialect: Dialect) -> Vec<Mode> {
    let both = [false, true];
    match dialect {
        Dialect::Sqlite => vec![Mode {
            dialect,
            backslash: false,
            ansi_quotes: false,
        }],
        Dialect::Postgres => both
            .iter()
            .map(|&backslash| Mode {
                dialect,
                backslash,
                ansi_quotes: false,
            })
            .collect(),
        Dialect::Mysql => both
            .iter()
            .flat_map(|&backslash| {
                both.iter().map(move |&ansi_quotes| Mode {
                    dialect,
                    backslash,
                    ansi_quotes,
                })
            })
            .collect(),
    }
}

/// A principal's attribute as a bound value, typed from the value: integers, floats, text, booleans.
fn param(value: &Json) -> Option<Param> {
    match value {
        Json::Number(n) => n
            .as_i64()
            .map(Param::Int)
            .or_else(|| n.as_f64().map(Param::Float)),
        Json::String(s) => Some(Param::Text(s.clone())),
        Json::Bool(b) => Some(Param::Bool(*b)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(value: Json) -> BTreeMap<String, Json> {
        [("v".to_owned(), value)].into()
    }

    #[test]
    fn values_become_parameters_whatever_they_hold() {
        let hostile = Json::from("x\\' OR 1=1 -- /* $$ \u{0}");
        let filter =
            Filter::parse(Dialect::Postgres, "owner = {principal.v}", &attrs(hostile)).unwrap();
        let mut numbering = Numbering::Numbered {
            dollar: true,
            next: 3,
        };
        let (text, values) = filter.render(&mut numbering);
        assert_eq!(text, "owner = $3");
        assert_eq!(values, [Param::Text("x\\' OR 1=1 -- /* $$ \u{0}".into())]);
        let filter = Filter::parse(
            Dialect::Mysql,
            "a = {principal.v} OR b = {principal.v}",
            &attrs(Json::from(7)),
        )
        .unwrap();
        let (text, values) = filter.render(&mut Numbering::Positional);
        assert_eq!(text, "a = ? OR b = ?");
        assert_eq!(values, [Param::Int(7), Param::Int(7)]);
    }

    #[test]
    fn conditions_that_could_swallow_or_hide_text_are_refused() {
        for bad in [
            "a = {principal.v} -- mine",
            "a = {principal.v} /* x",
            "a = '{principal.v}'",
            "a = {principal.v}; DROP TABLE t",
            "a = ? AND b = {principal.v}",
            "a = {principal.v} b c",
            "a = {principal.v",
        ] {
            assert!(
                Filter::parse(Dialect::Sqlite, bad, &attrs(Json::from(1))).is_err(),
                "{bad}"
            );
        }
        assert!(Filter::parse(Dialect::Sqlite, "a = {principal.v}", &attrs(Json::Null)).is_err());
        assert!(
            Filter::parse(Dialect::Sqlite, "a = {principal.w}", &attrs(Json::from(1))).is_err()
        );
        // A MySQL condition with a backslash in a string reads two ways: refused.
        assert!(
            Filter::parse(
                Dialect::Mysql,
                "a = 'x\\' OR b = {principal.v}",
                &attrs(Json::from(1))
            )
            .is_err()
        );
    }
}
