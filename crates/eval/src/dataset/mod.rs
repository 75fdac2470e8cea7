//! Data sets: questions with their gold SQL (or expected answer) and the database each is asked of, read
//! from Spider, BIRD, defog sql-eval or Steward's own YAML, and where to find each question's database.
//!
//! | format | path | read |
//! |---|---|---|
//! | Spider | a folder with `dev.json` (and `tables.json`), or the JSON file | `db_id`, `question`, `query` |
//! | BIRD | a `dev.json`/`mini_dev_*.json` file, or its folder | `question_id`, `db_id`, `question`, `evidence`, `SQL`, `difficulty` |
//! | defog | a `.csv` file | `question`, `query`, `db_name`, `query_category`, `instructions` |
//! | Steward | a `.yaml`/`.yml` file | see `steward` below and `testdata/steward-bench/demo.yaml` |

mod defog;
mod spider;
mod steward;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::EvalError;
use crate::score::Semantics;

/// One question of a data set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// Its id, unique in the data set: BIRD's `question_id`, Steward's `id`, else its position (from 0).
    pub id: String,
    /// The question in natural language.
    pub question: String,
    /// The gold SQL: one query, or several acceptable alternatives (defog); empty when only an answer is
    /// expected.
    pub gold: Vec<String>,
    /// The gold field as the data set writes it, when it differs from `gold` (defog: alternatives separated
    /// by `;`, `{a, b}` column choices); defog's scorer reads its `ORDER BY` from this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_text: Option<String>,
    /// The expected answer, for questions scored by answer rather than by rows (Steward's YAML).
    pub expected_answer: Option<String>,
    /// The database: an id (Spider's `db_id`, defog's `db_name`), a name, or a URL.
    pub db: String,
    /// Tags: defog's query category, Steward's tags.
    pub tags: Vec<String>,
    /// The difficulty, when the data set grades it (BIRD: simple, moderate, challenging).
    pub difficulty: Option<String>,
    /// A hint given with the question (BIRD's evidence, defog's instructions).
    pub evidence: Option<String>,
}

/// A data set's file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Format {
    /// Spider 1.0: `dev.json` with `tables.json` and `database/<db>/<db>.sqlite`.
    Spider,
    /// BIRD and BIRD mini-dev (SQLite, PostgreSQL or MySQL variant).
    Bird,
    /// defog sql-eval's question CSV, for PostgreSQL.
    Defog,
    /// Steward's own YAML.
    Steward,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 4] = [Format::Spider, Format::Bird, Format::Defog, Format::Steward];

    /// Its name: `spider`, `bird`, `defog` or `steward`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Spider => "spider",
            Format::Bird => "bird",
            Format::Defog => "defog",
            Format::Steward => "steward",
        }
    }

    /// The semantics its official scorer uses; Steward's own questions are scored with Steward's own
    /// semantics (an answer may carry extra columns; forgiving cells), unless the file says otherwise.
    pub fn semantics(self) -> Semantics {
        match self {
            Format::Spider => Semantics::Spider,
            Format::Bird => Semantics::Bird,
            Format::Defog => Semantics::Defog,
            Format::Steward => Semantics::Steward,
        }
    }

    /// The format of the data set at `path`: a folder holding `dev.json` is Spider or BIRD (by the keys of
    /// its first question), a `.csv` file is defog, a `.yaml`/`.yml` file is Steward's, a `.json` file is
    /// BIRD when its questions have `SQL` (with `evidence` and `difficulty`), Spider when they have `query` and
    /// `db_id`.
    pub fn guess(path: &Path) -> Result<Format, EvalError> {
        if path.is_dir() {
            let dev = path.join("dev.json");
            if !dev.is_file() {
                return Err(EvalError::Format(format!(
                    "{} is a folder without dev.json; give the data set's file, or a Spider or BIRD folder",
                    path.display()
                )));
            }
            return spider::guess_json(&dev);
        }
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("csv") => Ok(Format::Defog),
            Some("yaml" | "yml") => Ok(Format::Steward),
            Some("json") => spider::guess_json(path),
            _ => Err(EvalError::Format(format!(
                "cannot tell the format of {}: expected a Spider or BIRD folder or .json file, a defog .csv or a Steward .yaml; or name the format",
                path.display()
            ))),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!("unknown data set format `{s}`; use spider, bird, defog or steward")
            })
    }
}

/// A loaded data set.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// Its format.
    pub format: Format,
    /// Its questions, in file order (the order of a predictions file).
    pub items: Vec<Item>,
    /// The file the questions were read from.
    pub source: PathBuf,
    /// The folder databases are looked for in (`database/<db>/<db>.sqlite` for Spider and BIRD; relative
    /// SQLite paths for Steward).
    pub base_dir: PathBuf,
    /// How its questions are scored unless told otherwise: the format's official semantics, or the
    /// `semantics:` of a Steward file.
    pub semantics: Semantics,
}

