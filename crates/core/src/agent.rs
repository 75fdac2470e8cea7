//! Agents: a name, instructions, tools and limits.

use std::sync::Arc;

use crate::error::Error;
use crate::history::HistoryBudget;
use crate::message::Message;
use crate::run::{Limits, ModelSettings, Run};
use crate::tool::Tool;
use crate::toolbox::Toolbox;

/// An agent: what it is told, which tools it may call and within which limits.
#[derive(Debug)]
pub struct Agent {
    /// The agent's name (also its tool name when used by a router).
    pub name: String,
    /// What the agent is for, in one sentence (shown to routers).
    pub description: String,
    /// The system instructions.
    pub instructions: String,
    /// The tools it may call.
    pub tools: Toolbox,
    /// Step, token and time limits of each run.
    pub limits: Limits,
    /// How much history each model call is sent.
    pub history: HistoryBudget,
    /// Temperature and reply length of each model call.
    pub settings: ModelSettings,
    /// Its instructions hold data from outside the run (text that people saved, such as verified examples),
    /// named by its source: each of its runs starts tainted by it, as if a tool had read it
    /// ([`Run::tainted_by`]). `None` for instructions that are the operator's alone.
    pub tainted_by: Option<String>,
}

impl Agent {
    /// Starts building an agent named `name` (also its tool name when a router calls it).
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use steward_core::{Agent, Limits, ToolOutput, TypedTool};
    ///
    /// /// No arguments.
    /// #[derive(Deserialize, JsonSchema)]
    /// struct NoArgs {}
    ///
    /// let ping = TypedTool::new("ping", "Answers pong.", |_ctx, _args: NoArgs| async {
    ///     Ok(ToolOutput::text("pong"))
    /// });
    /// let agent = Agent::builder("helper")
    ///     .description("Checks that things answer.")
    ///     .instructions("You check that things answer.")
    ///     .tool(ping)
    ///     .limits(Limits { max_steps: 5, ..Limits::default() })
    ///     .build()?;
    /// assert_eq!(agent.tools.names().collect::<Vec<_>>(), ["ping"]);
    /// # Ok::<(), steward_core::Error>(())
    /// ```
    pub fn builder(name: impl Into<String>) -> AgentBuilder {
        AgentBuilder {
            name: name.into(),
            description: String::new(),
            instructions: String::new(),
            tools: Toolbox::new(),
            problems: Vec::new(),
            limits: Limits::default(),
            history: HistoryBudget::default(),
            settings: ModelSettings::default(),
        }
    }

    /// An agent with default limits and an unlimited history budget.
    pub fn new(name: impl Into<String>, instructions: impl Into<String>, tools: Toolbox) -> Self {
        Self {
            name: name.into(),
            description: String::new(),
            instructions: instructions.into(),
            tools,
            limits: Limits::default(),
            history: HistoryBudget::default(),
            settings: ModelSettings::default(),
            tainted_by: None,
        }
    }

    /// The same agent with a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The same agent with other limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The same agent with another history budget.
    pub fn with_history(mut self, history: HistoryBudget) -> Self {
        self.history = history;
        self
    }

    /// The same agent with other model settings (temperature, reply length).
    pub fn with_settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings;
        self
    }

    /// The same agent, its instructions holding data from outside the run from `source` (`None`: they hold
    /// none): its runs start tainted by it.
    pub fn with_taint(mut self, source: Option<&str>) -> Self {
        self.tainted_by = source.map(str::to_owned);
        self
    }

    /// A new run of this agent for the user's input.
    pub fn start(&self, input: &str) -> Run {
        self.start_with_id(input, Run::generate_id())
    }

    /// A new run with a given id (a sub-run's id is derived from the call that started it).
    pub fn start_with_id(&self, input: &str, id: String) -> Run {
        self.start_after(&[], input, id)
    }

    /// A new run with a given id that continues a conversation: `history` (earlier turns' messages, normally
    /// user questions and assistant answers) comes between the instructions and the user's input.
    pub fn start_after(&self, history: &[Message], input: &str, id: String) -> Run {
        let mut messages = Vec::with_capacity(2 + history.len());
        if !self.instructions.is_empty() {
            messages.push(Message::system(self.instructions.clone()));
        }
        messages.extend(history.iter().cloned());
        messages.push(Message::user(input));
        Run::new(id, self.name.clone(), messages, self.limits, self.history)
            .with_settings(self.settings)
            .with_taint(self.tainted_by.as_deref())
    }
}

/// Builds an [`Agent`]; made by [`Agent::builder`].
///
/// A tool that cannot be added (an invalid or duplicate name, a schema that does not compile) does not stop
/// the chain: every such problem is collected and [`AgentBuilder::build`] reports them all in one
/// [`Error::InvalidAgent`].
#[derive(Debug)]
#[must_use = "an agent builder does nothing until `build` is called"]
pub struct AgentBuilder {
    name: String,
    description: String,
    instructions: String,
    tools: Toolbox,
    problems: Vec<Error>,
    limits: Limits,
    history: HistoryBudget,
    settings: ModelSettings,
}

impl AgentBuilder {
    /// The system instructions.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = instructions.into();
        self
    }

    /// What the agent is for, in one sentence (a router reads it to choose the agent).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Adds a tool.
    pub fn tool(self, tool: impl Tool + 'static) -> Self {
        self.shared_tools([Arc::new(tool) as Arc<dyn Tool>])
    }

    /// Adds tools that are already shared (for example [`crate::AgentTool`]s or a toolkit's tools).
    pub fn shared_tools(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        for tool in tools {
            if let Err(problem) = self.tools.add(tool) {
                self.problems.push(problem);
            }
        }
        self
    }

    /// Step, token and time limits of each run.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// How much history each model call is sent.
    pub fn history(mut self, history: HistoryBudget) -> Self {
        self.history = history;
        self
    }

    /// Temperature and reply length of each model call.
    pub fn settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings;
        self
    }

    /// The agent, or [`Error::InvalidAgent`] listing every tool that could not be added.
    pub fn build(self) -> Result<Agent, Error> {
        if !self.problems.is_empty() {
            return Err(Error::InvalidAgent {
                agent: self.name,
                problems: self.problems,
            });
        }
        Ok(Agent {
            name: self.name,
            description: self.description,
            instructions: self.instructions,
            tools: self.tools,
            limits: self.limits,
            history: self.history,
            settings: self.settings,
            tainted_by: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_whose_instructions_hold_outside_data_starts_its_runs_tainted() {
        let plain = Agent::new("a", "You help.", Toolbox::new());
        assert_eq!(plain.start("hi").tainted_by(), None);
        let holding = plain.with_taint(Some("saved examples"));
        assert_eq!(holding.start("hi").tainted_by(), Some("saved examples"));
        assert_eq!(
            holding.start_after(&[], "hi", "r1".to_owned()).tainted_by(),
            Some("saved examples")
        );
        assert_eq!(holding.with_taint(None).start("hi").tainted_by(), None);
    }
}
