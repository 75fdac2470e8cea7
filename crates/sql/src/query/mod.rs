//! What a query takes and gives back, whatever the engine: the parameters bound to it, the limits it runs
//! under, and its result (columns and rows of JSON cells).
//!
//! Plain data: running a query is `execute`'s job, and turning an engine's bytes into these cells is
//! `execute::decode`'s.

mod limits;
mod param;
mod result;

pub use limits::{MAX_ROWS, MAX_TIMEOUT, QueryLimits};
pub use param::Param;
pub use result::{QueryResult, ResultColumn, cell_text};
