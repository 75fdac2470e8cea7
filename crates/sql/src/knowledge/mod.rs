//! Business knowledge: what a team teaches the model about its data beyond the schema — descriptions of
//! tables and columns, a glossary of its words ("active customer"), metrics with their SQL ("revenue" is
//! `SUM(orders.total)` over shipped orders) and verified examples (a question with the SQL that answered it).
//!
//! [`Knowledge`] is plain data (the `knowledge:` section of `steward.yaml`). [`Knowledge::checks`] turns every
//! SQL fragment into a statement the guard and the database can check at load; [`knowledge_context`] puts
//! what a question needs into its schema context: the glossary entries and metrics whose words it uses, and
//! the verified examples most like it (see [`ExampleIndex`]), each only when the reader may run its SQL — and
//! a saved one only when it holds no data of rows the reader does not see (see [`ExampleReader::may_see`]).
//!
//! The statements built here are only ever checked (guard, prepare), never run: the model reads the fragments
//! and writes its own SQL, which goes through the guard like any other.

mod exposure;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use steward_core::estimate_tokens;

use crate::catalog::Catalog;
use crate::context::{ContextIndex, SchemaContext, terms};
use crate::guard::Guard;

pub use exposure::{ExampleFacts, ExampleReader, RowAccess, Vocabulary};

/// The `knowledge:` section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Knowledge {
    /// Descriptions of tables and their columns, by table name (they replace the database's comments).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tables: BTreeMap<String, TableNote>,
    /// The team's words and what they mean.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub glossary: Vec<GlossaryEntry>,
    /// Named measures with their SQL.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, Metric>,
    /// Questions with the SQL that answers them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Example>,
}

/// What a table and its columns are.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableNote {
    /// The table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its columns, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub columns: BTreeMap<String, String>,
}

/// One word of the business.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GlossaryEntry {
    /// The word or phrase ("active customer").
    pub term: String,
    /// What it means, in words.
    pub meaning: String,
    /// Other words for it, which select it as well.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synonyms: Vec<String>,
    /// How to say it in SQL: a condition or expression over qualified columns
    /// (`customers.last_order >= CURRENT_DATE - 90`), or a whole query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
}

/// A named measure.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metric {
    /// Its aggregate expression over qualified columns: `SUM(orders.total)`.
    pub sql: String,
    /// The condition its rows meet: `orders.status = 'shipped'`.
    #[serde(default, rename = "where", skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// The columns it is usually broken down by: `orders.ordered_at`, `customers.country`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dimensions: Vec<String>,
    /// What it measures, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Other words for it, which select it as well ("sales", "turnover").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synonyms: Vec<String>,
}

/// A question with the SQL that answers it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Example {
    /// The question.
    pub question: String,
    /// The query that answers it.
    pub sql: String,
}

/// A statement that stands for one SQL fragment of the knowledge, to be checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnowledgeCheck {
    /// Where the fragment is, as keys below `knowledge` (`["metrics", "revenue", "sql"]`,
    /// `["examples", "2", "sql"]`: a number is an item of a list).
    pub path: Vec<String>,
    /// The statement: the query itself, or `SELECT <fragment> FROM <its tables> [WHERE <condition>]`.
    pub sql: String,
    /// Why it cannot be checked or is refused already (an unknown table or column, the guard's reasons).
    pub problem: Option<String>,
}

