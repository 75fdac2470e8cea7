//! The run store from the terminal: where `ask` and `chat` record their runs (`--store`, `STEWARD_STORE`, the
//! config's `store`, else a SQLite file in the data directory), and `steward runs list|show` to read them.

use anyhow::Context as _;
use clap::{Args, Subcommand};
use steward_app::store::{RunDetail, RunStore, RunSummary};
use steward_core::Outcome;

use crate::agents::ConfigFile;
use crate::out::{note, say};
use crate::style::Style;
use crate::trace::Trace;

/// Where runs are kept.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct StoreArgs {
    /// The run store: sqlite://path (or a file path) or postgres://… (default: the config's `store`, else
    /// store.sqlite in Steward's data directory, `$XDG_DATA_HOME/steward`).
    #[arg(
        long,
        env = "STEWARD_STORE",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub(crate) store: Option<String>,
}

/// Which store a command uses, and whether the user chose it (a store the user named must open; the default
/// one may be skipped with a warning).
struct Chosen {
    url: Option<String>,
    named: bool,
}

fn choose(config: &ConfigFile, args: &StoreArgs) -> anyhow::Result<Chosen> {
    let named = match &args.store {
        Some(url) => Some(url.clone()),
        None => config.load()?.store,
    };
    let url = named.as_deref().map(|url| {
        let url = url.trim();
        if url.contains("://") || url.starts_with("sqlite:") {
            url.to_owned()
        } else {
            // A bare path is a SQLite file.
            format!("sqlite://{url}")
        }
    });
    Ok(Chosen {
        named: url.is_some(),
        url,
    })
}

/// Opens the store `args` name (or the default one: the config's, else the data directory's).
pub(crate) async fn open(config: &ConfigFile, args: &StoreArgs) -> anyhow::Result<RunStore> {
    let chosen = choose(config, args)?;
    Ok(RunStore::open(chosen.url.as_deref()).await?)
}

/// The store a command that only reads it uses (`steward schema`, for the saved examples): the one named (it
/// must open), else the default one when it exists (one that does not is not created; one that fails is a
/// warning, and the command goes on without it).
pub(crate) async fn store_if_any(
    config: &ConfigFile,
    args: &StoreArgs,
) -> anyhow::Result<Option<RunStore>> {
    let chosen = choose(config, args)?;
    if !chosen.named && !steward_app::store::default_path().is_file() {
        return Ok(None);
    }
    match RunStore::open(chosen.url.as_deref()).await {
        Ok(store) => Ok(Some(store)),
        Err(e) if chosen.named => Err(e.into()),
        Err(e) => {
            note!(
                "{} the examples saved in the run store are left out: {e} (set --store URL)",
                Style::stderr().warn("warning:")
            );
            Ok(None)
        }
    }
}

/// The store that records the runs of `ask`, `chat` and `tools call`: `None` with `--no-store`, or when the
/// default store cannot be opened (said on standard error; a store the user named must open).
pub(crate) async fn store_for_runs(
    config: &ConfigFile,
    args: &StoreArgs,
    no_store: bool,
) -> anyhow::Result<Option<RunStore>> {
    if no_store {
        return Ok(None);
    }
    let chosen = choose(config, args)?;
    match RunStore::open(chosen.url.as_deref()).await {
        Ok(store) => Ok(Some(store)),
        Err(e) if chosen.named => Err(e.into()),
        Err(e) => {
            note!(
                "{} this run is not recorded: {e} (set --store URL, or --no-store to not record)",
                Style::stderr().warn("warning:")
            );
            Ok(None)
        }
    }
}

/// Waits until the turn's records are written; a write error is a warning (the answer stands).
pub(crate) async fn finish(turn: &steward_app::Turn) {
    if let Err(e) = turn.flush().await {
        note!(
            "{} the run was not recorded completely in {}: {e}",
            Style::stderr().warn("warning:"),
            turn.recorder().map_or("the run store", |r| r.url())
        );
    }
}

