//! # steward-server
//!
//! The HTTP API with streamed runs, the web UI, an OpenAI-compatible facade and the MCP server, on
//! [`steward_app::App`].

pub mod auth;
pub mod chart;
pub mod mcp;
pub mod models;
mod ui;

pub use auth::Caller;
pub use models::{ModelSource, RunModels};
