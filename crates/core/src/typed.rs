//! Typed tools: a Rust struct of arguments and an async function.

use std::future::Future;
use std::marker::PhantomData;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::schema::schema_for;
use crate::tool::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

/// A tool written as a struct of arguments and an async function.
///
/// The argument schema is generated from `A` (its doc comments become the descriptions the model reads);
/// arguments are validated against it before the function runs, then deserialised into `A`.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use steward_core::{ToolOutput, TypedTool};
///
/// /// Arguments of `greet`.
/// #[derive(Deserialize, JsonSchema)]
/// struct Greet {
///     /// Who to greet.
///     name: String,
/// }
///
/// let greet = TypedTool::new("greet", "Greets someone by name.", |_ctx, args: Greet| async move {
///     Ok(ToolOutput::text(format!("Hello, {}!", args.name)))
/// })
/// .read_only();
/// # let _ = greet;
/// ```
pub struct TypedTool<A, F> {
    spec: ToolSpec,
    handler: F,
    _args: PhantomData<fn(A)>,
}

impl<A, F, Fut> TypedTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(ToolContext, A) -> Fut + Send + Sync,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send,
{
    /// A tool named `name` that runs `handler` with deserialised arguments.
    pub fn new(name: impl Into<String>, description: impl Into<String>, handler: F) -> Self {
        Self {
            spec: ToolSpec::new(name, description, schema_for::<A>()),
            handler,
            _args: PhantomData,
        }
    }

    /// Marks the tool read-only (calls in one response may then run concurrently).
    pub fn read_only(mut self) -> Self {
        self.spec.annotations.read_only = true;
        self
    }

    /// Marks the tool destructive.
    pub fn destructive(mut self) -> Self {
        self.spec.annotations.destructive = true;
        self
    }

    /// Marks the tool idempotent.
    pub fn idempotent(mut self) -> Self {
        self.spec.annotations.idempotent = true;
        self
    }

    /// Every call waits for a person's approval.
    pub fn needs_approval(mut self) -> Self {
        self.spec.annotations.needs_approval = true;
        self
    }

    /// Shows every parameter to the model as optional; missing ones are reported by the validator.
    pub fn lenient(mut self) -> Self {
        self.spec.lenient = true;
        self
    }
}

#[async_trait]
impl<A, F, Fut> Tool for TypedTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(ToolContext, A) -> Fut + Send + Sync,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send,
{
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args = parse_args::<A>(args)?;
        (self.handler)(ctx.clone(), args).await
    }
}

/// Deserialises validated arguments into a typed struct; a mismatch the schema did not catch becomes an
/// error the model can act on.
pub fn parse_args<A: DeserializeOwned>(args: Value) -> Result<A, ToolError> {
    serde_json::from_value(args).map_err(|e| {
        ToolError::new(format!(
            "The arguments could not be read: {e}. Correct them to match the tool's parameters."
        ))
    })
}
