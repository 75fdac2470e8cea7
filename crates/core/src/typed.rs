//! Typed tools: a Rust struct of arguments and an async function.

use std::future::Future;
use std::marker::PhantomData;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::ToolContext;
use crate::schema::schema_for;
use crate::spec::ToolAnnotations;
use crate::spec::ToolSpec;
use crate::tool::{Tool, ToolError, ToolOutput};

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
///
/// A tool that needs something to work with (a database handle, a client) gets it as state with
/// [`TypedTool::with_state`].
pub struct TypedTool<A, F> {
    spec: ToolSpec,
    handler: F,
    /// Its preview is a dry run of the call (see [`TypedTool::previewed_by_dry_run`]).
    dry_run_preview: bool,
    /// Its calls can be staged, and this applies them (see [`TypedTool::staged_by`]).
    applier: Option<std::sync::Arc<dyn crate::tool::Applier>>,
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
            dry_run_preview: false,
            applier: None,
            _args: PhantomData,
        }
    }

    /// The same tool with these annotations (replacing the ones set so far).
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.spec.annotations = annotations;
        self
    }

    /// Gives the tool a human-readable title for UIs.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.spec.annotations.title = Some(title.into());
        self
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

    /// Previews a call by running it as a dry run ([`ToolContext::dry_run`]): the handler must then write
    /// only inside a transaction it rolls back. The person asked to approve the call sees its real result —
    /// the resolved date, the computed amounts, the id it would get, or the error it would meet.
    pub fn previewed_by_dry_run(mut self) -> Self {
        self.dry_run_preview = true;
        self
    }

    /// Its calls that need approval can be staged ([`Tool::stages`]): with [`ToolContext::dry_run`] set, the
    /// handler replays [`ToolContext::staged`] and its own write in a transaction it rolls back; `applier`
    /// writes the change set once a person applies it.
    pub fn staged_by(mut self, applier: std::sync::Arc<dyn crate::tool::Applier>) -> Self {
        self.applier = Some(applier);
        self
    }

    /// Shows every parameter to the model as optional; missing ones are reported by the validator.
    pub fn lenient(mut self) -> Self {
        self.spec.lenient = true;
        self
    }
}

impl<A> TypedTool<A, ()>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
{
    /// A tool named `name` whose `handler` is given `state` with every call, beside the call's context and
    /// its deserialised arguments.
    ///
    /// The state is cloned for each call: give a handle that is cheap to clone (an `Arc`, a pool). The
    /// handler owns its clone, so its future may hold it across `.await`s. The context says which call this
    /// is, including the tool's name (`ctx.tool`), so one handler can serve several tools.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use steward_core::{ToolOutput, TypedTool};
    ///
    /// /// Arguments of `count`.
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Count {
    ///     /// How much to add.
    ///     by: u64,
    /// }
    ///
    /// let counter = Arc::new(AtomicU64::new(0));
    /// let count = TypedTool::with_state(
    ///     "count",
    ///     "Adds to the counter.",
    ///     counter,
    ///     |counter, ctx, args: Count| async move {
    ///         let now = counter.fetch_add(args.by, Ordering::SeqCst) + args.by;
    ///         Ok(ToolOutput::text(format!("{}: {now}", ctx.tool)))
    ///     },
    /// );
    /// # let _ = count;
    /// ```
    pub fn with_state<S, H, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        state: S,
        handler: H,
    ) -> TypedTool<A, impl Fn(ToolContext, A) -> Fut + Send + Sync>
    where
        S: Clone + Send + Sync + 'static,
        H: Fn(S, ToolContext, A) -> Fut + Send + Sync,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send,
    {
        TypedTool::new(name, description, move |ctx: ToolContext, args: A| {
            handler(state.clone(), ctx, args)
        })
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

    fn stages(&self) -> bool {
        self.applier.is_some()
    }

    fn applier(&self) -> Option<std::sync::Arc<dyn crate::tool::Applier>> {
        self.applier.clone()
    }

    async fn preview(&self, ctx: &ToolContext, args: Value) -> Option<String> {
        if !self.dry_run_preview {
            return None;
        }
        let outcome = match parse_args::<A>(args) {
            Ok(args) => (self.handler)(ctx.clone().with_dry_run(), args).await,
            Err(error) => Err(error),
        };
        Some(match outcome {
            Ok(output) => format!(
                "If approved now: {}\n(tried in a transaction that was rolled back: nothing is written yet)",
                output.content
            ),
            Err(error) => format!("If approved now, it would fail: {}", error.person_text()),
        })
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