/// `steward runs …`
#[derive(Subcommand, Debug)]
pub(crate) enum RunsCommand {
    /// List recorded runs, newest first: id, agent, question, outcome, steps, tokens, cost and time.
    List(ListArgs),
    /// Show one run step by step, as `--trace` printed it (sub-agents included), or as JSON.
    Show(ShowArgs),
    /// Carry on a run that waited for approval, once `steward approvals` decided every call it waits for.
    Resume(ResumeArgs),
}

/// Arguments of `steward runs resume`.
#[derive(Args, Debug)]
pub(crate) struct ResumeArgs {
    /// The run's id (or the start of it), as `steward ask` printed it.
    #[arg(value_name = "RUN_ID")]
    id: String,

    /// Show each step on standard error.
    #[arg(short, long)]
    trace: bool,

    /// Print the run as `ask --json` does.
    #[arg(long)]
    json: bool,

    /// The business database, as for `ask` (default: the config's, else the demo database).
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
    model: crate::setup::ModelArgs,
}

/// Arguments of `steward runs list`.
#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    /// Most runs listed.
    #[arg(
        short = 'n',
        long,
        default_value_t = 20,
        value_name = "N",
        value_parser = crate::setup::bounded::<u32, 1, 100_000>
    )]
    limit: u32,

    /// Runs skipped first (for paging).
    #[arg(long, default_value_t = 0, value_name = "N")]
    offset: u32,

    /// Only the runs of this agent.
    #[arg(long, value_name = "AGENT")]
    agent: Option<String>,

    /// Only the runs on this database: a URL, a file, or a name from the config's `databases`.
    #[arg(long, value_name = "DB")]
    db: Option<String>,

    /// Only the runs with this outcome: answered, incomplete (running or waiting for approval), died,
    /// max_steps, token_budget, time_limit, model_failed, cancelled.
    #[arg(long, value_name = "OUTCOME", value_parser = clap::builder::PossibleValuesParser::new(OUTCOMES))]
    status: Option<String>,

    /// Only the runs started since: a time ago (`30m`, `12h`, `7d`, `2w`) or a date (`2026-11-01`, or RFC
    /// 3339 with a time).
    #[arg(long, value_name = "WHEN", value_parser = since)]
    since: Option<chrono::DateTime<chrono::Utc>>,

    /// Print the runs as a JSON array.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    store: StoreArgs,
}

/// `--since`: a time ago (`30m`, `12h`, `7d`, `2w`) or a date or time.
pub(crate) fn since(text: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    let text = text.trim();
    let now = chrono::Utc::now();
    if let Some(split) = text.find(|c: char| !c.is_ascii_digit())
        && split > 0
        && let Ok(n) = text[..split].parse::<i64>()
    {
        let unit = match &text[split..] {
            "s" => Some(chrono::Duration::seconds(n)),
            "m" | "min" => Some(chrono::Duration::minutes(n)),
            "h" => Some(chrono::Duration::hours(n)),
            "d" => Some(chrono::Duration::days(n)),
            "w" => Some(chrono::Duration::weeks(n)),
            _ => None,
        };
        if let Some(ago) = unit {
            return Ok(now - ago);
        }
    }
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(time.with_timezone(&chrono::Utc));
    }
    if let Ok(day) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        && let Some(midnight) = day.and_hms_opt(0, 0, 0)
        && let Some(local) = midnight.and_local_timezone(chrono::Local).earliest()
    {
        return Ok(local.with_timezone(&chrono::Utc));
    }
    Err(format!(
        "`{text}` is neither a time ago (30m, 12h, 7d, 2w) nor a date (2026-11-01, or RFC 3339 such as \
         2026-11-01T09:00:00Z)"
    ))
}

/// Arguments of `steward runs show`.
#[derive(Args, Debug)]
pub(crate) struct ShowArgs {
    /// The run's id, or the start of it (`steward runs list` shows them); `last` for the newest run.
    #[arg(value_name = "ID")]
    id: String,

    /// Print the run, its sub-runs, tool calls and events as JSON.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    store: StoreArgs,
}

