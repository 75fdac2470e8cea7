//! `steward schema`: the schema context a model would get, for the whole database or for a question, as a
//! principal or role sees it (`--principal`, `--role`: only the tables and columns its role may read, no values
//! of rows it may not read).

use crate::out::{note, say};
use clap::Args;
use steward_sql::{schema_context, visible_to};

use crate::agents::ConfigFile;
use crate::{db, exit};

/// Arguments of `steward schema`.
#[derive(Args, Debug)]
pub(crate) struct SchemaArgs {
    /// The database: sqlite://path, postgres://user@host/db, mysql://user@host/db (or a path to a SQLite file).
    /// Default: the config's database, else the demo database.
    #[arg(
        short,
        long,
        env = "STEWARD_DB",
        hide_env_values = true,
        value_name = "URL"
    )]
    db: Option<String>,

    /// Rank tables for this question and put the relevant ones (and those joining them) first.
    #[arg(long, value_name = "Q")]
    question: Option<String>,

    /// Most tokens of context (1 to 1000000).
    #[arg(
        long,
        default_value_t = 1000,
        value_name = "TOKENS",
        allow_negative_numbers = true,
        value_parser = crate::setup::bounded::<usize, 1, 1_000_000>
    )]
    budget: usize,

    /// Print {"tables": [...], "tokens": N, "text": "..."}.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    identity: crate::agents::IdentityArgs,
}

/// Runs `steward schema`.
pub(crate) async fn run(args: SchemaArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let url = crate::agents::resolve_db(config, args.db.as_deref())?;
    // The schema as the principal's model sees it: what its role may read, and nothing of others' rows.
    let config = config.load()?;
    let principal = args.identity.principal(&config)?;
    let access = steward_app::roles::access_fn(&config.roles);
    let (db, catalog) = db::open(&url).await?;
    db::note_privileges(&db, &url, db::Repeat::Once);
    if let Err(why) = access.of(&principal, db.dialect()) {
        anyhow::bail!("{} may read no table: {why}", who(&principal));
    }
    let catalog = visible_to(&catalog, Some(&access), &principal);
    let context = schema_context(&catalog, args.question.as_deref(), args.budget);
    if args.json {
        say!("{}", serde_json::to_string_pretty(&context)?);
    } else {
        crate::out::text(&context.text);
        note!(
            "{}",
            crate::style::Style::stderr().dim(&format!(
                "-- {} of {} tables, ~{} tokens",
                context.tables.len(),
                catalog.tables.len(),
                context.tokens
            ))
        );
    }
    Ok(exit::OK)
}

/// The principal as a message names it.
fn who(principal: &steward_core::Principal) -> String {
    match (&principal.role, principal.name.is_empty()) {
        (Some(role), true) => format!("the role `{role}`"),
        (_, false) => format!("the principal `{}`", principal.name),
        (None, true) => "the local user".to_owned(),
    }
}
