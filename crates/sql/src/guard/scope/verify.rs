//! The final text checked with the full scope (default deny): it reads exactly as the user's text outside the
//! generated spans, every reference to a scoped table lies inside one, and the guard allows it.

use super::super::Guard;
use super::super::lex::{Lexed, Token};
use super::Scope;
use super::locate::{Located, Relations};
use super::splice::{Edit, Refusal, parts};

/// The words after which a name in the text is read as a relation: a scoped table named right after one of
/// them, outside the generated text, is a reference the parse did not see, and the text is refused.
const RELATION_WORDS: &[&str] = &[
    "FROM",
    "JOIN",
    "ONLY",
    "TABLE",
    "LATERAL",
    "INTO",
    "UPDATE",
    "APPLY",
    "STRAIGHT_JOIN",
];

/// The final text, checked with the full scope: it reads exactly as the user's text outside the generated
/// spans, every reference to a scoped table lies inside one, and the guard allows it.
pub(super) fn verify(
    guard: &Guard,
    user: &Located<'_>,
    edits: &[Edit],
    out: &str,
    generated: &[(usize, usize)],
    scope: &Scope,
) -> Result<(), Refusal> {
    let changed = || {
        Refusal::Scope("The text could not be limited to what you may see without changing how it reads; write it more plainly.".to_owned())
    };
    let replaced: Vec<(usize, usize)> = edits.iter().map(|e| (e.start, e.end)).collect();
    let lexed = unchanged_outside(guard, user.sql, &user.lexed, &replaced, out, generated)
        .ok_or_else(changed)?;
    let inside = |t: &Token| generated.iter().any(|&(s, e)| t.start >= s && t.start < e);
    // Names a relation word introduces, outside the generated text: a reference the parse did not see.
    // Parentheses may stand between (PostgreSQL reads `FROM ONLY (orders)`; sqlparser a function `ONLY`).
    let code: Vec<&Token> = lexed.code().collect();
    for (i, before) in code.iter().enumerate() {
        if !RELATION_WORDS.iter().any(|word| before.is_word(out, word)) {
            continue;
        }
        let name = code.iter().skip(i + 1).find(|t| !t.is_punct(out, "("));
        if let Some(name) = name
            && !inside(name)
            && name.ident(out).is_some_and(|v| scope.get(v).is_some())
        {
            return Err(Refusal::Scope(format!(
                "`{}` is read in a way that cannot be limited to what you may see; read it in FROM or JOIN.",
                name.text(out)
            )));
        }
    }
    let located = Located::new(guard.dialect, out, lexed)?;
    let relations = Relations::of(&located.statements);
    let mut placed = vec![0usize; generated.len()];
    for (name, _, _) in &relations.factors {
        let Some(last) = parts(name).and_then(|p| p.last().cloned()) else {
            return Err(changed());
        };
        if scope.get(&last.value).is_none() {
            continue;
        }
        match located
            .name_span(name)
            .and_then(|(s, _)| generated.iter().position(|&(gs, ge)| s >= gs && s < ge))
        {
            Some(i) => {
                if let Some(n) = placed.get_mut(i) {
                    *n += 1;
                }
            }
            None => return Err(changed()),
        }
    }
    let scoped_relations = relations
        .relations
        .iter()
        .filter(|r| {
            parts(r)
                .and_then(|p| p.last().cloned())
                .is_some_and(|l| scope.get(&l.value).is_some())
        })
        .count();
    if placed.contains(&0)
        || scoped_relations != placed.iter().sum::<usize>()
        || relations
            .table_queries
            .iter()
            .any(|(_, n)| scope.get(n).is_some())
        || relations.ctes.iter().any(|c| scope.get(c).is_some())
    {
        return Err(changed());
    }
    let verdict = guard.without_columns().check(out);
    if !verdict.allowed {
        return Err(Refusal::GuardVerdict(verdict));
    }
    Ok(())
}

/// The final text `out` lexed, when it reads exactly as the user's `sql` outside the spans Steward generated
/// (`generated` in `out`, in place of `replaced` in `sql`): the same tokens, of the same kinds and text, and no
/// token running across the edge of a generated span. `None` otherwise.
pub(super) fn unchanged_outside(
    guard: &Guard,
    sql: &str,
    user: &Lexed,
    replaced: &[(usize, usize)],
    out: &str,
    generated: &[(usize, usize)],
) -> Option<Lexed> {
    let lexed = guard.one_reading(out).ok()?;
    let crosses = |t: &Token| {
        generated
            .iter()
            .any(|&(s, e)| (t.start < s && t.end > s) || (t.start < e && t.end > e))
    };
    if lexed.tokens.iter().any(crosses) {
        return None;
    }
    let inside = |t: &Token| generated.iter().any(|&(s, e)| t.start >= s && t.start < e);
    let mut theirs = user
        .tokens
        .iter()
        .filter(|t| !replaced.iter().any(|&(s, e)| t.start >= s && t.start < e));
    let mut ours = lexed.tokens.iter().filter(|t| !inside(t));
    loop {
        match (theirs.next(), ours.next()) {
            (None, None) => return Some(lexed),
            (Some(a), Some(b)) if a.kind == b.kind && a.text(sql) == b.text(out) => {}
            _ => return None,
        }
    }
}
