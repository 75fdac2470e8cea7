//! # steward-app
//!
//! Assembly of Steward: agents and tools as data, the `steward.yaml` configuration, the composition root that
//! owns models, databases, registry and store, and the durable run store ([`store`]).
//!
//! The run store keeps every run (sub-runs of a router included), its events and its tool calls, written as
//! they happen by a [`StoreObserver`](store::StoreObserver) attached to the runner:
//!
//! ```no_run
//! use std::sync::Arc;
//! use steward_app::store::{RunStore, StoreObserver};
//! use steward_core::{Agent, ModelResponse, Runner, ScriptedModel, Toolbox};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let store = RunStore::open(None).await?; // $XDG_DATA_HOME/steward/store.sqlite
//! let observer = Arc::new(StoreObserver::new(store.clone())?);
//! let agent = Agent::new("helper", "You help.", Toolbox::new());
//! let model = ScriptedModel::new([ModelResponse::text("Hello!")]);
//! let runner = Runner::new(Arc::new(agent), Arc::new(model)).with_observer(observer.clone());
//! runner.run("hi").await;
//! observer.flush().await?;
//! for run in store.list(10, 0).await? {
//!     println!("{} {} {}", run.id, run.input, run.outcome);
//! }
//! // Every settled tool call is also in a hash-chained audit trail.
//! let report = store.verify_audit().await?;
//! assert!(report.is_intact(), "{:?}", report.broken);
//! # Ok(()) }
//! ```
//!
//! Tools can be declared in config rather than written in Rust: see [`tools`] (`kind: sql` and `kind: http`).

pub mod agents;
pub mod app;
mod audited;
pub mod changes;
mod checks;
pub mod config;
mod declared;
pub use declared::database_identity;
pub mod direct;
pub mod error;
pub mod examples;
pub mod models;
pub mod registry;
pub mod roles;
pub mod server_def;
pub mod service;
pub mod store;
pub mod telemetry;
pub mod tools;

pub use agents::{AgentDef, LimitsDef, ModeDef};
pub use app::{App, AppOptions, Business, DatabaseChoice, choose_database};
pub use audited::Surface;
pub use checks::{StoredDocument, parse_knowledge};
pub use config::Config;
pub use error::{AppError, ErrorKind};
pub use examples::{CONFIRM_TIMEOUT, EXAMPLES_FRESH, ExampleCheck, Imported, ShownExample};
pub use models::{ModelCache, ModelChoice, RunModels};
pub use registry::{Deps, ToolRegistry};
pub use roles::{PrincipalDef, RoleDef, RolePolicy, resolve_principal};
pub use server_def::{OidcDef, ServerDef, ServerLimits, TokenDef};
pub use service::{Parked, Turn, TurnOptions};
pub use telemetry::{Telemetry, TelemetryConfig};

use std::path::PathBuf;

/// The user's data directory: `$XDG_DATA_HOME`, or `~/.local/share`, or the current directory when neither is
/// known. Steward keeps its files in `steward/` under it (the demo database, the run store).
pub fn data_dir() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Where `steward demo` puts the demo database: `steward/demo.sqlite` in [`data_dir`].
pub fn demo_path() -> PathBuf {
    data_dir().join("steward").join("demo.sqlite")
}
