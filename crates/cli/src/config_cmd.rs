//! `steward config check` and `steward config show`: is the config right, and what does it resolve to.

use clap::Subcommand;

use crate::agents::{ConfigFile, build_app};
use crate::exit;
use crate::out::say;

/// `steward config …`
#[derive(Subcommand, Debug)]
pub(crate) enum ConfigCommand {
    /// Read the config, open its databases, check its tools and agents; say what is wrong, with file:line:column.
    Check {
        /// The business database to check against (default: the config's, else the demo database).
        #[arg(
            short,
            long,
            env = "STEWARD_DB",
            hide_env_values = true,
            value_name = "URL"
        )]
        db: Option<String>,

        /// Do not ask the databases to prepare the declared SQL tools' statements (a table or column they lack
        /// is then found at the first call); the tools are still built and checked by the guard. A database
        /// that cannot be reached then leaves the file to be checked on its own.
        #[arg(long)]
        offline: bool,
    },
    /// Print the config as resolved (`${VAR}`s filled in, passwords and keys masked).
    Show,
}

/// Runs `steward config …`.
pub(crate) async fn run(command: ConfigCommand, config: &ConfigFile) -> anyhow::Result<u8> {
    match command {
        ConfigCommand::Show => {
            let config = config.load()?;
            match &config.source {
                Some(source) => say!("# {}", source.path.display()),
                None => say!(
                    "# no config file: the built-in configuration (the demo's agents and tools)"
                ),
            }
            say!("{}", config.to_masked_yaml()?.trim_end());
            Ok(exit::OK)
        }
        ConfigCommand::Check { db, offline } => {
            let app = match build_app(config, db.as_deref()).await {
                Ok(app) => app,
                // Offline, a database that cannot be reached leaves the file to check on its own.
                Err(e)
                    if offline
                        && e.downcast_ref::<steward_app::AppError>()
                            .is_some_and(steward_app::AppError::is_unreachable) =>
                {
                    let loaded = config.load()?;
                    if loaded.server.is_some() {
                        steward_server::auth::Auth::from_config(&loaded, true).await?;
                    }
                    let place = loaded.source.as_ref().map_or_else(
                        || "the built-in config".to_owned(),
                        |s| s.path.display().to_string(),
                    );
                    crate::out::note!(
                        "warning: {e}\nOffline, only the file's YAML shape and its server section were checked: \
                         agents, tools, roles, principals, row filters and knowledge need the databases open and \
                         were NOT checked. Run `steward config check` where the databases can be opened."
                    );
                    say!(
                        "{place}: YAML shape and server section valid (the rest unchecked: a database could not be opened)"
                    );
                    return Ok(exit::OK);
                }
                Err(e) => return Err(e),
            };
            if !offline {
                let (mut problems, notes) = app.check_sql_tools().await;
                problems.extend(app.check_knowledge().await);
                for text in notes {
                    crate::out::note!("note: {text}");
                }
                if !problems.is_empty() {
                    anyhow::bail!("{} (`--offline` skips this check)", problems.join("\n"));
                }
            }
            // The `server:` section: tokens, their principals and roles, the OIDC key set.
            if app.config().server.is_some() {
                steward_server::auth::Auth::from_config(app.config(), true).await?;
            }
            let place = app.config().source.as_ref().map_or_else(
                || "the built-in config".to_owned(),
                |s| s.path.display().to_string(),
            );
            let n = app.config().databases.len();
            say!(
                "{place} is valid: {} agents ({}), {} tools, {n} configured database{}",
                app.agent_names().count(),
                app.agent_names().collect::<Vec<_>>().join(", "),
                app.tool_names().len(),
                if n == 1 { "" } else { "s" }
            );
            Ok(exit::OK)
        }
    }
}
