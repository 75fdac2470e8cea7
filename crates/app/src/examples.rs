//! Verified examples saved in the run store: the one governed way to add one, whatever the surface (`steward
//! examples`, the web UI's thumbs-up, `POST /api/examples`). [`App::add_example`] checks the SQL with the
//! principal's guard, runs it as that principal to confirm it runs, then saves it for the business database
//! (its identity, as `runs.database` keeps it); [`App::example_from_run`] takes the question and the last SQL
//! that ran of a run the principal may see. The toolkit holds the examples of its database for the analyst's
//! context: loaded when the app is built, reloaded at once after an add, and, in a long-lived process,
//! reloaded before a turn when older than [`EXAMPLES_FRESH`] (so a server sees what another one added).
//!
//! An example is kept without its SQL comments, and shown — in a list ([`App::examples_for`]) or in a model's
//! schema context — only to a reader the toolkit's one rule allows ([`steward_sql::ExampleReader::may_see`]):
//! its literals, made-up names and question are data of the rows its saver saw, hidden from a reader whose
//! role filters or masks them. Who saved it and from which run is told only to an administrator and the saver.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use steward_core::Principal;
use steward_sql::{Example, QueryLimits, SqlErrorKind};

use crate::store::{Added, ExampleSource, NewExample, SavedExample, StoreError};
use crate::{App, AppError};

/// How old the examples an app holds may get before a turn reloads them from the run store.
pub const EXAMPLES_FRESH: Duration = Duration::from_secs(5);

/// What a check shows of a saved example the principal may not see.
const WITHHELD: &str = "(withheld: it holds data of rows this principal does not see)";

/// The tool whose calls are SQL a run executed (`query_table`'s are not SQL).
const RUN_SQL: &str = "run_sql";

/// Rows read when an example's SQL is run to confirm that it runs.
const CONFIRM_ROWS: usize = 10;

/// The longest an example's SQL may run when it is run to confirm that it runs: an example is a query that
/// answered a question at once, and saving one must not hold a worker (a normal query may take 30 s).
pub const CONFIRM_TIMEOUT: Duration = Duration::from_secs(5);

/// When the examples were last loaded, and whether a load is under way.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    at: Mutex<Option<Instant>>,
    loading: AtomicBool,
}

/// Marks a load under way until dropped.
struct Loading<'a>(&'a AtomicBool);

impl Drop for Loading<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// One example as `steward examples check` found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExampleCheck {
    /// Where it is: `saved <id>` or the config's `file:line:col`.
    pub place: String,
    /// The question.
    pub question: String,
    /// Its SQL.
    pub sql: String,
    /// Why it fails (`None`: the guard allows it and the database prepares it).
    pub problem: Option<String>,
}

/// A saved example as a principal is shown it ([`App::examples_for`]): its SQL without comments; who saved it
/// and the run it came from only for an administrator or the one who saved it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ShownExample {
    /// Its id.
    pub id: String,
    /// The database it is for (its identity).
    pub database: String,
    /// The question.
    pub question: String,
    /// The SQL that answers it, without comments.
    pub sql: String,
    /// Who saved it (a principal's name; empty for the local user); `None`: not told to this principal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved_by: Option<String>,
    /// When.
    pub saved_at: DateTime<Utc>,
    /// Where it came from.
    pub source: ExampleSource,
    /// The run it was taken from, when it was and this principal is told.
    pub run_id: Option<String>,
}

/// What importing examples did.
#[derive(Clone, Debug, Default)]
pub struct Imported {
    /// The ones saved.
    pub added: Vec<SavedExample>,
    /// The ones saved before (the same question with the same SQL), as they were saved.
    pub duplicates: Vec<SavedExample>,
    /// The ones refused, with why.
    pub refused: Vec<(Example, String)>,
}

/// The longest question an example may have, in characters.
pub const MAX_QUESTION_CHARS: usize = 1000;
/// The longest SQL an example may have, in bytes (as `run_sql` takes).
pub const MAX_SQL_BYTES: usize = 20_000;

impl App {
    /// The identity of the business database, which its examples (and runs) are kept under; `None` without one.
    pub fn examples_database(&self) -> Option<String> {
        self.business()
            .map(|b| crate::declared::database_identity(&b.url))
    }

