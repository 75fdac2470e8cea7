//! # steward-core
//!
//! The agent kernel of Steward: messages, typed tools, argument validation, the run state machine, the
//! [`Model`] trait, events, transcripts and policies. No network, no database.
//!
//! A tool is a Rust struct of arguments plus an async function. Its JSON Schema is generated from the struct
//! (doc comments become descriptions); every call is validated against it *before* the tool runs, and every
//! problem goes back to the model as an observation that names the field and says how to fix it.
//! A [`Run`] is a state machine with no I/O; a [`Runner`] drives it with a [`Model`], an [`Agent`]'s tools
//! and a [`Policy`], and reports [`Event`]s to an [`Observer`]. [`Runner::ask`] is the short way when only the
//! answer matters.
//!
//! ```
//! use std::sync::Arc;
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use steward_core::{
//!     Agent, ModelResponse, Outcome, RunStatus, Runner, ScriptedModel, ToolCall, ToolOutput, TypedTool,
//! };
//!
//! /// Arguments of `add`.
//! #[derive(Deserialize, JsonSchema)]
//! struct Add {
//!     /// First term.
//!     a: f64,
//!     /// Second term.
//!     b: f64,
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let add = TypedTool::new("add", "Adds two numbers.", |_ctx, args: Add| async move {
//!     Ok(ToolOutput::text((args.a + args.b).to_string()))
//! })
//! .read_only();
//! let agent = Agent::builder("calc").instructions("You add numbers.").tool(add).build()?;
//! let model = ScriptedModel::new([
//!     ModelResponse::tool_calls(vec![ToolCall::new("c1", "add", r#"{"a": 2, "b": 3}"#)]),
//!     ModelResponse::text("2 + 3 = 5"),
//! ]);
//! let runner = Runner::new(Arc::new(agent), Arc::new(model));
//! let (run, status) = runner.run("What is 2 + 3?").await;
//! assert_eq!(status, RunStatus::Done(Outcome::Answered { answer: "2 + 3 = 5".into() }));
//! assert_eq!(run.messages()[3].text(), Some("5")); // the tool's observation
//! # Ok::<(), steward_core::Error>(())
//! # }).unwrap();
//! ```

mod agent;
mod agent_tool;
mod approval;
mod budget;
mod context;
pub mod data;
mod error;
mod event;
mod final_answer;
mod history;
mod message;
mod model;
mod outcome;
mod policy;
mod principal;
pub mod redact;
mod run;
mod run_failed;
mod runner;
pub mod schema;
mod scripted;
mod spec;
mod suspension;
pub mod template;
mod tool;
mod toolbox;
mod typed;
mod validate;

pub use agent::{Agent, AgentBuilder};
pub use agent_tool::{AgentRequest, AgentTool};
pub use approval::{Approval, ApprovalRequest};
pub use budget::RunBudget;
pub use context::ToolContext;
pub use error::Error;
pub use event::{Event, EventLog, EventRecord, Fanout, NoObserver, Observer};
pub use final_answer::{FinalAnswerArgs, final_answer};
pub use history::{HistoryBudget, Retention, cut_output, estimate_tokens, message_tokens};
pub use message::{Message, Role, ToolCall};
pub use model::{
    Capabilities, FailureCause, FinishReason, Model, ModelError, ModelRequest, ModelResponse,
    ResponseFormat, StreamDelta, ToolChoice, ToolReplay, Usage,
};
pub use outcome::{Outcome, Transcript};
pub use policy::{AnnotationPolicy, Decision, Policy, RunFacts};
pub use principal::Principal;
pub use redact::redact_url;
pub use run::{
    CheckedCall, FINAL_ANSWER, Invocation, Limits, ModelSettings, Resumption, Run, StagedCall, Step,
};
pub use run_failed::RunFailed;
pub use runner::{RunStatus, Runner};
pub use schema::{SchemaStyle, schema_for};
pub use scripted::ScriptedModel;
pub use spec::{ToolAnnotations, ToolSpec};
pub use suspension::{DecidedCall, Suspension, ToolProgress};
pub use tool::{
    AppliedChanges, Applier, FieldChange, RowChange, RowOp, Tool, ToolData, ToolError, ToolOutput,
};
pub use toolbox::Toolbox;
pub use typed::{TypedTool, parse_args};
pub use validate::{ArgumentValidator, Rejection, RejectionKind, Violation, ViolationKind};

/// Re-exported so that tool authors derive schemas with the same version.
pub use schemars;

/// The Rust blocks of the repository's README, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The Rust blocks of the repository's `docs/library.md` (writing a tool, running an agent), compiled and run as
/// doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/library.md")]
pub struct LibraryDoctests;

// Agents and runners are shared across tasks and threads (a server runs many runs at once): keep them so.
const _: fn() = || {
    fn check<T: Send + Sync>() {}
    check::<Agent>();
    check::<Runner>();
    check::<Run>();
    check::<Toolbox>();
    check::<RunFailed>();
};
