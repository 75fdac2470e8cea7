//! Agents: a name, instructions, tools and limits.

use crate::history::HistoryBudget;
use crate::message::Message;
use crate::run::{Limits, ModelSettings, Run};
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
}

impl Agent {
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

    /// A new run of this agent for the user's input.
    pub fn start(&self, input: &str) -> Run {
        self.start_with_id(input, Run::generate_id())
    }

    /// A new run with a given id (a sub-run's id is derived from the call that started it).
    pub fn start_with_id(&self, input: &str, id: String) -> Run {
        let mut messages = Vec::with_capacity(2);
        if !self.instructions.is_empty() {
            messages.push(Message::system(self.instructions.clone()));
        }
        messages.push(Message::user(input));
        Run::new(id, self.name.clone(), messages, self.limits, self.history)
            .with_settings(self.settings)
    }
}