    /// Loads the examples saved for the business database into the toolkit (nothing to do without a store or
    /// a database); how many there are.
    pub async fn load_examples(&self) -> Result<usize, AppError> {
        let (Some(store), Some(kit), Some(database)) =
            (&self.store, &self.kit, self.examples_database())
        else {
            return Ok(0);
        };
        let started = Instant::now();
        let saved = store.examples(&database).await?;
        let n = saved.len();
        kit.set_examples(
            saved
                .into_iter()
                .map(|e| Example {
                    question: e.question,
                    sql: e.sql,
                })
                .collect(),
        );
        if let Ok(mut at) = self.examples_loaded.at.lock() {
            *at = Some(started);
        }
        Ok(n)
    }

    /// Reloads the examples when they are older than [`EXAMPLES_FRESH`] and no other turn is reloading them
    /// (that one's load serves): one query every few seconds at most, whatever the number of runs. A store
    /// that fails keeps the examples held, said on the log, and is asked again after the same delay.
    pub async fn refresh_examples(&self) {
        if self.store.is_none() || self.kit.is_none() {
            return;
        }
        let fresh = self
            .examples_loaded
            .at
            .lock()
            .ok()
            .and_then(|at| *at)
            .is_some_and(|at| at.elapsed() < EXAMPLES_FRESH);
        if fresh || self.examples_loaded.loading.swap(true, Ordering::AcqRel) {
            return;
        }
        // Cleared however this ends, a request dropped mid-way included (else no turn would reload again).
        let _loading = Loading(&self.examples_loaded.loading);
        if let Err(e) = self.load_examples().await {
            tracing::warn!("the verified examples could not be reloaded: {e}");
            if let Ok(mut at) = self.examples_loaded.at.lock() {
                *at = Some(Instant::now());
            }
        }
    }

    /// Checks that `principal` may run `sql` and that it runs: its guard must allow it, then it is run as that
    /// principal (its row filters apply; a few rows are read).
    pub async fn confirm_example_sql(
        &self,
        principal: &Principal,
        sql: &str,
    ) -> Result<(), AppError> {
        let Some(kit) = &self.kit else {
            return Err(AppError::NoDatabase);
        };
        let guard = kit.guard_as(principal).map_err(|why| {
            AppError::Forbidden(format!("{} may read nothing: {why}", who(principal)))
        })?;
        let verdict = guard.check(sql);
        if !verdict.allowed {
            return Err(AppError::Forbidden(format!(
                "the guard refuses this SQL for {}: {}",
                who(principal),
                verdict.explanation().trim()
            )));
        }
        let limits = QueryLimits {
            max_rows: CONFIRM_ROWS,
            timeout: CONFIRM_TIMEOUT.min(QueryLimits::default().timeout),
            ..QueryLimits::default()
        };
        match kit.read_as(principal, sql, &[], &limits).await {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == SqlErrorKind::Timeout => Err(AppError::Invalid(format!(
                "the example's SQL ran longer than {} s and was stopped, so it is not saved: an example is run once \
                 to confirm it works and must answer within {} s; save a cheaper query (filter earlier, aggregate)",
                limits.timeout.as_secs(),
                limits.timeout.as_secs()
            ))),
            Err(e) if e.kind() == SqlErrorKind::Refused => Err(AppError::Forbidden(format!(
                "the guard refuses this SQL for {}: {}",
                who(principal),
                e.message()
            ))),
            Err(e) => Err(AppError::Invalid(format!(
                "the SQL does not run on the database: {}",
                e.message()
            ))),
        }
    }

    /// Saves `question` answered by `sql` as a verified example of the business database, for `principal`:
    /// the guard must allow the SQL for it and the SQL must run as it ([`App::confirm_example_sql`]). The
    /// same question with the same SQL saved before is refused (a conflict that names it). The toolkit holds
    /// it at once.
    pub async fn add_example(
        &self,
        principal: &Principal,
        question: &str,
        sql: &str,
        source: ExampleSource,
        run_id: Option<&str>,
    ) -> Result<SavedExample, AppError> {
        match self
            .save_example(principal, question, sql, source, run_id)
            .await?
        {
            Added::Saved(saved) => Ok(saved),
            Added::Duplicate(saved) => {
                // Who saved it is told only to an administrator and the one who did.
                let by = if !self.tells_saver(principal, &saved.saved_by) {
                    String::new()
                } else if saved.saved_by.is_empty() {
                    "by the local user, ".to_owned()
                } else {
                    format!("by {}, ", saved.saved_by)
                };
                Err(AppError::Conflict(format!(
                    "this question with this SQL is saved already as the example {} ({by}{})",
                    saved.id,
                    saved.saved_at.format("%Y-%m-%d %H:%M UTC")
                )))
            }
        }
    }

