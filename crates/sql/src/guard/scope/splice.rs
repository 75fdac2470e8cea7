//! The located edits: each reference to a scoped table replaced at its span by a derived table Steward
//! generates, the rest of the text left byte for byte; then the final text checked with the full scope
//! (default deny).

use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};

use super::super::lex::{Kind, Lexed, Token};
use super::super::{Guard, Verdict};
use super::locate::{Located, Relations};
use super::{Numbering, Scope, Scoped, TableScope, key, quote};
use crate::dialect::Dialect;
use crate::query::Param;

/// Why a text was not scoped.
pub(super) enum Refusal {
    /// It cannot be limited to the scope (the reason says why and what to write instead).
    Scope(String),
    /// The final text was refused by the guard.
    Verdict(Verdict),
}

impl From<String> for Refusal {
    fn from(why: String) -> Self {
        Refusal::Scope(why)
    }
}

/// One name part as written: its decoded value and whether it was quoted.
#[derive(Clone, Debug)]
struct Part {
    value: String,
    quoted: bool,
}

/// One replacement: the byte range of the user's text and the table reference found there.
struct Edit {
    start: usize,
    end: usize,
    parts: Vec<Part>,
    /// `TABLE name` (replaced by a whole `SELECT * FROM …`), not a reference in FROM.
    query: bool,
    /// The user's reference has an alias of its own (kept as written).
    aliased: bool,
}

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

pub(super) fn scoped(guard: &Guard, sql: &str, scope: &Scope) -> Result<Scoped, Refusal> {
    let lexed = guard.one_reading(sql)?;
    let located = Located::new(guard.dialect, sql, lexed)?;
    let relations = Relations::of(&located.statements);
    if let Some(cte) = relations.ctes.iter().find(|c| scope.get(c).is_some()) {
        return Err(format!(
            "The CTE `{cte}` has the name of a table whose rows or columns are limited for you; give the CTE \
             another name."
        )
        .into());
    }
    let mut edits = Vec::new();
    for (name, aliased, args) in &relations.factors {
        let parts =
            parts(name).ok_or_else(|| format!("The table name `{name}` could not be read."))?;
        let Some(last) = parts.last() else { continue };
        // `ONLY (t)`, read by sqlparser as a call of a function `ONLY`: the engine reads the table t.
        if *args && last.value.eq_ignore_ascii_case("ONLY") && !last.quoted {
            return Err(
                "`ONLY (…)` cannot be limited to what you may see; write FROM t."
                    .to_owned()
                    .into(),
            );
        }
        if scope.get(&last.value).is_none() {
            continue;
        }
        if *args {
            return Err(
                format!("`{}(…)` cannot be limited to what you may see.", last.value).into(),
            );
        }
        let (start, end) = located.name_span(name).ok_or_else(|| {
            format!(
                "The reference to `{}` could not be located in the text, so it cannot be limited to what you may see; write it plainly (FROM {} AS x).",
                last.value, last.value
            )
        })?;
        edits.push(Edit {
            start,
            end,
            parts,
            query: false,
            aliased: *aliased,
        });
    }
    let table_queries = relations
        .table_queries
        .iter()
        .filter(|(_, name)| scope.get(name).is_some())
        .count();
    let keyword_refs = table_keyword_refs(&located.lexed, sql, scope)?;
    if keyword_refs.len() != table_queries {
        return Err(
            "A `TABLE …` query could not be located; write SELECT * FROM … instead."
                .to_owned()
                .into(),
        );
    }
    edits.extend(keyword_refs);
    let scoped_relations = relations
        .relations
        .iter()
        .filter(|r| {
            parts(r)
                .and_then(|p| p.last().cloned())
                .is_some_and(|l| scope.get(&l.value).is_some())
        })
        .count();
    if scoped_relations != edits.iter().filter(|e| !e.query).count() {
        return Err("A table whose rows or columns are limited for you is read in a position that cannot be limited; read it in FROM or JOIN.".to_owned().into());
    }
    edits.sort_by_key(|e| e.start);
    if edits
        .windows(2)
        .any(|w| matches!(w, [a, b] if a.end > b.start))
    {
        return Err("The table references overlap; write each one plainly."
            .to_owned()
            .into());
    }
    let mut numbering = numbering(guard.dialect, sql, &located.lexed, scope, &edits)?;
    let own = own_values(&numbering, &located.lexed);
    let params: Vec<usize> = located
        .lexed
        .tokens
        .iter()
        .filter(|t| t.kind == Kind::Param)
        .map(|t| t.start)
        .collect();
    let mut out = String::with_capacity(sql.len() + 128 * edits.len());
    let mut generated = Vec::with_capacity(edits.len());
    let mut values: Vec<(Option<usize>, Param)> = Vec::new();
    let mut filtered = std::collections::BTreeMap::new();
    let mut pos = 0;
    for edit in &edits {
        out.push_str(sql.get(pos..edit.start).unwrap_or(""));
        let last = edit.parts.last().map_or("", |p| p.value.as_str());
        let table = scope
            .get(last)
            .ok_or_else(|| format!("`{last}` has no scope."))?;
        let (text, bound) = derived(guard.dialect, edit, table, &mut numbering)?;
        let at = matches!(numbering, Numbering::Positional)
            .then(|| params.partition_point(|&p| p < edit.start));
        values.extend(bound.into_iter().map(|v| (at, v)));
        if let Some(filter) = &table.filter {
            filtered.insert(key(last), filter.configured.clone());
        }
        generated.push((out.len(), out.len() + text.len()));
        out.push_str(&text);
        pos = edit.end;
    }
    out.push_str(sql.get(pos..).unwrap_or(""));
    verify(guard, &located, &edits, &out, &generated, scope)?;
    Ok(Scoped {
        sql: out,
        filtered: filtered.into_iter().collect(),
        values,
        own,
    })
}

