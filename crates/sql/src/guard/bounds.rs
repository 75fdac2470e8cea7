//! Bounds that keep the guard from crashing on hostile input. The parser builds a tree as deep as the SQL's
//! longest chain (`1+1+…`, `… UNION ALL …`) or nesting; walking, printing or dropping a deep tree recurses
//! once per level and overflows the stack. So the depth is estimated from the tokens *before* parsing, as an
//! upper bound, and text that is too long or too deep is refused with a reason.

use super::lex::{Kind, Token};
use super::{Reason, reason};

/// The longest SQL text checked, in bytes.
pub(crate) const MAX_SQL_BYTES: usize = 1 << 20;

/// The deepest tree the guard lets the parser build (an upper bound estimated from the tokens). A debug
/// build on a 2 MiB stack drops a chain of about 20,000 levels before it overflows.
pub(crate) const MAX_DEPTH: usize = 1_000;

/// The most levels of nested parentheses, brackets and `CASE`.
pub(crate) const MAX_NESTING: usize = 40;

/// Tree levels a nesting level may add besides its tokens (subquery, set expression, select, item, …).
const LEVEL_COST: usize = 8;

/// Refuses text over [`MAX_SQL_BYTES`].
pub(crate) fn length(sql: &str) -> Option<Reason> {
    (sql.len() > MAX_SQL_BYTES).then(|| {
        reason(
            "too_long",
            format!(
                "The SQL is {} bytes long; at most {MAX_SQL_BYTES} are accepted. Shorten it: move long lists or texts into a table, or filter with a shorter condition.",
                sql.len()
            ),
        )
    })
}

/// One nesting level of the estimate.
#[derive(Default)]
struct Level {
    /// Tokens since the last separator at this level: a chain of operators is at most this deep.
    stretch: usize,
    /// Set operations at this level: `a UNION b UNION c` nests one level per operator.
    set_operations: usize,
    /// Opened by `CASE` (closed by `END`).
    case: bool,
}

/// An upper bound of the parse tree's depth, refused when above [`MAX_DEPTH`] or [`MAX_NESTING`].
///
/// Within one level, a tree is at most as deep as the tokens of its longest stretch without a separator:
/// commas, `WHEN`/`THEN`/`ELSE` of a `CASE`, set operators, and clause keywords that only start clauses
/// (`SELECT`, `WHERE`, `HAVING`, `LIMIT`, `OFFSET`, `WINDOW`, `QUALIFY`) separate subtrees that are siblings.
/// Set operators nest, so they are counted on their own.
pub(crate) fn depth(sql: &str, tokens: &[Token]) -> Option<Reason> {
    let mut stack: Vec<Level> = vec![Level::default()];
    // The cost of the levels below the top one.
    let mut below = 0usize;
    let mut deepest = 0usize;
    for token in tokens.iter().filter(|t| t.kind != Kind::Comment) {
        let text = token.text(sql);
        let word = |w: &str| token.kind == Kind::Word && text.eq_ignore_ascii_case(w);
        let Some(top) = stack.last_mut() else {
            break;
        };
        top.stretch += 1;
        let open = token.kind == Kind::Punct && (text == "(" || text == "[");
        let close = token.kind == Kind::Punct && (text == ")" || text == "]");
        if open || word("CASE") {
            below += top.stretch + top.set_operations + LEVEL_COST;
            stack.push(Level {
                case: !open,
                ..Level::default()
            });
        } else if (close && !top.case) || (word("END") && top.case) {
            if stack.len() > 1 {
                stack.pop();
                if let Some(parent) = stack.last() {
                    below =
                        below.saturating_sub(parent.stretch + parent.set_operations + LEVEL_COST);
                }
            }
        } else if token.is_punct(sql, ",")
            || (top.case && (word("WHEN") || word("THEN") || word("ELSE")))
            || [
                "SELECT", "WHERE", "HAVING", "LIMIT", "OFFSET", "WINDOW", "QUALIFY",
            ]
            .iter()
            .any(|w| word(w))
        {
            top.stretch = 0;
        } else if ["UNION", "INTERSECT", "EXCEPT", "MINUS"]
            .iter()
            .any(|w| word(w))
        {
            top.set_operations += 1;
            top.stretch = 0;
        }
        let here = stack
            .last()
            .map_or(0, |l| l.stretch + l.set_operations + LEVEL_COST);
        deepest = deepest.max(below + here);
        if stack.len() > MAX_NESTING || deepest > MAX_DEPTH {
            return Some(too_deep(stack.len() > MAX_NESTING));
        }
    }
    None
}

/// The refusal for SQL nested or chained too deeply.
pub(crate) fn too_deep(nesting: bool) -> Reason {
    let what = if nesting {
        format!("more than {MAX_NESTING} levels of parentheses or CASE")
    } else {
        format!(
            "an expression or set operation chained or nested more than about {MAX_DEPTH} levels deep"
        )
    };
    reason(
        "too_deep",
        format!(
            "The SQL is nested too deeply: {what}; simplify, e.g. use IN (…) instead of long OR chains, a VALUES list or a table instead of long UNION chains, and a CTE instead of deep nesting."
        ),
    )
}
