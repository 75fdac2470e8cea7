//! The composition root: [`App::build`] opens the databases, fills the tool registry and reads the agent
//! definitions once; commands then build runnable agents and tools from it, run after run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use steward_core::{
    Agent, AgentRequest, AgentTool, HistoryBudget, Limits, Model, ModelSettings, Principal, Tool,
    ToolSpec, Toolbox, schema_for,
};
use steward_domains::Domain;
use steward_domains::common::Clock;
use steward_sql::{Database, SqlToolkit};

use crate::agents::{self, AgentDef, COMMON_RULES};
use crate::audited::{AuditTo, Audited};
use crate::config::{Config, ModelEntry};
use crate::error::{AppError, closest};
use crate::models::RunModels;
use crate::registry::{Deps, ToolRegistry};
use crate::roles::{RoleDef, RolePolicy};
use crate::store::RunStore;
use crate::telemetry::Telemetry;

/// Tokens of schema context in the analyst's instructions.
const ANALYST_CONTEXT: usize = 1500;

/// What a command adds to the config.
#[derive(Clone, Debug, Default)]
pub struct AppOptions {
    /// The business database (`--db`, `STEWARD_DB`); else the config's default, else the demo database.
    pub db: Option<String>,
    /// Where `steward demo` keeps the demo database, used when nothing else names a database.
    pub demo: Option<std::path::PathBuf>,
    /// The clock of `current_date`.
    pub clock: Clock,
    /// The run store: runs are recorded in it, parked runs saved in it, and every tool call chained in its
    /// audit trail (`None`: nothing is recorded).
    pub store: Option<RunStore>,
}

/// Which business database a command uses (see [`choose_database`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatabaseChoice {
    /// A database the config's `databases` names.
    Named(String),
    /// A URL (`sqlite://…`, `postgres://…`, `mysql://…`, or a SQLite file path).
    Url(String),
    /// None: the tools that need a database are left out.
    None,
}

/// The business database, in this order: `db` (`--db` or `STEWARD_DB`: a name from the config's `databases`,
/// else a URL), the config's `defaults.database`, the config's only database, the demo database at `demo` when
/// it exists, else none.
pub fn choose_database(config: &Config, db: Option<&str>, demo: Option<&Path>) -> DatabaseChoice {
    if let Some(db) = db {
        return if config.databases.contains_key(db) {
            DatabaseChoice::Named(db.to_owned())
        } else {
            DatabaseChoice::Url(db.to_owned())
        };
    }
    if let Some(name) = &config.defaults.database {
        return DatabaseChoice::Named(name.clone());
    }
    if config.databases.len() == 1
        && let Some(name) = config.databases.keys().next()
    {
        return DatabaseChoice::Named(name.clone());
    }
    match demo.filter(|p| p.is_file()) {
        Some(path) => DatabaseChoice::Url(format!("sqlite://{}", path.display())),
        None => DatabaseChoice::None,
    }
}

/// The business database the built-in tools use.
#[derive(Clone, Debug)]
pub struct Business {
    /// Its URL (may hold a password: show it with `steward_core::redact_url`).
    pub url: String,
    /// The database.
    pub db: Arc<Database>,
    /// True when it has the demo's tables.
    pub demo_schema: bool,
    /// What the database role may do beyond reading, as a notice, when it may do more.
    pub privileges: Option<String>,
}

/// Steward, assembled: config, databases, tools and agents.
pub struct App {
    pub(crate) config: Config,
    pub(crate) registry: ToolRegistry,
    pub(crate) agents: BTreeMap<String, AgentDef>,
    business: Option<Business>,
    databases: BTreeMap<String, Arc<Database>>,
    domain: Option<Domain>,
    pub(crate) kit: Option<Arc<SqlToolkit>>,
    clock: Clock,
    /// The config's tools that write.
    declared_writes: BTreeSet<String>,
    /// The run store.
    pub(crate) store: Option<RunStore>,
    /// The knowledge the store holds for the business database, merged into the toolkit's.
    pub(crate) stored_knowledge: Option<crate::checks::StoredDocument>,
    /// The business database as the command named it (`--db`), saved with parked runs.
    pub(crate) database_named: Option<String>,
    /// Where runs are traced (OpenTelemetry), when anywhere.
    pub(crate) telemetry: Option<Telemetry>,
    /// When the toolkit's saved examples were loaded from the run store.
    pub(crate) examples_loaded: crate::examples::Loaded,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("agents", &self.agents.keys().collect::<Vec<_>>())
            .field("tools", &self.registry)
            .finish_non_exhaustive()
    }
}

