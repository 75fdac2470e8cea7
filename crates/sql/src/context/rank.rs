//! Ranking tables for a question: lexical scores over names, columns, comments and samples, weighted by how
//! rare each word is (a short name's words weigh more; words a question splits that a schema runs together
//! — `check-ins`, `checkin` — match, and so do a name's abbreviations of the question's words, `cust` for
//! `customer`, for half the weight); a table scores more when its namespace (`schema.` or `prefix__`) answers
//! more of the question, at least a share of what the tables it joins score and of what its namespace's best
//! table scores (words that phrase the request, `top`, `ordered by`, are not looked up; free text weighs
//! less; equal scores go to the table with more rows); then the tables on the join paths between
//! the best ones. Joins are the foreign keys, and, within a namespace, columns named like
//! another table's key (`paperkeyphrase.paperid` and `paper.paperid`).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::catalog::{Catalog, Table, is_textual};

/// Most FK hops between two chosen tables for the path to be added.
const MAX_HOPS: usize = 3;
/// Most chosen tables whose pairwise paths are added.
const MAX_CONNECTED: usize = 8;
/// How much a namespace's coverage of the question adds to each matching table of it.
const NAMESPACE_WEIGHT: f64 = 1.0;
/// The share of its best and second-best joined tables' scores a table scores at least.
const BEST_NEIGHBOUR: f64 = 0.4;
const SECOND_NEIGHBOUR: f64 = 0.3;
/// The share of its namespace's best table's score a table of a named namespace scores at least.
const NAMESPACE_SHARE: f64 = 0.5;
/// The weight of a one-word table name (`customers`); its namespace's words weigh [`NAMESPACE_WORD`].
const NAME_WEIGHT: f64 = 4.0;
const NAMESPACE_WORD: f64 = 3.0;
/// How fast a name's weight falls with its number of words: 4 for one word, 2.5 for two, 1.9 for three.
const NAME_LENGTH: f64 = 0.75;
/// The weights of a column's name, of a comment, and of a word of a short sample value.
const COLUMN_WEIGHT: f64 = 1.5;
const COMMENT_WEIGHT: f64 = 1.0;
const VALUE_WEIGHT: f64 = 0.75;
/// The share of a word's weight its abbreviation in a name carries (`cust` for `customer`).
const ABBREVIATION: f64 = 0.5;
/// A catalog's tables as words, with how many tables hold each word, and its foreign-key graph.
pub(crate) struct Ranker {
    docs: Vec<Fields>,
    /// Tables holding each word.
    df: BTreeMap<String, usize>,
    /// Short words of table and column names (see [`ABBREVIATION_LETTERS`]): what may abbreviate a word.
    short_names: BTreeSet<String>,
    graph: Vec<Vec<usize>>,
    /// Each table's namespace (see [`namespace`]), as an index.
    namespace: Vec<usize>,
    namespaces: usize,
    /// The index of the empty namespace (tables with no namespace), if any table has none.
    unnamed: Option<usize>,
}

/// The namespace of a table name: its schema (`sales.orders`), else its prefix before a double underscore
/// (`sales__orders`), else none (the empty string).
fn namespace(name: &str) -> &str {
    if let Some((ns, _)) = name.split_once('.') {
        return ns;
    }
    name.split_once("__").map_or("", |(ns, _)| ns)
}

impl Ranker {
    pub(super) fn new(catalog: &Catalog) -> Self {
        let mut short_names = BTreeSet::new();
        let docs: Vec<Fields> = catalog
            .tables
            .iter()
            .map(|t| Fields::of(t, &mut short_names))
            .collect();
        let mut df: BTreeMap<String, usize> = BTreeMap::new();
        for doc in &docs {
            for (word, weight) in &doc.words {
                if *weight > 0.0 {
                    *df.entry(word.clone()).or_insert(0) += 1;
                }
            }
        }
        let mut ids: BTreeMap<&str, usize> = BTreeMap::new();
        let namespace: Vec<usize> = catalog
            .tables
            .iter()
            .map(|t| {
                let next = ids.len();
                *ids.entry(namespace(&t.name)).or_insert(next)
            })
            .collect();
        let mut graph = fk_graph(catalog);
        infer_joins(catalog, &namespace, &mut graph);
        let unnamed = ids.get("").copied();
        Self {
            docs,
            df,
            short_names,
            graph,
            namespace,
            namespaces: ids.len(),
            unnamed,
        }
    }

