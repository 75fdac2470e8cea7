//! The knowledge taught about each business database, kept in the store so that every server using the store
//! shares it (`steward knowledge import`): one YAML document per database, in the shape of `steward.yaml`'s
//! `knowledge:` section, merged with the config's own when an app is built.

use chrono::{DateTime, Utc};

use super::engine::Arg;
use super::{RunStore, StoreError};

/// The knowledge document saved for a database.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredKnowledge {
    /// The database's identity (as runs record it).
    pub database: String,
    /// The YAML text, as it was imported.
    pub document: String,
    /// When it was saved.
    pub updated_at: DateTime<Utc>,
    /// Who saved it.
    pub updated_by: String,
}

impl RunStore {
    /// The knowledge saved for the database `identity`, if any.
    pub async fn knowledge(&self, identity: &str) -> Result<Option<StoredKnowledge>, StoreError> {
        let rows = self
            .pool
            .fetch(
                "SELECT database, document, updated_at, updated_by FROM knowledge WHERE database = $1",
                vec![Arg::from(identity)],
            )
            .await?;
        rows.first()
            .map(|row| {
                Ok(StoredKnowledge {
                    database: row.string(0)?,
                    document: row.string(1)?,
                    updated_at: row.instant(2)?,
                    updated_by: row.string(3)?,
                })
            })
            .transpose()
    }

    /// Saves `document` as the knowledge of the database `identity`, replacing what was there.
    pub async fn set_knowledge(
        &self,
        identity: &str,
        document: &str,
        by: &str,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        tx.execute(
            "DELETE FROM knowledge WHERE database = $1",
            vec![Arg::from(identity)],
        )
        .await?;
        tx.execute(
            "INSERT INTO knowledge (database, document, updated_at, updated_by) VALUES ($1, $2, $3, $4)",
            vec![
                Arg::from(identity),
                Arg::from(document),
                Arg::from(Utc::now()),
                Arg::from(by),
            ],
        )
        .await?;
        tx.commit().await
    }

    /// Removes the knowledge of the database `identity`; whether there was any.
    pub async fn clear_knowledge(&self, identity: &str) -> Result<bool, StoreError> {
        let had = self.knowledge(identity).await?.is_some();
        let mut tx = self.pool.begin().await?;
        tx.execute(
            "DELETE FROM knowledge WHERE database = $1",
            vec![Arg::from(identity)],
        )
        .await?;
        tx.commit().await?;
        Ok(had)
    }
}