impl App {
    /// Opens the databases, builds the registry (built-in tools and the config's tools) and the agent list.
    pub async fn build(config: Config, options: AppOptions) -> Result<Self, AppError> {
        let mut databases = BTreeMap::new();
        for (name, url) in &config.databases {
            let db = Database::connect(url).await.map_err(|e| {
                let message = format!(
                    "{}: the database `{name}` cannot be opened: {e}",
                    config.locate(&["databases", name])
                );
                if matches!(
                    e.kind(),
                    steward_sql::SqlErrorKind::Connect | steward_sql::SqlErrorKind::Unavailable
                ) {
                    AppError::Unreachable(message)
                } else {
                    AppError::Config(message)
                }
            })?;
            databases.insert(name.clone(), Arc::new(db));
        }
        let business = Self::open_business(&config, &options, &databases).await?;
        let access = crate::roles::access_fn(&config.roles);
        // The knowledge saved in the store for this database joins the config's.
        let stored_knowledge = match (&options.store, &business) {
            (Some(store), Some(b)) => crate::checks::stored_knowledge(store, &b.url).await?,
            _ => None,
        };
        let mut knowledge = config.knowledge.clone();
        if let Some(stored) = &stored_knowledge {
            knowledge.merge(stored.knowledge.clone());
        }
        let (domain, kit) = match &business {
            Some(b) => {
                let kit =
                    SqlToolkit::with_knowledge(b.db.clone(), access.clone(), knowledge).await?;
                let domain = if b.demo_schema {
                    Some(
                        Domain::open_with_access(
                            b.db.clone(),
                            options.clock.clone(),
                            Some(access.clone()),
                        )
                        .await
                        .map_err(|e| AppError::Config(e.to_string()))?,
                    )
                } else {
                    None
                };
                (domain, Some(kit))
            }
            None => (None, None),
        };
        let mut registry = ToolRegistry::builtin();
        let declared_writes = crate::declared::register(
            &config,
            &databases,
            &mut registry,
            &access,
            options.store.as_ref().map(RunStore::url),
        )
        .await?;
        let mut agents = agents::builtin(business.is_some(), domain.is_some());
        for (name, def) in &config.agents {
            agents.insert(name.clone(), def.clone());
        }
        let config_names: BTreeSet<String> = config.databases.keys().cloned().collect();
        let app = Self {
            config,
            registry,
            agents,
            business,
            databases,
            domain,
            kit,
            clock: options.clock,
            declared_writes,
            store: options.store,
            stored_knowledge,
            database_named: options.db.map(|db| absolute_sqlite(&db, &config_names)),
            telemetry: None,
            examples_loaded: crate::examples::Loaded::default(),
        };
        app.check()?;
        // The examples saved for this database, beside the config's: a store that cannot read them leaves
        // the config's alone (said on the log), as a run store that fails never stops an answer.
        if let Err(e) = app.load_examples().await {
            tracing::warn!("the verified examples saved in the run store could not be read: {e}");
        }
        Ok(app)
    }

    async fn open_business(
        config: &Config,
        options: &AppOptions,
        databases: &BTreeMap<String, Arc<Database>>,
    ) -> Result<Option<Business>, AppError> {
        let named = |name: &str| -> Result<(String, Arc<Database>), AppError> {
            let db = databases.get(name).ok_or_else(|| {
                AppError::Config(format!(
                    "{}: there is no database named `{name}`{}",
                    config.locate(&["defaults", "database"]),
                    closest(name, databases.keys().map(String::as_str))
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default()
                ))
            })?;
            Ok((
                config.databases.get(name).cloned().unwrap_or_default(),
                db.clone(),
            ))
        };
        let (url, db) =
            match choose_database(config, options.db.as_deref(), options.demo.as_deref()) {
                DatabaseChoice::Named(name) => named(&name)?,
                DatabaseChoice::Url(url) => {
                    let db = Arc::new(Database::connect(&url).await?);
                    (url, db)
                }
                DatabaseChoice::None => return Ok(None),
            };
        let catalog = db.catalog().await?;
        let demo_schema = steward_domains::demo::has_schema(&catalog);
        let privileges = db.privileges().and_then(steward_sql::Privileges::notice);
        Ok(Some(Business {
            url,
            db,
            demo_schema,
            privileges,
        }))
    }

