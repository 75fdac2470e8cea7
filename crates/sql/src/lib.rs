//! # steward-sql
//!
//! Databases for Steward agents: connect to any SQL database by URL, read its catalog quickly, build a
//! compact schema context for a question, check SQL with a guard, run it read-only with caps, and the SQL tools
//! and text-to-SQL agent that use all of it.
//!
//! ```no_run
//! use steward_sql::{Database, Guard, QueryLimits, schema_context};
//! # async fn demo() -> Result<(), steward_sql::SqlError> {
//! let db = Database::connect("sqlite://chinook.sqlite").await?;
//! let catalog = db.catalog().await?;
//! let context = schema_context(&catalog, Some("Which artists have the most albums?"), 1_000);
//! let guard = db.guard().await?; // the server's own lexing settings and functions
//! assert!(!guard.check("DELETE FROM Album").allowed);
//! let rows = db.query(&guard, "SELECT Name FROM Artist LIMIT 3", &QueryLimits::default()).await?;
//! println!("{}\n{}", context.text, rows.to_text());
//! # Ok(()) }
//! ```

// Two halves; arrows point one way (checked by `layers`, see DESIGN.md).
// The pure half: data and checks, no connection, no sqlx. It never imports the driver half.
mod catalog;
mod context;
mod dialect;
mod enrich;
mod error;
mod guard;
mod knowledge;
mod query;
// The driver half: servers through sqlx. It may use the pure half.
mod connect;
mod database;
mod execute;
mod introspect;
mod loopback;
mod privileges;
mod session;
mod write;
// On top of both: the SQL tools and the text-to-SQL agent.
mod tools;

#[cfg(test)]
mod layers;

pub use catalog::{
    Catalog, Column, ForeignKey, MAX_SAMPLE_CHARS, MAX_SAMPLES, SampleIter, Samples, Table,
    TableKind,
};
pub use context::{ContextIndex, SAVED_EXAMPLES, SchemaContext, describe_tables, schema_context};
pub use database::Database;
pub use dialect::Dialect;
pub use error::{SqlError, SqlErrorKind};
pub use execute::{CANCEL_BOUND, settle_cancellations};
pub use guard::ServerSettings;
pub use guard::{
    Guard, GuardPolicy, GuardVerdict, Mask, NamedSql, Reason, Scope, Scoped, StatementClass,
    WriteKind,
};
pub use introspect::IntrospectOptions;
pub use knowledge::{
    EXAMPLES_SHOWN, Example, ExampleFacts, ExampleIndex, ExamplePool, ExampleReader, GlossaryEntry,
    Knowledge, KnowledgeCheck, Metric, RowAccess, TableNote, Vocabulary, knowledge_context,
};
pub use privileges::Privileges;
pub use query::{MAX_ROWS, MAX_TIMEOUT, Param, QueryLimits, QueryResult, ResultColumn, cell_text};
/// A URL with its password and secret query parameters replaced by `***` (Steward's one redaction, from
/// steward-core).
pub use steward_core::redact::redact_url;
pub use tools::{
    Access, AccessFn, AskDatabaseArgs, DescribeTablesArgs, ListTablesArgs, RunSqlArgs, SqlAnswer,
    SqlToolkit, TextToSql, filtered_note, nothing_visible, read_as, visible_catalog, visible_to,
};
pub use write::WriteTx;