/// The decoded parts of a name, with whether each was quoted.
fn parts(name: &ObjectName) -> Option<Vec<Part>> {
    name.0
        .iter()
        .map(|part| match part {
            ObjectNamePart::Identifier(Ident {
                value, quote_style, ..
            }) => Some(Part {
                value: value.clone(),
                quoted: quote_style.is_some(),
            }),
            _ => None,
        })
        .collect()
}

/// `TABLE name` queries on scoped tables, found in the tokens (the parse keeps no position for them).
fn table_keyword_refs(lexed: &Lexed, sql: &str, scope: &Scope) -> Result<Vec<Edit>, String> {
    let code: Vec<&Token> = lexed.code().collect();
    let mut out = Vec::new();
    for (i, token) in code.iter().enumerate() {
        if !token.is_word(sql, "TABLE") {
            continue;
        }
        let mut parts = Vec::new();
        let mut j = i + 1;
        let mut end = token.end;
        while let Some(t) = code.get(j) {
            let Some(value) = t.ident(sql) else { break };
            parts.push(Part {
                value: value.to_owned(),
                quoted: t.kind == Kind::Quoted,
            });
            end = t.end;
            if code.get(j + 1).is_some_and(|d| d.is_punct(sql, ".")) {
                j += 2;
            } else {
                break;
            }
        }
        let scoped = parts.last().is_some_and(|p| scope.get(&p.value).is_some());
        let simple = parts.len() <= 3
            && parts
                .first()
                .is_some_and(|p| p.quoted || !p.value.eq_ignore_ascii_case("ONLY"));
        // Any scoped name in the next few tokens (`TABLE ONLY orders`, `TABLE orders *`) that is not the simple form.
        let nearby = code
            .iter()
            .skip(i + 1)
            .take(4)
            .any(|t| t.ident(sql).is_some_and(|v| scope.get(v).is_some()));
        if scoped && simple {
            out.push(Edit {
                start: token.start,
                end,
                parts,
                query: true,
                aliased: false,
            });
        } else if nearby {
            return Err("This `TABLE …` form cannot be limited to what you may see; write SELECT * FROM … instead.".to_owned());
        }
    }
    Ok(out)
}

/// How many values the text's own placeholders take, before any generated one is numbered.
pub(super) fn own_values(numbering: &Numbering, lexed: &Lexed) -> usize {
    match numbering {
        Numbering::Numbered { next, .. } => next.saturating_sub(1),
        Numbering::Positional => lexed
            .tokens
            .iter()
            .filter(|t| t.kind == Kind::Param)
            .count(),
    }
}

