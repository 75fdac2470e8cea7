//! # steward-app
//!
//! Assembly of Steward: agents and tools as data ([`AgentDef`](agents::AgentDef), the tool registry), the
//! `steward.yaml` configuration, the composition root ([`App`](app::App)) that owns models, databases,
//! registry and store, and the durable run store.
//!
//! Tools can be declared in config rather than written in Rust: see [`tools`] (`kind: sql` and `kind: http`).

pub mod agents;
pub mod app;
pub mod config;
mod declared;
pub mod error;
pub mod registry;
pub mod tools;

pub use agents::{AgentDef, LimitsDef, ModeDef};
pub use app::{App, AppOptions, Business};
pub use config::Config;
pub use error::AppError;
pub use registry::{Deps, ToolRegistry};
