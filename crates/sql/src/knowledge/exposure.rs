//! Who may be shown a saved example. An example is text a person wrote after seeing rows: besides the tables and
//! columns its SQL reads (which the reader's guard judges), its literals (`order_code = 'QZKDLWPRTM'`), the names
//! it makes up (`AS "Bob Smith"`) and its question ("What did Bob Smith order?") are data of the rows the saver
//! saw. Comments are gone before an example is kept or shown ([`crate::Guard::without_comments`]).
//!
//! [`ExampleReader::may_see`] is the one decision, whatever the surface (the list of the API and the CLI, the
//! schema context every model gets): a reader whose role filters or masks no table sees every example its guard
//! allows; a reader whose role filters or masks some table does not see an example whose SQL holds values or
//! made-up names and reads a table it filters or masks (or a view, a relation the catalog does not list, or no
//! table at all), nor one whose question may name rows (a question is free text: it may name rows of any
//! table). A question names no rows when every word of it is a common word of questions about data or a word
//! of the database's tables, columns, glossary and metrics, and it has no digits; anything else is hidden, so
//! a name the vocabulary does not know (`qzkdlwprtm`, `smith`) is hidden whatever its case. Hidden, not
//! rewritten: an example is never shown with parts of it replaced.

use std::collections::BTreeSet;

use crate::catalog::{Catalog, TableKind};
use crate::context::terms;
use crate::guard::Guard;

use super::{Example, Knowledge};

/// Words of questions about data that name no row (stemmed as the question's words are, see [`terms`]); a
/// question's stop words (`how`, `many`, `the`, `name`…) are dropped before.
const COMMON: &[&str] = &[
    "about",
    "above",
    "across",
    "after",
    "again",
    "against",
    "ago",
    "along",
    "also",
    "among",
    "amount",
    "another",
    "answer",
    "anything",
    "appear",
    "approximately",
    "around",
    "ascending",
    "asked",
    "average",
    "avg",
    "back",
    "based",
    "been",
    "before",
    "being",
    "below",
    "best",
    "between",
    "bigger",
    "biggest",
    "both",
    "balance",
    "bottom",
    "breakdown",
    "but",
    "calculate",
    "can",
    "category",
    "change",
    "cheapest",
    "cnt",
    "column",
    "columns",
    "combined",
    "compare",
    "compared",
    "contain",
    "cost",
    "costs",
    "could",
    "count",
    "counts",
    "current",
    "currently",
    "daily",
    "data",
    "date",
    "dates",
    "day",
    "days",
    "decreasing",
    "descending",
    "detail",
    "details",
    "different",
    "display",
    "distinct",
    "distribution",
    "does",
    "done",
    "down",
    "during",
    "earliest",
    "either",
    "empty",
    "end",
    "entries",
    "entry",
    "equal",
    "ever",
    "every",
    "everything",
    "exactly",
    "except",
    "exist",
    "exists",
    "fewer",
    "fewest",
    "find",
    "first",
    "following",
    "frequency",
    "frequent",
    "get",
    "given",
    "greater",
    "greatest",
    "group",
    "grouped",
    "had",
    "having",
    "highest",
    "hour",
    "hours",
    "include",
    "including",
    "income",
    "increasing",
    "into",
    "its",
    "just",
    "largest",
    "last",
    "latest",
    "least",
    "less",
    "like",
    "longest",
    "lowest",
    "made",
    "make",
    "maximum",
    "max",
    "mean",
    "median",
    "minimum",
    "min",
    "minute",
    "minutes",
    "missing",
    "money",
    "month",
    "monthly",
    "months",
    "more",
    "most",
    "next",
    "none",
    "not",
    "now",
    "null",
    "only",
    "num",
    "order",
    "ordered",
    "other",
    "others",
    "our",
    "out",
    "over",
    "overall",
    "paid",
    "past",
    "pay",
    "payment",
    "per",
    "percent",
    "percentage",
    "period",
    "place",
    "previous",
    "price",
    "profit",
    "qty",
    "quantity",
    "quarter",
    "quarterly",
    "range",
    "rank",
    "ranked",
    "rate",
    "ratio",
    "record",
    "records",
    "recent",
    "result",
    "results",
    "return",
    "revenue",
    "row",
    "rows",
    "sales",
    "same",
    "second",
    "seconds",
    "share",
    "since",
    "size",
    "smallest",
    "some",
    "sort",
    "sorted",
    "spend",
    "spent",
    "status",
    "still",
    "sum",
    "table",
    "tables",
    "than",
    "them",
    "then",
    "they",
    "those",
    "three",
    "through",
    "time",
    "times",
    "today",
    "top",
    "total",
    "totals",
    "two",
    "type",
    "under",
    "unique",
    "until",
    "upon",
    "value",
    "values",
    "versus",
    "week",
    "weekly",
    "weeks",
    "whether",
    "while",
    "within",
    "without",
    "would",
    "year",
    "yearly",
    "years",
    "yesterday",
    "you",
    "your",
];