    /// The tables relevant to a question, best first, with the tables that connect them; then the others.
    /// The second value is how many are relevant.
    pub(super) fn ranked(&self, catalog: &Catalog, question: &str) -> (Vec<usize>, usize) {
        // The words that phrase the request (`top 5`, `return`, `respective counts`) and bare numbers say
        // nothing about which tables hold the answer.
        let mut query: Vec<String> = terms(question)
            .into_iter()
            .filter(|w| {
                !REQUEST_WORDS.contains(&w.as_str()) && !w.chars().all(|c| c.is_ascii_digit())
            })
            .collect();
        let raw: Vec<String> = question
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        // `ordered by`, `grouped by`, `sorted by` phrase the result's shape, not its data (unless the word is
        // used as data elsewhere in the question).
        for (k, pair) in raw.windows(2).enumerate() {
            if pair[1] == "by" && SHAPE_WORDS.contains(&pair[0].as_str()) {
                let word = stem(&pair[0]);
                let elsewhere = raw.iter().enumerate().any(|(j, w)| {
                    j != k && stem(w) == word && raw.get(j + 1).is_none_or(|n| n != "by")
                });
                if !elsewhere {
                    query.retain(|w| *w != word);
                }
            }
        }
        // Words a question splits that a schema writes as one (`check-ins`, `sign ups`).
        for pair in raw.windows(2) {
            let joined = stem(&format!("{}{}", pair[0], pair[1]));
            if self.df.contains_key(&joined) && !query.contains(&joined) {
                query.push(joined);
            }
        }
        // A name may abbreviate a word of the question (`cust_addr` for `customer address`): the
        // abbreviation is looked up too, for a share of the word's weight.
        let mut factor: Vec<f64> = vec![1.0; query.len()];
        for k in 0..query.len() {
            let word = query[k].clone();
            for short in abbreviations(&word) {
                if self.short_names.contains(short) && !query.iter().any(|q| q == short) {
                    query.push(short.to_owned());
                    factor.push(ABBREVIATION);
                }
            }
        }
        let docs = &self.docs;
        let n = docs.len() as f64;
        let idf: Vec<f64> = query
            .iter()
            .zip(&factor)
            .map(|(term, f)| {
                let df = self.df.get(term).copied().unwrap_or(0) as f64;
                f * (1.0 + n / (1.0 + df)).ln()
            })
            .collect();
        let own: Vec<f64> = docs
            .iter()
            .map(|doc| {
                query
                    .iter()
                    .zip(&idf)
                    .map(|(term, idf)| doc.weight(term) * idf)
                    .sum()
            })
            .collect();
        // How well each namespace covers the question: per word, its best table there.
        let mut best = vec![vec![0.0f64; query.len()]; self.namespaces];
        for (i, doc) in docs.iter().enumerate() {
            for (k, (term, idf)) in query.iter().zip(&idf).enumerate() {
                let w = doc.weight(term) * idf;
                let slot = &mut best[self.namespace[i]][k];
                if w > *slot {
                    *slot = w;
                }
            }
        }
        let coverage: Vec<f64> = best.iter().map(|b| b.iter().sum()).collect();
        // A matching table scores more in a namespace that answers more of the question.
        let mut scores: Vec<(f64, usize)> = own
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let boost = NAMESPACE_WEIGHT * coverage[self.namespace[i]];
                (if s > 0.0 { s + boost } else { 0.0 }, i)
            })
            .collect();
        // A table joined to relevant tables is relevant too: it scores a share of its best neighbours'.
        {
            let base: Vec<f64> = scores.iter().map(|(s, _)| *s).collect();
            for (i, slot) in scores.iter_mut().enumerate() {
                let (mut first, mut second) = (0.0f64, 0.0f64);
                for &j in &self.graph[i] {
                    let v = base[j];
                    if v > first {
                        second = first;
                        first = v;
                    } else if v > second {
                        second = v;
                    }
                }
                let propagated = BEST_NEIGHBOUR * first + SECOND_NEIGHBOUR * second;
                if propagated > slot.0 {
                    slot.0 = propagated;
                }
            }
        }
        // A table of a named namespace scores at least a share of that namespace's best table: a question is
        // about one domain, and its other tables are the likeliest to hold what the words do not name.
        if self.namespaces > 1 {
            let mut top = vec![0.0f64; self.namespaces];
            for &(score, i) in &scores {
                let slot = &mut top[self.namespace[i]];
                *slot = slot.max(score);
            }
            for (i, slot) in scores.iter_mut().enumerate() {
                if self.unnamed != Some(self.namespace[i]) {
                    slot.0 = slot.0.max(NAMESPACE_SHARE * top[self.namespace[i]]);
                }
            }
        }
        scores.retain(|(score, _)| *score > 0.0);
        // Equal scores (the words cannot tell the tables apart) go to the table with more rows: a populated
        // table is likelier what a question is about than an empty or near-empty copy.
        let rows = |i: usize| catalog.tables[i].rows.unwrap_or(0);
        let level = |s: f64| (s * 1e6).round() as i64;
        scores.sort_by(|a, b| {
            level(b.0)
                .cmp(&level(a.0))
                .then(rows(b.1).cmp(&rows(a.1)))
                .then(a.1.cmp(&b.1))
        });
        let chosen: Vec<usize> = scores.iter().map(|(_, i)| *i).collect();
        if chosen.is_empty() {
            return ((0..catalog.tables.len()).collect(), catalog.tables.len());
        }
        let mut order: Vec<usize> = Vec::new();
        let mut placed = vec![false; catalog.tables.len()];
        let graph = &self.graph;
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
                if let Some(path) = shortest_path(graph, a, b) {
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
}

