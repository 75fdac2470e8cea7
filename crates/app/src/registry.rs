//! The tool registry: tool name → factory over the shared dependencies. The built-in tools of
//! `steward-domains` and `steward-sql` are registered here; config-defined tools are added by the config.
//!
//! Most tools are built from the dependencies alone. A tool that runs a model itself (`ask_database`) is
//! registered with its spec and a factory that also takes the model: its spec (for a tool list, a role's
//! decision) is known without a model, and it is built only by a caller that has one.

use std::collections::BTreeMap;
use std::sync::Arc;

use steward_core::{Model, Principal, Tool, ToolSpec};
use steward_domains::Domain;
use steward_domains::common::{Clock, calculator, current_date};
use steward_domains::{expenses, orders, tasks};
use steward_sql::SqlToolkit;

use crate::error::AppError;

/// What tools are built from: the business database's domain and SQL toolkit, the clock, and who they are for.
/// (The model of a tool that runs one is not here: it is given to [`ToolRegistry::build`].)
#[derive(Clone)]
pub struct Deps {
    /// The demo's business tables, when the database has them.
    pub domain: Option<Domain>,
    /// The SQL tools over the default database, when there is one.
    pub kit: Option<Arc<SqlToolkit>>,
    /// The clock of `current_date` and of relative dates.
    pub clock: Clock,
    /// Who the tools are built for: a spec that names tables or columns (`query_table`'s) names only those it
    /// may read (`None`: no one in particular, the whole catalog).
    pub principal: Option<Arc<Principal>>,
}

/// Builds one tool from the shared dependencies.
pub type Factory = Arc<dyn Fn(&Deps) -> Result<Arc<dyn Tool>, AppError> + Send + Sync>;

/// Builds one tool that runs a model itself, from the shared dependencies and that model.
pub type ModelFactory =
    Arc<dyn Fn(&Deps, Arc<dyn Model>) -> Result<Arc<dyn Tool>, AppError> + Send + Sync>;

/// Which dependency a built-in tool needs (to say so when it is missing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Nothing.
    Nothing,
    /// A database.
    Database,
    /// The demo's tables.
    DemoTables,
}

/// How a registered tool is made.
#[derive(Clone)]
enum Make {
    /// From the dependencies alone.
    Plain(Factory),
    /// With a model as well; its spec is known without one.
    WithModel { spec: ToolSpec, build: ModelFactory },
}

/// What a tool needs to be built and run that this call does not have: a model.
const NEEDS_MODEL: &str = "a model: it runs one itself, and this call has none (ask the question with `steward ask` instead)";

