//! The SQL tools an agent uses on a database: `list_tables`, `describe_tables`, `run_sql` (guarded),
//! `query_table` (structured: table and columns offered as enums from the catalog, typed filters), and
//! `ask_database`, the text-to-SQL sub-agent.

mod access;
mod ask_database;
mod catalog_tools;
mod query_table;
mod run_sql;
mod views;
mod visible;

use std::borrow::Cow;
use std::sync::Arc;

use steward_core::{Model, Principal, Tool, ToolData, ToolError};

use crate::catalog::Catalog;
use crate::context::SchemaContext;
use crate::database::Database;
use crate::error::{SqlError, SqlErrorKind};
use crate::guard::{Guard, GuardPolicy};
use crate::knowledge::{
    Example, ExampleFacts, ExamplePool, ExampleReader, Knowledge, RowAccess, Vocabulary,
    knowledge_context,
};
use crate::query::{QueryLimits, QueryResult};

pub use access::{Access, AccessFn, filtered_note, read_as};
pub use ask_database::{AskDatabaseArgs, SqlAnswer, TextToSql};
pub use catalog_tools::{DescribeTablesArgs, ListTablesArgs};
pub use run_sql::RunSqlArgs;
pub use visible::{nothing_visible, visible_catalog, visible_to};

/// Everything the SQL tools share: the database, its catalog, the guard and the limits.
pub struct SqlToolkit {
    pub(crate) db: Arc<Database>,
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) guard: Guard,
    pub(crate) limits: QueryLimits,
    /// Each principal's SQL access (none: only the guard's policy applies).
    pub(crate) access: Option<AccessFn>,
    /// What the team taught about the data (its table descriptions are in `catalog` already).
    pub(crate) knowledge: Knowledge,
    /// The knowledge's examples and the saved ones (the run store's for this database), indexed for ranking (rebuilt when the saved ones change).
    pub(crate) pool: std::sync::RwLock<Arc<ExamplePool>>,
    /// The words of the database and the knowledge, which saved examples may use without naming rows.
    pub(crate) vocabulary: Vocabulary,
}

impl std::fmt::Debug for SqlToolkit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlToolkit")
            .field("db", &self.db)
            .field("guard", &self.guard)
            .field("limits", &self.limits)
            .field("access", &self.access.is_some())
            .finish_non_exhaustive()
    }
}

impl SqlToolkit {
    /// A toolkit over `db`; reads its catalog. Only the guard's policy applies to every principal.
    pub async fn new(db: Arc<Database>) -> Result<Arc<Self>, SqlError> {
        Self::with_policy(db, GuardPolicy::default(), QueryLimits::default()).await
    }

    /// A toolkit over `db` whose tools read for the principal of each call only what `access` allows it.
    pub async fn with_access(db: Arc<Database>, access: AccessFn) -> Result<Arc<Self>, SqlError> {
        Self::build(
            db,
            GuardPolicy::default(),
            QueryLimits::default(),
            Some(access),
            Knowledge::default(),
        )
        .await
    }

    /// [`SqlToolkit::with_access`] with what the team taught about the data: its table and column descriptions
    /// become the catalog's comments, and each schema context ([`SqlToolkit::context_as`]) carries the
    /// glossary entries, metrics and examples its question needs.
    pub async fn with_knowledge(
        db: Arc<Database>,
        access: AccessFn,
        knowledge: Knowledge,
    ) -> Result<Arc<Self>, SqlError> {
        Self::build(
            db,
            GuardPolicy::default(),
            QueryLimits::default(),
            Some(access),
            knowledge,
        )
        .await
    }

    /// A toolkit with table and column allowlists and query limits.
    pub async fn with_policy(
        db: Arc<Database>,
        policy: GuardPolicy,
        limits: QueryLimits,
    ) -> Result<Arc<Self>, SqlError> {
        Self::build(db, policy, limits, None, Knowledge::default()).await
    }

    async fn build(
        db: Arc<Database>,
        policy: GuardPolicy,
        limits: QueryLimits,
        access: Option<AccessFn>,
        knowledge: Knowledge,
    ) -> Result<Arc<Self>, SqlError> {
        let catalog = db.catalog().await?;
        let mut catalog = knowledge.annotate(&catalog);
        // Tables outside the allowlist are not shown either.
        if let Some(allowed) = &policy.tables {
            catalog
                .tables
                .retain(|t| allowed.iter().any(|a| a.eq_ignore_ascii_case(&t.name)));
        }
        let guard = db.guard().await?.with_policy(policy);
        let pool = ExamplePool::new(&knowledge, &[], &guard);
        let vocabulary = Vocabulary::new(&catalog, &knowledge);
        Ok(Arc::new(Self {
            guard,
            db,
            catalog: Arc::new(catalog),
            limits,
            access,
            knowledge,
            pool: std::sync::RwLock::new(Arc::new(pool)),
            vocabulary,
        }))
    }

