//! `steward mcp`: Steward as an MCP server on standard input and output, for MCP clients (Claude Desktop, IDEs,
//! agents) that start it as a subprocess. Its tools are checked and run exactly as for a model in a run; see
//! `steward_server::mcp`. Standard output is the protocol: everything else goes to standard error.

use std::sync::Arc;

use clap::Args;
use steward_server::mcp::McpServer;

use crate::agents::{ConfigFile, IdentityArgs, build_app_with};
use crate::exit;
use crate::out::note;
use crate::setup::ModelArgs;

/// Arguments of `steward mcp`.
#[derive(Args, Debug)]
pub(crate) struct McpArgs {
    /// The business database: sqlite://path, postgres://…, mysql://…, or a name from the config's `databases`
    /// (default: the config's database, else the demo database once `steward demo` made it).
    #[arg(
        short,
        long,
        env = "STEWARD_DB",
        hide_env_values = true,
        value_name = "URL"
    )]
    db: Option<String>,

    #[command(flatten)]
    identity: IdentityArgs,

    #[command(flatten)]
    store: crate::runs::StoreArgs,

    /// Do not record calls and ask_database's runs in the run store (no audit trail; a run that waits for
    /// approval is then not saved).
    #[arg(long, conflicts_with = "store")]
    no_store: bool,

    /// The model of ask_database's analyst, and its limits.
    #[command(flatten)]
    model: ModelArgs,
}

/// Runs `steward mcp` until the client closes standard input.
pub(crate) async fn run(args: McpArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let store = crate::runs::store_for_runs(config, &args.store, args.no_store).await?;
    let app = build_app_with(config, args.db.as_deref(), store).await?;
    // Where each write is recorded, said once per database before the first write creates it.
    crate::db::note_ledgers(&app).await;
    let principal = args.identity.principal(app.config())?;
    let app = Arc::new(app);
    let server = McpServer::new(app.clone(), args.model.choice(), principal)
        .with_limits(args.model.limits());
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        note!(
            "{}",
            crate::style::Style::stderr().dim(
                "steward mcp speaks MCP on standard input and output: an MCP client starts it, e.g. with \
                 {\"command\": \"steward\", \"args\": [\"mcp\"]}. Ctrl-D ends it."
            )
        );
    }
    let served = server.serve_stdio().await;
    app.flush_traces().await;
    served?;
    Ok(exit::OK)
}