    /// The config.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The business database, when there is one.
    pub fn business(&self) -> Option<&Business> {
        self.business.as_ref()
    }

    /// The same app, tracing every run it starts to `telemetry` (see [`crate::telemetry`]).
    pub fn with_telemetry(mut self, telemetry: Option<Telemetry>) -> Self {
        self.telemetry = telemetry;
        self
    }

    /// Waits (two seconds at most) until the spans of the runs so far are sent to the collector, when runs
    /// are traced: a process that ends calls it last (a server sends them in the background as it goes).
    pub async fn flush_traces(&self) {
        if let Some(telemetry) = &self.telemetry {
            telemetry.flush(std::time::Duration::from_secs(2)).await;
        }
    }

    /// The schema context the analyst answering `question` for `principal` gets, within `budget` tokens (the
    /// tables it may see with the knowledge the question needs); `None` without a business database. An error
    /// when the principal's access cannot be worked out (it then sees nothing).
    pub fn schema_context_for(
        &self,
        principal: &Principal,
        question: Option<&str>,
        budget: usize,
    ) -> Option<Result<(steward_sql::SchemaContext, usize), String>> {
        let kit = self.kit.as_ref()?;
        Some(kit.guard_as(principal).map(|_| {
            let visible = kit.catalog_as(principal).map_or(0, |c| c.tables.len());
            (kit.context_as(principal, question, budget), visible)
        }))
    }

    /// The run store, when runs are recorded.
    pub fn store(&self) -> Option<&RunStore> {
        self.store.as_ref()
    }

    /// What `steward config check` says of the `kind: sql` tools: the statements their databases refuse to
    /// prepare (errors), and the ledger tables the first write of a write tool will create in the user's
    /// database (notes, said once there).
    pub async fn check_sql_tools(&self) -> (Vec<String>, Vec<String>) {
        let (problems, notes) = self.sql_tool_checks(true).await;
        (problems, notes.into_iter().map(|(_, note)| note).collect())
    }

    /// The ledger tables the first write of a `kind: sql` write tool will create in the user's database, each
    /// with the URL of that database (for a note said once per database, before the first write).
    pub async fn ledger_notes(&self) -> Vec<(String, String)> {
        self.sql_tool_checks(false).await.1
    }

    /// [`App::check_sql_tools`], the statements prepared only when `prepare`; the notes with their databases'
    /// URLs.
    async fn sql_tool_checks(&self, prepare: bool) -> (Vec<String>, Vec<(String, String)>) {
        let mut problems = Vec::new();
        let mut notes = Vec::new();
        for (name, raw) in &self.config.tools {
            let Ok(crate::tools::ToolDef::Sql(def)) =
                serde_yaml::from_value::<crate::tools::ToolDef>(raw.clone())
            else {
                continue;
            };
            // Only write tools have a ledger: at start-up (not checking) a read tool is not built again.
            if !prepare && def.mode != crate::tools::SqlMode::Write {
                continue;
            }
            let Some(db) = self.database(&def.database) else {
                continue;
            };
            let database = def.database.clone();
            let placed = def.ledger.is_some();
            let built = match crate::tools::SqlTool::build(name, def, db.clone()).await {
                Ok(tool) => {
                    // Only when checking: the schema's lookup takes a write transaction.
                    let missing = if prepare {
                        tool.ledger_schema_missing().await
                    } else {
                        None
                    };
                    let other = if prepare {
                        tool.ledger_of_another_shape().await
                    } else {
                        None
                    };
                    if let Some(schema) = missing {
                        problems.push(format!(
                            "{}: tool `{name}`: its ledger names the schema `{schema}`, which the database \
                             `{database}` lacks, so its first write could not record itself there; create the \
                             schema, or name one that exists (or none) in `ledger:`",
                            self.config.locate(&["tools", name, "ledger"])
                        ));
                    } else if let Some(table) = other {
                        problems.push(format!(
                            "{}: tool `{name}`: its ledger {table} is a table already there with other columns, so \
                             its writes could not be recorded; name a table of its own in `ledger:`",
                            self.config.locate(&["tools", name, "ledger"])
                        ));
                    } else if let Some(table) = tool.ledger_to_create().await {
                        notes.push((db.url().to_owned(), format!(
                            "the first write of `{name}` creates the table {table} in the database `{database}`, \
                             where each write is recorded with it (idempotence){}",
                            if placed {
                                " (where the tool's `ledger:` places it)"
                            } else {
                                "; `ledger: schema.table` on the tool places it elsewhere"
                            }
                        )));
                    }
                    if prepare {
                        tool.prepares().await
                    } else {
                        Ok(())
                    }
                }
                Err(e) => Err(e),
            };
            if let Err(e) = built {
                problems.push(format!(
                    "{}: {e}",
                    self.config.locate(&["tools", name, "statement"])
                ));
            }
        }
        (problems, notes)
    }

