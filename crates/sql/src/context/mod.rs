//! Schema context: compact DDL-like text with keys, foreign keys and sample values, within a token budget.
//!
//! Given a question, tables are ranked lexically (names, comments and sample values, with snake_case and
//! camelCase split and light stemming, weighted by how rare each word is across tables, with namespaces and
//! joins: see `rank`); the tables on the join paths that connect the chosen ones are added, and join hints
//! close the text. When the relevant tables do not all fit, the best few are shown in full (within half the
//! budget) and the others compactly (keys and the columns the question names), so that more of them fit.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use steward_core::estimate_tokens;

use crate::catalog::{Catalog, Table};

/// The schema text for a model, and what it holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaContext {
    /// The tables described, in the order they appear.
    pub tables: Vec<String>,
    /// The estimated tokens of `text`.
    pub tokens: usize,
    /// The text.
    pub text: String,
    /// The glossary terms it explains (see `knowledge_context`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub glossary: Vec<String>,
    /// The metrics it defines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<String>,
    /// The questions of the verified examples it shows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// It shows examples that people saved (between `<data>` tags): data from outside the run, so a run whose
    /// instructions hold it starts tainted by [`SAVED_EXAMPLES`], as if a tool had read them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub saved: bool,
}

/// The source of the examples people saved, as a run tainted by them names it.
pub const SAVED_EXAMPLES: &str = "saved examples";

mod rank;
mod render;

use rank::Ranker;
pub(crate) use rank::terms;
use render::{join_hints, render_table};

/// Builds the schema context of `catalog` for `question` (or the whole schema), within `budget` tokens.
pub fn schema_context(catalog: &Catalog, question: Option<&str>, budget: usize) -> SchemaContext {
    ContextIndex::new(catalog).context(question, budget)
}

/// A catalog prepared for [`schema_context`]: the words of every table and the foreign-key graph, read once,
/// for callers that build many contexts of one catalog (a benchmark, a server answering many questions).
pub struct ContextIndex<'a> {
    catalog: &'a Catalog,
    ranker: std::sync::OnceLock<Ranker>,
    /// Per table, the fewest tokens its text can take (its `CREATE TABLE name (` and `);` lines).
    floor: Vec<usize>,
    /// Per table, the tokens of its full text.
    full: Vec<usize>,
}

/// Under budget pressure, how many of the best tables are still shown in full.
const FULL_TABLES: usize = 2;
/// Under budget pressure, the share of the budget the tables shown in full may take.
const FULL_SHARE: f64 = 0.5;

impl<'a> ContextIndex<'a> {
    /// Prepares `catalog` (the ranking's words are read on the first question).
    pub fn new(catalog: &'a Catalog) -> Self {
        let floor = catalog
            .tables
            .iter()
            .map(|t| estimate_tokens(&format!("CREATE TABLE {} (\n);\n", t.name)))
            .collect();
        let full = catalog
            .tables
            .iter()
            .map(|t| estimate_tokens(&render_table(catalog.dialect, t, None)))
            .collect();
        Self {
            catalog,
            ranker: std::sync::OnceLock::new(),
            floor,
            full,
        }
    }

    /// The ranking's words and joins, read on the first question.
    fn ranker(&self) -> &Ranker {
        self.ranker.get_or_init(|| Ranker::new(self.catalog))
    }

    /// The tables in the order the schema context considers them for `question`: the relevant ones best
    /// first (with the tables that connect them), then the others.
    pub fn ranking(&self, question: &str) -> Vec<&'a str> {
        let catalog = self.catalog;
        let (order, _) = self.ranker().ranked(catalog, question);
        order
            .into_iter()
            .map(|i| catalog.tables[i].name.as_str())
            .collect()
    }

    /// The schema context for `question` (or the whole schema), within `budget` tokens: the same as
    /// [`schema_context`].
    pub fn context(&self, question: Option<&str>, budget: usize) -> SchemaContext {
        let catalog = self.catalog;
        let ranked = question.is_some_and(|q| !q.trim().is_empty());
        let (order, relevant) = match question.map(str::trim).filter(|q| !q.is_empty()) {
            Some(q) => self.ranker().ranked(catalog, q),
            None => ((0..catalog.tables.len()).collect(), catalog.tables.len()),
        };
        let terms: BTreeSet<String> = question
            .map(terms)
            .unwrap_or_default()
            .into_iter()
            .collect();
        // The full text's tokens of the relevant tables from each position on.
        let mut left = vec![0usize; relevant + 1];
        for position in (0..relevant).rev() {
            left[position] = left[position + 1] + self.full[order[position]];
        }
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
            if tokens + self.floor[i] > budget {
                // Not even the table's shortest text fits.
                continue;
            }
            let table = &catalog.tables[i];
            // Under budget pressure (the relevant tables left would not all fit in full), only the best few
            // are shown in full, and only within a share of the budget (one wide table must not crowd out a
            // small budget); the others compactly (keys and the columns the question names), so that more of
            // them fit.
            let pressed = ranked
                && position < relevant
                && tokens + left[position] > budget
                && (position >= FULL_TABLES
                    || (tokens + self.full[i]) as f64 > FULL_SHARE * budget as f64);
            // Room is kept for the join hints of the tables shown so far with this one: a table is not worth
            // the joins that say how to reach the others.
            let hints = if ranked && position < relevant {
                let mut with = included.clone();
                with.push(i);
                estimate_tokens(&join_hints(catalog, &with))
            } else {
                0
            };
            let block = if !pressed && tokens + self.full[i] + hints <= budget {
                render_table(catalog.dialect, table, None)
            } else {
                let compact = render_table(catalog.dialect, table, Some(&terms));
                if tokens + estimate_tokens(&compact) + hints > budget {
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
            glossary: Vec::new(),
            metrics: Vec::new(),
            examples: Vec::new(),
            saved: false,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Column, ForeignKey, TableKind};
    use crate::dialect::Dialect;

    fn col(name: &str, samples: &[&str]) -> Column {
        Column {
            name: name.into(),
            data_type: "TEXT".into(),
            nullable: true,
            default: None,
            comment: None,
            samples: samples.iter().collect(),
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
    fn a_name_that_abbreviates_the_question_ranks_first() {
        let mut tables: Vec<Table> = (0..30)
            .map(|i| {
                table(
                    &format!("audit_{i}"),
                    vec![col("event_id", &[]), col("payload", &[])],
                    vec![],
                )
            })
            .collect();
        tables.push(table(
            "cust_addr",
            vec![col("cust_id", &[]), col("street", &[])],
            vec![],
        ));
        let catalog = Catalog::new(Dialect::Sqlite, tables);
        let index = ContextIndex::new(&catalog);
        // `cust` begins `customer` and `addr` begins `address`, and nothing else matches; a word one letter
        // longer is no abbreviation (`event`, `events`).
        assert_eq!(
            index.ranking("Where do our customers live? Their address, please.")[0],
            "cust_addr"
        );
        assert!(!rank::abbreviates("event", "events"));
        assert!(rank::abbreviates("desc", "description"));
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