    /// [`App::add_example`], a duplicate being an answer rather than an error.
    pub async fn save_example(
        &self,
        principal: &Principal,
        question: &str,
        sql: &str,
        source: ExampleSource,
        run_id: Option<&str>,
    ) -> Result<Added, AppError> {
        let Some(store) = &self.store else {
            return Err(AppError::Conflict(
                "there is no run store to save examples in".to_owned(),
            ));
        };
        let Some(database) = self.examples_database() else {
            return Err(AppError::NoDatabase);
        };
        self.check_role(principal)?;
        let Some(kit) = &self.kit else {
            return Err(AppError::NoDatabase);
        };
        let question = question.trim();
        if sql.len() > MAX_SQL_BYTES {
            return Err(AppError::Invalid(format!(
                "the example's SQL is longer than {MAX_SQL_BYTES} bytes"
            )));
        }
        // Kept without comments: a comment is free text (`/* the customer is … */`) that other readers would see.
        let sql = match kit.guard().without_comments(sql) {
            Ok(sql) => sql,
            // Text the guard refuses as it reads it (an executable comment, a string left open): said as for
            // any SQL it refuses.
            Err(why) => {
                let verdict = kit.guard().check(sql);
                return Err(if verdict.allowed {
                    AppError::Invalid(format!("the example's SQL cannot be read safely: {why}"))
                } else {
                    AppError::Forbidden(format!(
                        "the guard refuses this SQL for {}: {}",
                        who(principal),
                        verdict.explanation().trim()
                    ))
                });
            }
        };
        let sql = sql.trim_end_matches(';').trim_end();
        if question.is_empty() {
            return Err(AppError::Invalid(
                "the example's question is empty".to_owned(),
            ));
        }
        if sql.is_empty() {
            return Err(AppError::Invalid(
                "the example's SQL is empty (comments are not kept)".to_owned(),
            ));
        }
        // An example reaches other people's model prompts: a question is a question, not a page of text.
        if question.chars().count() > MAX_QUESTION_CHARS {
            return Err(AppError::Invalid(format!(
                "the example's question is longer than {MAX_QUESTION_CHARS} characters; save the question as it \
                 was asked"
            )));
        }
        if question.chars().any(|c| c.is_control() && c != '\t') {
            return Err(AppError::Invalid(
                "the example's question holds control characters (a line break, NUL…); write it on one line"
                    .to_owned(),
            ));
        }
        self.confirm_example_sql(principal, sql).await?;
        let added = store
            .add_example(&NewExample {
                database,
                question: question.to_owned(),
                sql: sql.to_owned(),
                saved_by: principal.name.clone(),
                source,
                run_id: run_id.map(str::to_owned),
            })
            .await?;
        if matches!(added, Added::Saved(_)) {
            self.load_examples().await?;
        }
        Ok(added)
    }

    /// Saves the run `run_id` (its whole id) as an example for `principal`: its question (the run's input) with the last SQL
    /// it ran successfully (`run_sql`'s, in it or its sub-runs), checked and run again as for
    /// [`App::add_example`]. Only a run of this principal's (or, for an administrator, anyone's); a run that
    /// ran no SQL is refused with why.
    pub async fn example_from_run(
        &self,
        principal: &Principal,
        run_id: &str,
        source: ExampleSource,
    ) -> Result<SavedExample, AppError> {
        let Some(store) = &self.store else {
            return Err(AppError::Conflict(
                "there is no run store to take the run from".to_owned(),
            ));
        };
        let not_found = || AppError::NotFound(format!("there is no run `{run_id}` of yours"));
        // The whole id: a prefix matching several runs would name other people's.
        let detail = match store.get(run_id).await {
            Ok(detail) if detail.run.id == run_id.trim() => detail,
            Ok(_) | Err(StoreError::NotFound(_) | StoreError::Ambiguous { .. }) => {
                return Err(not_found());
            }
            Err(e) => return Err(e.into()),
        };
        let owner = detail.run.principal.clone().unwrap_or_default();
        if owner != principal.name && !self.administers(principal) {
            return Err(not_found());
        }
        let ran: Vec<&crate::store::ToolCallRecord> = detail
            .tool_calls
            .iter()
            .filter(|c| c.tool == RUN_SQL)
            .collect();
        let Some(sql) = ran
            .iter()
            .rev()
            .filter(|c| c.is_error == Some(false))
            .find_map(|c| sql_argument(&c.arguments))
        else {
            return Err(AppError::Invalid(if ran.is_empty() {
                format!(
                    "the run {} ran no SQL (only run_sql's queries are saved as examples; query_table's calls \
                     are not SQL), so there is nothing to save",
                    detail.run.id
                )
            } else {
                format!(
                    "none of the SQL the run {} sent ran successfully, so there is nothing to save",
                    detail.run.id
                )
            }));
        };
        self.add_example(
            principal,
            &detail.run.input,
            &sql,
            source,
            Some(&detail.run.id),
        )
        .await
    }