/// The words a question or an example's made-up names may use without naming rows: the common words of
/// questions about data, and the names of the database's tables and columns and the knowledge's glossary
/// terms and metric names (with their
/// synonyms). Never values: no sample, comment, description or meaning.
#[derive(Clone, Debug, Default)]
pub struct Vocabulary {
    /// Table and column names, lowercase (a table also by its last part).
    names: BTreeSet<String>,
    /// The stemmed words of all of them.
    words: BTreeSet<String>,
}

impl Vocabulary {
    /// The vocabulary of `catalog` and `knowledge`.
    pub fn new(catalog: &Catalog, knowledge: &Knowledge) -> Self {
        let mut vocabulary = Self::default();
        for word in COMMON {
            vocabulary.words.extend(terms(word));
        }
        for table in &catalog.tables {
            vocabulary.name(&table.name);
            if let Some(last) = table.name.rsplit('.').next() {
                vocabulary.name(last);
            }
            for column in &table.columns {
                vocabulary.name(&column.name);
            }
        }
        for entry in &knowledge.glossary {
            for phrase in std::iter::once(&entry.term).chain(&entry.synonyms) {
                vocabulary.words.extend(terms(phrase));
            }
        }
        for (name, metric) in &knowledge.metrics {
            for phrase in std::iter::once(name).chain(&metric.synonyms) {
                vocabulary.words.extend(terms(phrase));
            }
        }
        vocabulary
    }

    fn name(&mut self, name: &str) {
        self.names.insert(name.to_lowercase());
        self.words.extend(terms(name));
    }

    /// Whether a name an example's SQL uses names no row: a table or column, a short alias (`o`, `c2`), or
    /// words of the vocabulary (`order_count`).
    fn knows_name(&self, name: &str) -> bool {
        name.chars().count() <= 2 || self.names.contains(name) || self.knows_words(name)
    }

    /// Whether every word of `text` is of the vocabulary.
    fn knows_words(&self, text: &str) -> bool {
        terms(text).iter().all(|w| self.words.contains(w))
    }
}

/// What a saved example holds, found once: its SQL without comments, the relations it reads, and whether its
/// SQL and its question hold data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExampleFacts {
    /// The example as it is shown: its SQL without comments.
    example: Example,
    /// The relations its SQL reads, by their last name part, lowercase.
    tables: Vec<String>,
    /// Its SQL holds values or made-up names.
    values: bool,
    /// Its question may name rows.
    question_names_rows: bool,
}

