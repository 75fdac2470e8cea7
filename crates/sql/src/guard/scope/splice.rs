//! The located edits: each reference to a scoped table replaced at its span by a derived table Steward
//! generates, the rest of the text left byte for byte; then the final text checked with the full scope
//! (default deny).

use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};

use super::super::lex::{Kind, Lexed, Token};
use super::super::{Guard, GuardVerdict};
use super::locate::{Located, Relations};
use super::{Numbering, Scope, Scoped, TableScope, key, quote};
use crate::dialect::Dialect;
use crate::guard::Mask;
use crate::guard::mask::mask_key;
use crate::query::Param;

/// Why a text was not scoped.
pub(super) enum Refusal {
    /// It cannot be limited to the scope (the reason says why and what to write instead).
    Scope(String),
    /// The final text was refused by the guard.
    GuardVerdict(GuardVerdict),
}

impl From<String> for Refusal {
    fn from(why: String) -> Self {
        Refusal::Scope(why)
    }
}

/// One name part as written: its decoded value and whether it was quoted.
#[derive(Clone, Debug)]
pub(super) struct Part {
    pub(super) value: String,
    pub(super) quoted: bool,
}

/// One replacement: the byte range of the user's text and the table reference found there.
pub(super) struct Edit {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) parts: Vec<Part>,
    /// `TABLE name` (replaced by a whole `SELECT * FROM …`), not a reference in FROM.
    query: bool,
    /// The user's reference has an alias of its own (kept as written).
    aliased: bool,
}

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
    for name in &relations.decorated {
        if let Some(last) = parts(name).and_then(|p| p.last().cloned())
            && scope.get(&last.value).is_some()
        {
            return Err(format!(
                "`{}` is limited to what you may see, so it cannot take index hints, PARTITION, TABLESAMPLE or a \
                 version after its name; remove them.",
                last.value
            )
            .into());
        }
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
    let own_placeholders: Vec<&str> = located
        .lexed
        .tokens
        .iter()
        .filter(|t| t.kind == Kind::Param)
        .map(|t| t.text(sql))
        .collect();
    let binds = edits.iter().any(|e| {
        e.parts
            .last()
            .and_then(|p| scope.get(&p.value))
            .is_some_and(|s| s.filter.is_some())
    });
    let mut numbering = numbering(guard.dialect, &own_placeholders, binds)?;
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
    super::verify::verify(guard, &located, &edits, &out, &generated, scope)?;
    Ok(Scoped {
        sql: out,
        filtered: filtered.into_iter().collect(),
        values,
        own,
    })
}

/// The decoded parts of a name, with whether each was quoted.
pub(super) fn parts(name: &ObjectName) -> Option<Vec<Part>> {
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

/// How the generated placeholders are numbered, from the placeholders the text already has (`own`, as
/// written). `binds`: the generated text binds values (a row filter applies), so SQLite placeholders that cannot
/// be numbered among them (`:name`, `@name`, `$name`, or `?` mixed with `?N`) are refused.
pub(super) fn numbering(dialect: Dialect, own: &[&str], binds: bool) -> Result<Numbering, String> {
    let number =
        |p: &str, prefix: char| p.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok());
    let highest = |prefix: char| {
        own.iter()
            .filter_map(|p| number(p, prefix))
            .max()
            .unwrap_or(0)
    };
    Ok(match dialect {
        Dialect::Postgres => Numbering::Numbered {
            dollar: true,
            next: highest('$') + 1,
        },
        Dialect::Mysql => Numbering::Positional,
        _ if own.iter().all(|p| number(p, '?').is_some()) => Numbering::Numbered {
            dollar: false,
            next: highest('?') + 1,
        },
        _ if own.iter().all(|p| *p == "?") || !binds => Numbering::Positional,
        _ => {
            return Err("Placeholders like :name, @name or $name cannot be combined with the row filters that apply to you; write ?1, ?2, … or plain ?.".to_owned());
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
    // Values in the order their placeholders stand in the text: the masks' key, then the filter's.
    let mut values = Vec::new();
    let columns = match &table.columns {
        Some(columns) => columns
            .iter()
            .map(|c| {
                let quoted = quote(dialect, c);
                match table.masks.get(&c.to_ascii_lowercase()) {
                    Some(Mask::Hash) => {
                        let key = numbering.placeholder();
                        values.push(Param::Text(mask_key().to_owned()));
                        format!(
                            "{} AS {quoted}",
                            Mask::Hash.expression(dialect, &quoted, &key)
                        )
                    }
                    Some(mask) => format!("{} AS {quoted}", mask.expression(dialect, &quoted, "")),
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
    let filter = match &table.filter {
        Some(filter) => {
            let (text, bound) = filter.render(numbering);
            values.extend(bound);
            format!(" WHERE ({text}){}", fence(dialect))
        }
        None => String::new(),
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
