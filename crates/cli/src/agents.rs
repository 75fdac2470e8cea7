//! Which database and which agent a command runs: `--db` (or `STEWARD_DB`, or the demo database when it exists)
//! and `--agent` (the router `assistant` on the demo database, the `analyst` on any other).

use crate::out::note;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::bail;
use clap::Args;
use steward_core::{Agent, Limits, Model, Observer, Toolbox};
use steward_domains::common::{Clock, calculator, current_date};
use steward_domains::{AGENTS, Domain, demo};

/// The database and agent flags of `ask` and `chat`.
#[derive(Args, Debug, Clone)]
pub(crate) struct AgentArgs {
    /// The business database: sqlite://path, postgres://…, mysql://… (default: the demo database, once
    /// `steward demo` made it).
    #[arg(long, env = "STEWARD_DB", hide_env_values = true, value_name = "URL")]
    pub(crate) db: Option<String>,

    /// The agent: assistant (routes to the others), expenses, orders, tasks or analyst. Default: assistant on
    /// the demo database, analyst on any other database.
    #[arg(long, value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(AGENTS))]
    pub(crate) agent: Option<String>,
}

/// Where `steward demo` puts the demo database: `$XDG_DATA_HOME/steward/demo.sqlite` or
/// `~/.local/share/steward/demo.sqlite`.
pub(crate) fn demo_path() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."))
        .join("steward")
        .join("demo.sqlite")
}

/// The business database, when there is one.
pub(crate) struct Business {
    pub(crate) domain: Option<Domain>,
    /// True when the database has the demo's tables (the expenses, orders and tasks agents need them).
    pub(crate) demo_schema: bool,
    pub(crate) url: String,
    /// What the database role may do beyond reading, for the trace.
    pub(crate) privileges: Option<String>,
}

impl Business {
    /// Opens `--db`, or the demo database when it exists, or nothing.
    pub(crate) async fn open(db: Option<&str>, clock: Clock) -> anyhow::Result<Self> {
        let url = match db {
            Some(url) => url.to_owned(),
            None => {
                let path = demo_path();
                if !path.is_file() {
                    return Ok(Self {
                        domain: None,
                        demo_schema: false,
                        url: String::new(),
                        privileges: None,
                    });
                }
                format!("sqlite://{}", path.display())
            }
        };
        let (db, catalog) = crate::db::open(&url).await?;
        let demo_schema = demo::has_schema(&catalog);
        let privileges = db.privileges().and_then(steward_sql::Privileges::notice);
        let domain = Domain::open(db.clone(), clock).await?;
        Ok(Self {
            domain: Some(domain),
            demo_schema,
            url,
            privileges,
        })
    }

    /// The agent a command runs when `--agent` is not given.
    pub(crate) fn default_agent(&self) -> &'static str {
        if self.domain.is_none() || self.demo_schema {
            "assistant"
        } else {
            "analyst"
        }
    }

    /// Builds an agent by name.
    pub(crate) fn agent(
        &self,
        name: &str,
        model: Arc<dyn Model>,
        observer: Arc<dyn Observer>,
        question: Option<&str>,
        clock: Clock,
        limits: Limits,
    ) -> anyhow::Result<Agent> {
        let Some(domain) = &self.domain else {
            if name == "assistant" {
                return basic_assistant(clock, limits);
            }
            bail!(
                "the {name} agent needs a database: run `steward demo` to create the demo database, or pass --db URL"
            );
        };
        if !self.demo_schema && matches!(name, "assistant" | "expenses" | "orders" | "tasks") {
            bail!(
                "the {name} agent needs the demo's tables (expenses, orders, tasks), which {} does not have; \
                 use --agent analyst for questions over this database, or run `steward demo`",
                steward_core::redact_url(&self.url)
            );
        }
        Ok(domain.agent(name, model, observer, question, limits)?)
    }
}

const ASSISTANT: &str = "You are Steward, an assistant that acts carefully on the user's behalf.
- Call current_date whenever a date matters; never guess today's date.
- Call calculator for every calculation; never do arithmetic in your head.
- If information you need is missing, ask the user for it instead of guessing.
- Answer briefly and plainly, and say what you did.";

/// The assistant without a database: the date and a calculator.
fn basic_assistant(clock: Clock, limits: Limits) -> anyhow::Result<Agent> {
    let tools = Toolbox::new()
        .with(current_date(clock))?
        .with(calculator())?;
    Ok(Agent::new("assistant", ASSISTANT, tools)
        .with_description("Answers questions with the date and a calculator.")
        .with_limits(limits))
}

/// What `ask` and `chat` run: the runner over the chosen agent and model, and the trace that watches it.
pub(crate) struct Session {
    pub(crate) runner: steward_core::Runner,
    pub(crate) trace: Arc<crate::trace::Trace>,
    pub(crate) model_name: String,
}

impl Session {
    /// Opens the database, connects the model and builds the agent; `question` ranks the analyst's schema.
    pub(crate) async fn open(
        agents: &AgentArgs,
        model: &crate::setup::ModelArgs,
        trace: bool,
        question: Option<&str>,
    ) -> anyhow::Result<Self> {
        let prices = model.prices()?;
        let clock = crate::setup::clock()?;
        let business = Business::open(agents.db.as_deref(), clock.clone()).await?;
        let connected = model.connect().await?;
        let model_name = connected.name().to_owned();
        let trace = Arc::new(crate::trace::Trace::new(trace, &model_name, prices));
        let name = agents
            .agent
            .clone()
            .unwrap_or_else(|| business.default_agent().to_owned());
        let agent = business.agent(
            &name,
            connected.clone(),
            trace.clone(),
            question,
            clock,
            model.limits(),
        )?;
        if trace.enabled()
            && let Some(notice) = &business.privileges
        {
            note!("{}", crate::style::Style::stderr().dim(notice));
        }
        if business.domain.is_none() && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            note!(
                "{}",
                crate::style::Style::stderr()
                    .dim("(no database: the assistant has only the date and a calculator; `steward demo` creates the demo database)")
            );
        }
        let runner =
            steward_core::Runner::new(Arc::new(agent), connected).with_observer(trace.clone());
        Ok(Self {
            runner,
            trace,
            model_name,
        })
    }
}