impl Dataset {
    /// Reads the data set at `path`, in `format` or the format [`Format::guess`] finds.
    pub fn load(path: &Path, format: Option<Format>) -> Result<Dataset, EvalError> {
        let format = match format {
            Some(f) => f,
            None => Format::guess(path)?,
        };
        let (source, base_dir) = if path.is_dir() {
            (path.join("dev.json"), path.to_owned())
        } else {
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            (path.to_owned(), parent.to_owned())
        };
        let mut semantics = format.semantics();
        let items = match format {
            Format::Spider => spider::load_spider(&source)?,
            Format::Bird => spider::load_bird(&source)?,
            Format::Defog => defog::load(&source)?,
            Format::Steward => {
                let file = steward::load(&source)?;
                if let Some(s) = file.semantics {
                    semantics = s;
                }
                file.items
            }
        };
        check_ids(&source, &items)?;
        Ok(Dataset {
            format,
            items,
            source,
            base_dir,
            semantics,
        })
    }

    /// The URL of `item`'s database. `db_override` (a command line's `--db`) is, in this order:
    /// - a template holding `{db}`, replaced by the item's database (`postgres://postgres@127.0.0.1/{db}`,
    ///   `sqlite:///data/{db}.sqlite`);
    /// - a URL (`scheme://…`, `sqlite:…`), used for every question;
    /// - a folder, holding `<db>/<db>.sqlite` or `<db>.sqlite`;
    /// - a SQLite file, used for every question.
    ///
    /// Without one: Spider and BIRD use `<base_dir>/database/<db>/<db>.sqlite` (or BIRD's
    /// `dev_databases/`); defog needs the override (its questions run on PostgreSQL); Steward uses the
    /// item's database when it is a URL or a SQLite file (relative to the YAML file). SQLite files are
    /// opened read-only.
    pub fn database_url(
        &self,
        item: &Item,
        db_override: Option<&str>,
    ) -> Result<String, EvalError> {
        if let Some(given) = db_override.map(str::trim).filter(|s| !s.is_empty()) {
            return override_url(given, &item.db);
        }
        match self.format {
            Format::Spider | Format::Bird => {
                let tried: Vec<PathBuf> = ["database", "dev_databases"]
                    .iter()
                    .map(|d| {
                        self.base_dir
                            .join(d)
                            .join(&item.db)
                            .join(format!("{}.sqlite", item.db))
                    })
                    .collect();
                tried.iter().find(|p| p.is_file()).map(|p| sqlite_url(p)).ok_or_else(|| {
                    EvalError::Database(format!(
                        "no SQLite file for database `{}` of question {} (looked for {}); pass --db with the databases' folder or a URL template with {{db}}",
                        item.db,
                        item.id,
                        tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" and ")
                    ))
                })
            }
            Format::Defog => Err(EvalError::Database(format!(
                "defog questions run on PostgreSQL: pass --db with a URL template such as postgres://postgres@127.0.0.1/{{db}} (question {} asks `{}`)",
                item.id, item.db
            ))),
            Format::Steward => {
                let db = item.db.trim();
                if db.is_empty() {
                    return Err(EvalError::Database(format!(
                        "question {} names no database; set `database:` in {} or pass --db",
                        item.id,
                        self.source.display()
                    )));
                }
                if is_url(db) {
                    return Ok(db.to_owned());
                }
                let path = self.base_dir.join(db);
                if path.is_file() {
                    return Ok(sqlite_url(&path));
                }
                Err(EvalError::Database(format!(
                    "database `{db}` of question {} is a name, not a URL or a SQLite file next to {}; pass --db with its URL (e.g. sqlite://demo.sqlite) or a template with {{db}}",
                    item.id,
                    self.source.display()
                )))
            }
        }
    }
}

/// Whether `text` is a database URL rather than a path.
fn is_url(text: &str) -> bool {
    text.contains("://") || text.starts_with("sqlite:")
}

/// A read-only SQLite URL for a file.
fn sqlite_url(path: &Path) -> String {
    format!("sqlite://{}?mode=ro", path.display())
}

fn override_url(given: &str, db: &str) -> Result<String, EvalError> {
    if given.contains("{db}") {
        return Ok(given.replace("{db}", db));
    }
    if is_url(given) {
        return Ok(given.to_owned());
    }
    let path = Path::new(given);
    if path.is_dir() {
        let nested = path.join(db).join(format!("{db}.sqlite"));
        let flat = path.join(format!("{db}.sqlite"));
        return [&nested, &flat]
            .into_iter()
            .find(|p| p.is_file())
            .map(|p| sqlite_url(p))
            .ok_or_else(|| {
                EvalError::Database(format!(
                    "no SQLite file for database `{db}` in {given} (looked for {} and {})",
                    nested.display(),
                    flat.display()
                ))
            });
    }
    if path.is_file() {
        return Ok(sqlite_url(path));
    }
    Err(EvalError::Database(format!(
        "--db `{given}` is neither a URL, a URL template with {{db}}, a folder nor a SQLite file"
    )))
}

/// Ids must be unique: a verdict log finds questions by id.
fn check_ids(source: &Path, items: &[Item]) -> Result<(), EvalError> {
    let mut seen = std::collections::HashSet::new();
    for item in items {
        if !seen.insert(item.id.as_str()) {
            return Err(EvalError::malformed(
                source,
                None,
                format!(
                    "the id `{}` is used by two questions; ids must be unique",
                    item.id
                ),
            ));
        }
    }
    Ok(())
}
