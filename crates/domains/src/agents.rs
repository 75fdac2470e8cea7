//! The built-in agents: `expenses`, `orders`, `tasks`, `analyst`, and the router `assistant` whose tools are
//! those agents. Their instructions aim at reliability: ask instead of guessing, take dates from
//! `current_date`, prefer the typed tools to free SQL.

use std::sync::Arc;

use steward_core::{Agent, AgentTool, Limits, Model, Observer, Tool, Toolbox};
use steward_sql::{Database, SqlToolkit};

use crate::cells;
use crate::common::{Clock, calculator, current_date};
use crate::store::Store;
use crate::{expenses, orders, tasks};

/// The agents there are.
pub const AGENTS: &[&str] = &["assistant", "expenses", "orders", "tasks", "analyst"];

/// What went wrong building agents.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// No agent has that name.
    #[error(
        "there is no agent named `{0}`; the agents are: assistant, expenses, orders, tasks, analyst"
    )]
    Unknown(String),
    /// The database could not be read.
    #[error(transparent)]
    Sql(#[from] steward_sql::SqlError),
    /// A tool could not be added.
    #[error(transparent)]
    Tools(#[from] steward_core::Error),
}

/// Tokens of schema context in the analyst's instructions.
const ANALYST_CONTEXT: usize = 1500;

/// The business database with everything the agents need.
#[derive(Clone, Debug)]
pub struct Domain {
    /// Reads, idempotent writes, the clock.
    pub store: Store,
    /// The SQL tools for the analyst.
    pub kit: Arc<SqlToolkit>,
    categories: Vec<String>,
}

const COMMON_RULES: &str = "- If information you need is missing, ask the user for it; never guess or invent values.
- Dates: call current_date for today, yesterday, last month and the like. Never assume today's date.
- Arithmetic: call calculator; never compute in your head.
- Report what the tools returned, exactly; if a tool refuses something, say why and what would work.";

impl Domain {
    /// Opens the business database: reads its catalog and expense categories.
    pub async fn open(db: Arc<Database>, clock: Clock) -> Result<Self, AgentError> {
        let kit = SqlToolkit::new(db.clone()).await?;
        let store = Store::new(db, clock);
        let categories = store
            .read("SELECT name FROM expense_categories ORDER BY name", &[])
            .await
            .ok()
            .and_then(|r| {
                cells::rows(&r)
                    .map(|row| row.text(0).ok())
                    .collect::<Option<Vec<_>>>()
            })
            // Without readable categories the instructions point to list_expenses instead.
            .unwrap_or_default();
        Ok(Self {
            store,
            kit,
            categories,
        })
    }

    fn with_common(&self, tools: Vec<Arc<dyn Tool>>) -> Result<Toolbox, AgentError> {
        let mut toolbox = Toolbox::new();
        for tool in tools {
            toolbox.add(tool)?;
        }
        toolbox.add(Arc::new(current_date(self.store.clock.clone())))?;
        toolbox.add(Arc::new(calculator()))?;
        Ok(toolbox)
    }

    /// The `expenses` agent.
    pub fn expenses(&self, limits: Limits) -> Result<Agent, AgentError> {
        let s = &self.store;
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(expenses::add_expense(s.clone())),
            Arc::new(expenses::list_expenses(s.clone())),
            Arc::new(expenses::expense_summary(s.clone())),
        ];
        let instructions = format!(
            "You record expenses and answer questions about spending.
- To record one, call add_expense with the description, the date and two of net amount, gross amount and tax \
rate; the third is computed by the tool, never by you. An amount the user paid is gross unless they say net or \
before tax.
- For totals use expense_summary; to see individual expenses use list_expenses.
- Categories: {}.
{COMMON_RULES}",
            if self.categories.is_empty() { "see list_expenses".to_owned() } else { self.categories.join(", ") }
        );
        Ok(Agent::new("expenses", instructions, self.with_common(tools)?)
            .with_description("Records expenses and answers questions about spending (totals by category or month, lists).")
            .with_limits(limits))
    }

    /// The `orders` agent.
    pub fn orders(&self, limits: Limits) -> Result<Agent, AgentError> {
        let s = &self.store;
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(orders::get_order(s.clone())),
            Arc::new(orders::find_orders(s.clone())),
            Arc::new(orders::order_stats(s.clone())),
        ];
        let instructions = format!(
            "You answer questions about customers' orders: status, delivery date (ETA), shipment, items, totals.
- Order codes, which users also call order numbers, are exactly 10 upper-case letters (e.g. QZKDLWPRTM); look one \
up with get_order. Write a code the user gave in upper case.
- Without a code, search with find_orders (customer name or email, status, dates); it returns small pages.
- For counts, revenue and best sellers use order_stats.
- Never invent an order code, a status or a date; if nothing matches, say so.
{COMMON_RULES}"
        );
        Ok(Agent::new("orders", instructions, self.with_common(tools)?)
            .with_description("Answers questions about orders: status, delivery date, shipment, items, order statistics.")
            .with_limits(limits))
    }

    /// The `tasks` agent.
    pub fn tasks(&self, limits: Limits) -> Result<Agent, AgentError> {
        let s = &self.store;
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(tasks::get_inbox_tasks(s.clone())),
            Arc::new(tasks::get_projects(s.clone())),
            Arc::new(tasks::get_tasks(s.clone())),
            Arc::new(tasks::create_project(s.clone())),
            Arc::new(tasks::move_task(s.clone())),
            Arc::new(tasks::add_task(s.clone())),
            Arc::new(tasks::complete_task(s.clone())),
        ];
        let instructions = format!(
            "You organise the user's tasks into projects.
- get_inbox_tasks lists the tasks without a project; get_projects lists the projects with their ids.
- To file a task, call move_task with a task id and a project id taken from those tools.
- Put each task in the project that fits; create a project only when none fits. If create_project says the \
project exists, use the id it gives.
- When asked to sort the inbox, finish by calling get_inbox_tasks again to check that it is empty.
- There is no way to delete tasks or projects; say so if asked.
{COMMON_RULES}"
        );
        Ok(Agent::new("tasks", instructions, self.with_common(tools)?)
            .with_description("Manages tasks and projects: the inbox, creating projects, moving, adding and completing tasks.")
            .with_limits(limits))
    }

    /// The `analyst`: SQL tools over the whole database. With a question, the schema most relevant to it is in
    /// its instructions.
    pub fn analyst(&self, question: Option<&str>, limits: Limits) -> Result<Agent, AgentError> {
        Ok(Agent::new("analyst", self.kit.analyst_instructions(question, ANALYST_CONTEXT), self.with_common(self.kit.tools())?)
            .with_description("Answers any other question about the business data (customers, products, sales, spending) with read-only SQL.")
            .with_limits(limits))
    }

    /// The router: its tools are the other agents, driven by `model`. Their runs report to the caller's observer
    /// through the tool context (`_observer` is kept for callers of the old signature).
    pub fn assistant(
        &self,
        model: Arc<dyn Model>,
        _observer: Arc<dyn Observer>,
        limits: Limits,
    ) -> Result<Agent, AgentError> {
        let sub_limits = Limits {
            max_steps: 12,
            ..limits
        };
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        for agent in [
            self.expenses(sub_limits)?,
            self.orders(sub_limits)?,
            self.tasks(sub_limits)?,
            self.analyst(None, sub_limits)?,
        ] {
            tools.push(Arc::new(AgentTool::new(Arc::new(agent), model.clone())));
        }
        let instructions = format!(
            "You are Steward, an assistant for a small business. Hand each request to the specialist that handles it:
- expenses: recording expenses and questions about spending;
- orders: order status, delivery dates, shipments and order statistics;
- tasks: the task inbox, projects, adding, moving and completing tasks;
- analyst: any other question about the business data.
Pass the user's request in full, with every detail they gave (amounts, dates, codes, names). A request with \
several parts may need several specialists. Then answer the user briefly from what they return.
{COMMON_RULES}"
        );
        Ok(Agent::new("assistant", instructions, self.with_common(tools)?)
            .with_description("Steward's assistant: routes each request to the expenses, orders, tasks or analyst agent.")
            .with_limits(limits))
    }

    /// An agent by name (`assistant` needs the model its sub-agents run on).
    pub fn agent(
        &self,
        name: &str,
        model: Arc<dyn Model>,
        observer: Arc<dyn Observer>,
        question: Option<&str>,
        limits: Limits,
    ) -> Result<Agent, AgentError> {
        match name {
            "assistant" => self.assistant(model, observer, limits),
            "expenses" => self.expenses(limits),
            "orders" => self.orders(limits),
            "tasks" => self.tasks(limits),
            "analyst" => self.analyst(question, limits),
            other => Err(AgentError::Unknown(other.to_owned())),
        }
    }
}