    /// The examples saved for the business database that `principal` may see, oldest first, as it is shown them
    /// (see [`ShownExample`]): those the toolkit's rule allows ([`steward_sql::ExampleReader::may_see`]: its
    /// guard allows the SQL, and the example holds no data of rows it does not see), without comments.
    pub async fn examples_for(&self, principal: &Principal) -> Result<Vec<ShownExample>, AppError> {
        let (Some(store), Some(kit), Some(database)) =
            (&self.store, &self.kit, self.examples_database())
        else {
            return Ok(Vec::new());
        };
        self.check_role(principal)?;
        let reader = kit.example_reader(principal);
        let saved = store.examples(&database).await?;
        Ok(saved
            .into_iter()
            .filter_map(|e| {
                let shown = kit.shown_example(
                    &reader,
                    &Example {
                        question: e.question.clone(),
                        sql: e.sql.clone(),
                    },
                )?;
                let told = self.tells_saver(principal, &e.saved_by);
                Some(ShownExample {
                    id: e.id,
                    database: e.database,
                    question: shown.question,
                    sql: shown.sql,
                    saved_by: told.then_some(e.saved_by),
                    saved_at: e.saved_at,
                    source: e.source,
                    run_id: e.run_id.filter(|_| told),
                })
            })
            .collect())
    }

    /// Whether `principal` is told who saved an example saved by `saved_by` (and the run it came from): an
    /// administrator, or the one who saved it.
    fn tells_saver(&self, principal: &Principal, saved_by: &str) -> bool {
        self.administers(principal) || saved_by == principal.name
    }

    /// Removes the saved example `id` (or the one whose id starts with it).
    pub async fn remove_example(&self, id: &str) -> Result<SavedExample, AppError> {
        let Some(store) = &self.store else {
            return Err(AppError::Conflict(
                "there is no run store to remove examples from".to_owned(),
            ));
        };
        match store.remove_example(id).await? {
            Some(removed) => {
                self.load_examples().await?;
                Ok(removed)
            }
            None => Err(AppError::NotFound(format!(
                "no saved example has the id `{id}` (`steward examples list` shows them)"
            ))),
        }
    }