impl ExampleFacts {
    /// The facts of `example`, read with the database's `guard`, its names judged by `vocabulary`; an error
    /// saying why when its SQL cannot be read safely (see [`Guard::without_comments`]).
    pub fn of(example: &Example, guard: &Guard, vocabulary: &Vocabulary) -> Result<Self, String> {
        let sql = guard.without_comments(&example.sql)?;
        let sql = sql.trim_end_matches(';').trim_end().to_owned();
        let tables = guard.check(&sql).tables.iter().map(|t| key(t)).collect();
        let values = guard
            .free_text(&sql)
            .is_none_or(|said| said.values || !said.names.iter().all(|n| vocabulary.knows_name(n)));
        let question = &example.question;
        let question_names_rows =
            question.chars().any(|c| c.is_numeric()) || !vocabulary.knows_words(question);
        Ok(Self {
            example: Example {
                question: question.clone(),
                sql,
            },
            tables,
            values,
            question_names_rows,
        })
    }

    /// The example as it is shown: its SQL without comments.
    pub fn example(&self) -> &Example {
        &self.example
    }

    /// Whether it holds data of rows: values or made-up names in its SQL, or a question that may name rows.
    pub fn holds_data(&self) -> bool {
        self.values || self.question_names_rows
    }
}

/// The rows a reader sees, as far as examples are concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowAccess {
    /// Every row and value of the tables it may read: no row filter, no mask.
    All,
    /// The rows of some tables are filtered, or some of their columns masked.
    Limited {
        /// The tables filtered or masked, by their last name part, lowercase.
        scoped: BTreeSet<String>,
        /// The catalog's plain tables (not views), by their last name part, lowercase: a relation not among
        /// them may read a scoped table.
        plain: BTreeSet<String>,
    },
    /// Nothing (its access could not be worked out).
    Nothing,
}

impl RowAccess {
    /// The access of a reader whose role filters or masks `scoped` (lowercase last name parts), over `catalog`.
    pub fn limited(scoped: BTreeSet<String>, catalog: &Catalog) -> Self {
        if scoped.is_empty() {
            return Self::All;
        }
        let plain = catalog
            .tables
            .iter()
            .filter(|t| t.kind == TableKind::Table)
            .map(|t| key(&t.name))
            .collect();
        Self::Limited { scoped, plain }
    }
}

/// A reader of examples: its guard (the tables and columns it may read) and the rows it sees.
#[derive(Clone, Debug)]
pub struct ExampleReader {
    guard: Guard,
    rows: RowAccess,
}

impl ExampleReader {
    /// A reader with `guard` that sees `rows`.
    pub fn new(guard: Guard, rows: RowAccess) -> Self {
        Self { guard, rows }
    }

    /// A reader with `guard` whose rows nothing filters.
    pub fn everything(guard: Guard) -> Self {
        Self::new(guard, RowAccess::All)
    }

    /// The reader's guard.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// What rows it sees.
    pub fn rows(&self) -> &RowAccess {
        &self.rows
    }

    /// Whether the reader may be shown the saved example of `facts` (the module's rule): its guard allows the
    /// SQL, and the example holds no data of rows the reader does not see.
    pub fn may_see(&self, facts: &ExampleFacts) -> bool {
        let (scoped, plain) = match &self.rows {
            RowAccess::Nothing => return false,
            RowAccess::All => (None, None),
            RowAccess::Limited { scoped, plain } => (Some(scoped), Some(plain)),
        };
        if !self.guard.check(&facts.example.sql).allowed {
            return false;
        }
        let (Some(scoped), Some(plain)) = (scoped, plain) else {
            return true;
        };
        if facts.question_names_rows {
            return false;
        }
        // Values are data of the rows of the relations read: hidden when one of them may be filtered or masked.
        let touches = facts.tables.is_empty()
            || facts
                .tables
                .iter()
                .any(|t| scoped.contains(t) || !plain.contains(t));
        !(facts.values && touches)
    }
}

/// A relation's name as the scope keys it: its last part, unquoted, lowercase.
fn key(name: &str) -> String {
    name.rsplit('.')
        .next()
        .unwrap_or(name)
        .trim_matches(['"', '`', '[', ']'])
        .to_ascii_lowercase()
}
