//! `steward demo`: creates (or keeps) the demo database, says what to ask, and opens chat when a model is
//! configured.

use crate::out::{note, say};
use std::io::IsTerminal;
use std::time::Duration;

use anyhow::bail;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use steward_domains::demo::{self, DemoConfig};
use steward_sql::{Database, IntrospectOptions};

use crate::agents::{AgentArgs, ConfigFile};
use crate::chat::ChatArgs;
use crate::exit;
use crate::setup::{ModelArgs, bounded, clock};
use crate::style::Style;
use steward_app::demo_path;

/// Arguments of `steward demo`.
#[derive(Args, Debug)]
pub(crate) struct DemoArgs {
    /// Where to create it: a SQLite path, or a postgres:// or mysql:// URL, whose database is created when the
    /// server does not have it yet (default: ~/.local/share/steward/demo.sqlite).
    #[arg(short, long, value_name = "PATH|URL")]
    db: Option<String>,

    /// Orders in thousands: 1 gives about 1,000 orders, 1000 about a million (1 to 10000).
    #[arg(
        long,
        default_value_t = 1,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = bounded::<u64, 1, 10_000>
    )]
    scale: u64,

    /// The random seed; the same seed and day give the same data (0 to 18446744073709551615).
    #[arg(
        long,
        default_value_t = 42,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = bounded::<u64, 0, { u64::MAX }>
    )]
    seed: u64,

    /// Rebuild it even if it exists (its data is replaced).
    #[arg(long)]
    force: bool,

    #[command(flatten)]
    model: ModelArgs,
}

/// Runs `steward demo`.
pub(crate) fn run(
    args: DemoArgs,
    config: &ConfigFile,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<u8> {
    let style = Style::stderr();
    let (url, shown) = match &args.db {
        // What is shown never holds the URL's password or keys.
        Some(db) if db.contains("://") || db.starts_with("sqlite:") => {
            (db.clone(), steward_core::redact_url(db))
        }
        Some(path) => (format!("sqlite://{path}?mode=rwc"), path.clone()),
        None => {
            let path = demo_path();
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            (
                format!("sqlite://{}?mode=rwc", path.display()),
                path.display().to_string(),
            )
        }
    };
    let today = clock()?.now().0.date_naive();
    let demo_config = DemoConfig {
        seed: args.seed,
        scale: args.scale,
        today,
    };
    let in_transit = runtime.block_on(async {
        let db = match Database::connect(&url).await {
            Ok(db) => db,
            // A server without the database yet: create it, as `--db` for a SQLite file creates the file.
            Err(error) => match crate::db::create_if_missing(&url).await? {
                Some(name) => {
                    note!("{}", style.dim(&format!("Created the database `{name}` at {shown}.")));
                    Database::connect(&url).await?
                }
                None => return Err(error.into()),
            },
        };
        let structure = IntrospectOptions {
            skip_samples: true,
            cache_dir: None,
        };
        let existing = demo::existing_tables(&*db.refresh_catalog(&structure).await?);
        let complete = existing.len() == demo::TABLES.len();
        if complete && !args.force {
            note!("{}", style.dim(&format!("The demo database is already at {shown}; --force rebuilds it.")));
        } else {
            if !existing.is_empty() && !complete && !args.force {
                bail!(
                    "{shown} already has tables named {}; --force replaces them with the demo's (their data is lost)",
                    existing.join(", ")
                );
            }
            generate(&db, demo_config, &shown).await?;
        }
        let codes = demo::order_codes(&db, "IN TRANSIT", 1).await?;
        db.close().await;
        anyhow::Ok(codes.into_iter().next().unwrap_or_else(|| demo::IN_TRANSIT_ORDER.to_owned()))
    })?;
    let db_flag = if args.db.is_some() {
        format!(" --db {shown}")
    } else {
        String::new()
    };
    say!("Things to ask (steward ask{db_flag} \"…\", or in steward chat{db_flag}):");
    for (i, q) in suggestions(&in_transit).iter().enumerate() {
        say!("  {}. {q}", i + 1);
    }
    if crate::out::stdout_closed() {
        // `steward demo | head -3`: no one would read a chat's answers.
        return Ok(exit::OK);
    }
    let model = runtime.block_on(crate::setup::connect(&args.model.choice()));
    match model {
        Ok(_) => {
            say!();
            let chat = ChatArgs {
                trace: false,
                agents: AgentArgs {
                    db: Some(url.replace("?mode=rwc", "")),
                    agent: None,
                    identity: Default::default(),
                    store: Default::default(),
                    no_store: false,
                },
                model: args.model,
            };
            crate::chat::run(chat, config, runtime)
        }
        Err(error) => {
            let db = if args.db.is_some() {
                shown.clone()
            } else {
                demo_path().display().to_string()
            };
            let why = match error.downcast_ref::<steward_llm::Error>() {
                Some(steward_llm::Error::NoModel(_)) => "No model is configured, so chat does not start. Configure one with \
                    --model or STEWARD_MODEL, e.g. openai:gpt-4o-mini (with OPENAI_API_KEY) or ollama:qwen2.5:7b \
                    (a local Ollama); `steward ask --help` lists every option."
                    .to_owned(),
                _ => format!("The model could not be set up, so chat does not start: {}.", first_line(&error.to_string())),
            };
            say!(
                "\n{why}\nThen run `steward chat`{db_flag}. Without a model you can already:\n  \
                 steward tools list{db_flag}\n  \
                 steward tools call get_order '{{\"order_code\": \"{in_transit}\"}}'{db_flag}\n  \
                 steward tools call expense_summary '{{\"from\": \"{}\", \"to\": \"{today}\", \"category\": \"Coffee\"}}'{db_flag}\n  \
                 steward sql run --db {db} \"SELECT status, COUNT(*) FROM orders GROUP BY status\"\n  \
                 steward schema --db {db} --question \"Which customers spend the most?\"",
                today
                    .checked_sub_days(chrono::Days::new(30))
                    .unwrap_or(today)
            );
            Ok(exit::OK)
        }
    }
}

fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or("")
        .trim_end_matches('.')
        .to_owned()
}

/// Five things to ask, with an order really in transit.
pub(crate) fn suggestions(in_transit: &str) -> [String; 5] {
    [
        "I spent $5 on a coffee today, tax rate 0.2, please track it".to_owned(),
        format!("When is my order {in_transit} arriving?"),
        "How much did we spend on coffee last month?".to_owned(),
        "Move all the tasks in my inbox into projects, create projects if needed".to_owned(),
        "Which five customers ordered the most this year?".to_owned(),
    ]
}

async fn generate(db: &Database, config: DemoConfig, shown: &str) -> anyhow::Result<()> {
    let bar = if std::io::stderr().is_terminal() {
        let bar =
            ProgressBar::with_draw_target(Some(config.orders()), ProgressDrawTarget::stderr());
        if let Ok(style) =
            ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} orders ({eta} left)")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message("generating the demo database");
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    } else {
        ProgressBar::hidden()
    };
    let started = std::time::Instant::now();
    let result = demo::create(db, config, &|done, _| bar.set_position(done)).await;
    bar.finish_and_clear();
    let summary = result?;
    let rows: Vec<String> = summary
        .rows
        .iter()
        .map(|(t, n)| format!("{n} {t}"))
        .collect();
    note!(
        "{}",
        Style::stderr().good(&format!(
            "Created the demo database at {shown} in {:.1} s: {}.",
            started.elapsed().as_secs_f64(),
            rows.join(", ")
        ))
    );
    Ok(())
}
