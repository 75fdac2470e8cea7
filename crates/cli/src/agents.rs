//! Which config, database and agent a command runs: `--config` (or `STEWARD_CONFIG`, or `./steward.yaml`),
//! `--db` (or `STEWARD_DB`, or the config's database, or the demo database when it exists) and `--agent`.

use std::path::PathBuf;

use clap::Args;
use steward_app::{App, AppOptions, Config, DatabaseChoice, choose_database, demo_path};

/// The config file a command reads, as `--config` (or `STEWARD_CONFIG`) named it: `main` takes it from the
/// command line and hands it to the commands that read the config. It is read only when a command needs it,
/// so a command that does not (`sql check --dialect`, `init`) works whatever the file holds.
#[derive(Clone, Debug)]
pub(crate) struct ConfigFile(Option<PathBuf>);

impl ConfigFile {
    /// The file `--config` names (`None`: `STEWARD_CONFIG`, else `./steward.yaml` when it exists, else the
    /// built-in configuration).
    pub(crate) fn new(path: Option<PathBuf>) -> Self {
        Self(path)
    }

    /// Reads the config in effect (see [`Config::discover`]).
    pub(crate) fn load(&self) -> anyhow::Result<Config> {
        Ok(Config::discover(self.0.as_deref())?)
    }
}

/// The database and agent flags of `ask` and `chat`.
#[derive(Args, Debug, Clone)]
pub(crate) struct AgentArgs {
    /// The business database: sqlite://path, postgres://…, mysql://…, or a name from the config's `databases`
    /// (default: the config's database, else the demo database once `steward demo` made it).
    #[arg(
        short,
        long,
        env = "STEWARD_DB",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub(crate) db: Option<String>,

    /// The agent (see `steward tools list`). Default: the config's default, else assistant on the demo
    /// database, analyst on any other database.
    #[arg(short, long, value_name = "NAME")]
    pub(crate) agent: Option<String>,

    #[command(flatten)]
    pub(crate) identity: IdentityArgs,

    #[command(flatten)]
    pub(crate) store: crate::runs::StoreArgs,

    /// Do not record the run in the run store.
    #[arg(long, conflicts_with = "store")]
    pub(crate) no_store: bool,
}

/// Who a command runs for.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct IdentityArgs {
    /// Run as this principal from the config's `principals` (its role and attributes: row filters use them).
    #[arg(long, env = "STEWARD_PRINCIPAL", value_name = "NAME")]
    pub(crate) principal: Option<String>,

    /// Run with this role from the config's `roles` (default: the config's `defaults.role`, else no role:
    /// everything is allowed).
    #[arg(long, env = "STEWARD_ROLE", value_name = "NAME")]
    pub(crate) role: Option<String>,
}

impl IdentityArgs {
    /// The principal: `--principal`, else `--role`, else the config's defaults, else the local user.
    pub(crate) fn principal(&self, config: &Config) -> anyhow::Result<steward_core::Principal> {
        Ok(steward_app::resolve_principal(
            config,
            self.principal.as_deref(),
            self.role.as_deref(),
        )?)
    }
}

/// The database URL of `schema` and `sql run`: `--db` (a URL, a SQLite path, or a name from the config's
/// `databases`), else the config's default database, else the demo database (see
/// [`steward_app::choose_database`]).
pub(crate) fn resolve_db(config: &ConfigFile, db: Option<&str>) -> anyhow::Result<String> {
    chosen_db(config, db)?.ok_or_else(|| {
        anyhow::anyhow!(
            "no database: pass --db URL (sqlite://path, postgres://…, mysql://…), configure `databases` in \
             steward.yaml, or run `steward demo` to create the demo database"
        )
    })
}

/// The database a command uses when not told: the config's default database (or its only one), else the demo
/// database when `steward demo` made it, else none.
pub(crate) fn default_db(config: &ConfigFile) -> anyhow::Result<Option<String>> {
    chosen_db(config, None)
}

fn chosen_db(config: &ConfigFile, db: Option<&str>) -> anyhow::Result<Option<String>> {
    let config = config.load()?;
    match choose_database(&config, db, Some(&demo_path())) {
        DatabaseChoice::Named(name) => match config.databases.get(&name) {
            Some(url) => Ok(Some(url.clone())),
            None => anyhow::bail!(
                "{}: there is no database named `{name}`",
                config.locate(&["defaults", "database"])
            ),
        },
        DatabaseChoice::Url(url) => Ok(Some(url)),
        _ => Ok(None),
    }
}

/// Builds the app from the config and `--db`, with a spinner while databases open; it records nothing.
pub(crate) async fn build_app(config: &ConfigFile, db: Option<&str>) -> anyhow::Result<App> {
    build_app_with(config, db, None).await
}

/// [`build_app`], recording runs and chaining every tool call's audit record in `store`.
pub(crate) async fn build_app_with(
    config: &ConfigFile,
    db: Option<&str>,
    store: Option<steward_app::store::RunStore>,
) -> anyhow::Result<App> {
    let config = config.load()?;
    let bar = crate::db::spinner("opening the databases");
    let app = App::build(
        config,
        AppOptions {
            db: db.map(str::to_owned),
            demo: Some(demo_path()),
            clock: crate::setup::clock()?,
            store,
        },
    )
    .await;
    bar.finish_and_clear();
    Ok(app?.with_telemetry(telemetry()?))
}

/// The trace exporter the `OTEL_*` environment asks for (see `steward_app::telemetry`), if any.
fn telemetry() -> anyhow::Result<Option<steward_app::Telemetry>> {
    match steward_app::TelemetryConfig::from_env().map_err(anyhow::Error::msg)? {
        Some(config) => Ok(Some(
            steward_app::Telemetry::start(config).map_err(anyhow::Error::msg)?,
        )),
        None => Ok(None),
    }
}
