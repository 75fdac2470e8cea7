//! The row cap written into the query itself, so the engine stops early instead of producing rows that would
//! be thrown away: the top-level `LIMIT` is added, or lowered when it is larger than the cap.

use sqlparser::ast::{Expr, LimitClause, Statement, Value};

/// The statement with its top-level LIMIT at most `cap`, as SQL; `None` when it is not a plain query or its
/// limit is not a number (the streaming cap still applies then).
pub(super) fn cap(statement: Statement, cap: usize) -> Option<String> {
    let Statement::Query(mut query) = statement else {
        return None;
    };
    if query.fetch.is_some() {
        return None;
    }
    let cap_expr = || Expr::value(Value::Number(cap.to_string(), false));
    let lower = |limit: &mut Expr| -> bool {
        match limit {
            Expr::Value(v) => match &v.value {
                Value::Number(n, _) => {
                    if n.parse::<u128>().is_ok_and(|n| n > cap as u128) {
                        *limit = cap_expr();
                    }
                    true
                }
                _ => false,
            },
            _ => false,
        }
    };
    match &mut query.limit_clause {
        None => {
            query.limit_clause = Some(LimitClause::LimitOffset {
                limit: Some(cap_expr()),
                offset: None,
                limit_by: Vec::new(),
            });
        }
        Some(LimitClause::LimitOffset {
            limit: Some(limit), ..
        }) => {
            if !lower(limit) {
                return None;
            }
        }
        Some(LimitClause::LimitOffset {
            limit: limit @ None,
            ..
        }) => *limit = Some(cap_expr()),
        Some(LimitClause::OffsetCommaLimit { limit, .. }) => {
            if !lower(limit) {
                return None;
            }
        }
    }
    Some(query.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Dialect;
    use crate::guard::Guard;

    fn capped(dialect: Dialect, sql: &str) -> Option<String> {
        cap(Guard::new(dialect).parse_one(sql)?, 101)
    }

    #[test]
    fn adds_or_lowers_the_top_level_limit() {
        assert_eq!(
            capped(Dialect::Sqlite, "SELECT a FROM t ORDER BY a").unwrap(),
            "SELECT a FROM t ORDER BY a LIMIT 101"
        );
        assert_eq!(
            capped(Dialect::Sqlite, "SELECT a FROM t LIMIT 5").unwrap(),
            "SELECT a FROM t LIMIT 5"
        );
        assert_eq!(
            capped(Dialect::Postgres, "SELECT a FROM t LIMIT 5000 OFFSET 10").unwrap(),
            "SELECT a FROM t LIMIT 101 OFFSET 10"
        );
        assert_eq!(
            capped(Dialect::Mysql, "SELECT a FROM t LIMIT 10, 5000").unwrap(),
            "SELECT a FROM t LIMIT 10, 101"
        );
        assert_eq!(
            capped(Dialect::Postgres, "SELECT a FROM t UNION SELECT b FROM u").unwrap(),
            "SELECT a FROM t UNION SELECT b FROM u LIMIT 101"
        );
        // Inner limits are the query's own business.
        assert_eq!(
            capped(
                Dialect::Sqlite,
                "SELECT * FROM (SELECT a FROM t LIMIT 1000) s"
            )
            .unwrap(),
            "SELECT * FROM (SELECT a FROM t LIMIT 1000) s LIMIT 101"
        );
        assert!(capped(Dialect::Postgres, "SELECT a FROM t FETCH FIRST 5 ROWS ONLY").is_none());
        assert!(capped(Dialect::Postgres, "EXPLAIN SELECT 1").is_none());
    }
}
