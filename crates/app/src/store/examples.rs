//! Verified examples: a question with the SQL that answered it, saved for one database (its identity, as
//! `runs.database` keeps it: see [`crate::database_identity`]). The analyst's schema context shows the ones
//! most like each question, to the readers whose guard allows their SQL. Each question and SQL is kept once
//! per database (a unique index on a hash of both): adding it again is refused as a duplicate.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::engine::{Arg, Row};
use super::{RunStore, StoreError};

/// Where a saved example came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExampleSource {
    /// `steward examples add`.
    Cli,
    /// The web UI's thumbs-up.
    Web,
    /// `POST /api/examples` from another client.
    Api,
    /// `steward examples import`.
    Import,
}

impl ExampleSource {
    /// Its name: `cli`, `web`, `api` or `import`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cli => "cli",
            Self::Web => "web",
            Self::Api => "api",
            Self::Import => "import",
        }
    }

    fn parse(text: &str) -> Result<Self, StoreError> {
        Ok(match text {
            "cli" => Self::Cli,
            "web" => Self::Web,
            "api" => Self::Api,
            "import" => Self::Import,
            other => {
                return Err(StoreError::Corrupt(format!(
                    "`{other}` is not an example's source"
                )));
            }
        })
    }
}

impl std::fmt::Display for ExampleSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An example to save.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewExample {
    /// The database it is for (its identity).
    pub database: String,
    /// The question.
    pub question: String,
    /// The SQL that answers it.
    pub sql: String,
    /// Who saves it (the principal's name; empty for the local user).
    pub saved_by: String,
    /// Where it comes from.
    pub source: ExampleSource,
    /// The run it was taken from, when it was.
    pub run_id: Option<String>,
}

/// A saved verified example.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedExample {
    /// Its id.
    pub id: String,
    /// The database it is for (its identity).
    pub database: String,
    /// The question.
    pub question: String,
    /// The SQL that answers it.
    pub sql: String,
    /// Who saved it (a principal's name; empty for the local user).
    pub saved_by: String,
    /// When.
    pub saved_at: DateTime<Utc>,
    /// Where it came from.
    pub source: ExampleSource,
    /// The run it was taken from, when it was.
    pub run_id: Option<String>,
}

/// What adding an example did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Added {
    /// It was saved.
    Saved(SavedExample),
    /// The same question with the same SQL was saved for this database already: that one.
    Duplicate(SavedExample),
}

/// The columns [`read`] reads, in order.
macro_rules! columns {
    () => {
        "id, database, question, sql, saved_by, saved_at, source, run_id"
    };
}

/// What keeps one copy of a question with its SQL: a hash of both.
fn fingerprint(question: &str, sql: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(question.as_bytes());
    hash.update([0]);
    hash.update(sql.as_bytes());
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn read(row: &Row) -> Result<SavedExample, StoreError> {
    Ok(SavedExample {
        id: row.string(0)?,
        database: row.string(1)?,
        question: row.string(2)?,
        sql: row.string(3)?,
        saved_by: row.string(4)?,
        saved_at: row.instant(5)?,
        source: ExampleSource::parse(&row.string(6)?)?,
        run_id: row.text(7)?,
    })
}

impl RunStore {
    /// Saves `example`, unless the same question with the same SQL is saved for its database already (then
    /// [`Added::Duplicate`] with the one saved).
    pub async fn add_example(&self, example: &NewExample) -> Result<Added, StoreError> {
        let id = steward_core::Run::generate_id();
        let key = fingerprint(&example.question, &example.sql);
        let mut tx = self.pool.begin().await?;
        let inserted = tx
            .execute(
                "INSERT INTO verified_examples \
                 (id, database, question, sql, fingerprint, saved_by, saved_at, source, run_id) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                 ON CONFLICT (database, fingerprint) DO NOTHING",
                vec![
                    Arg::from(id.as_str()),
                    Arg::from(example.database.as_str()),
                    Arg::from(example.question.as_str()),
                    Arg::from(example.sql.as_str()),
                    Arg::from(key.as_str()),
                    Arg::from(example.saved_by.as_str()),
                    Arg::from(Utc::now()),
                    Arg::from(example.source.as_str()),
                    Arg::from(example.run_id.clone()),
                ],
            )
            .await?;
        let rows = tx
            .fetch(
                concat!(
                    "SELECT ",
                    columns!(),
                    " FROM verified_examples WHERE database = $1 AND fingerprint = $2"
                ),
                vec![Arg::from(example.database.as_str()), Arg::from(key)],
            )
            .await?;
        tx.commit().await?;
        let saved = rows.first().map(read).transpose()?.ok_or_else(|| {
            StoreError::database("the example saved cannot be read back".to_owned())
        })?;
        Ok(if inserted == 1 {
            Added::Saved(saved)
        } else {
            Added::Duplicate(saved)
        })
    }

    /// The examples saved for the database `database` (its identity), oldest first.
    pub async fn examples(&self, database: &str) -> Result<Vec<SavedExample>, StoreError> {
        let rows = self
            .pool
            .fetch(
                concat!(
                    "SELECT ",
                    columns!(),
                    " FROM verified_examples WHERE database = $1 ORDER BY saved_at, id"
                ),
                vec![Arg::from(database)],
            )
            .await?;
        rows.iter().map(read).collect()
    }

    /// Every saved example, of every database, by database and oldest first.
    pub async fn all_examples(&self) -> Result<Vec<SavedExample>, StoreError> {
        let rows = self
            .pool
            .fetch(
                concat!(
                    "SELECT ",
                    columns!(),
                    " FROM verified_examples ORDER BY database, saved_at, id"
                ),
                vec![],
            )
            .await?;
        rows.iter().map(read).collect()
    }

    /// Removes the example whose id is `id_or_prefix` (or starts with it); the one removed, `None` when none
    /// matches, [`StoreError::Ambiguous`] when several do.
    pub async fn remove_example(
        &self,
        id_or_prefix: &str,
    ) -> Result<Option<SavedExample>, StoreError> {
        let prefix = id_or_prefix.trim();
        if prefix.is_empty() {
            return Ok(None);
        }
        let pattern = format!(
            "{}%",
            prefix
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        let mut tx = self.pool.begin().await?;
        let rows = tx
            .fetch(
                concat!(
                    "SELECT ",
                    columns!(),
                    " FROM verified_examples WHERE id = $1 OR id LIKE $2 ESCAPE '\\' \
                     ORDER BY (id = $1) DESC, saved_at DESC LIMIT 6"
                ),
                vec![Arg::from(prefix), Arg::from(pattern)],
            )
            .await?;
        let found: Vec<SavedExample> = rows.iter().map(read).collect::<Result<_, _>>()?;
        let chosen = match found.as_slice() {
            [] => return Ok(None),
            [first, ..] if first.id == prefix => first.clone(),
            [only] => only.clone(),
            several => {
                return Err(StoreError::Ambiguous {
                    what: "examples",
                    prefix: prefix.to_owned(),
                    candidates: several.iter().map(|e| e.id.clone()).collect(),
                });
            }
        };
        tx.execute(
            "DELETE FROM verified_examples WHERE id = $1",
            vec![Arg::from(chosen.id.as_str())],
        )
        .await?;
        tx.commit().await?;
        Ok(Some(chosen))
    }
}