/// The words of a table's parts, with their weights.
struct Fields {
    words: BTreeMap<String, f64>,
}

impl Fields {
    /// The words of `table`; the short words of its names go to `short_names` too.
    fn of(table: &Table, short_names: &mut BTreeSet<String>) -> Self {
        let mut words: BTreeMap<String, f64> = BTreeMap::new();
        let mut add = |text: &str, weight: f64, name: bool| {
            for w in terms(text) {
                if name
                    && ABBREVIATION_LETTERS.contains(&w.len())
                    && w.chars().all(|c| c.is_ascii_lowercase())
                {
                    short_names.insert(w.clone());
                }
                let slot = words.entry(w).or_insert(0.0);
                *slot = slot.max(weight);
            }
        };
        // A name's own words weigh more the fewer they are (`customers` is about customers more than
        // `customer_contact_history` is); its namespace's words weigh in full.
        let ns = namespace(&table.name);
        let own = table.name[ns.len()..].trim_start_matches(['.', '_']);
        add(ns, NAMESPACE_WORD, true);
        let n = terms(own).len().max(1) as f64;
        add(
            own,
            NAME_WEIGHT * (1.0 + NAME_LENGTH) / (n + NAME_LENGTH),
            true,
        );
        if let Some(c) = &table.comment {
            add(c, COMMENT_WEIGHT, false);
        }
        for column in &table.columns {
            add(&column.name, COLUMN_WEIGHT, true);
            if let Some(c) = &column.comment {
                add(c, COMMENT_WEIGHT, false);
            }
            if is_textual(&column.data_type) {
                // A short value (`Germany`, `IN TRANSIT`) is what a question names; a word inside free text
                // (a description, a message) is weak evidence.
                for s in &column.samples {
                    let short = s.split_whitespace().count() <= SHORT_VALUE_WORDS;
                    add(
                        s,
                        if short {
                            VALUE_WEIGHT
                        } else {
                            FREE_TEXT_WEIGHT
                        },
                        false,
                    );
                }
            }
        }
        Self { words }
    }