    /// A database the config names.
    pub fn database(&self, name: &str) -> Option<&Arc<Database>> {
        self.databases.get(name)
    }

    /// The tool registry.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The agents there are, sorted.
    pub fn agent_names(&self) -> impl Iterator<Item = &str> {
        self.agents.keys().map(String::as_str)
    }

    /// The agents `principal` may run, by name.
    pub fn agents_for<'a>(&'a self, principal: &'a Principal) -> impl Iterator<Item = &'a str> {
        self.agent_names()
            .filter(move |name| self.may_run(principal, name).is_ok())
    }

    /// An agent's definition.
    pub fn agent_def(&self, name: &str) -> Option<&AgentDef> {
        self.agents.get(name)
    }

    /// The agent `ask` and `chat` run when none is named: the config's default, else the router
    /// `assistant` on the demo database or without one, else the `analyst`.
    pub fn default_agent(&self) -> &str {
        if let Some(agent) = &self.config.defaults.agent {
            return agent;
        }
        match &self.business {
            Some(b) if !b.demo_schema && self.agents.contains_key("analyst") => "analyst",
            _ => "assistant",
        }
    }

    fn deps(&self, principal: Option<&Principal>) -> Deps {
        Deps {
            domain: self.domain.clone(),
            kit: self.kit.clone(),
            clock: self.clock.clone(),
            principal: principal.map(|p| Arc::new(p.clone())),
        }
    }

    /// The tools that can be built here (their dependencies are present), sorted.
    pub fn tool_names(&self) -> Vec<String> {
        let deps = self.deps(None);
        self.registry.available(&deps).map(str::to_owned).collect()
    }

    /// The spec of the tool `name` as `principal` is offered it (`None`: no one in particular, the whole
    /// catalog's names): its name, description, parameters and annotations. No model is needed, not even for a
    /// tool that runs one (`ask_database`).
    pub fn tool_spec(
        &self,
        name: &str,
        principal: Option<&Principal>,
    ) -> Result<ToolSpec, AppError> {
        self.registry.spec(name, &self.deps(principal))
    }

    /// The spec of the agent `name` used as a tool (by a router, or listed with the tools), when there is such an
    /// agent: the spec [`AgentTool`] gives it, without building the agent or a model.
    pub fn agent_spec(&self, name: &str) -> Option<ToolSpec> {
        let def = self.agents.get(name)?;
        Some(ToolSpec::new(
            name,
            def.description.clone(),
            schema_for::<AgentRequest>(),
        ))
    }

    /// Builds one tool for no principal in particular (its spec offers the whole catalog's names: to show a
    /// principal its tools, use [`App::tool_for`]); `model` drives tools that call a model (`ask_database`). For
    /// its spec alone, use [`App::tool_spec`].
    pub fn tool(&self, name: &str, model: Arc<dyn Model>) -> Result<Arc<dyn Tool>, AppError> {
        self.build_tool(name, Some(model), None)
    }

    /// Builds one tool as `principal` is offered it: a spec naming tables or columns (`query_table`'s) names
    /// only those its role may read. `model` drives tools that call a model (`ask_database`).
    pub fn tool_for(
        &self,
        principal: &Principal,
        name: &str,
        model: Arc<dyn Model>,
    ) -> Result<Arc<dyn Tool>, AppError> {
        self.build_tool(name, Some(model), Some(principal))
    }

    /// Builds one tool; a tool that runs a model itself needs `model` ([`AppError::ToolNeeds`] without one).
    pub(crate) fn build_tool(
        &self,
        name: &str,
        model: Option<Arc<dyn Model>>,
        principal: Option<&Principal>,
    ) -> Result<Arc<dyn Tool>, AppError> {
        self.registry.build(name, &self.deps(principal), model)
    }

