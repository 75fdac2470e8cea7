//! Schema context: compact DDL-like text with keys, foreign keys and sample values, within a token budget.
//!
//! Given a question, tables are ranked lexically (names, comments and sample values, with snake_case and
//! camelCase split and light stemming, weighted by how rare each word is across tables); the tables on the
//! foreign-key paths that connect the chosen ones are added, and join hints close the text.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};
use steward_core::estimate_tokens;

use crate::catalog::{Catalog, Table, TableKind, is_temporal, is_textual};
use crate::dialect::Dialect;

/// The schema text for a model, and what it holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaContext {
    /// The tables described, in the order they appear.
    pub tables: Vec<String>,
    /// The estimated tokens of `text`.
    pub tokens: usize,
    /// The text.
    pub text: String,
}

/// Most FK hops between two chosen tables for the path to be added.
const MAX_HOPS: usize = 3;
/// Most chosen tables whose pairwise paths are added.
const MAX_CONNECTED: usize = 8;

/// Builds the schema context of `catalog` for `question` (or the whole schema), within `budget` tokens.
pub fn schema_context(catalog: &Catalog, question: Option<&str>, budget: usize) -> SchemaContext {
    let (order, relevant) = match question.map(str::trim).filter(|q| !q.is_empty()) {
        Some(q) => ranked(catalog, q),
        None => ((0..catalog.tables.len()).collect(), catalog.tables.len()),
    };
    let terms: BTreeSet<String> = question
        .map(terms)
        .unwrap_or_default()
        .into_iter()
        .collect();
    let mut text = String::new();
    let mut tokens = 0;
    let mut included: Vec<usize> = Vec::new();
    for (position, &i) in order.iter().enumerate() {
        if position == relevant {
            // Join hints for the relevant tables come before the rest of the schema.
            let hints = join_hints(catalog, &included);
            if !hints.is_empty() && tokens + estimate_tokens(&hints) <= budget {
                tokens += estimate_tokens(&hints);
                text.push_str(&hints);
            }
        }
        let table = &catalog.tables[i];
        let full = render_table(catalog.dialect, table, None);
        let block = if tokens + estimate_tokens(&full) <= budget {
            full
        } else {
            let compact = render_table(catalog.dialect, table, Some(&terms));
            if tokens + estimate_tokens(&compact) > budget {
                continue;
            }
            compact
        };
        tokens += estimate_tokens(&block);
        text.push_str(&block);
        included.push(i);
    }
    if relevant >= order.len() {
        let hints = join_hints(catalog, &included);
        if !hints.is_empty() && tokens + estimate_tokens(&hints) <= budget {
            tokens += estimate_tokens(&hints);
            text.push_str(&hints);
        }
    }
    let mut shown = vec![false; catalog.tables.len()];
    for &i in &included {
        shown[i] = true;
    }
    let rest: Vec<&str> = (0..catalog.tables.len())
        .filter(|&i| !shown[i])
        .map(|i| catalog.tables[i].name.as_str())
        .collect();
    if !rest.is_empty() {
        let mut line = String::from("-- Other tables:");
        for name in &rest {
            if tokens + estimate_tokens(&line) + estimate_tokens(name) + 2 > budget {
                line.push_str(" …");
                break;
            }
            line.push(' ');
            line.push_str(name);
        }
        line.push('\n');
        if tokens + estimate_tokens(&line) <= budget {
            tokens += estimate_tokens(&line);
            text.push_str(&line);
        }
    }
    SchemaContext {
        tables: included
            .iter()
            .map(|&i| catalog.tables[i].name.clone())
            .collect(),
        tokens,
        text,
    }
}

/// The full description of some tables (all columns, keys, samples) and the joins between them.
pub fn describe_tables(catalog: &Catalog, tables: &[&Table]) -> String {
    let mut text: String = tables
        .iter()
        .map(|t| render_table(catalog.dialect, t, None))
        .collect();
    let indexes: Vec<usize> = catalog
        .tables
        .iter()
        .enumerate()
        .filter(|(_, t)| tables.iter().any(|w| w.name == t.name))
        .map(|(i, _)| i)
        .collect();
    text.push_str(&join_hints(catalog, &indexes));
    text
}

