//! Scoring a data set question by question: each question's database opened once and kept.

use std::collections::BTreeMap;

use steward_sql::Database;

use crate::dataset::{Dataset, Item};
use crate::error::EvalError;
use crate::predict::{ScoreOptions, score_item_with};
use crate::results::Verdict;

/// Scores predictions against a data set's gold, keeping one connection per database URL.
#[derive(Debug)]
pub struct Scorer {
    options: ScoreOptions,
    databases: BTreeMap<String, Database>,
}

impl Scorer {
    /// A scorer with `options` and no database open yet.
    pub fn new(options: ScoreOptions) -> Self {
        Self {
            options,
            databases: BTreeMap::new(),
        }
    }

    /// Its options.
    pub fn options(&self) -> &ScoreOptions {
        &self.options
    }

    /// The database of `item` ([`Dataset::database_url`] with `db_override`), opened on first use.
    pub async fn database(
        &mut self,
        dataset: &Dataset,
        item: &Item,
        db_override: Option<&str>,
    ) -> Result<&Database, EvalError> {
        let url = dataset.database_url(item, db_override)?;
        if !self.databases.contains_key(&url) {
            let db = Database::connect(&url)
                .await
                .map_err(|source| EvalError::Connect {
                    db: item.db.clone(),
                    source,
                })?;
            self.databases.insert(url.clone(), db);
        }
        self.databases.get(&url).ok_or_else(|| {
            EvalError::Database(format!("the database of question {} was lost", item.id))
        })
    }

    /// Scores `predicted_sql` for `item`. Only a database that cannot be found or opened is an error; a
    /// query that fails is part of the verdict.
    pub async fn score(
        &mut self,
        dataset: &Dataset,
        item: &Item,
        predicted_sql: &str,
        db_override: Option<&str>,
    ) -> Result<Verdict, EvalError> {
        let options = self.options;
        let db = self.database(dataset, item, db_override).await?;
        Ok(score_item_with(item, predicted_sql, db, &options).await)
    }

    /// Closes every database it opened.
    pub async fn close(self) {
        for db in self.databases.values() {
            db.close().await;
        }
    }
}
