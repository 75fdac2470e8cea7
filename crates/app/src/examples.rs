//! Verified examples saved in the run store: the one governed way to add one, whatever the surface (`steward
//! examples`, the web UI's thumbs-up, `POST /api/examples`). [`App::add_example`] checks the SQL with the
//! principal's guard, runs it as that principal to confirm it runs, then saves it for the business database
//! (its identity, as `runs.database` keeps it); [`App::example_from_run`] takes the question and the last SQL
//! that ran of a run the principal may see. The toolkit holds the examples of its database for the analyst's
//! context: loaded when the app is built, reloaded at once after an add, and, in a long-lived process,
//! reloaded before a turn when older than [`EXAMPLES_FRESH`] (so a server sees what another one added).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use steward_core::Principal;
use steward_sql::{Example, QueryLimits};

use crate::store::{Added, ExampleSource, NewExample, SavedExample, StoreError};
use crate::{App, AppError};

/// How old the examples an app holds may get before a turn reloads them from the run store.
pub const EXAMPLES_FRESH: Duration = Duration::from_secs(5);

/// The tool whose calls are SQL a run executed (`query_table`'s are not SQL).
const RUN_SQL: &str = "run_sql";

/// Rows read when an example's SQL is run to confirm that it runs.
const CONFIRM_ROWS: usize = 10;

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
            ..QueryLimits::default()
        };
        match kit.read_as(principal, sql, &[], &limits).await {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == steward_sql::SqlErrorKind::Refused => {
                Err(AppError::Forbidden(format!(
                    "the guard refuses this SQL for {}: {}",
                    who(principal),
                    e.message()
                )))
            }
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
            Added::Duplicate(saved) => Err(AppError::Conflict(format!(
                "this question with this SQL is saved already as the example {} (by {}, {})",
                saved.id,
                if saved.saved_by.is_empty() {
                    "the local user"
                } else {
                    saved.saved_by.as_str()
                },
                saved.saved_at.format("%Y-%m-%d %H:%M UTC")
            ))),
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
        let question = question.trim();
        let sql = sql.trim().trim_end_matches(';').trim_end();
        if question.is_empty() {
            return Err(AppError::Invalid(
                "the example's question is empty".to_owned(),
            ));
        }
        if sql.is_empty() {
            return Err(AppError::Invalid("the example's SQL is empty".to_owned()));
        }
        // An example reaches other people's model prompts: a question is a question, not a page of text.
        if question.chars().count() > MAX_QUESTION_CHARS {
            return Err(AppError::Invalid(format!(
                "the example's question is longer than {MAX_QUESTION_CHARS} characters; save the question as it \
                 was asked"
            )));
        }
        if sql.len() > MAX_SQL_BYTES {
            return Err(AppError::Invalid(format!(
                "the example's SQL is longer than {MAX_SQL_BYTES} bytes"
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

    /// The examples saved for the business database that `principal`'s guard allows, oldest first.
    pub async fn examples_for(&self, principal: &Principal) -> Result<Vec<SavedExample>, AppError> {
        let (Some(store), Some(kit), Some(database)) =
            (&self.store, &self.kit, self.examples_database())
        else {
            return Ok(Vec::new());
        };
        self.check_role(principal)?;
        let Ok(guard) = kit.guard_as(principal) else {
            return Ok(Vec::new());
        };
        let mut saved = store.examples(&database).await?;
        saved.retain(|e| guard.check(&e.sql).allowed);
        Ok(saved)
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
        let mut found = Vec::new();
        for (i, example) in self.config.knowledge.examples.iter().enumerate() {
            found.push((
                self.config
                    .locate(&["knowledge", "examples", &i.to_string(), "sql"]),
                example.question.clone(),
                example.sql.clone(),
            ));
        }
        if let (Some(store), Some(database)) = (&self.store, self.examples_database()) {
            for saved in store.examples(&database).await? {
                found.push((format!("saved {}", saved.id), saved.question, saved.sql));
            }
        }
        let mut checks = Vec::new();
        for (place, question, sql) in found {
            let verdict = guard.check(&sql);
            let problem = if !verdict.allowed {
                Some(format!(
                    "the guard refuses it for {}: {}",
                    who(principal),
                    verdict.explanation().trim()
                ))
            } else if let Err(e) = kit.database().prepares(&sql, false).await {
                Some(format!("the database refuses it: {}", e.message()))
            } else {
                None
            };
            checks.push(ExampleCheck {
                place,
                question,
                sql,
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
