//! # steward-domains
//!
//! Steward's built-in business tools and agents. For now: the common tools every agent may use —
//! [`current_date`](common::current_date) (so the model never guesses today's date) and a safe
//! [`calculator`](common::calculator) (so it never does arithmetic in its head).
//!
//! ```
//! use steward_core::Toolbox;
//! use steward_domains::common::{Clock, calculator, current_date};
//!
//! let tools = Toolbox::new().with(current_date(Clock::System)).unwrap().with(calculator()).unwrap();
//! assert_eq!(tools.names().collect::<Vec<_>>(), ["current_date", "calculator"]);
//! ```

pub mod common;