    /// Builds the agent `name` with its tools and sub-agents for the local user, driven by `model`; `base` limits
    /// apply where the definition sets none; `question` ranks the schema in the analyst's instructions. Its calls
    /// are not recorded: surfaces run agents through [`App::turn`].
    pub fn agent(
        &self,
        name: &str,
        model: Arc<dyn Model>,
        question: Option<&str>,
        base: Limits,
    ) -> Result<Agent, AppError> {
        let models = RunModels::single(model);
        self.build_agent(&Principal::local(), name, &models, question, base, None)
    }

    /// Builds the agent `name` for `principal` (the agent must be one its role may use, and the agents and tools
    /// its role does not allow are left out: the model never sees them). An agent (or sub-agent) whose
    /// definition names a model from the config's `models` is driven by that model from `models.named`; the
    /// others by their caller's model, and the top agent by `models.model`. Each agent takes the temperature
    /// and reply length of its model's config entry unless its own limits set them. With `audit`, every call
    /// is chained in the audit trail before its tool runs.
    pub(crate) fn build_agent(
        &self,
        principal: &Principal,
        name: &str,
        models: &RunModels,
        question: Option<&str>,
        base: Limits,
        audit: Option<AuditTo>,
    ) -> Result<Agent, AppError> {
        self.may_run(principal, name)?;
        let role = self.role(principal);
        let models = Models {
            fallback: models.model.clone(),
            fallback_name: models.name.as_deref(),
            named: &models.named,
            role: role.map(|(_, def)| def),
            principal,
            audit: audit.as_ref(),
            path: String::new(),
        };
        Ok(self.agent_at(name, &models, question, base, 0)?.0)
    }

    /// Whether `principal`'s role may run the agent `name` (an error that names the agents it may run).
    pub fn may_run(&self, principal: &Principal, name: &str) -> Result<(), AppError> {
        self.check_role(principal)?;
        if let Some((role_name, def)) = self.role(principal)
            && let Some(agents) = &def.agents
            && !agents.iter().any(|a| a == name)
        {
            return Err(AppError::Forbidden(format!(
                "the role `{role_name}` may not use the agent `{name}`; it may use: {}",
                agents.join(", ")
            )));
        }
        Ok(())
    }

    /// Refuses a principal whose role this config does not define (a run saved under another config, a token
    /// for a role since removed): without its definition nothing it may do is known, so it may do nothing.
    pub fn check_role(&self, principal: &Principal) -> Result<(), AppError> {
        match principal.role.as_deref() {
            Some(role) if !self.config.roles.contains_key(role) => {
                Err(AppError::Forbidden(format!(
                    "the role `{role}` is not defined in this config ({}), so nothing is allowed for it; use the \
                 config that defines it",
                    self.config.source.as_ref().map_or_else(
                        || "the built-in one".to_owned(),
                        |s| s.path.display().to_string()
                    )
                )))
            }
            _ => Ok(()),
        }
    }

    /// The role of `principal` with its definition (`None`: the local user without a role).
    pub fn role(&self, principal: &Principal) -> Option<(&str, &RoleDef)> {
        self.config.role_of(principal)
    }

    /// The agent `principal` runs when none is named: the default agent when its role allows it, else the
    /// first agent the role lists.
    pub fn default_agent_for(&self, principal: &Principal) -> String {
        let default = self.default_agent().to_owned();
        match self
            .role(principal)
            .and_then(|(_, def)| def.agents.as_ref())
        {
            Some(agents) if !agents.contains(&default) => {
                agents.first().cloned().unwrap_or(default)
            }
            _ => default,
        }
    }

    /// The policy of one run tree for `principal`: its role's tools and approvals, write tools declared in the
    /// config held for approval, and writes after untrusted data (the run's taint) held for approval; handing a
    /// request to a sub-agent is not a write.
    pub fn policy(&self, principal: &Principal) -> Arc<RolePolicy> {
        Arc::new(
            RolePolicy::new(
                self.role(principal),
                self.declared_writes.clone(),
                self.trusted(None),
            )
            .with_agents(self.agents.keys().cloned().collect()),
        )
    }

