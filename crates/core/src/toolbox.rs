//! The set of tools an agent may call, each with its compiled argument validator.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::error::Error;
use crate::message::ToolCall;
use crate::spec::ToolSpec;
use crate::tool::Tool;
use crate::validate::{ArgumentValidator, Rejection};

struct Entry {
    tool: Arc<dyn Tool>,
    validator: ArgumentValidator,
}

/// An agent's tools by name. Adding a tool compiles its validator once; checking a call is then cheap.
#[derive(Default)]
pub struct Toolbox {
    entries: Vec<Entry>,
    index: HashMap<String, usize>,
    specs: Arc<[ToolSpec]>,
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Toolbox {
    /// An empty toolbox.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool (builder form).
    pub fn with(mut self, tool: impl Tool + 'static) -> Result<Self, Error> {
        self.add(Arc::new(tool))?;
        Ok(self)
    }

    /// Adds a tool; its name must be valid and not taken, and its schema must compile.
    pub fn add(&mut self, tool: Arc<dyn Tool>) -> Result<(), Error> {
        let spec = tool.spec();
        let name = spec.name.clone();
        if !valid_name(&name) {
            return Err(Error::InvalidToolName(name));
        }
        if self.index.contains_key(&name) {
            return Err(Error::DuplicateTool(name));
        }
        let validator = ArgumentValidator::new(&spec.parameters).map_err(|e| match e {
            Error::InvalidSchema(why) => Error::InvalidSchema(format!("tool `{name}`: {why}")),
            other => other,
        })?;
        let mut specs: Vec<ToolSpec> = self.specs.iter().cloned().collect();
        specs.push(spec.clone());
        self.specs = specs.into();
        self.index.insert(name, self.entries.len());
        self.entries.push(Entry { tool, validator });
        Ok(())
    }

    /// The specs of every tool, in the order they were added (shared, cheap to clone).
    pub fn specs(&self) -> Arc<[ToolSpec]> {
        Arc::clone(&self.specs)
    }

    /// The tool with that name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.index.get(name).map(|&i| &self.entries[i].tool)
    }

    /// The tool names, in the order they were added.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.specs.iter().map(|s| s.name.as_str())
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no tools.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Checks a call before it runs: the tool exists and the arguments are valid JSON matching its schema.
    /// Returns the arguments to run the tool with.
    pub fn check(&self, call: &ToolCall) -> Result<(&Arc<dyn Tool>, Value), Rejection> {
        let Some(&i) = self.index.get(&call.name) else {
            return Err(Rejection::unknown_tool(&call.name, self.names()));
        };
        let entry = &self.entries[i];
        let args = entry.validator.check(&call.name, &call.arguments)?;
        Ok((&entry.tool, args))
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
