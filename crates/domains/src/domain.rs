//! The business database as the domain tools see it: the store (reads, idempotent writes, the clock) and the
//! expense categories that agents' instructions list. The agents themselves are data in `steward-app`.

use std::sync::Arc;

use steward_sql::Database;

use crate::cells;
use crate::common::Clock;
use crate::store::Store;

/// What went wrong opening the domain.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The database could not be read.
    #[error(transparent)]
    Sql(#[from] steward_sql::SqlError),
}

/// The business database with everything the domain tools need.
#[derive(Clone, Debug)]
pub struct Domain {
    /// Reads, idempotent writes, the clock.
    pub store: Store,
    categories: Vec<String>,
}

impl Domain {
    /// Opens the business database: reads its expense categories.
    pub async fn open(db: Arc<Database>, clock: Clock) -> Result<Self, AgentError> {
        Self::open_with_access(db, clock, None).await
    }

    /// [`Domain::open`], the tools' reads limited for each principal by `access`.
    pub async fn open_with_access(
        db: Arc<Database>,
        clock: Clock,
        access: Option<steward_sql::AccessFn>,
    ) -> Result<Self, AgentError> {
        let store = Store::new(db, clock, access);
        let categories = store
            .read_trusted("SELECT name FROM expense_categories ORDER BY name", &[])
            .await
            .ok()
            .and_then(|r| {
                cells::rows(&r)
                    .map(|row| row.text(0).ok())
                    .collect::<Option<Vec<_>>>()
            })
            // Without readable categories the instructions point to list_expenses instead.
            .unwrap_or_default();
        Ok(Self { store, categories })
    }

    /// The expense categories, sorted (empty when they could not be read).
    pub fn categories(&self) -> &[String] {
        &self.categories
    }
}