/// The tables relevant to a question, best first, with the tables that connect them; then the others. The
/// second value is how many are relevant.
fn ranked(catalog: &Catalog, question: &str) -> (Vec<usize>, usize) {
    let query: Vec<String> = terms(question);
    let docs: Vec<Fields> = catalog.tables.iter().map(Fields::of).collect();
    let n = docs.len() as f64;
    let idf: Vec<f64> = query
        .iter()
        .map(|term| {
            let df = docs.iter().filter(|d| d.weight(term) > 0.0).count() as f64;
            (1.0 + n / (1.0 + df)).ln()
        })
        .collect();
    let mut scores: Vec<(f64, usize)> = docs
        .iter()
        .enumerate()
        .map(|(i, doc)| {
            let score: f64 = query
                .iter()
                .zip(&idf)
                .map(|(term, idf)| doc.weight(term) * idf)
                .sum();
            (score, i)
        })
        .filter(|(score, _)| *score > 0.0)
        .collect();
    scores.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let chosen: Vec<usize> = scores.iter().map(|(_, i)| *i).collect();
    if chosen.is_empty() {
        return ((0..catalog.tables.len()).collect(), catalog.tables.len());
    }
    let mut order: Vec<usize> = Vec::new();
    let mut placed = vec![false; catalog.tables.len()];
    let graph = fk_graph(catalog);
    let top: Vec<usize> = chosen.iter().copied().take(MAX_CONNECTED).collect();
    for (k, &a) in chosen.iter().enumerate() {
        if !placed[a] {
            placed[a] = true;
            order.push(a);
        }
        if k >= MAX_CONNECTED {
            continue;
        }
        // Bridge tables go right after the tables they connect.
        for &b in top.iter().take(k) {
            if let Some(path) = shortest_path(&graph, a, b) {
                for node in path {
                    if !placed[node] && !chosen.contains(&node) {
                        placed[node] = true;
                        order.push(node);
                    }
                }
            }
        }
    }
    let relevant = order.len();
    // Then everything else, so a generous budget still shows the whole schema.
    order.extend((0..catalog.tables.len()).filter(|&i| !placed[i]));
    (order, relevant)
}

/// The words of a table's parts, with their weights.
struct Fields {
    words: BTreeMap<String, f64>,
}

impl Fields {
    fn of(table: &Table) -> Self {
        let mut words: BTreeMap<String, f64> = BTreeMap::new();
        let mut add = |text: &str, weight: f64| {
            for w in terms(text) {
                let slot = words.entry(w).or_insert(0.0);
                *slot = slot.max(weight);
            }
        };
        add(&table.name, 3.0);
        if let Some(c) = &table.comment {
            add(c, 1.0);
        }
        for column in &table.columns {
            add(&column.name, 1.5);
            if let Some(c) = &column.comment {
                add(c, 1.0);
            }
            if is_textual(&column.data_type) {
                for s in &column.samples {
                    add(s, 1.5);
                }
            }
        }
        Self { words }
    }

    fn weight(&self, term: &str) -> f64 {
        self.words.get(term).copied().unwrap_or(0.0)
    }
}

const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "each", "for", "from",
    "give", "has", "have", "how", "i", "in", "is", "it", "list", "many", "me", "much", "my", "of",
    "on", "or", "show", "tell", "than", "that", "the", "their", "there", "these", "this", "to",
    "was", "we", "were", "what", "when", "where", "which", "who", "whose", "why", "with", "all",
    "any", "number", "name", "names", "id",
];

