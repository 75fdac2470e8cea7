//! `steward knowledge`: the business knowledge the agents use — the config's `knowledge:` section and the
//! document saved in the run store for the database, which every server using that store shares. `import`
//! checks a file as `config check` checks the config's (the guard, the names, the database preparing every
//! statement) before it saves it.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use crate::agents::ConfigFile;
use crate::exit;
use crate::out::{note, say};
use crate::runs::StoreArgs;

/// Where: the business database and the run store.
#[derive(Args, Debug, Clone)]
pub(crate) struct Place {
    /// The business database: a URL, a SQLite path or a name from the config's `databases` (default: the
    /// config's, else the demo database).
    #[arg(
        short,
        long,
        env = "STEWARD_DB",
        hide_env_values = true,
        value_name = "URL"
    )]
    db: Option<String>,

    #[command(flatten)]
    store: StoreArgs,
}

/// `steward knowledge …`
#[derive(Subcommand, Debug)]
pub(crate) enum KnowledgeCommand {
    /// Print the knowledge the agents use for the database (the config's with the run store's merged), as
    /// YAML.
    Show(Place),
    /// Check a knowledge file (the shape of steward.yaml's `knowledge:` section) against the database and save
    /// it in the run store for that database, replacing what was saved; servers read it when they start.
    Import {
        /// The YAML file; `-` reads standard input.
        file: PathBuf,
        /// Check only; save nothing.
        #[arg(long)]
        check: bool,
        #[command(flatten)]
        place: Place,
    },
    /// Print the knowledge saved in the run store for the database, as it was imported (or write it to FILE).
    Export {
        /// Where to write it (default: standard output).
        file: Option<PathBuf>,
        #[command(flatten)]
        place: Place,
    },
    /// Remove the knowledge saved in the run store for the database (the config's stays).
    Clear(Place),
}

/// Runs `steward knowledge …`.
pub(crate) async fn run(command: KnowledgeCommand, config: &ConfigFile) -> anyhow::Result<u8> {
    let place = match &command {
        KnowledgeCommand::Show(p) | KnowledgeCommand::Clear(p) => p,
        KnowledgeCommand::Import { place, .. } | KnowledgeCommand::Export { place, .. } => place,
    }
    .clone();
    let store = crate::runs::open(config, &place.store).await?;
    let app =
        crate::agents::build_app_with(config, place.db.as_deref(), Some(store.clone())).await?;
    let Some(business) = app.business() else {
        anyhow::bail!("there is no business database; name one with --db");
    };
    let database = steward_app::database_identity(&business.url);
    match command {
        KnowledgeCommand::Show(_) => {
            let knowledge = app.knowledge().cloned().unwrap_or_default();
            if knowledge.is_empty() {
                note!(
                    "no knowledge for {database}: add a `knowledge:` section to steward.yaml or `steward knowledge \
                     import FILE`"
                );
                return Ok(exit::OK);
            }
            say!("{}", serde_yaml::to_string(&knowledge)?.trim_end());
            Ok(exit::OK)
        }
        KnowledgeCommand::Import { file, check, .. } => {
            let (text, name) = if file.as_os_str() == "-" {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                    .context("cannot read the knowledge from standard input")?;
                (text, "<stdin>".to_owned())
            } else {
                (
                    std::fs::read_to_string(&file)
                        .with_context(|| format!("cannot read {}", file.display()))?,
                    file.display().to_string(),
                )
            };
            let by = std::env::var("USER").unwrap_or_else(|_| "local".to_owned());
            let result = if check {
                app.check_knowledge_document(&text, &name).await
            } else {
                app.save_knowledge(&text, &name, &by).await
            };
            match result {
                Ok(knowledge) => {
                    let counts = [
                        (
                            knowledge.tables.len(),
                            "table description",
                            "table descriptions",
                        ),
                        (
                            knowledge.glossary.len(),
                            "glossary entry",
                            "glossary entries",
                        ),
                        (knowledge.metrics.len(), "metric", "metrics"),
                        (knowledge.examples.len(), "example", "examples"),
                    ]
                    .iter()
                    .map(|(n, one, many)| format!("{n} {}", if *n == 1 { one } else { many }))
                    .collect::<Vec<_>>()
                    .join(", ");
                    if check {
                        say!("{name} is valid for {database}: {counts}");
                    } else {
                        say!(
                            "saved for {database} in {}: {counts}; servers using this store read it when they start",
                            steward_core::redact_url(store.url())
                        );
                    }
                    Ok(exit::OK)
                }
                Err(problems) => {
                    anyhow::bail!("{}\nnothing was saved", problems.join("\n"))
                }
            }
        }
        KnowledgeCommand::Export { file, .. } => {
            let Some(saved) = app.stored_knowledge() else {
                note!("the run store holds no knowledge for {database}");
                return Ok(exit::OK);
            };
            match file {
                Some(path) => {
                    std::fs::write(&path, &saved.text)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    note!("wrote {}", path.display());
                }
                None => say!("{}", saved.text.trim_end()),
            }
            Ok(exit::OK)
        }
        KnowledgeCommand::Clear(_) => {
            if store.clear_knowledge(&database).await? {
                say!("removed the knowledge saved for {database}");
            } else {
                note!("the run store held no knowledge for {database}");
            }
            Ok(exit::OK)
        }
    }
}
