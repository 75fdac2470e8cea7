//! `steward examples`: the verified examples saved in the run store for a database — questions with the SQL
//! that answered them, which the analyst sees for the questions most like theirs. Each is added through the
//! app's one governed path (the guard must allow the SQL for the principal, and it must run as that principal),
//! as the web UI's thumbs-up and `POST /api/examples` add them.

use anyhow::Context as _;
use clap::{Args, Subcommand};
use steward_app::App;
use steward_app::ShownExample;
use steward_app::store::ExampleSource;
use steward_core::Principal;
use steward_sql::Example;

use crate::agents::{ConfigFile, IdentityArgs, build_app_with};
use crate::exit;
use crate::out::{note, say};
use crate::runs::StoreArgs;
use crate::style::Style;

/// `steward examples …`
#[derive(Subcommand, Debug)]
pub(crate) enum ExamplesCommand {
    /// Save a question with the SQL that answers it (or a run's question with the last SQL it ran): the guard
    /// must allow the SQL for the principal, and it must run as that principal.
    Add(AddArgs),
    /// List the examples saved for the database that the principal may see (its guard allows the SQL, and none
    /// holds values or a question naming rows its role filters or masks), without comments.
    List(ListArgs),
    /// Remove a saved example by its id (or the start of it).
    Remove(RemoveArgs),
    /// Check every example — the config's `knowledge.examples` and the saved ones — against the principal's
    /// guard and the database (which prepares each, running nothing); list the ones that fail (exit code 1).
    Check(Target),
    /// Write the saved examples as a YAML list of {question, sql} (to standard output, or FILE).
    Export(ExportArgs),
    /// Save each example of a YAML list of {question, sql} as `add` does; say which were added, saved before,
    /// or refused and why (exit code 1 when any was refused).
    Import(ImportArgs),
}

/// The database, the run store and the principal of a command.
#[derive(Args, Debug)]
pub(crate) struct Target {
    /// The business database the examples are for: a URL, a SQLite file, or a name from the config's
    /// `databases` (default: the config's database, else the demo database).
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

    #[command(flatten)]
    identity: IdentityArgs,
}

/// Arguments of `steward examples add`.
#[derive(Args, Debug)]
pub(crate) struct AddArgs {
    /// The question.
    #[arg(
        long,
        value_name = "Q",
        requires = "sql",
        required_unless_present = "from_run"
    )]
    question: Option<String>,

    /// The SQL that answers it (one SELECT or WITH query).
    #[arg(long, value_name = "SQL", requires = "question")]
    sql: Option<String>,

    /// Take the question and the last SQL that ran successfully from this recorded run (`steward runs list`).
    #[arg(long, value_name = "RUN_ID", conflicts_with_all = ["question", "sql"])]
    from_run: Option<String>,

    /// Print the saved example as JSON.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    target: Target,
}

/// Arguments of `steward examples list`.
#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    /// Print them as a JSON array.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    target: Target,
}

/// Arguments of `steward examples remove`.
#[derive(Args, Debug)]
pub(crate) struct RemoveArgs {
    /// The example's id (or the start of it), as `steward examples list` shows it.
    #[arg(value_name = "ID")]
    id: String,

    #[command(flatten)]
    target: Target,
}

/// Arguments of `steward examples export`.
#[derive(Args, Debug)]
pub(crate) struct ExportArgs {
    /// The file to write (default: standard output).
    #[arg(value_name = "FILE")]
    file: Option<std::path::PathBuf>,

    #[command(flatten)]
    target: Target,
}

/// Arguments of `steward examples import`.
#[derive(Args, Debug)]
pub(crate) struct ImportArgs {
    /// A YAML list of {question, sql} (as `export` writes it, or a `knowledge.examples` list).
    #[arg(value_name = "FILE")]
    file: std::path::PathBuf,

    #[command(flatten)]
    target: Target,
}

/// Runs `steward examples …`.
pub(crate) async fn run(command: ExamplesCommand, config: &ConfigFile) -> anyhow::Result<u8> {
    match command {
        ExamplesCommand::Add(args) => add(args, config).await,
        ExamplesCommand::List(args) => list(args, config).await,
        ExamplesCommand::Remove(args) => remove(args, config).await,
        ExamplesCommand::Check(target) => check(target, config).await,
        ExamplesCommand::Export(args) => export(args, config).await,
        ExamplesCommand::Import(args) => import(args, config).await,
    }
}

/// The app on the target's database with its run store, and the principal.
async fn open(target: &Target, config: &ConfigFile) -> anyhow::Result<(App, Principal)> {
    let store = crate::runs::open(config, &target.store).await?;
    let app = build_app_with(config, target.db.as_deref(), Some(store)).await?;
    let principal = target.identity.principal(app.config())?;
    if app.examples_database().is_none() {
        anyhow::bail!(
            "examples are kept per database, and there is none: pass --db URL, configure `databases` in \
             steward.yaml, or run `steward demo`"
        );
    }
    Ok((app, principal))
}

async fn close(app: &App) {
    if let Some(store) = app.store() {
        store.close().await;
    }
}