/// Runs `steward runs …`.
pub(crate) async fn run(command: RunsCommand, config: &ConfigFile) -> anyhow::Result<u8> {
    match command {
        RunsCommand::List(args) => list(args, config).await,
        RunsCommand::Show(args) => show(args, config).await,
        RunsCommand::Resume(args) => resume(args, config).await,
    }
}

async fn resume(args: ResumeArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let store = open(config, &args.store).await?;
    let pending = store.pending_run(&args.id).await?;
    if let Some(at) = pending.resumed_at {
        anyhow::bail!(
            "run {} was resumed already (at {}); `steward runs show {}` shows how it went",
            pending.run_id,
            at.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M:%S"),
            pending.run_id
        );
    }
    let mut run = pending.run.clone();
    // The calls it waits for now (earlier rounds' decisions are in its state already).
    let (decisions, undecided) = steward_app::App::decisions(&pending, None)?;
    anyhow::ensure!(
        undecided.is_empty(),
        "run {} still waits for: {}; decide with `steward approvals approve ID` or `steward approvals deny ID`",
        pending.run_id,
        undecided.join(", ")
    );
    // The run goes on as it ran: its database, model and principal, unless the flags say otherwise.
    let agents = crate::agents::AgentArgs {
        db: args.db.clone().or_else(|| pending.context.database.clone()),
        agent: Some(pending.agent.clone()),
        identity: Default::default(),
        store: args.store.clone(),
        no_store: false,
    };
    let mut model = args.model.clone();
    if model.model.is_none() {
        model.model = pending.context.model.clone();
    }
    let session = crate::session::Session::open_as(
        config,
        &agents,
        &model,
        args.trace,
        !args.json,
        None,
        crate::session::Resuming {
            principal: Some(pending.principal.clone()),
        },
    )
    .await?;
    session.app.check_same_database(&pending.context)?;
    for change in session.app.changes_since(&pending.context) {
        note!("{} {change}", Style::stderr().warn("note:"));
    }
    session.turn.apply(&mut run, decisions)?;
    if !store
        .claim_resume(&pending.run_id, pending.saved_at)
        .await?
    {
        anyhow::bail!(
            "run {} was resumed by someone else meanwhile; `steward runs show {}` shows how it went",
            pending.run_id,
            pending.run_id
        );
    }
    store.close().await;
    let code = crate::ask::conclude(&session, &mut run, args.json).await;
    session.close().await;
    code
}

async fn list(args: ListArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let store = open(config, &args.store).await?;
    let mut filter =
        steward_app::store::RunFilter::new(args.agent.clone(), args.status.clone(), args.since);
    if let Some(db) = &args.db {
        filter = filter.on_database(database_identity(config, db)?);
    }
    let runs = store.list_where(&filter, args.limit, args.offset).await;
    store.close().await;
    let runs = runs?;
    if args.json {
        say!("{}", serde_json::to_string_pretty(&runs)?);
        return Ok(crate::exit::OK);
    }
    if runs.is_empty() {
        let what = if filter == steward_app::store::RunFilter::default() {
            format!(
                "(no runs recorded in {} yet: `steward ask` records each run)",
                store.url()
            )
        } else {
            let given = given_filters(&[
                ("--agent", args.agent.is_some()),
                ("--db", args.db.is_some()),
                ("--status", args.status.is_some()),
                ("--since", args.since.is_some()),
            ]);
            format!("(no run in {} matches {given})", store.url())
        };
        note!("{}", Style::stderr().dim(&what));
        return Ok(crate::exit::OK);
    }
    let header = [
        "id", "started", "agent", "question", "outcome", "steps", "tokens", "cost", "time",
    ];
    let rows: Vec<Vec<String>> = runs.iter().map(row).collect();
    crate::out::aligned(&header, &rows);
    Ok(crate::exit::OK)
}