/// Lower-case words of a text: snake_case and camelCase split, stop words dropped, lightly stemmed.
pub(crate) fn terms(text: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(text.len() + 8);
    let mut prev: Option<char> = None;
    for c in text.chars() {
        if let Some(p) = prev
            && c.is_uppercase()
            && p.is_lowercase()
        {
            spaced.push(' ');
        }
        spaced.push(c);
        prev = Some(c);
    }
    let mut out: Vec<String> = Vec::new();
    for word in spaced.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if word.is_empty() || STOPWORDS.contains(&word.as_str()) {
            continue;
        }
        let stemmed = stem(&word);
        if !out.contains(&stemmed) {
            out.push(stemmed);
        }
    }
    out
}

/// A light stemmer: plurals and the commonest suffixes.
fn stem(word: &str) -> String {
    let w = word;
    for (suffix, replacement) in [
        ("ies", "y"),
        ("sses", "ss"),
        ("xes", "x"),
        ("ches", "ch"),
        ("shes", "sh"),
    ] {
        if let Some(base) = w.strip_suffix(suffix)
            && base.len() >= 2
        {
            return format!("{base}{replacement}");
        }
    }
    for suffix in ["ing", "ed"] {
        if let Some(base) = w.strip_suffix(suffix)
            && base.len() >= 4
        {
            return base.to_owned();
        }
    }
    if let Some(base) = w.strip_suffix('s')
        && base.len() >= 3
        && !base.ends_with('s')
        && !base.ends_with('u')
        && !base.ends_with('i')
    {
        return base.to_owned();
    }
    w.to_owned()
}

/// Undirected foreign-key adjacency between table indexes.
fn fk_graph(catalog: &Catalog) -> Vec<Vec<usize>> {
    let index: BTreeMap<&str, usize> = catalog
        .tables
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let mut graph = vec![Vec::new(); catalog.tables.len()];
    for (i, t) in catalog.tables.iter().enumerate() {
        for fk in &t.foreign_keys {
            if let Some(&j) = index.get(fk.table.as_str())
                && i != j
            {
                graph[i].push(j);
                graph[j].push(i);
            }
        }
    }
    graph
}

/// The tables strictly between `from` and `to` on a shortest FK path of at most [`MAX_HOPS`].
fn shortest_path(graph: &[Vec<usize>], from: usize, to: usize) -> Option<Vec<usize>> {
    let mut previous: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = VecDeque::from([(from, 0usize)]);
    let mut seen = BTreeSet::from([from]);
    while let Some((node, depth)) = queue.pop_front() {
        if node == to {
            let mut path = Vec::new();
            let mut at = to;
            while let Some(&p) = previous.get(&at) {
                if p != from {
                    path.push(p);
                }
                at = p;
            }
            path.reverse();
            return Some(path);
        }
        if depth == MAX_HOPS {
            continue;
        }
        for &next in &graph[node] {
            if seen.insert(next) {
                previous.insert(next, node);
                queue.push_back((next, depth + 1));
            }
        }
    }
    None
}

fn ident(dialect: Dialect, name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !(dialect == Dialect::Postgres && name.chars().any(|c| c.is_ascii_uppercase()));
    if plain {
        name.to_owned()
    } else {
        dialect.quote(name)
    }
}

fn table_ident(dialect: Dialect, name: &str) -> String {
    match (dialect, name.split_once('.')) {
        (Dialect::Postgres, Some((s, t))) => format!("{}.{}", ident(dialect, s), ident(dialect, t)),
        _ => ident(dialect, name),
    }
}