    /// Every example of the business database — the config's (`knowledge.examples`) and the saved ones —
    /// checked for `principal`: its guard must allow the SQL and the database must prepare it (nothing runs).
    /// A saved example the principal may not be shown ([`steward_sql::ExampleReader::may_see`]) is checked all
    /// the same, its question, SQL and the reason it fails withheld (an administrator sees them).
    pub async fn check_examples(
        &self,
        principal: &Principal,
    ) -> Result<Vec<ExampleCheck>, AppError> {
        let Some(kit) = &self.kit else {
            return Err(AppError::NoDatabase);
        };
        let guard = kit.guard_as(principal).map_err(|why| {
            AppError::Forbidden(format!("{} may read nothing: {why}", who(principal)))
        })?;
        let admin = self.administers(principal);
        // Where each is, its question and SQL, whether its text is withheld from the principal, and why Steward
        // cannot read it (a saved one kept before comments were removed on save).
        let mut found: Vec<(String, Example, bool, Option<String>)> = Vec::new();
        for (i, example) in self.config.knowledge.examples.iter().enumerate() {
            let place = self
                .config
                .locate(&["knowledge", "examples", &i.to_string(), "sql"]);
            found.push((place, example.clone(), false, None));
        }
        if let (Some(store), Some(database)) = (&self.store, self.examples_database()) {
            let reader = kit.example_reader(principal);
            for saved in store.examples(&database).await? {
                let place = format!("saved {}", saved.id);
                let example = Example {
                    question: saved.question,
                    sql: saved.sql,
                };
                match kit.example_facts(&example) {
                    Ok(facts) => {
                        let withheld = !admin && !reader.may_see(&facts);
                        found.push((place, facts.example().clone(), withheld, None));
                    }
                    Err(why) => found.push((place, example, !admin, Some(why))),
                }
            }
        }
        let mut checks = Vec::new();
        for (place, example, withheld, unreadable) in found {
            let verdict = guard.check(&example.sql);
            let problem = if let Some(why) = unreadable {
                Some(if withheld {
                    "Steward cannot read its SQL safely".to_owned()
                } else {
                    format!("Steward cannot read its SQL safely: {why}")
                })
            } else if !verdict.allowed {
                Some(if withheld {
                    format!("the guard refuses it for {}", who(principal))
                } else {
                    format!(
                        "the guard refuses it for {}: {}",
                        who(principal),
                        verdict.explanation().trim()
                    )
                })
            } else if let Err(e) = kit.database().prepares(&example.sql, false).await {
                Some(if withheld {
                    "the database refuses it".to_owned()
                } else {
                    format!("the database refuses it: {}", e.message())
                })
            } else {
                None
            };
            checks.push(ExampleCheck {
                place,
                question: shown_text(example.question, withheld),
                sql: shown_text(example.sql, withheld),
                problem,
            });
        }
        Ok(checks)
    }

    /// Saves each of `examples` for `principal` as [`App::add_example`] does: each is added, found saved
    /// before, or refused with why (a refusal does not stop the others). A store that fails stops the import.
    pub async fn import_examples(
        &self,
        principal: &Principal,
        examples: Vec<Example>,
    ) -> Result<Imported, AppError> {
        let mut imported = Imported::default();
        for example in examples {
            match self
                .save_example(
                    principal,
                    &example.question,
                    &example.sql,
                    ExampleSource::Import,
                    None,
                )
                .await
            {
                Ok(Added::Saved(saved)) => imported.added.push(saved),
                Ok(Added::Duplicate(saved)) => imported.duplicates.push(saved),
                Err(AppError::Store(e)) => return Err(AppError::Store(e)),
                Err(e) => imported.refused.push((example, e.to_string())),
            }
        }
        Ok(imported)
    }

    /// Whether `principal` administers: its role says `admin: true`, or it is the local user without a role.
    fn administers(&self, principal: &Principal) -> bool {
        match principal.role.as_deref() {
            Some(role) => self.config.roles.get(role).is_some_and(|r| r.admin),
            None => principal.is_local(),
        }
    }
}

/// `text`, or what stands for it when it is withheld.
fn shown_text(text: String, withheld: bool) -> String {
    if withheld { WITHHELD.to_owned() } else { text }
}

/// The `sql` of a call's arguments (a JSON object, or a JSON string holding one).
fn sql_argument(arguments: &str) -> Option<String> {
    let value: Value = serde_json::from_str(arguments).ok()?;
    let value = match value {
        Value::String(inner) => serde_json::from_str(&inner).ok()?,
        other => other,
    };
    value
        .get("sql")?
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The principal as a message names it.
fn who(principal: &Principal) -> String {
    match (&principal.role, principal.is_local()) {
        (_, false) => format!("`{}`", principal.name),
        (Some(role), true) => format!("the role `{role}`"),
        (None, true) => "the local user".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::sql_argument;

    #[test]
    fn the_sql_of_a_call_is_its_sql_argument_as_the_model_sent_it() {
        assert_eq!(
            sql_argument(r#"{"sql": " SELECT 1 "}"#).as_deref(),
            Some("SELECT 1")
        );
        assert_eq!(
            sql_argument(r#""{\"sql\": \"SELECT 2\"}""#).as_deref(),
            Some("SELECT 2")
        );
        for none in [
            r#"{"table": "orders"}"#,
            "not json",
            r#"{"sql": ""}"#,
            r#"{"sql": 5}"#,
        ] {
            assert_eq!(sql_argument(none), None, "{none}");
        }
    }
}
