//! How much a query may return and how long it may run, and the ranges those limits must stay in.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::SqlError;

/// How much a query may return and how long it may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryLimits {
    /// Most rows returned.
    pub max_rows: usize,
    /// Most bytes of rendered cells returned.
    pub max_bytes: usize,
    /// Longest run time.
    pub timeout: Duration,
}

impl Default for QueryLimits {
    fn default() -> Self {
        Self {
            max_rows: 100,
            max_bytes: 1_000_000,
            timeout: Duration::from_secs(30),
        }
    }
}

/// The largest row cap a query may ask for.
pub const MAX_ROWS: usize = 1_000_000;
/// The longest time limit a query may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

impl QueryLimits {
    /// Checks that the limits are usable: a row cap of 1 to 1,000,000, a byte cap of at least 1, a time
    /// limit of 1 ms to 24 h.
    pub fn check(&self) -> Result<(), SqlError> {
        if self.max_rows == 0 || self.max_rows > MAX_ROWS {
            return Err(SqlError::limits(format!(
                "the row cap must be between 1 and {MAX_ROWS}, not {}",
                self.max_rows
            )));
        }
        if self.max_bytes == 0 {
            return Err(SqlError::limits(
                "the byte cap must be at least 1".to_owned(),
            ));
        }
        if self.timeout < Duration::from_millis(1) || self.timeout > MAX_TIMEOUT {
            return Err(SqlError::limits(format!(
                "the time limit must be between 1 ms and 24 h, not {:?}",
                self.timeout
            )));
        }
        Ok(())
    }
}