/// The outcomes `runs list --status` takes (a run's `outcome` in the store; `incomplete` while it runs or
/// waits).
const OUTCOMES: [&str; 8] = [
    "answered",
    "incomplete",
    "died",
    "max_steps",
    "token_budget",
    "time_limit",
    "model_failed",
    "cancelled",
];

/// The identity of the database `db` (a URL, a file, or a name from the config's `databases`), as runs
/// record it.
pub(crate) fn database_identity(config: &ConfigFile, db: &str) -> anyhow::Result<String> {
    let loaded = config.load()?;
    let url = loaded
        .databases
        .get(db)
        .cloned()
        .unwrap_or_else(|| db.to_owned());
    Ok(steward_app::database_identity(&url))
}

/// The filter flags that were given, for a message that nothing matched them: "--agent and --db as given".
pub(crate) fn given_filters(flags: &[(&str, bool)]) -> String {
    let given: Vec<&str> = flags
        .iter()
        .filter(|(_, on)| *on)
        .map(|(f, _)| *f)
        .collect();
    match given.as_slice() {
        [] => "the filters".to_owned(),
        [one] => format!("{one} as given"),
        [rest @ .., last] => format!("{} and {last} as given", rest.join(", ")),
    }
}

/// Longest question shown in the list.
const QUESTION_WIDTH: usize = 48;

fn row(run: &RunSummary) -> Vec<String> {
    let question = crate::out::flat_cut(&run.input, QUESTION_WIDTH);
    let started = run
        .started_at
        .with_timezone(&chrono::Local)
        .format("%Y-%m-%d %H:%M:%S")
        .to_string();
    let ms = run.duration().num_milliseconds().max(0);
    vec![
        run.id.clone(),
        started,
        run.agent.clone(),
        question,
        run.outcome.clone(),
        run.steps.to_string(),
        run.usage.total().to_string(),
        run.cost_usd
            .map_or_else(|| "?".to_owned(), |c| format!("${c:.4}")),
        format!("{:.1} s", ms as f64 / 1000.0),
    ]
}

async fn show(args: ShowArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let store = open(config, &args.store).await?;
    let detail = fetch(&store, &args.id).await;
    store.close().await;
    let detail = detail?;
    if args.json {
        say!("{}", serde_json::to_string_pretty(&detail)?);
        return Ok(crate::exit::OK);
    }
    print(&detail);
    Ok(crate::exit::OK)
}

async fn fetch(store: &RunStore, id: &str) -> anyhow::Result<RunDetail> {
    if id == "last" {
        let newest = store.list(1, 0).await?;
        let run = newest
            .first()
            .with_context(|| format!("no runs are recorded in {} yet", store.url()))?;
        return Ok(store.get(&run.id).await?);
    }
    Ok(store.get(id).await?)
}

/// The run's header, its steps as the trace shows them, and its answer, on standard output.
fn print(detail: &RunDetail) {
    let style = Style::stdout();
    let run = &detail.run;
    let model = run
        .model
        .clone()
        .unwrap_or_else(|| "model unknown".to_owned());
    say!("{} {}", style.bold("run"), run.id);
    let started = run.started_at.with_timezone(&chrono::Local);
    say!(
        "{}",
        style.dim(&format!(
            "{} · agent {} · {model}{}",
            started.format("%Y-%m-%d %H:%M:%S %:z"),
            run.agent,
            run.principal
                .as_deref()
                .map(|p| format!(" · for {p}"))
                .unwrap_or_default()
        ))
    );
    say!("{} {}", style.bold("question"), run.input);
    let trace = Trace::replay(&model);
    for record in &detail.events {
        steward_core::Observer::on_record(&trace, record);
    }
    match &run.outcome {
        Some(Outcome::Answered { answer }) => say!("{}\n{answer}", style.bold("answer")),
        Some(_) => {}
        None => say!(
            "{}",
            style.warn(&format!(
                "(not finished: the last event was at {}; the run is still going, waits for approval, or its \
                 process ended)",
                run.last_event_at
                    .with_timezone(&chrono::Local)
                    .format("%Y-%m-%d %H:%M:%S")
            ))
        ),
    }
}