/// How the generated placeholders are numbered, from the placeholders the text already has.
fn numbering(
    dialect: Dialect,
    sql: &str,
    lexed: &Lexed,
    scope: &Scope,
    edits: &[Edit],
) -> Result<Numbering, String> {
    let own: Vec<&str> = lexed
        .tokens
        .iter()
        .filter(|t| t.kind == Kind::Param)
        .map(|t| t.text(sql))
        .collect();
    let number =
        |p: &str, prefix: char| p.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok());
    let binds = edits.iter().any(|e| {
        e.parts
            .last()
            .and_then(|p| scope.get(&p.value))
            .is_some_and(|s| s.filter.is_some())
    });
    Ok(match dialect {
        Dialect::Postgres => Numbering::Numbered {
            dollar: true,
            next: own.iter().filter_map(|p| number(p, '$')).max().unwrap_or(0) + 1,
        },
        Dialect::Mysql => Numbering::Positional,
        Dialect::Sqlite => {
            if own.is_empty() || own.iter().all(|p| number(p, '?').is_some()) {
                Numbering::Numbered {
                    dollar: false,
                    next: own.iter().filter_map(|p| number(p, '?')).max().unwrap_or(0) + 1,
                }
            } else if own.iter().all(|p| *p == "?") {
                Numbering::Positional
            } else if binds {
                return Err("Placeholders like :name, @name or $name cannot be combined with the row filters that apply to you; write ?1, ?2, … or plain ?.".to_owned());
            } else {
                Numbering::Positional
            }
        }
    })
}

/// A name part as the engine will find it once Steward quotes it: PostgreSQL folds unquoted names to lowercase.
fn folded(dialect: Dialect, part: &Part) -> String {
    if dialect == Dialect::Postgres && !part.quoted {
        part.value.to_ascii_lowercase()
    } else {
        part.value.clone()
    }
}

/// The derived table that stands for `edit` under `table`'s scope, and the values it binds.
fn derived(
    dialect: Dialect,
    edit: &Edit,
    table: &TableScope,
    numbering: &mut Numbering,
) -> Result<(String, Vec<Param>), String> {
    let name: Vec<String> = edit
        .parts
        .iter()
        .map(|p| quote(dialect, &folded(dialect, p)))
        .collect();
    let name = name.join(".");
    let last = edit
        .parts
        .last()
        .map(|p| quote(dialect, &folded(dialect, p)))
        .unwrap_or_default();
    let columns = match &table.columns {
        Some(columns) => columns
            .iter()
            .map(|c| {
                let quoted = quote(dialect, c);
                match table.masks.get(&c.to_ascii_lowercase()) {
                    Some(mask) => format!("{} AS {quoted}", mask.expression(dialect, &quoted)),
                    None => quoted,
                }
            })
            .collect::<Vec<_>>()
            .join(", "),
        None if table.masks.is_empty() => "*".to_owned(),
        None => {
            return Err(format!(
                "The masked columns of `{name}` cannot be applied: its columns are not known."
            ));
        }
    };
    let (filter, values) = match &table.filter {
        Some(filter) => {
            let (text, values) = filter.render(numbering);
            (format!(" WHERE ({text}){}", fence(dialect)), values)
        }
        None => (String::new(), Vec::new()),
    };
    let inner = format!("(SELECT {columns} FROM {name}{filter})");
    let text = if edit.query {
        format!(" SELECT * FROM {inner} AS {last} ")
    } else if edit.aliased {
        format!(" {inner} ")
    } else {
        format!(" {inner} AS {last} ")
    };
    Ok((text, values))
}

/// A no-op LIMIT or OFFSET that keeps the planner from merging the derived table into the query around it or
/// pushing that query's conditions into it: a condition the user wrote is then never evaluated on a row the
/// filter hides, so an error it raises (`CAST(note AS int)`, `1/0` on a chosen row) cannot reveal that row.
fn fence(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => " OFFSET 0",
        Dialect::Mysql => " LIMIT 18446744073709551615",
        _ => " LIMIT -1 OFFSET 0",
    }
}

/// The final text, checked with the full scope: it reads exactly as the user's text outside the generated
/// spans, every reference to a scoped table lies inside one, and the guard allows it.
fn verify(
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
        return Err(Refusal::Verdict(verdict));
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
