//! `steward schema`: the schema context a model would get, for the whole database or for a question, as a
//! principal or role sees it (`--principal`, `--role`: only the tables and columns its role may read, no values
//! of rows it may not read).

use crate::out::{note, say};
use clap::Args;

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

    /// The run store whose knowledge and verified examples for this database join the config's (`steward
    /// knowledge`, `steward examples`).
    #[command(flatten)]
    store: crate::runs::StoreArgs,
}

/// Runs `steward schema`.
pub(crate) async fn run(args: SchemaArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let url = crate::agents::resolve_db(config, args.db.as_deref())?;
    // Exactly what the analyst's model gets: the app's toolkit, with the config's knowledge, as the principal's
    // role may see it (what it may read, nothing of others' rows), with the knowledge and examples saved in the run store.
    let store = crate::runs::store_if_any(config, &args.store).await?;
    let app = crate::agents::build_app_with(config, args.db.as_deref(), store).await?;
    if let Some(store) = app.store() {
        store.close().await;
    }
    let principal = args.identity.principal(app.config())?;
    if let Some(db) = app.business().map(|b| b.db.clone()) {
        db::note_privileges(&db, &url, db::Repeat::Once);
    }
    let (context, visible) =
        match app.schema_context_for(&principal, args.question.as_deref(), args.budget) {
            Some(Ok(found)) => found,
            Some(Err(why)) => anyhow::bail!("{} may read no table: {why}", who(&principal)),
            None => anyhow::bail!("there is no database to describe; name one with --db"),
        };
    if args.json {
        say!("{}", serde_json::to_string_pretty(&context)?);
    } else {
        crate::out::text(&context.text);
        let mut extra = String::new();
        for (n, what) in [
            (context.metrics.len(), "metric"),
            (context.glossary.len(), "glossary entr"),
            (context.examples.len(), "example"),
        ] {
            if n > 0 {
                let plural = match (n, what.ends_with("entr")) {
                    (1, true) => "y",
                    (_, true) => "ies",
                    (1, false) => "",
                    (_, false) => "s",
                };
                extra.push_str(&format!(", {n} {what}{plural}"));
            }
        }
        note!(
            "{}",
            crate::style::Style::stderr().dim(&format!(
                "-- {} of {visible} tables{extra}, ~{} tokens",
                context.tables.len(),
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
