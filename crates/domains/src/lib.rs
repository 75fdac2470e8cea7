//! # steward-domains
//!
//! Steward's built-in business tools over the demo database: expenses, orders, tasks and projects,
//! the common tools every agent may use ([`current_date`](common::current_date), a safe
//! [`calculator`](common::calculator)), and the deterministic [`demo`] database generator.
//!
//! ```
//! use steward_core::Toolbox;
//! use steward_domains::common::{Clock, calculator, current_date};
//!
//! let tools = Toolbox::new().with(current_date(Clock::System)).unwrap().with(calculator()).unwrap();
//! assert_eq!(tools.names().collect::<Vec<_>>(), ["current_date", "calculator"]);
//! ```

pub mod call_key;
mod cells;
pub mod changes;
pub mod common;
pub mod demo;
mod domain;
pub mod expenses;
pub mod money;
pub mod orders;
mod store;
pub mod tasks;

pub use domain::{AgentError, Domain};
pub use store::Store;
