//! Ranking tables for a question: lexical scores over names, columns, comments and samples, weighted by how
//! rare each word is, then the tables on the foreign-key paths between the best ones.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::catalog::{Catalog, Table, is_textual};

/// Most FK hops between two chosen tables for the path to be added.
const MAX_HOPS: usize = 3;
/// Most chosen tables whose pairwise paths are added.
const MAX_CONNECTED: usize = 8;
/// A catalog's tables as words, with how many tables hold each word, and its foreign-key graph.
pub(crate) struct Ranker {
    docs: Vec<Fields>,
    /// Tables holding each word.
    df: BTreeMap<String, usize>,
    graph: Vec<Vec<usize>>,
}

impl Ranker {
    pub(super) fn new(catalog: &Catalog) -> Self {
        let docs: Vec<Fields> = catalog.tables.iter().map(Fields::of).collect();
        let mut df: BTreeMap<String, usize> = BTreeMap::new();
        for doc in &docs {
            for (word, weight) in &doc.words {
                if *weight > 0.0 {
                    *df.entry(word.clone()).or_insert(0) += 1;
                }
            }
        }
        Self {
            docs,
            df,
            graph: fk_graph(catalog),
        }
    }

    /// The tables relevant to a question, best first, with the tables that connect them; then the others.
    /// The second value is how many are relevant.
    pub(super) fn ranked(&self, catalog: &Catalog, question: &str) -> (Vec<usize>, usize) {
        let query: Vec<String> = terms(question);
        let docs = &self.docs;
        let n = docs.len() as f64;
        let idf: Vec<f64> = query
            .iter()
            .map(|term| {
                let df = self.df.get(term).copied().unwrap_or(0) as f64;
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