/// Tool name → factory.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    factories: BTreeMap<String, (Needs, Make)>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.factories.keys()).finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers (or replaces) a tool built from the dependencies alone.
    pub fn register(
        &mut self,
        name: impl Into<String>,
        needs: Needs,
        factory: impl Fn(&Deps) -> Result<Arc<dyn Tool>, AppError> + Send + Sync + 'static,
    ) {
        self.factories
            .insert(name.into(), (needs, Make::Plain(Arc::new(factory))));
    }

    /// Registers (or replaces) a tool that runs a model itself: `spec` is what it is offered as (the spec of the
    /// tools `factory` builds), `factory` builds it with the caller's model.
    pub fn register_with_model(
        &mut self,
        needs: Needs,
        spec: ToolSpec,
        factory: impl Fn(&Deps, Arc<dyn Model>) -> Result<Arc<dyn Tool>, AppError>
        + Send
        + Sync
        + 'static,
    ) {
        let build: ModelFactory = Arc::new(factory);
        self.factories
            .insert(spec.name.clone(), (needs, Make::WithModel { spec, build }));
    }

    /// True when a tool of that name is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.factories.contains_key(name)
    }

    /// True when the tool `name` runs a model itself: building it takes one.
    pub fn needs_model(&self, name: &str) -> bool {
        matches!(self.factories.get(name), Some((_, Make::WithModel { .. })))
    }

    /// The registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.factories.keys().map(String::as_str)
    }

    /// The names a tool's dependencies allow, given what `deps` has.
    pub fn available<'a>(&'a self, deps: &'a Deps) -> impl Iterator<Item = &'a str> + 'a {
        self.factories
            .iter()
            .filter(|(_, (needs, _))| satisfied(*needs, deps))
            .map(|(name, _)| name.as_str())
    }

    /// The spec of the tool `name` as `deps` builds it (name, description, parameters, annotations), without a
    /// model: a tool that runs one is not built for it.
    pub fn spec(&self, name: &str, deps: &Deps) -> Result<ToolSpec, AppError> {
        match self.entry(name, deps)? {
            (_, Make::Plain(factory)) => Ok(factory(deps)?.spec().clone()),
            (_, Make::WithModel { spec, .. }) => Ok(spec.clone()),
        }
    }

    /// Builds the tool `name`; `model` drives a tool that runs a model itself (without one, building such a
    /// tool is [`AppError::ToolNeeds`]); the others never use it.
    pub fn build(
        &self,
        name: &str,
        deps: &Deps,
        model: Option<Arc<dyn Model>>,
    ) -> Result<Arc<dyn Tool>, AppError> {
        let (needs, make) = self.entry(name, deps)?;
        let tool = match (make, model) {
            (Make::Plain(factory), _) => factory(deps)?,
            (Make::WithModel { build, .. }, Some(model)) => build(deps, model)?,
            (Make::WithModel { .. }, None) => {
                return Err(AppError::ToolNeeds {
                    name: name.to_owned(),
                    needs: NEEDS_MODEL,
                });
            }
        };
        // The demo's tools read through the domain store, which filters rows by the principal's role: their
        // observations say so, so that "no order" is not taken for "none exists".
        Ok(match (needs, &deps.domain) {
            (Needs::DemoTables, Some(domain)) => Arc::new(RowFiltered {
                inner: tool,
                store: domain.store.clone(),
            }),
            _ => tool,
        })
    }

    /// The registered tool `name`, when `deps` has what it needs.
    fn entry(&self, name: &str, deps: &Deps) -> Result<(Needs, &Make), AppError> {
        let Some((needs, make)) = self.factories.get(name) else {
            return Err(AppError::UnknownTool {
                name: name.to_owned(),
                suggestion: crate::error::closest(name, self.names()),
            });
        };
        if !satisfied(*needs, deps) {
            return Err(AppError::ToolNeeds {
                name: name.to_owned(),
                needs: match needs {
                    Needs::DemoTables => {
                        "the demo's tables (run `steward demo`, or pass --db with a database that has them)"
                    }
                    _ => "a database (pass --db URL or configure `databases` in steward.yaml)",
                },
            });
        }
        Ok((*needs, make))
    }

    /// The registry of Steward's built-in tools.
    pub fn builtin() -> Self {
        let mut r = Self::new();
        r.register("current_date", Needs::Nothing, |d: &Deps| {
            Ok(Arc::new(current_date(d.clock.clone())))
        });
        r.register("calculator", Needs::Nothing, |_: &Deps| {
            Ok(Arc::new(calculator()))
        });
        macro_rules! domain_tool {
            ($name:literal, $f:path) => {
                r.register($name, Needs::DemoTables, |d: &Deps| {
                    let domain = d.domain.as_ref().ok_or(AppError::NoDatabase)?;
                    Ok(Arc::new($f(domain.store.clone())))
                });
            };
        }
        domain_tool!("add_expense", expenses::add_expense);
        domain_tool!("list_expenses", expenses::list_expenses);
        domain_tool!("expense_summary", expenses::expense_summary);
        domain_tool!("get_order", orders::get_order);
        domain_tool!("find_orders", orders::find_orders);
        domain_tool!("order_stats", orders::order_stats);
        domain_tool!("get_inbox_tasks", tasks::get_inbox_tasks);
        domain_tool!("get_projects", tasks::get_projects);
        domain_tool!("get_tasks", tasks::get_tasks);
        domain_tool!("create_project", tasks::create_project);
        domain_tool!("move_task", tasks::move_task);
        domain_tool!("add_task", tasks::add_task);
        domain_tool!("complete_task", tasks::complete_task);
        for name in ["list_tables", "describe_tables", "query_table", "run_sql"] {
            r.register(name, Needs::Database, move |d: &Deps| {
                let kit = d.kit.as_ref().ok_or(AppError::NoDatabase)?;
                if name == "query_table"
                    && let Some(principal) = &d.principal
                {
                    return Ok(kit.query_table_for(principal));
                }
                kit.tools()
                    .into_iter()
                    .find(|tool| tool.spec().name == name)
                    .ok_or(AppError::NoDatabase)
            });
        }
        r.register_with_model(
            Needs::Database,
            steward_sql::TextToSql::spec_alone(),
            |d: &Deps, model| {
                let kit = d.kit.as_ref().ok_or(AppError::NoDatabase)?;
                Ok(Arc::new(kit.ask_database(model)))
            },
        );
        r
    }
}