    /// The tools whose results are not untrusted data: the config's `trusted`, the role's, and the agents (a
    /// sub-agent's answer is not a source of data: the reads inside its run count).
    pub(crate) fn trusted(&self, role: Option<&RoleDef>) -> BTreeSet<String> {
        let mut trusted: BTreeSet<String> = self.config.trusted.iter().cloned().collect();
        trusted.extend(role.iter().flat_map(|r| r.trusted.iter().cloned()));
        trusted.extend(self.agents.keys().cloned());
        trusted
    }

    /// The names of the config's models that the agent `name` and its sub-agents (at any depth) name.
    pub fn models_used(&self, name: &str) -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        let mut seen = BTreeSet::new();
        let mut stack = vec![name.to_owned()];
        while let Some(agent) = stack.pop() {
            if !seen.insert(agent.clone()) {
                continue;
            }
            if let Some(def) = self.agents.get(&agent) {
                found.extend(def.model.iter().cloned());
                stack.extend(def.sub_agents.iter().cloned());
            }
        }
        found
    }

    fn agent_at(
        &self,
        name: &str,
        models: &Models<'_>,
        question: Option<&str>,
        base: Limits,
        depth: usize,
    ) -> Result<(Agent, Arc<dyn Model>), AppError> {
        let Some(def) = self.agents.get(name) else {
            return Err(AppError::UnknownAgent {
                name: name.to_owned(),
                known: self.agent_names().collect::<Vec<_>>().join(", "),
            });
        };
        if depth > 8 {
            return Err(AppError::Config(format!(
                "the agent `{name}` is nested more than 8 levels deep: do its sub-agents call each other in a loop?"
            )));
        }
        // The agent's own model when it names one (its sub-agents inherit it), else its caller's.
        let own = def
            .model
            .as_deref()
            .and_then(|m| models.named.get(m).map(|model| (m, model.clone())));
        let path = if models.path.is_empty() {
            name.to_owned()
        } else {
            format!("{}/{name}", models.path)
        };
        let models = match own {
            Some((own_name, model)) => Models {
                fallback: model,
                fallback_name: Some(own_name),
                path,
                ..models.clone()
            },
            None => Models {
                path,
                ..models.clone()
            },
        };
        let audited = |tool: Arc<dyn Tool>| -> Arc<dyn Tool> {
            match models.audit {
                Some(audit) => Arc::new(Audited {
                    inner: tool,
                    audit: audit.clone(),
                    agent_path: models.path.clone(),
                }),
                None => tool,
            }
        };
        let model = models.fallback.clone();
        let entry = models
            .fallback_name
            .and_then(|m| self.config.models.get(m))
            .map(ModelEntry::def)
            .unwrap_or_default();
        let deps = self.deps(Some(models.principal));
        let mut tools = Toolbox::new();
        let mut specialists = String::new();
        let allowed = |list: Option<&Vec<String>>, name: &str| {
            list.is_none_or(|names| names.iter().any(|n| n == name))
        };
        for sub in &def.sub_agents {
            if !allowed(models.role.and_then(|r| r.agents.as_ref()), sub) {
                continue;
            }
            let (agent, its_model) = self.agent_at(sub, &models, None, base, depth + 1)?;
            specialists.push_str(&format!("- {sub}: {}\n", agent.description));
            tools.add(audited(Arc::new(AgentTool::new(
                Arc::new(agent),
                its_model,
            ))))?;
        }
        let trusted = self.trusted(models.role);
        for tool in &def.tools {
            if !allowed(models.role.and_then(|r| r.tools.as_ref()), tool) {
                continue;
            }
            let built = self.registry.build(tool, &deps, Some(model.clone()))?;
            // What a tool reads from outside the run reaches the model marked as data.
            if crate::roles::reads_data(built.spec(), &trusted) {
                tools.add(audited(Arc::new(crate::roles::MarkedData { inner: built })))?;
            } else {
                tools.add(audited(built))?;
            }
        }
        let categories = self
            .domain
            .as_ref()
            .map(|d| d.categories().join(", "))
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| "see list_expenses".to_owned());
        // Checked when the app was built (`checks`): the instructions parse, with names it knows.
        let template = agents::instructions(&def.instructions).map_err(AppError::Config)?;
        // The schema as the run's principal may see it, ranked over that view only (a principal whose access
        // cannot be worked out sees no table); only for instructions that show it.
        // Examples people saved are data in it: the agent's runs start tainted by them.
        let (schema, dialect, saved) = match &self.kit {
            Some(kit) => {
                let context = template
                    .names()
                    .any(|n| n == "schema")
                    .then(|| kit.context_as(models.principal, question, ANALYST_CONTEXT));
                let saved = context.as_ref().is_some_and(|c| c.saved);
                let schema = context.map(|c| c.text).unwrap_or_default();
                (schema, kit.database().dialect().name().to_owned(), saved)
            }
            None => (String::new(), String::new(), false),
        };
        let values = [
            ("categories", categories.as_str()),
            ("schema", schema.as_str()),
            ("dialect", dialect.as_str()),
            ("rules", COMMON_RULES),
            ("specialists", specialists.trim_end()),
        ];
        let instructions = template
            .render(|name| {
                values
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            })
            .unwrap_or_default();
        let l = def.limits;
        let limits = Limits {
            max_steps: l.steps.unwrap_or(base.max_steps),
            max_tokens: l.tokens.or(base.max_tokens),
            time_limit: l.time.map(Duration::from_secs).or(base.time_limit),
        };
        let history = HistoryBudget {
            max_messages: l.history,
            ..HistoryBudget::default()
        };
        let agent = Agent::new(name, instructions, tools)
            .with_description(def.description.clone())
            .with_limits(limits)
            .with_history(history)
            .with_settings(ModelSettings {
                temperature: l.temperature.or(entry.temperature),
                max_output_tokens: l.max_response_tokens.or(entry.max_tokens),
            })
            .with_taint(saved.then_some(steward_sql::SAVED_EXAMPLES));
        Ok((agent, model))
    }
}

