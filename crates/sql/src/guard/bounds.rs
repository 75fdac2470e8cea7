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
    for token in tokens {
        let role = match token.kind {
            Kind::Comment => continue,
            Kind::Punct => match sql.as_bytes().get(token.start) {
                Some(b'(' | b'[') => Role::Open,
                Some(b')' | b']') => Role::Close,
                Some(b',') => Role::Separator,
                _ => Role::Other,
            },
            Kind::Word => role(token.text(sql)),
            _ => Role::Other,
        };
        let nested = stack.len() > 1;
        let Some(top) = stack.last_mut() else {
            break;
        };
        top.stretch += 1;
        match role {
            Role::Open | Role::Case => {
                below += top.stretch + top.set_operations + LEVEL_COST;
                stack.push(Level {
                    case: role == Role::Case,
                    ..Level::default()
                });
            }
            Role::Close | Role::End if top.case == (role == Role::End) && nested => {
                stack.pop();
                if let Some(parent) = stack.last() {
                    below =
                        below.saturating_sub(parent.stretch + parent.set_operations + LEVEL_COST);
                }
            }
            Role::Separator => top.stretch = 0,
            Role::Branch if top.case => top.stretch = 0,
            Role::SetOperation => {
                top.set_operations += 1;
                top.stretch = 0;
            }
            _ => {}
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

/// What a token does to the estimate.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Open,
    Close,
    Case,
    End,
    /// A comma, or a keyword that only starts a clause.
    Separator,
    /// `WHEN`, `THEN`, `ELSE`: separators inside a `CASE`.
    Branch,
    SetOperation,
    Other,
}

/// The role of a word (compared by length first: this runs for every word of every query).
fn role(word: &str) -> Role {
    let is = |w: &str| word.eq_ignore_ascii_case(w);
    match word.len() {
        3 if is("END") => Role::End,
        4 if is("CASE") => Role::Case,
        4 if is("WHEN") || is("THEN") || is("ELSE") => Role::Branch,
        5 if is("UNION") || is("MINUS") => Role::SetOperation,
        5 if is("WHERE") || is("LIMIT") => Role::Separator,
        6 if is("EXCEPT") => Role::SetOperation,
        6 if is("SELECT") || is("HAVING") || is("OFFSET") || is("WINDOW") => Role::Separator,
        7 if is("QUALIFY") => Role::Separator,
        9 if is("INTERSECT") => Role::SetOperation,
        _ => Role::Other,
    }
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