    fn weight(&self, term: &str) -> f64 {
        self.words.get(term).copied().unwrap_or(0.0)
    }
}

/// Words that, followed by `by`, phrase how a result is shaped.
const SHAPE_WORDS: &[&str] = &[
    "order", "ordered", "sort", "sorted", "group", "grouped", "rank", "ranked",
];

/// A sample value of at most this many words is a value a question may name.
const SHORT_VALUE_WORDS: usize = 3;
/// The weight of a word inside a longer, free-text sample value.
const FREE_TEXT_WEIGHT: f64 = 0.5;

/// Stemmed words that phrase a request rather than name data (dropped from questions only: a column may be
/// called `total`).
const REQUEST_WORDS: &[&str] = &[
    "top",
    "return",
    "respective",
    "common",
    "distinct",
    "unique",
    "count",
    "total",
    "sum",
    "average",
    "avg",
    "maximum",
    "minimum",
    "max",
    "min",
    "most",
    "least",
    "highest",
    "lowest",
    "find",
    "get",
    "display",
    "provide",
    "based",
    "inclusive",
    "exclusive",
    "represent",
    "along",
    "also",
    "only",
    "per",
    "descend",
    "ascend",
];

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

/// How many letters a name's word may have to be taken for an abbreviation.
const ABBREVIATION_LETTERS: std::ops::RangeInclusive<usize> = 3..=5;

/// The abbreviations a name may use for a word of the question: its beginnings of
/// [`ABBREVIATION_LETTERS`] letters that leave at least two out (`cust` for `customer`, `desc` for
/// `description`, `med` for `medication`).
fn abbreviations(word: &str) -> impl Iterator<Item = &str> {
    ABBREVIATION_LETTERS
        .take_while(move |&len| len + 2 <= word.len())
        .filter_map(move |len| word.get(..len))
}

/// Whether a name's short word abbreviates a (longer) word of the question (see [`abbreviations`]).
#[cfg(test)]
pub(super) fn abbreviates(short: &str, word: &str) -> bool {
    abbreviations(word).any(|a| a == short)
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

/// Joins no foreign key declares, inferred from column names within a namespace: a table whose key (its
/// one-column primary key, else a first column named `…id`) is a column of another table joins it
/// (`paper.paperid` and `paperkeyphrase.paperid`). A bare `id` says nothing and is not used.
fn infer_joins(catalog: &Catalog, namespace: &[usize], graph: &mut [Vec<usize>]) {
    let key = |t: &Table| -> Option<String> {
        let name = match t.primary_key.as_slice() {
            [one] => one.clone(),
            [] => t.columns.first().map(|c| c.name.clone())?,
            _ => return None,
        };
        let lower = name.to_lowercase();
        (lower != "id" && lower.ends_with("id")).then_some(lower)
    };
    let mut by_column: BTreeMap<(usize, String), Vec<usize>> = BTreeMap::new();
    for (i, t) in catalog.tables.iter().enumerate() {
        for c in &t.columns {
            by_column
                .entry((namespace[i], c.name.to_lowercase()))
                .or_default()
                .push(i);
        }
    }
    for (j, t) in catalog.tables.iter().enumerate() {
        let Some(k) = key(t) else { continue };
        let Some(holders) = by_column.get(&(namespace[j], k)) else {
            continue;
        };
        for &i in holders {
            if i != j && !graph[i].contains(&j) {
                graph[i].push(j);
                graph[j].push(i);
            }
        }
    }
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