    /// What the team taught about the data.
    pub fn knowledge(&self) -> &Knowledge {
        &self.knowledge
    }

    /// Replaces the saved verified examples (the run store's, for this database).
    pub fn set_examples(&self, examples: Vec<Example>) {
        let pool =
            ExamplePool::with_vocabulary(&self.knowledge, &examples, &self.guard, &self.vocabulary);
        if let Ok(mut held) = self.pool.write() {
            *held = Arc::new(pool);
        }
    }

    /// The examples a context chooses from, indexed.
    fn pool(&self) -> Arc<ExamplePool> {
        self.pool
            .read()
            .map(|held| held.clone())
            .unwrap_or_else(|_| Arc::new(ExamplePool::new(&self.knowledge, &[], &self.guard)))
    }

    /// The guard as `principal` reads: its tables and columns only; an error saying why when its access
    /// cannot be worked out.
    pub fn guard_as(&self, principal: &Principal) -> Result<Guard, String> {
        match self
            .access
            .as_ref()
            .map(|f| f.of(principal, self.catalog.dialect))
        {
            None | Some(Ok(None)) => Ok(self.guard.clone()),
            Some(Ok(Some(access))) => Ok(self.guard.clone().with_policy(access.read)),
            Some(Err(why)) => Err(why),
        }
    }

    /// `principal` as a reader of saved examples: its guard and the rows it sees (see
    /// [`ExampleReader::may_see`], the one rule of who is shown which example). A principal whose access cannot
    /// be worked out sees none.
    pub fn example_reader(&self, principal: &Principal) -> ExampleReader {
        match self
            .access
            .as_ref()
            .map(|f| f.of(principal, self.catalog.dialect))
        {
            None | Some(Ok(None)) => ExampleReader::everything(self.guard.clone()),
            Some(Ok(Some(access))) => {
                let scoped = access
                    .scope
                    .filters()
                    .into_iter()
                    .map(|(table, _)| table)
                    .chain(access.scope.masks().into_iter().map(|(table, _, _)| table))
                    .collect();
                ExampleReader::new(
                    self.guard.clone().with_policy(access.read),
                    RowAccess::limited(scoped, &self.catalog),
                )
            }
            Some(Err(_)) => ExampleReader::new(self.guard.clone(), RowAccess::Nothing),
        }
    }

    /// What a saved example holds (its SQL without comments, the tables it reads, whether it holds data of
    /// rows), read with the database's guard; an error saying why when its SQL cannot be read safely.
    pub fn example_facts(&self, example: &Example) -> Result<ExampleFacts, String> {
        ExampleFacts::of(example, &self.guard, &self.vocabulary)
    }

    /// The saved `example` as `reader` is shown it (its SQL without comments), or `None` when
    /// [`ExampleReader::may_see`] says it may not see it (or its SQL cannot be read safely).
    pub fn shown_example(&self, reader: &ExampleReader, example: &Example) -> Option<Example> {
        let facts = self.example_facts(example).ok()?;
        reader.may_see(&facts).then(|| facts.example().clone())
    }

    /// The schema context a model answering `question` for `principal` gets, within `budget` tokens: the
    /// tables it may see, ranked for the question, with the glossary entries, metrics and verified examples the
    /// question needs and it may read (see [`knowledge_context`]; a saved example only as
    /// [`ExampleReader::may_see`] allows). A principal whose access cannot be worked out sees no table and no
    /// knowledge.
    pub fn context_as(
        &self,
        principal: &Principal,
        question: Option<&str>,
        budget: usize,
    ) -> SchemaContext {
        let reader = self.example_reader(principal);
        match self.catalog_as(principal) {
            Ok(catalog) if *reader.rows() != RowAccess::Nothing => knowledge_context(
                &catalog,
                &self.catalog,
                &self.knowledge,
                &self.pool(),
                question,
                budget,
                &reader,
            ),
            _ => crate::context::schema_context(&nothing_visible(&self.catalog), question, budget),
        }
    }

