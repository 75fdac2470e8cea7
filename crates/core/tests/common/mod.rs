//! Fixtures shared by the integration tests: small typed tools that count and record their calls.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use steward_core::{
    Agent, EventLog, Message, ModelResponse, Run, RunStatus, Runner, ScriptedModel, Tool, ToolCall,
    ToolOutput, Toolbox, TypedTool,
};

/// Records every call a tool body received.
#[derive(Clone)]
pub struct Calls<T> {
    inner: Arc<Mutex<Vec<T>>>,
}

impl<T> Default for Calls<T> {
    fn default() -> Self {
        Self {
            inner: Arc::new(Mutex::new(Vec::new())),
        }
    }
}

impl<T: Clone> Calls<T> {
    pub fn push(&self, v: T) {
        self.inner.lock().unwrap().push(v);
    }
    pub fn all(&self) -> Vec<T> {
        self.inner.lock().unwrap().clone()
    }
    pub fn len(&self) -> usize {
        self.inner.lock().unwrap().len()
    }
}

/// Arguments of `current_date` (none).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

pub const TODAY: &str = "2026-11-21";

pub fn current_date() -> impl Tool {
    TypedTool::new(
        "current_date",
        "Today's date (YYYY-MM-DD) and weekday.",
        |_ctx, _args: NoArgs| async { Ok(ToolOutput::text(format!("{TODAY} (Saturday)"))) },
    )
    .read_only()
}

/// Arguments of `add_expense`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddExpense {
    /// What was bought.
    pub description: String,
    /// Amount before tax.
    #[schemars(range(min = 0))]
    pub net_amount: f64,
    /// Amount including tax.
    #[schemars(range(min = 0))]
    pub gross_amount: f64,
    /// Tax rate as a fraction, e.g. 0.2 for 20 %.
    #[schemars(range(min = 0, max = 1))]
    pub tax_rate: f64,
    /// The day of the expense.
    #[schemars(extend("format" = "date"))]
    pub date: String,
}

pub fn add_expense(calls: Calls<AddExpense>) -> impl Tool {
    TypedTool::new(
        "add_expense",
        "Records one expense.",
        move |ctx, args: AddExpense| {
            let calls = calls.clone();
            async move {
                calls.push(args.clone());
                Ok(ToolOutput::text(format!(
                    "Recorded expense #{} ({}): {} gross on {} (call {}).",
                    calls.len(),
                    args.description,
                    args.gross_amount,
                    args.date,
                    ctx.call_id
                )))
            }
        },
    )
    .lenient()
}

/// Arguments of `find_orders`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindOrders {
    /// The order code (also called order number): ten upper-case letters.
    #[schemars(regex(pattern = r"^[A-Z]{10}$"))]
    pub order_code: Option<String>,
    /// Order status.
    pub status: Option<Status>,
    /// Most orders to return.
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    Pending,
    InTransit,
    Delivered,
}

pub fn find_orders(calls: Calls<String>) -> impl Tool {
    TypedTool::new(
        "find_orders",
        "Finds orders.",
        move |_ctx, args: FindOrders| {
            let calls = calls.clone();
            async move {
                calls.push(format!("{args:?}"));
                Ok(ToolOutput::text("no orders"))
            }
        },
    )
    .read_only()
}

/// Arguments of a tool that waits.
#[derive(Deserialize, JsonSchema)]
pub struct Wait {
    /// How long to wait, in milliseconds.
    pub ms: u64,
    /// A label returned as the output.
    pub label: String,
}

/// Tracks how many calls are in flight at once, and the order calls started in.
#[derive(Clone, Default)]
pub struct Flight {
    now: Arc<AtomicUsize>,
    pub max: Arc<AtomicUsize>,
    pub started: Calls<String>,
}

impl Flight {
    pub fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }
}

pub fn wait_tool(name: &str, read_only: bool, flight: Flight) -> impl Tool {
    let tool = TypedTool::new(
        name,
        "Waits, then returns the label.",
        move |_ctx, args: Wait| {
            let flight = flight.clone();
            async move {
                flight.started.push(args.label.clone());
                let now = flight.now.fetch_add(1, Ordering::SeqCst) + 1;
                flight.max.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(args.ms)).await;
                flight.now.fetch_sub(1, Ordering::SeqCst);
                Ok(ToolOutput::text(args.label))
            }
        },
    );
    if read_only { tool.read_only() } else { tool }
}

pub fn call(id: &str, name: &str, args: &str) -> ToolCall {
    ToolCall::new(id, name, args)
}

pub fn calls(list: &[(&str, &str, &str)]) -> ModelResponse {
    ModelResponse::tool_calls(list.iter().map(|(i, n, a)| call(i, n, a)).collect())
}

pub fn agent(tools: Toolbox) -> Agent {
    Agent::new("test", "You are a careful assistant.", tools)
}

/// Builds a runner over `agent` and `script`, with an event log.
pub fn runner(agent: Agent, model: Arc<ScriptedModel>) -> (Runner, EventLog) {
    let log = EventLog::new();
    let runner = Runner::new(Arc::new(agent), model).with_observer(Arc::new(log.clone()));
    (runner, log)
}

/// The tool messages of a run as (call id, content, is_error).
pub fn tool_results(run: &Run) -> Vec<(String, String, bool)> {
    run.messages()
        .iter()
        .filter_map(|m| match m {
            Message::Tool {
                call_id,
                content,
                is_error,
                ..
            } => Some((call_id.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

pub fn answer(status: &RunStatus) -> &str {
    match status {
        RunStatus::Done(outcome) => outcome.answer().expect("the run answered"),
        other => panic!("run not done: {other:?}"),
    }
}