fn satisfied(needs: Needs, deps: &Deps) -> bool {
    match needs {
        Needs::Nothing => true,
        Needs::Database => deps.kit.is_some(),
        Needs::DemoTables => deps.domain.is_some(),
    }
}

/// A domain tool whose reads a principal's row filters limit; its observation (or error) starts by saying so.
struct RowFiltered {
    inner: Arc<dyn Tool>,
    store: steward_domains::Store,
}

#[async_trait::async_trait]
impl Tool for RowFiltered {
    fn spec(&self) -> &steward_core::ToolSpec {
        self.inner.spec()
    }

    fn stages(&self) -> bool {
        self.inner.stages()
    }

    fn applier(&self) -> Option<std::sync::Arc<dyn steward_core::Applier>> {
        self.inner.applier()
    }

    async fn preview(
        &self,
        ctx: &steward_core::ToolContext,
        args: serde_json::Value,
    ) -> Option<String> {
        self.inner.preview(ctx, args).await
    }

    async fn call(
        &self,
        ctx: &steward_core::ToolContext,
        args: serde_json::Value,
    ) -> Result<steward_core::ToolOutput, steward_core::ToolError> {
        let filters = self
            .store
            .access()
            .and_then(|f| f.of(&ctx.principal, self.store.db.dialect()).ok().flatten())
            .map(|access| access.scope.rows_only().filters())
            .unwrap_or_default();
        let result = self.inner.call(ctx, args).await;
        if filters.is_empty() {
            return result;
        }
        let note = steward_sql::filtered_note(&filters);
        match result {
            Ok(mut output) => {
                output.content = format!("{note}{}", output.content);
                Ok(output)
            }
            Err(mut error) => {
                error.message = format!("{note}{}", error.message);
                Err(error)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use steward_core::ScriptedModel;
    use steward_sql::{Database, SqlToolkit};

    use super::{Deps, ToolRegistry};
    use crate::AppError;

    async fn deps() -> Deps {
        let db = Database::connect("sqlite::memory:").await.unwrap();
        Deps {
            domain: None,
            kit: Some(SqlToolkit::new(Arc::new(db)).await.unwrap()),
            clock: Default::default(),
            principal: None,
        }
    }

    /// The spec `ask_database` is offered as without a model is the one of the tool a model drives.
    #[tokio::test]
    async fn a_tool_that_runs_a_model_has_its_spec_without_one() {
        let registry = ToolRegistry::builtin();
        let deps = deps().await;
        assert!(registry.needs_model("ask_database"));
        assert!(!registry.needs_model("run_sql"));
        let built = registry
            .build(
                "ask_database",
                &deps,
                Some(Arc::new(ScriptedModel::new([]))),
            )
            .unwrap();
        assert_eq!(&registry.spec("ask_database", &deps).unwrap(), built.spec());
        // Without a model it is not built, and the error says why.
        let error = registry.build("ask_database", &deps, None).err().unwrap();
        assert!(matches!(error, AppError::ToolNeeds { .. }));
        assert!(
            error
                .to_string()
                .starts_with("the tool `ask_database` needs a model"),
            "{error}"
        );
        // A tool that does not run a model is built without one.
        let run_sql = registry.build("run_sql", &deps, None).unwrap();
        assert_eq!(&registry.spec("run_sql", &deps).unwrap(), run_sql.spec());
    }
}
