//! # steward-app
//!
//! Assembly of Steward: agents and tools as data ([`AgentDef`](agents::AgentDef), the tool registry), the
//! `steward.yaml` configuration, the composition root ([`App`](app::App)) that owns models, databases,
//! registry and store, and the durable run store.
//!
//! Tools can be declared in config rather than written in Rust: see [`tools`] (`kind: sql` and `kind: http`).

pub mod tools;