    /// Runs a read for `principal` (see [`read_as`]).
    pub async fn read_as(
        &self,
        principal: &steward_core::Principal,
        sql: &str,
        params: &[crate::query::Param],
        limits: &QueryLimits,
    ) -> Result<(QueryResult, Vec<(String, String)>), SqlError> {
        read_as(
            &self.db,
            &self.guard,
            self.access.as_ref(),
            principal,
            sql,
            params,
            limits,
        )
        .await
    }

    /// The database.
    pub fn database(&self) -> &Arc<Database> {
        &self.db
    }

    /// The catalog the tools offer (to a principal nothing limits; see [`SqlToolkit::catalog_as`]).
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The catalog as `principal` may see it (see [`visible_catalog`]); an error saying why when its access
    /// cannot be worked out (it may read nothing: show it no table, see [`nothing_visible`]).
    pub fn catalog_as(&self, principal: &Principal) -> Result<Cow<'_, Catalog>, String> {
        match self
            .access
            .as_ref()
            .map(|f| f.of(principal, self.catalog.dialect))
        {
            None | Some(Ok(None)) => Ok(Cow::Borrowed(&*self.catalog)),
            Some(Ok(Some(access))) => Ok(visible_catalog(&self.catalog, Some(&access))),
            Some(Err(why)) => Err(why),
        }
    }

    /// The guard.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// `list_tables`, `describe_tables`, `query_table` and `run_sql`.
    pub fn tools(self: &Arc<Self>) -> Vec<Arc<dyn Tool>> {
        vec![
            Arc::new(catalog_tools::list_tables(self.clone())),
            Arc::new(catalog_tools::describe_tables(self.clone())),
            Arc::new(query_table::QueryTable::new(self.clone())),
            Arc::new(run_sql::run_sql(self.clone())),
        ]
    }

    /// [`SqlToolkit::tools`] as `principal` is offered them: `query_table` names only the tables and columns it
    /// may see (the others look the principal of each call up themselves).
    pub fn tools_for(self: &Arc<Self>, principal: &Principal) -> Vec<Arc<dyn Tool>> {
        vec![
            Arc::new(catalog_tools::list_tables(self.clone())),
            Arc::new(catalog_tools::describe_tables(self.clone())),
            self.query_table_for(principal),
            Arc::new(run_sql::run_sql(self.clone())),
        ]
    }

    /// `query_table` as `principal` is offered it: its enums name only the tables and columns it may see.
    pub fn query_table_for(self: &Arc<Self>, principal: &Principal) -> Arc<dyn Tool> {
        let catalog = self
            .catalog_as(principal)
            .unwrap_or_else(|_| Cow::Owned(nothing_visible(&self.catalog)));
        Arc::new(query_table::QueryTable::with_catalog(
            self.clone(),
            &catalog,
        ))
    }

    /// `ask_database`, answering questions with its own model calls.
    pub fn ask_database(self: &Arc<Self>, model: Arc<dyn Model>) -> TextToSql {
        TextToSql::new(self.clone(), model)
    }
}

/// A query result as tool output: the text table for the model, the rows as data for UIs.
pub(crate) fn table_output(result: &QueryResult, preface: &str) -> steward_core::ToolOutput {
    let text = if preface.is_empty() {
        result.to_text()
    } else {
        format!("{preface}\n{}", result.to_text())
    };
    steward_core::ToolOutput::text(text).with_data(ToolData::Table {
        columns: result.columns.iter().map(|c| c.name.clone()).collect(),
        rows: result.rows.clone(),
        truncated: result.truncated,
        note: Some(preface.trim_end().to_owned()).filter(|note| !note.is_empty()),
    })
}

/// A database error as a tool error the model can act on.
pub(crate) fn tool_error(error: SqlError) -> ToolError {
    match error.kind() {
        SqlErrorKind::Connect | SqlErrorKind::Catalog | SqlErrorKind::Unavailable => {
            ToolError::new("The database could not be reached or read; tell the user the data is unavailable right now.")
                .for_people("The database could not be reached or read: the data is unavailable right now; try again later.")
                .with_diagnostic(error.message())
        }
        SqlErrorKind::Invalid => ToolError::new(format!(
            "The database rejected a value: {}. Fix that value (its type, range or characters) and try again.",
            error.message()
        )),
        _ => ToolError::new(error.to_string()),
    }
}
