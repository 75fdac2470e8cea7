//! `steward serve`: the HTTP API, the web UI, the OpenAI-compatible facade and MCP over HTTP.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use crate::agents::{ConfigFile, build_app_with};
use crate::out::{note, say};
use crate::runs::StoreArgs;
use crate::setup::ModelArgs;

/// Arguments of `steward serve`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct ServeArgs {
    #[command(subcommand)]
    command: Option<ServeCommand>,

    /// The address to listen on (default: the config's `server.bind`, else 127.0.0.1:8080). Any address but a
    /// loopback one needs API tokens or OIDC configured under `server:`.
    #[arg(long, value_name = "ADDR:PORT")]
    bind: Option<String>,

    /// The business database: a URL or a name from the config's `databases` (default: the config's, else the
    /// demo database).
    #[arg(long, env = "STEWARD_DB", hide_env_values = true, value_name = "URL")]
    db: Option<String>,

    #[command(flatten)]
    store: StoreArgs,

    /// Seconds to wait on shutdown (Ctrl-C, SIGTERM) for runs in flight before cancelling them.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    grace: u64,

    #[command(flatten)]
    model: ModelArgs,
}

/// `steward serve token`.
#[derive(Subcommand, Debug)]
enum ServeCommand {
    /// Make a new API token: prints the token once, and the config lines that admit it (only its SHA-256 is
    /// kept in the config).
    Token(TokenArgs),
}

#[derive(Args, Debug)]
struct TokenArgs {
    /// A name for the token (who or what uses it).
    name: String,
    /// The principal it acts as, from the config's `principals`.
    #[arg(long)]
    principal: Option<String>,
    /// The role it has, when it has no principal.
    #[arg(long, conflicts_with = "principal")]
    role: Option<String>,
}

/// The log filter when `RUST_LOG` is not set (or not valid): warnings from everything, and the server's own
/// notes (shutdown, turns marked failed, tool failures over MCP). rmcp warns of every error it answers a client
/// with (an unknown method, bad params): those are the client's, answered to it, so only its errors show.
const DEFAULT_LOG: &str = "warn,rmcp=error,steward_server=info,steward=info";

/// Sends the server's logs (`tracing`) to standard error, filtered by `RUST_LOG` (default: [`DEFAULT_LOG`]).
/// For `steward serve` and `steward mcp`, whose standard output is the protocol.
pub(crate) fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG));
    // A subscriber set already (a second call) is left as it is.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Runs `steward serve`.
pub(crate) async fn run(args: ServeArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    if let Some(ServeCommand::Token(token)) = args.command {
        return make_token(&token);
    }
    let store = crate::runs::open(config, &args.store).await?;
    let app = Arc::new(build_app_with(config, args.db.as_deref(), Some(store.clone())).await?);
    // Where each write is recorded, said once per database before the first write creates it.
    crate::db::note_ledgers(&app).await;
    let bind = args
        .bind
        .clone()
        .or_else(|| app.config().server.as_ref().and_then(|s| s.bind.clone()))
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let addr: SocketAddr = tokio::net::lookup_host(&bind)
        .await
        .with_context(|| {
            format!("cannot use the address `{bind}`: give ADDR:PORT, e.g. 127.0.0.1:8080")
        })?
        .next()
        .with_context(|| format!("the address `{bind}` names no host"))?;
    let models = args.model.choice();
    let grace = Duration::from_secs(args.grace);
    let server = steward_server::Server::new(steward_server::ServerOptions {
        app: app.clone(),
        models,
        loopback: addr.ip().is_loopback(),
    })
    .await?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    if let Some(why) = server.no_model() {
        note!(
            "steward serve: messages cannot be answered until a model is set (MCP's tools, approvals, change \
             sets, runs and the audit trail work without one). Why: {why}"
        );
    }
    note!(
        "steward serve: listening on http://{local} (web UI at /, API at /api, OpenAI-compatible at /v1, MCP at /mcp); \
         runs are stored in {}",
        store.url()
    );
    server.serve(listener, grace, shutdown_signal()).await?;
    // Runs still going after the grace period were cancelled: their statements are cancelled on the database
    // before the process ends.
    steward_sql::settle_cancellations().await;
    app.flush_traces().await;
    note!("steward serve: stopped");
    Ok(0)
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn make_token(args: &TokenArgs) -> anyhow::Result<u8> {
    let mut bytes = [0u8; 32];
    for chunk in bytes.chunks_mut(16) {
        chunk.copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    }
    let token: String = format!(
        "stw_{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    );
    let hash = steward_server::token_hash(&token);
    say!("{token}");
    let who = match (&args.principal, &args.role) {
        (Some(p), _) => format!("      principal: {p}\n"),
        (None, Some(r)) => format!("      role: {r}\n"),
        (None, None) => "      principal: NAME   # or role: NAME\n".to_owned(),
    };
    note!(
        "The token is shown once. Admit it with these lines in steward.yaml:\n\nserver:\n  tokens:\n    - name: {}\n      sha256: {hash}\n{who}",
        args.name
    );
    Ok(0)
}