/// The models an agent tree is built with.
#[derive(Clone)]
struct Models<'a> {
    /// The model of agents that name none (their caller's).
    fallback: Arc<dyn Model>,
    /// Its name in the config's `models`, if it has one.
    fallback_name: Option<&'a str>,
    /// The config's models by name.
    named: &'a BTreeMap<String, Arc<dyn Model>>,
    /// The role whose agents and tools are the only ones built (`None`: all).
    role: Option<&'a RoleDef>,
    /// Who the agents are built for: their schema context and tool specs show only what it may read.
    principal: &'a Principal,
    /// Where calls are chained before they run (`None`: not recorded).
    audit: Option<&'a AuditTo>,
    /// The agents from the top down to the caller (empty at the top).
    path: String,
}

/// `db` as given on the command line, a relative SQLite path made absolute (so that a run saved with it is
/// found again from another directory); a name from the config's `databases` and other URLs as they are.
fn absolute_sqlite(db: &str, names: &BTreeSet<String>) -> String {
    if names.contains(db) {
        return db.to_owned();
    }
    let (prefix, path) = match db.strip_prefix("sqlite://") {
        Some(path) => ("sqlite://", path),
        None if !db.contains("://") && !db.starts_with("sqlite:") => ("", db),
        None => return db.to_owned(),
    };
    let (file, query) = match path.split_once('?') {
        Some((file, query)) => (file, format!("?{query}")),
        None => (path, String::new()),
    };
    let file = Path::new(file);
    if file.is_absolute() || file.as_os_str().is_empty() || file.to_str() == Some(":memory:") {
        return db.to_owned();
    }
    match std::env::current_dir() {
        Ok(dir) => format!("{prefix}{}{query}", dir.join(file).display()),
        Err(_) => db.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use steward_core::{AgentTool, Limits, ScriptedModel, Tool as _};

    use super::{App, AppOptions};
    use crate::Config;

    /// An agent's spec as a tool is known without a model, and is the one its `AgentTool` has.
    #[tokio::test]
    async fn an_agents_spec_as_a_tool_needs_no_model() {
        let app = App::build(Config::default(), AppOptions::default())
            .await
            .unwrap();
        let mut compared = 0;
        for name in app.agent_names() {
            let model = Arc::new(ScriptedModel::new([]));
            let Ok(agent) = app.agent(name, model.clone(), None, Limits::default()) else {
                continue;
            };
            let tool = AgentTool::new(Arc::new(agent), model);
            assert_eq!(app.agent_spec(name).as_ref(), Some(tool.spec()), "{name}");
            compared += 1;
        }
        assert!(compared > 0);
        assert_eq!(app.agent_spec("nobody"), None);
    }
}