async fn add(args: AddArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let (app, principal) = open(&args.target, config).await?;
    let saved = match (&args.from_run, &args.question, &args.sql) {
        (Some(run), _, _) => {
            app.example_from_run(&principal, run, ExampleSource::Cli)
                .await
        }
        (None, Some(question), Some(sql)) => {
            app.add_example(&principal, question, sql, ExampleSource::Cli, None)
                .await
        }
        _ => {
            close(&app).await;
            anyhow::bail!("give --question and --sql, or --from-run RUN_ID");
        }
    };
    close(&app).await;
    let saved = saved?;
    if args.json {
        say!("{}", serde_json::to_string_pretty(&saved)?);
    } else {
        say!("saved the example {} for {}", saved.id, saved.database);
    }
    Ok(exit::OK)
}

async fn list(args: ListArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let (app, principal) = open(&args.target, config).await?;
    let saved = app.examples_for(&principal).await;
    close(&app).await;
    let saved = saved?;
    if args.json {
        say!("{}", serde_json::to_string_pretty(&saved)?);
        return Ok(exit::OK);
    }
    if saved.is_empty() {
        note!(
            "(no example is saved for {}; `steward examples add --question Q --sql S` saves one)",
            app.examples_database().unwrap_or_default()
        );
        return Ok(exit::OK);
    }
    let style = Style::stdout();
    for example in &saved {
        say!("{}", shown(example, style));
    }
    Ok(exit::OK)
}

/// An example as `list` shows it: its id, when, by whom and how; its question; its SQL.
fn shown(example: &ShownExample, style: Style) -> String {
    let by = match example.saved_by.as_deref() {
        Some("") => "the local user",
        Some(name) => name,
        None => "someone else",
    };
    let from = example
        .run_id
        .as_deref()
        .map(|r| format!(", from the run {r}"))
        .unwrap_or_default();
    format!(
        "{}  {}\n  Q: {}\n  {}\n",
        style.bold(&example.id),
        style.dim(&format!(
            "{} by {by} ({}{from})",
            example.saved_at.format("%Y-%m-%d %H:%M"),
            example.source
        )),
        one_line(&example.question),
        one_line(&example.sql)
    )
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

async fn remove(args: RemoveArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let (app, _) = open(&args.target, config).await?;
    let removed = app.remove_example(&args.id).await;
    close(&app).await;
    let removed = removed?;
    say!(
        "removed the example {} ({})",
        removed.id,
        one_line(&removed.question)
    );
    Ok(exit::OK)
}

async fn check(target: Target, config: &ConfigFile) -> anyhow::Result<u8> {
    let (app, principal) = open(&target, config).await?;
    let checks = app.check_examples(&principal).await;
    close(&app).await;
    let checks = checks?;
    let failed: Vec<_> = checks.iter().filter(|c| c.problem.is_some()).collect();
    let style = Style::stdout();
    for c in &failed {
        say!(
            "{} {}\n  Q: {}\n  {}\n  {}\n",
            style.error("fails:"),
            c.place,
            one_line(&c.question),
            one_line(&c.sql),
            c.problem.as_deref().unwrap_or_default()
        );
    }
    say!(
        "{} example{} checked, {} fail{}",
        checks.len(),
        if checks.len() == 1 { "" } else { "s" },
        failed.len(),
        if failed.len() == 1 { "s" } else { "" }
    );
    Ok(if failed.is_empty() {
        exit::OK
    } else {
        exit::STOPPED
    })
}

async fn export(args: ExportArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let (app, principal) = open(&args.target, config).await?;
    let saved = app.examples_for(&principal).await;
    close(&app).await;
    let list: Vec<Example> = saved?
        .into_iter()
        .map(|e| Example {
            question: e.question,
            sql: e.sql,
        })
        .collect();
    let text = serde_yaml::to_string(&list)?;
    match &args.file {
        Some(file) => {
            std::fs::write(file, &text).with_context(|| format!("writing {}", file.display()))?;
            note!(
                "wrote {} example{} to {}",
                list.len(),
                if list.len() == 1 { "" } else { "s" },
                file.display()
            );
        }
        None => crate::out::text(&text),
    }
    Ok(exit::OK)
}

async fn import(args: ImportArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    let list: Vec<Example> = serde_yaml::from_str(&text).with_context(|| {
        format!(
            "{} is not a YAML list of {{question, sql}} (as `steward examples export` writes it)",
            args.file.display()
        )
    })?;
    let (app, principal) = open(&args.target, config).await?;
    let imported = app.import_examples(&principal, list).await;
    close(&app).await;
    let imported = imported?;
    let style = Style::stdout();
    for (example, why) in &imported.refused {
        say!(
            "{} {}\n  {}\n",
            style.error("refused:"),
            one_line(&example.question),
            why
        );
    }
    for example in &imported.duplicates {
        say!(
            "saved before as {}: {}",
            example.id,
            one_line(&example.question)
        );
    }
    say!(
        "{} added, {} saved before (duplicates), {} refused",
        imported.added.len(),
        imported.duplicates.len(),
        imported.refused.len()
    );
    Ok(if imported.refused.is_empty() {
        exit::OK
    } else {
        exit::STOPPED
    })
}