/// One table as DDL-like text. With `focus`, only key columns and columns matching those words are listed.
fn render_table(dialect: Dialect, table: &Table, focus: Option<&BTreeSet<String>>) -> String {
    let keyword = if table.kind == TableKind::View {
        "VIEW"
    } else {
        "TABLE"
    };
    let mut out = format!("CREATE {keyword} {} (", table_ident(dialect, &table.name));
    let mut notes = Vec::new();
    if let Some(rows) = table.rows {
        notes.push(format!("~{rows} rows"));
    }
    if let Some(c) = &table.comment {
        notes.push(c.replace('\n', " "));
    }
    if !notes.is_empty() {
        out.push_str(" -- ");
        out.push_str(&notes.join("; "));
    }
    out.push('\n');
    let single_pk = table.primary_key.len() == 1;
    let mut hidden = 0;
    let mut lines = Vec::new();
    for column in &table.columns {
        let fk = table
            .foreign_keys
            .iter()
            .find(|fk| fk.columns.len() == 1 && fk.columns[0] == column.name);
        let is_key = table.primary_key.contains(&column.name) || fk.is_some();
        if let Some(words) = focus
            && !is_key
            && !terms(&column.name).iter().any(|t| words.contains(t))
        {
            hidden += 1;
            continue;
        }
        let mut line = format!("  {} {}", ident(dialect, &column.name), column.data_type);
        if single_pk && table.primary_key[0] == column.name {
            line.push_str(" PRIMARY KEY");
        } else if !column.nullable {
            line.push_str(" NOT NULL");
        }
        if let Some(fk) = fk {
            line.push_str(&format!(
                " REFERENCES {}({})",
                table_ident(dialect, &fk.table),
                fk.referenced
                    .first()
                    .map(|c| ident(dialect, c))
                    .unwrap_or_default()
            ));
        }
        let mut comment = Vec::new();
        if let Some(c) = &column.comment {
            comment.push(c.replace('\n', " "));
        }
        let shows_samples = is_textual(&column.data_type) || is_temporal(&column.data_type);
        if focus.is_none() && shows_samples && !column.samples.is_empty() {
            let quoted: Vec<String> = column
                .samples
                .iter()
                .map(|s| format!("'{}'", s.replace('\'', "''")))
                .collect();
            comment.push(format!("e.g. {}", quoted.join(", ")));
        }
        lines.push((line, comment.join("; ")));
    }
    if table.primary_key.len() > 1 {
        let cols: Vec<String> = table
            .primary_key
            .iter()
            .map(|c| ident(dialect, c))
            .collect();
        lines.push((
            format!("  PRIMARY KEY ({})", cols.join(", ")),
            String::new(),
        ));
    }
    for fk in table.foreign_keys.iter().filter(|fk| fk.columns.len() > 1) {
        let cols: Vec<String> = fk.columns.iter().map(|c| ident(dialect, c)).collect();
        let refs: Vec<String> = fk.referenced.iter().map(|c| ident(dialect, c)).collect();
        lines.push((
            format!(
                "  FOREIGN KEY ({}) REFERENCES {}({})",
                cols.join(", "),
                table_ident(dialect, &fk.table),
                refs.join(", ")
            ),
            String::new(),
        ));
    }
    // The comma goes before a column's comment, never inside it.
    let last = lines.len().saturating_sub(1);
    for (i, (line, comment)) in lines.iter().enumerate() {
        out.push_str(line);
        if i < last {
            out.push(',');
        }
        if !comment.is_empty() {
            out.push_str(" -- ");
            out.push_str(comment);
        }
        out.push('\n');
    }
    if hidden > 0 {
        out.push_str(&format!("  -- … {hidden} more columns\n"));
    }
    out.push_str(");\n");
    out
}

