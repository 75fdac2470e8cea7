//! A pooled connection lent to one query. It goes back to the pool only through [`Lease::release`], which the
//! engine code calls after it has put the session back as it found it (transaction ended, time limit and
//! progress handler removed). Dropped any other way — an error, a result cut short with rows still in
//! flight, a time limit, Ctrl-C cancelling the future — the connection is closed instead, so no later user
//! of the pool ever meets a half-finished session.

use std::ops::{Deref, DerefMut};

use sqlx::pool::PoolConnection;

/// A connection that is closed unless released.
pub(crate) struct Lease<DB: sqlx::Database> {
    conn: PoolConnection<DB>,
    released: bool,
}

impl<DB: sqlx::Database> Lease<DB> {
    /// Borrows a connection from `pool`.
    pub(crate) async fn acquire(pool: &sqlx::Pool<DB>) -> Result<Self, sqlx::Error> {
        Ok(Self {
            conn: pool.acquire().await?,
            released: false,
        })
    }

    /// Gives the connection back to the pool; call only once its session state is reset.
    pub(crate) fn release(mut self) {
        self.released = true;
    }
}

impl<DB: sqlx::Database> Drop for Lease<DB> {
    fn drop(&mut self) {
        if !self.released {
            self.conn.close_on_drop();
        }
    }
}

impl<DB: sqlx::Database> Deref for Lease<DB> {
    type Target = DB::Connection;

    fn deref(&self) -> &Self::Target {
        &self.conn
    }
}

impl<DB: sqlx::Database> DerefMut for Lease<DB> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.conn
    }
}