impl Knowledge {
    /// Whether there is nothing in it.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
            && self.glossary.is_empty()
            && self.metrics.is_empty()
            && self.examples.is_empty()
    }

    /// Adds `other` to this knowledge: its table and column descriptions, glossary entries (by term) and metrics
    /// (by name) replace those of the same name; its examples are added unless already there.
    pub fn merge(&mut self, other: Knowledge) {
        for (table, note) in other.tables {
            let mine = self.tables.entry(table).or_default();
            if note.description.is_some() {
                mine.description = note.description;
            }
            mine.columns.extend(note.columns);
        }
        for entry in other.glossary {
            match self
                .glossary
                .iter_mut()
                .find(|e| e.term.eq_ignore_ascii_case(&entry.term))
            {
                Some(mine) => *mine = entry,
                None => self.glossary.push(entry),
            }
        }
        self.metrics.extend(other.metrics);
        for example in other.examples {
            if !self.examples.contains(&example) {
                self.examples.push(example);
            }
        }
    }

    /// `catalog` with the descriptions of `tables` as its tables' and columns' comments.
    pub fn annotate(&self, catalog: &Catalog) -> Catalog {
        let mut annotated = catalog.clone();
        for table in &mut annotated.tables {
            let Some(note) = self.note_of(&table.name) else {
                continue;
            };
            if let Some(description) = &note.description {
                table.comment = Some(description.clone());
            }
            for column in &mut table.columns {
                if let Some((_, text)) = note
                    .columns
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(&column.name))
                {
                    column.comment = Some(text.as_str().into());
                }
            }
        }
        annotated
    }

    fn note_of(&self, table: &str) -> Option<&TableNote> {
        self.tables
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(table))
            .map(|(_, note)| note)
    }

    /// Every SQL fragment as a statement to check, and what is wrong already: descriptions of tables or
    /// columns `catalog` lacks, fragments that name no table, statements the guard refuses.
    pub fn checks(&self, guard: &Guard, catalog: &Catalog) -> Vec<KnowledgeCheck> {
        let mut out = Vec::new();
        for (table, note) in &self.tables {
            let path = |tail: &[&str]| {
                let mut p = vec!["tables".to_owned(), table.clone()];
                p.extend(tail.iter().map(|s| (*s).to_owned()));
                p
            };
            let Some(known) = catalog.table(table) else {
                out.push(KnowledgeCheck {
                    path: path(&[]),
                    sql: String::new(),
                    problem: Some(format!(
                        "the database has no table `{table}`; compare with `steward schema`"
                    )),
                });
                continue;
            };
            for column in note.columns.keys() {
                if !known
                    .columns
                    .iter()
                    .any(|c| c.name.eq_ignore_ascii_case(column))
                {
                    out.push(KnowledgeCheck {
                        path: path(&["columns", column]),
                        sql: String::new(),
                        problem: Some(format!(
                            "the table `{table}` has no column `{column}` (it has {})",
                            known
                                .columns
                                .iter()
                                .map(|c| c.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                    });
                }
            }
        }
        for (i, entry) in self.glossary.iter().enumerate() {
            if let Some(sql) = &entry.sql {
                out.push(fragment_check(
                    guard,
                    catalog,
                    vec!["glossary".into(), i.to_string(), "sql".into()],
                    sql,
                    None,
                ));
            }
        }
        for (name, metric) in &self.metrics {
            out.push(fragment_check(
                guard,
                catalog,
                vec!["metrics".into(), name.clone(), "sql".into()],
                &metric.sql,
                metric.filter.as_deref(),
            ));
            for (i, dimension) in metric.dimensions.iter().enumerate() {
                out.push(fragment_check(
                    guard,
                    catalog,
                    vec![
                        "metrics".into(),
                        name.clone(),
                        "dimensions".into(),
                        i.to_string(),
                    ],
                    dimension,
                    None,
                ));
            }
        }
        for (i, example) in self.examples.iter().enumerate() {
            out.push(query_check(
                guard,
                vec!["examples".into(), i.to_string(), "sql".into()],
                &example.sql,
            ));
        }
        out
    }
}

/// A whole query, checked as it is.
fn query_check(guard: &Guard, path: Vec<String>, sql: &str) -> KnowledgeCheck {
    let verdict = guard.check(sql);
    KnowledgeCheck {
        path,
        sql: sql.to_owned(),
        problem: (!verdict.allowed).then(|| {
            format!(
                "the guard refuses this query: {}",
                verdict.explanation().trim()
            )
        }),
    }
}

/// A fragment (an expression or condition over qualified columns, or a whole query) as a statement over the
/// tables it names.
fn fragment_check(
    guard: &Guard,
    catalog: &Catalog,
    path: Vec<String>,
    fragment: &str,
    filter: Option<&str>,
) -> KnowledgeCheck {
    if is_statement(fragment) && filter.is_none() {
        return query_check(guard, path, fragment);
    }
    // A fragment is shown to the model on a comment line: a comment in it would hide what follows.
    if [Some(fragment), filter]
        .into_iter()
        .flatten()
        .any(|f| f.contains("--") || f.contains("/*"))
    {
        return KnowledgeCheck {
            path,
            sql: String::new(),
            problem: Some(format!(
                "`{}` holds a comment (`--` or `/*`); write the fragment without comments",
                one_line(fragment)
            )),
        };
    }
    let mut names = guard.names(fragment);
    if let Some(filter) = filter {
        names.extend(guard.names(filter));
    }
    let tables = tables_named(catalog, &names);
    if tables.is_empty() {
        return KnowledgeCheck {
            path,
            sql: String::new(),
            problem: Some(format!(
                "`{}` names no table of the database; qualify its columns with their table (orders.total)",
                fragment.trim()
            )),
        };
    }
    let mut sql = format!("SELECT {} FROM {}", fragment.trim(), tables.join(", "));
    if let Some(filter) = filter {
        sql.push_str(" WHERE ");
        sql.push_str(filter.trim());
    }
    let mut check = query_check(guard, path, &sql);
    if let Some(problem) = &mut check.problem {
        *problem = format!("{problem} (checked as: {sql})");
    }
    check
}

/// Whether a fragment is a whole statement (a query, or a statement the guard will refuse as what it is).
fn is_statement(fragment: &str) -> bool {
    let head = fragment
        .trim_start()
        .trim_start_matches('(')
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    // Not words that also begin expressions (`REPLACE(…)`): those are checked as fragments, and a statement
    // among them fails to parse there.
    [
        "select", "with", "values", "insert", "update", "delete", "drop", "create", "alter",
        "truncate", "merge", "grant", "revoke", "pragma", "attach", "explain",
    ]
    .contains(&head.as_str())
}

/// The catalog's tables among `names` (lowercase words of a fragment), as the catalog writes them.
fn tables_named(catalog: &Catalog, names: &[String]) -> Vec<String> {
    let words: BTreeSet<&str> = names.iter().map(String::as_str).collect();
    catalog
        .tables
        .iter()
        .filter(|t| {
            let short = t.name.rsplit('.').next().unwrap_or(&t.name);
            words.contains(t.name.to_ascii_lowercase().as_str())
                || words.contains(short.to_ascii_lowercase().as_str())
        })
        .map(|t| t.name.clone())
        .collect()
}

/// Whether the words of `phrase` all occur among `words` (a question's terms).
fn uses(words: &BTreeSet<String>, phrase: &str) -> bool {
    let needed = terms(phrase);
    !needed.is_empty() && needed.iter().all(|t| words.contains(t))
}

impl GlossaryEntry {
    /// Whether `words` (a question's terms) use its term or a synonym.
    fn used_by(&self, words: &BTreeSet<String>) -> bool {
        std::iter::once(&self.term)
            .chain(&self.synonyms)
            .any(|phrase| uses(words, phrase))
    }

    fn render(&self) -> String {
        let mut line = format!("-- {}", self.term.trim());
        if !self.synonyms.is_empty() {
            line.push_str(&format!(" (also: {})", self.synonyms.join(", ")));
        }
        line.push_str(&format!(": {}", one_line(&self.meaning)));
        if let Some(sql) = &self.sql {
            line.push_str(&format!(" SQL: {}", one_line(sql)));
        }
        line.push('\n');
        line
    }
}

impl Metric {
    fn used_by(&self, name: &str, words: &BTreeSet<String>) -> bool {
        std::iter::once(name)
            .chain(self.synonyms.iter().map(String::as_str))
            .any(|phrase| uses(words, phrase))
    }

    fn render(&self, name: &str, dimensions: &[&str]) -> String {
        let mut line = format!("-- {name} = {}", one_line(&self.sql));
        if let Some(filter) = &self.filter {
            line.push_str(&format!(" WHERE {}", one_line(filter)));
        }
        if !dimensions.is_empty() {
            line.push_str(&format!("; by {}", dimensions.join(", ")));
        }
        if let Some(description) = &self.description {
            line.push_str(&format!(" ({})", one_line(description)));
        }
        line.push('\n');
        line
    }

    /// Its SQL as one statement, for the reader's check.
    fn statement(&self, catalog: &Catalog, guard: &Guard) -> String {
        fragment_check(
            guard,
            catalog,
            Vec::new(),
            &self.sql,
            self.filter.as_deref(),
        )
        .sql
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Verified examples prepared for ranking against questions: each one's question terms and the tables its
/// SQL reads.
pub struct ExampleIndex {
    examples: Vec<Example>,
    words: Vec<BTreeSet<String>>,
    tables: Vec<Vec<String>>,
    /// The shape cues of each one's question (see [`shape_cues`]).
    shapes: Vec<BTreeSet<&'static str>>,
    /// How rare each word is among the examples' questions (inverse document frequency).
    idf: HashMap<String, f64>,
}

/// What a matching table adds to an example's score, relative to a question word.
const TABLE_WEIGHT: f64 = 0.5;
/// What a shared shape cue adds to an example's score, relative to a question word.
const SHAPE_WEIGHT: f64 = 1.0;

/// Phrases that tell the kind of query a question asks for (a count, an average, a grouping, a negation),
/// each with its cue: words a question's terms drop as stop words, though they tell an example's shape.
const SHAPE_CUES: &[(&str, &str)] = &[
    ("how many", "count"),
    ("number of", "count"),
    ("count", "count"),
    ("average", "avg"),
    ("mean", "avg"),
    ("total", "sum"),
    ("sum", "sum"),
    ("maximum", "max"),
    ("highest", "max"),
    ("most", "max"),
    ("largest", "max"),
    ("minimum", "min"),
    ("lowest", "min"),
    ("least", "min"),
    ("smallest", "min"),
    ("each", "group"),
    ("per", "group"),
    ("every", "group"),
    ("order", "order"),
    ("sort", "order"),
    ("ascending", "order"),
    ("descending", "order"),
    ("not", "not"),
    ("without", "not"),
    ("never", "not"),
    ("both", "both"),
    ("either", "either"),
    ("more than", "compare"),
    ("less than", "compare"),
    ("greater", "compare"),
    ("fewer", "compare"),
    ("at least", "compare"),
    ("distinct", "distinct"),
    ("different", "distinct"),
];

/// The shape cues of a question (see [`SHAPE_CUES`]).
fn shape_cues(question: &str) -> BTreeSet<&'static str> {
    let words: Vec<String> = question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let text = format!(" {} ", words.join(" "));
    SHAPE_CUES
        .iter()
        .filter(|(phrase, _)| {
            text.contains(&format!(" {phrase} ")) || text.contains(&format!(" {phrase}s "))
        })
        .map(|(_, cue)| *cue)
        .collect()
}

impl ExampleIndex {
    /// Indexes `examples`; `guard` reads the tables each one's SQL reads.
    pub fn new(examples: &[Example], guard: &Guard) -> Self {
        let words: Vec<BTreeSet<String>> = examples
            .iter()
            .map(|e| terms(&e.question).into_iter().collect())
            .collect();
        let tables = examples
            .iter()
            .map(|e| {
                guard
                    .check(&e.sql)
                    .tables
                    .iter()
                    .map(|t| t.to_ascii_lowercase())
                    .collect()
            })
            .collect();
        let mut counts: HashMap<String, usize> = HashMap::new();
        for set in &words {
            for word in set {
                *counts.entry(word.clone()).or_default() += 1;
            }
        }
        let n = examples.len() as f64;
        let idf = counts
            .into_iter()
            .map(|(word, count)| (word, ((n + 1.0) / (count as f64 + 0.5)).ln() + 1.0))
            .collect();
        let shapes = examples.iter().map(|e| shape_cues(&e.question)).collect();
        Self {
            examples: examples.to_vec(),
            words,
            tables,
            shapes,
            idf,
        }
    }

    /// The examples most like `question`, best first, with their scores (only those sharing a word or a
    /// table with it): the rarer the shared words the better, and a table the question's context ranks
    /// relevant (`tables`) counts too.
    pub fn ranked(&self, question: &str, tables: &[&str]) -> Vec<(usize, f64)> {
        let asked: BTreeSet<String> = terms(question).into_iter().collect();
        let relevant: BTreeSet<String> = tables.iter().map(|t| t.to_ascii_lowercase()).collect();
        let cues = shape_cues(question);
        let mut scored: Vec<(usize, f64)> = self
            .examples
            .iter()
            .enumerate()
            .map(|(i, _)| {
                let shared: f64 = self.words[i]
                    .intersection(&asked)
                    .map(|w| self.idf.get(w).copied().unwrap_or(1.0))
                    .sum();
                let length = (self.words[i].len().max(1) as f64).sqrt();
                let lexical = shared / length;
                let touching = self.tables[i]
                    .iter()
                    .filter(|t| relevant.contains(*t))
                    .count() as f64;
                let table = if self.tables[i].is_empty() {
                    0.0
                } else {
                    TABLE_WEIGHT * touching / self.tables[i].len() as f64
                };
                let shape = SHAPE_WEIGHT * self.shapes[i].intersection(&cues).count() as f64
                    / (self.shapes[i].len().max(1) as f64).sqrt();
                let score = if shared > 0.0 || shape > 0.0 {
                    lexical + table + shape
                } else {
                    0.0
                };
                (i, score)
            })
            .filter(|(_, score)| *score > 0.0)
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored
    }

    /// The example at `i`.
    pub fn example(&self, i: usize) -> &Example {
        &self.examples[i]
    }

    /// How many examples it holds.
    pub fn len(&self) -> usize {
        self.examples.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.examples.is_empty()
    }
}

/// The verified examples a context chooses from, indexed once: the operator's (the knowledge's own) first,
/// then those users saved. Build it when either changes, not for every question.
pub struct ExamplePool {
    index: ExampleIndex,
    /// How many of the first examples are the operator's.
    operators: usize,
    /// The facts of each saved one (those after the operator's), in order.
    facts: Vec<ExampleFacts>,
}

impl ExamplePool {
    /// The pool of `knowledge`'s examples and `saved` (those already among the operator's left out); `guard`
    /// reads the tables each one's SQL reads. The saved ones are judged against an empty vocabulary (every
    /// question with a word of its own may name rows); see [`ExamplePool::with_vocabulary`].
    pub fn new(knowledge: &Knowledge, saved: &[Example], guard: &Guard) -> Self {
        Self::with_vocabulary(knowledge, saved, guard, &Vocabulary::default())
    }

    /// [`ExamplePool::new`], the saved examples' questions and names judged against `vocabulary` (the
    /// database's). A saved example is held without its comments; one whose SQL cannot be read safely is left
    /// out.
    pub fn with_vocabulary(
        knowledge: &Knowledge,
        saved: &[Example],
        guard: &Guard,
        vocabulary: &Vocabulary,
    ) -> Self {
        let mut all = knowledge.examples.clone();
        let operators = all.len();
        let mut facts = Vec::new();
        for example in saved {
            let Ok(found) = ExampleFacts::of(example, guard, vocabulary) else {
                continue;
            };
            if !all.contains(found.example()) {
                all.push(found.example().clone());
                facts.push(found);
            }
        }
        Self {
            index: ExampleIndex::new(&all, guard),
            operators,
            facts,
        }
    }

    /// Whether `reader` may be shown the example at `i`: an operator's when its guard allows the SQL, a saved
    /// one as [`ExampleReader::may_see`] decides.
    fn shown_to(&self, i: usize, reader: &ExampleReader) -> bool {
        match i.checked_sub(self.operators) {
            None => reader.guard().check(&self.index.example(i).sql).allowed,
            Some(saved) => self.facts.get(saved).is_some_and(|f| reader.may_see(f)),
        }
    }
}

/// What encloses the examples users saved: data, whose text is never instructions.
const SAVED_OPEN: &str = "<data source=\"saved examples\">\n";
const SAVED_CLOSE: &str = "</data>\n";

/// Most verified examples shown for a question.
pub const EXAMPLES_SHOWN: usize = 3;
/// The share of the budget the knowledge may take before the tables.
const KNOWLEDGE_SHARE: f64 = 0.4;

/// The schema context of `catalog` for `question` (or the whole schema) with the knowledge it needs, within
/// `budget` tokens: the glossary entries and metrics whose words (or synonyms) the question uses — all of
/// them without a question —, then the [`EXAMPLES_SHOWN`] verified examples most like it (`knowledge`'s own
/// and `examples`), then the tables, ranked for the question with the matched entries' SQL (so a synonym steers
/// retrieval too). `reader` is the reader's guard and rows: an entry, metric, dimension or example whose SQL its
/// guard refuses (a table or column the reader may not read) is never shown, nor a saved example holding data of
/// rows it does not see ([`ExampleReader::may_see`]); a fragment's statement is built over `full`, the whole
/// catalog, so that a table the reader does not see is in it and refused. `catalog` is the reader's view, with the
/// table descriptions applied ([`Knowledge::annotate`]) before it was limited. The examples of `knowledge` are the
/// operator's, those of `examples` after them were saved by users and are shown as data (between `<data>` tags,
/// never instructions).
pub fn knowledge_context(
    catalog: &Catalog,
    full: &Catalog,
    knowledge: &Knowledge,
    examples: &ExamplePool,
    question: Option<&str>,
    budget: usize,
    reader: &ExampleReader,
) -> SchemaContext {
    let guard = reader.guard();
    let question = question.map(str::trim).filter(|q| !q.is_empty());
    let words: BTreeSet<String> = question
        .map(terms)
        .unwrap_or_default()
        .into_iter()
        .collect();
    let readable = |sql: &str| guard.check(sql).allowed;
    let glossary: Vec<&GlossaryEntry> = knowledge
        .glossary
        .iter()
        .filter(|e| question.is_none() || e.used_by(&words))
        .filter(|e| {
            e.sql
                .as_deref()
                .is_none_or(|sql| readable(&fragment_check(guard, full, Vec::new(), sql, None).sql))
        })
        .collect();
    let metrics: Vec<(&str, &Metric, Vec<&str>)> = knowledge
        .metrics
        .iter()
        .filter(|(name, m)| question.is_none() || m.used_by(name, &words))
        .filter(|(_, m)| readable(&m.statement(full, guard)))
        .map(|(name, m)| {
            // Only the dimensions the reader may read are named.
            let dimensions: Vec<&str> = m
                .dimensions
                .iter()
                .filter(|d| readable(&fragment_check(guard, full, Vec::new(), d, None).sql))
                .map(String::as_str)
                .collect();
            (name.as_str(), m, dimensions)
        })
        .collect();
    // The question as the tables are ranked for it: with the SQL and meaning of what it uses.
    let steered = question.map(|q| {
        let mut text = q.to_owned();
        for entry in &glossary {
            text.push(' ');
            text.push_str(&entry.meaning);
            if let Some(sql) = &entry.sql {
                text.push(' ');
                text.push_str(sql);
            }
        }
        for (_, metric, _) in &metrics {
            text.push(' ');
            text.push_str(&metric.sql);
            if let Some(filter) = &metric.filter {
                text.push(' ');
                text.push_str(filter);
            }
        }
        text
    });
    let index = ContextIndex::new(catalog);
    let chosen: Vec<(&Example, bool)> = match (question, &steered) {
        (Some(question), Some(steered)) if !examples.index.is_empty() => {
            // Words of the question itself; the tables its steered ranking puts first. The reader's guard
            // judges the best first, until enough are found: not every example for every question.
            let ranking = index.ranking(steered);
            let top: Vec<&str> = ranking.into_iter().take(5).collect();
            examples
                .index
                .ranked(question, &top)
                .into_iter()
                .filter(|(i, _)| examples.shown_to(*i, reader))
                .map(|(i, _)| (examples.index.example(i), i < examples.operators))
                .take(EXAMPLES_SHOWN)
                .collect()
        }
        _ => Vec::new(),
    };

    let cap = (budget as f64 * KNOWLEDGE_SHARE) as usize;
    let mut block = String::new();
    let mut shown = Shown::default();
    let fits = |block: &str, more: &str| estimate_tokens(block) + estimate_tokens(more) <= cap;
    if !glossary.is_empty() {
        let mut part = String::from("-- Glossary (the business's words):\n");
        for entry in &glossary {
            let line = entry.render();
            if fits(&format!("{block}{part}"), &line) {
                part.push_str(&line);
                shown.glossary.push(entry.term.clone());
            }
        }
        if !shown.glossary.is_empty() {
            block.push_str(&part);
        }
    }
    if !metrics.is_empty() {
        let mut part = String::from("-- Metrics (compute them exactly so):\n");
        for (name, metric, dimensions) in &metrics {
            let line = metric.render(name, dimensions);
            if fits(&format!("{block}{part}"), &line) {
                part.push_str(&line);
                shown.metrics.push((*name).to_owned());
            }
        }
        if !shown.metrics.is_empty() {
            block.push_str(&part);
        }
    }
    if !chosen.is_empty() {
        let mut part = String::from(
            "-- Verified examples (questions answered right before, with their SQL):\n",
        );
        // The operator's examples as they are; those users saved as data: their text is not instructions.
        let mut saved = String::new();
        for (example, operators) in &chosen {
            let text = format!(
                "-- Q: {}\n{};\n",
                one_line(&example.question),
                example.sql.trim().trim_end_matches(';').trim_end()
            );
            let text = if *operators {
                text
            } else {
                steward_core::data::escape(&text).into_owned()
            };
            let wrapper = if *operators || !saved.is_empty() {
                0
            } else {
                estimate_tokens(SAVED_OPEN) + estimate_tokens(SAVED_CLOSE)
            };
            if estimate_tokens(&format!("{block}{part}{saved}{text}")) + wrapper <= cap {
                if *operators {
                    part.push_str(&text);
                } else {
                    saved.push_str(&text);
                }
                shown.examples.push(example.question.clone());
            }
        }
        if !saved.is_empty() {
            shown.saved = true;
            part.push_str(SAVED_OPEN);
            part.push_str(&saved);
            part.push_str(SAVED_CLOSE);
        }
        if !shown.examples.is_empty() {
            block.push_str(&part);
        }
    }
    let used = estimate_tokens(&block);
    let mut context = index.context(steered.as_deref(), budget.saturating_sub(used));
    if !block.is_empty() {
        context.text.push_str(&block);
        context.tokens += used;
    }
    context.glossary = shown.glossary;
    context.metrics = shown.metrics;
    context.examples = shown.examples;
    context.saved = shown.saved;
    context
}

#[derive(Default)]
struct Shown {
    glossary: Vec<String>,
    metrics: Vec<String>,
    examples: Vec<String>,
    /// Examples people saved are among them.
    saved: bool,
}

#[cfg(test)]
mod tests;
