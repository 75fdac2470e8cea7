//! What the model and the validator know about a tool: its name, description, schema and annotations.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::schema::{self, SchemaStyle};

/// Hints about what a tool does, used by policies and UIs (the same vocabulary as MCP's tool annotations).
///
/// Built with chained setters, so that new hints can be added without breaking anyone:
///
/// ```
/// use steward_core::ToolAnnotations;
///
/// let hints = ToolAnnotations::new().read_only(true).idempotent(true).title("Order lookup");
/// assert!(hints.read_only && !hints.destructive);
/// assert_eq!(hints.title.as_deref(), Some("Order lookup"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// A human-readable name for UIs (MCP's `title`); the model calls the tool by its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool only reads; calls to read-only tools in one response may run concurrently.
    #[serde(default)]
    pub read_only: bool,
    /// The tool may destroy or overwrite data.
    #[serde(default)]
    pub destructive: bool,
    /// Calling the tool twice with the same arguments has the effect of calling it once.
    #[serde(default)]
    pub idempotent: bool,
    /// Every call waits for a person's approval before it runs.
    #[serde(default)]
    pub needs_approval: bool,
    /// The tool reaches outside systems (the web, a third-party API) rather than a closed set of Steward's
    /// own data (MCP's `openWorldHint`).
    #[serde(default)]
    pub open_world: bool,
}

impl ToolAnnotations {
    /// No hints: not read-only, not destructive, not idempotent, no approval, closed world, no title.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same hints with a human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The same hints, saying whether the tool only reads.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// The same hints, saying whether the tool may destroy or overwrite data.
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.destructive = destructive;
        self
    }

    /// The same hints, saying whether a repeated call has the effect of one.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// The same hints, saying whether every call waits for a person's approval.
    pub fn needs_approval(mut self, needs_approval: bool) -> Self {
        self.needs_approval = needs_approval;
        self
    }

    /// The same hints, saying whether the tool reaches outside systems.
    pub fn open_world(mut self, open_world: bool) -> Self {
        self.open_world = open_world;
        self
    }
}

/// Everything the model and the validator need to know about a tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls the tool by (`^[a-zA-Z0-9_-]{1,64}$`).
    pub name: String,
    /// What the tool does and when to use it.
    pub description: String,
    /// The full JSON Schema of the arguments; the validator checks calls against it.
    pub parameters: Value,
    /// What the tool does to the world.
    #[serde(default)]
    pub annotations: ToolAnnotations,
    /// Show every parameter to the model as optional; the validator then reports what is missing.
    #[serde(default)]
    pub lenient: bool,
}

impl ToolSpec {
    /// A spec with the given name, description and argument schema, no annotations, not lenient.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
            annotations: ToolAnnotations::default(),
            lenient: false,
        }
    }

    /// The same spec with these annotations.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// The argument schema as the model is shown it, in the given style.
    pub fn model_parameters(&self, style: SchemaStyle) -> Value {
        schema::render(&self.parameters, style, self.lenient)
    }
}