/// `-- Joins:` lines for the foreign keys between included tables.
fn join_hints(catalog: &Catalog, included: &[usize]) -> String {
    let names: BTreeSet<&str> = included
        .iter()
        .map(|&i| catalog.tables[i].name.as_str())
        .collect();
    let mut joins = Vec::new();
    for &i in included {
        let t = &catalog.tables[i];
        for fk in &t.foreign_keys {
            if names.contains(fk.table.as_str()) {
                let on: Vec<String> = fk
                    .columns
                    .iter()
                    .zip(&fk.referenced)
                    .map(|(c, r)| format!("{}.{c} = {}.{r}", t.name, fk.table))
                    .collect();
                joins.push(on.join(" AND "));
            }
        }
    }
    if joins.is_empty() {
        String::new()
    } else {
        format!("-- Joins: {}\n", joins.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Column, ForeignKey};

    fn col(name: &str, samples: &[&str]) -> Column {
        Column {
            name: name.into(),
            data_type: "TEXT".into(),
            nullable: true,
            default: None,
            comment: None,
            samples: samples.iter().map(|s| (*s).into()).collect(),
        }
    }

    fn table(name: &str, columns: Vec<Column>, fks: Vec<(&str, &str, &str)>) -> Table {
        Table {
            name: name.into(),
            kind: TableKind::Table,
            comment: None,
            primary_key: vec![columns[0].name.clone()],
            columns,
            foreign_keys: fks
                .into_iter()
                .map(|(c, t, r)| ForeignKey {
                    columns: vec![c.into()],
                    table: t.into(),
                    referenced: vec![r.into()],
                })
                .collect(),
            rows: Some(10),
        }
    }

    fn shop() -> Catalog {
        let mut tables = vec![
            table(
                "customers",
                vec![col("customer_id", &[]), col("full_name", &["Ada Lovelace"])],
                vec![],
            ),
            table(
                "orders",
                vec![
                    col("order_id", &[]),
                    col("customer_id", &[]),
                    col("status", &["IN TRANSIT", "DELIVERED"]),
                ],
                vec![("customer_id", "customers", "customer_id")],
            ),
            table(
                "order_items",
                vec![
                    col("item_id", &[]),
                    col("order_id", &[]),
                    col("product_id", &[]),
                ],
                vec![
                    ("order_id", "orders", "order_id"),
                    ("product_id", "products", "product_id"),
                ],
            ),
            table(
                "products",
                vec![col("product_id", &[]), col("title", &["Espresso machine"])],
                vec![],
            ),
        ];
        for i in 0..30 {
            tables.push(table(
                &format!("audit_{i}"),
                vec![col("event_id", &[]), col("payload", &[])],
                vec![],
            ));
        }
        Catalog::new(Dialect::Sqlite, tables)
    }

    #[test]
    fn terms_split_stem_and_drop_stop_words() {
        assert_eq!(
            terms("Which customers ordered the EspressoMachine?"),
            ["customer", "order", "espresso", "machine"]
        );
        assert_eq!(
            terms("order_items categories"),
            ["order", "item", "category"]
        );
    }

    #[test]
    fn question_picks_tables_and_the_ones_connecting_them() {
        let ctx = schema_context(
            &shop(),
            Some("Which customers bought an espresso machine?"),
            400,
        );
        // products (sample value) and customers (name) are chosen; orders and order_items connect them.
        for t in ["customers", "products", "orders", "order_items"] {
            assert!(
                ctx.tables.contains(&t.to_owned()),
                "{t} missing: {:?}",
                ctx.tables
            );
        }
        assert!(ctx.tokens <= 400);
        assert!(
            ctx.text
                .contains("customer_id TEXT REFERENCES customers(customer_id)"),
            "{}",
            ctx.text
        );
        assert!(
            ctx.text.contains("-- e.g. 'IN TRANSIT', 'DELIVERED'"),
            "{}",
            ctx.text
        );
        assert!(ctx.text.contains("-- Joins: "), "{}", ctx.text);
        assert!(
            ctx.text
                .contains("orders.customer_id = customers.customer_id"),
            "{}",
            ctx.text
        );
    }

    #[test]
    fn budget_is_respected_and_the_rest_is_named() {
        let ctx = schema_context(&shop(), None, 120);
        assert!(ctx.tokens <= 120, "{}", ctx.tokens);
        assert!(estimate_tokens(&ctx.text) <= ctx.tokens);
        assert!(ctx.text.contains("-- Other tables:"), "{}", ctx.text);
        let all = schema_context(&shop(), None, 100_000);
        assert_eq!(all.tables.len(), 34);
        assert!(!all.text.contains("Other tables"));
    }
}
