//! Which config, database and agent a command runs: `--config` (or `STEWARD_CONFIG`, or `./steward.yaml`),
//! `--db` (or `STEWARD_DB`, or the config's database, or the demo database when it exists) and `--agent`.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use clap::Args;
use steward_app::store::StoreObserver;
use steward_app::{App, AppOptions, Config};
use steward_core::{EventLog, Fanout, Observer};

use crate::out::note;

/// The `--config` every command shares (set once by `main`).
pub(crate) static CONFIG: OnceLock<Option<PathBuf>> = OnceLock::new();

/// The config file in effect.
pub(crate) fn config() -> anyhow::Result<Config> {
    Ok(Config::discover(CONFIG.get().and_then(Option::as_deref))?)
}

/// The database and agent flags of `ask` and `chat`.
#[derive(Args, Debug, Clone)]
pub(crate) struct AgentArgs {
    /// The business database: sqlite://path, postgres://…, mysql://…, or a name from the config's `databases`
    /// (default: the config's database, else the demo database once `steward demo` made it).
    #[arg(long, env = "STEWARD_DB", hide_env_values = true, value_name = "URL")]
    pub(crate) db: Option<String>,

    /// The agent (see `steward tools list`). Default: the config's default, else assistant on the demo
    /// database, analyst on any other database.
    #[arg(short, long, value_name = "NAME")]
    pub(crate) agent: Option<String>,

    #[command(flatten)]
    pub(crate) store: crate::runs::StoreArgs,

    /// Do not record the run in the run store.
    #[arg(long, conflicts_with = "store")]
    pub(crate) no_store: bool,
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

/// The database URL of `schema` and `sql run`: `--db` (a URL, a SQLite path, or a name from the config's
/// `databases`), else the config's default database, else the demo database.
pub(crate) fn resolve_db(db: Option<&str>) -> anyhow::Result<String> {
    if let Some(db) = db {
        let config = config()?;
        return Ok(config
            .databases
            .get(db)
            .cloned()
            .unwrap_or_else(|| db.to_owned()));
    }
    match default_db()? {
        Some(url) => Ok(url),
        None => anyhow::bail!(
            "no database: pass --db URL (sqlite://path, postgres://…, mysql://…), configure `databases` in steward.yaml, \
             or run `steward demo` to create the demo database"
        ),
    }
}

/// The database a command uses when not told: the config's default database (or its only one), else the demo
/// database when `steward demo` made it, else none.
pub(crate) fn default_db() -> anyhow::Result<Option<String>> {
    let config = config()?;
    let named = config.defaults.database.clone().or_else(|| {
        (config.databases.len() == 1)
            .then(|| config.databases.keys().next().cloned())
            .flatten()
    });
    if let Some(name) = named {
        return config
            .databases
            .get(&name)
            .cloned()
            .map(Some)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: there is no database named `{name}`",
                    config.locate(&["defaults", "database"])
                )
            });
    }
    let demo = demo_path();
    Ok(demo
        .is_file()
        .then(|| format!("sqlite://{}", demo.display())))
}

/// Builds the app from the config and `--db`, with a spinner while databases open.
pub(crate) async fn build_app(db: Option<&str>) -> anyhow::Result<App> {
    let config = config()?;
    let bar = crate::db::spinner("opening the databases");
    let app = App::build(
        config,
        AppOptions {
            db: db.map(str::to_owned),
            demo: Some(demo_path()),
            clock: crate::setup::clock()?,
        },
    )
    .await;
    bar.finish_and_clear();
    Ok(app?)
}

/// What `ask` and `chat` run: the runner over the chosen agent and model, and the trace that watches it.
pub(crate) struct Session {
    pub(crate) runner: steward_core::Runner,
    pub(crate) trace: Arc<crate::trace::Trace>,
    pub(crate) model_name: String,
    /// Every event of the run tree (sub-agents included), for `--json`.
    pub(crate) log: EventLog,
    /// Records the runs in the run store (`None` with `--no-store`).
    pub(crate) recorder: Option<Arc<StoreObserver>>,
}

impl Session {
    /// Builds the app, connects the model and builds the agent; `question` ranks the analyst's schema.
    pub(crate) async fn open(
        agents: &AgentArgs,
        model: &crate::setup::ModelArgs,
        trace: bool,
        stream: bool,
        question: Option<&str>,
    ) -> anyhow::Result<Self> {
        let prices = model.prices()?;
        let app = build_app(agents.db.as_deref()).await?;
        let name = agents
            .agent
            .clone()
            .unwrap_or_else(|| app.default_agent().to_owned());
        // A wrong agent name is found before the model is set up.
        if app.agent_def(&name).is_none()
            && ["expenses", "orders", "tasks"].contains(&name.as_str())
        {
            match app.business() {
                Some(b) => anyhow::bail!(
                    "the {name} agent needs the demo's tables (expenses, orders, tasks), which {} does not have; \
                     use --agent analyst for questions over this database, or run `steward demo`",
                    steward_core::redact_url(&b.url)
                ),
                None => anyhow::bail!(
                    "the {name} agent needs a database: run `steward demo` to create the demo database, or pass --db URL"
                ),
            }
        }
        if app.agent_def(&name).is_none() {
            let known = app.agent_names().collect::<Vec<_>>().join(", ");
            anyhow::bail!("there is no agent named `{name}`; the agents are: {known}");
        }
        let used = app.models_used(&name);
        let chosen = model
            .connect_for(app.config(), app.agent_def(&name), &used)
            .await?;
        let connected = chosen.model.clone();
        let model_name = connected.name().to_owned();
        let trace = Arc::new(
            crate::trace::Trace::new(trace, &model_name, prices.clone()).streaming(stream),
        );
        let agent = app.agent_with_models(
            &name,
            connected.clone(),
            chosen.name.as_deref(),
            &chosen.named,
            question,
            model.limits(),
        )?;
        if trace.enabled()
            && let Some(notice) = app.business().and_then(|b| b.privileges.as_ref())
        {
            note!("{}", crate::style::Style::stderr().dim(notice));
        }
        if app.business().is_none() && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            note!(
                "{}",
                crate::style::Style::stderr()
                    .dim("(no database: the assistant has only the date and a calculator; `steward demo` creates the demo database)")
            );
        }
        let recorder = crate::runs::recorder(&agents.store, agents.no_store).await?;
        let log = EventLog::new();
        let mut observers: Vec<Arc<dyn Observer>> = vec![trace.clone(), Arc::new(log.clone())];
        if let Some(recorder) = &recorder {
            recorder.set_model(model_name.clone());
            recorder.set_prices(prices);
            observers.push(recorder.clone());
        }
        let runner = steward_core::Runner::new(Arc::new(agent), connected)
            .with_observer(Arc::new(Fanout(observers)))
            .with_streaming(trace.is_streaming());
        Ok(Self {
            runner,
            trace,
            model_name,
            log,
            recorder,
        })
    }
}
