//! `steward changes`: the change sets runs staged where no one could decide at once — listed, shown, applied
//! in one transaction, or discarded.

use clap::{Args, Subcommand};
use steward_app::Surface;
use steward_app::store::ChangeSet;

use crate::agents::{ConfigFile, build_app_with};
use crate::out::{note, say};
use crate::runs::StoreArgs;
use crate::style::Style;

/// `steward changes …`
#[derive(Subcommand, Debug)]
pub(crate) enum ChangesCommand {
    /// List the change sets that wait for a decision (with --all, decided ones too).
    List(ListArgs),
    /// Show a change set: each staged call, its arguments and its staged result.
    Show(OneArgs),
    /// Apply a change set: every call in one transaction, each checked against its staged result.
    Apply(OneArgs),
    /// Discard a change set: nothing is written.
    Discard(OneArgs),
}

/// Arguments of `steward changes list`.
#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    /// Also the change sets decided already.
    #[arg(long)]
    all: bool,

    /// Print them as a JSON array.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    store: StoreArgs,
}

/// Arguments of `steward changes show|apply|discard`.
#[derive(Args, Debug)]
pub(crate) struct OneArgs {
    /// The change set's id (or the start of it), as `steward changes list` shows it.
    id: String,

    /// The database to apply it to (default: the one it was staged on; another one is refused).
    #[arg(long, value_name = "URL")]
    db: Option<String>,

    /// Apply only these changes (their call ids, as `steward changes show` lists them), with the earlier ones
    /// whose results they use; the others are discarded.
    #[arg(long, value_name = "CALL", num_args = 1..)]
    only: Vec<String>,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,

    /// Who decides (`--principal NAME` or `--role NAME`): a role's `approve_by` and `self_approval` say who may
    /// apply its change sets.
    #[command(flatten)]
    identity: crate::agents::IdentityArgs,

    #[command(flatten)]
    store: StoreArgs,
}

/// Runs `steward changes …`.
pub(crate) async fn run(command: ChangesCommand, config: &ConfigFile) -> anyhow::Result<u8> {
    match command {
        ChangesCommand::List(args) => list(args, config).await,
        ChangesCommand::Show(args) => show(args, config).await,
        ChangesCommand::Apply(args) => decide(args, config, true).await,
        ChangesCommand::Discard(args) => decide(args, config, false).await,
    }
}

async fn list(args: ListArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let store = crate::runs::open(config, &args.store).await?;
    let sets = store.change_sets(args.all).await;
    store.close().await;
    let sets = sets?;
    if args.json {
        say!("{}", serde_json::to_string_pretty(&sets)?);
        return Ok(crate::exit::OK);
    }
    if sets.is_empty() {
        note!(
            "{}",
            Style::stderr().dim("(no change set waits for a decision)")
        );
        return Ok(crate::exit::OK);
    }
    let rows: Vec<Vec<String>> = sets
        .iter()
        .map(|s| {
            vec![
                s.id.clone(),
                s.saved_at
                    .with_timezone(&chrono::Local)
                    .format("%Y-%m-%d %H:%M")
                    .to_string(),
                who(&s.principal.name),
                s.agent.clone(),
                summary(s),
                s.status.clone(),
            ]
        })
        .collect();
    crate::out::aligned(
        &["id", "saved", "asked by", "agent", "changes", "status"],
        &rows,
    );
    Ok(crate::exit::OK)
}

async fn show(args: OneArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let store = crate::runs::open(config, &args.store).await?;
    let set = store.change_set(&args.id).await;
    store.close().await;
    let set = set?;
    if args.json {
        say!("{}", serde_json::to_string_pretty(&set)?);
        return Ok(crate::exit::OK);
    }
    say!(
        "change set {} · {} · asked by {} · {}",
        set.id,
        set.agent,
        who(&set.principal.name),
        set.status
    );
    for line in crate::session::change_lines(&set.calls, true) {
        say!("{line}");
    }
    if let Some(by) = &set.decided_by {
        say!(
            "{} by {by}{}",
            set.status,
            set.decided_at
                .map(|t| format!(
                    " at {}",
                    t.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M:%S")
                ))
                .unwrap_or_default()
        );
    }
    Ok(crate::exit::OK)
}

async fn decide(args: OneArgs, config: &ConfigFile, apply: bool) -> anyhow::Result<u8> {
    let store = crate::runs::open(config, &args.store).await?;
    let set = store.change_set(&args.id).await?;
    let db = args.db.clone().or_else(|| set.context.database.clone());
    let app = build_app_with(config, db.as_deref(), Some(store)).await?;
    // Where each write is recorded, said once per database before the first write creates it.
    crate::db::note_ledgers(&app).await;
    let mut decider = args.identity.principal(app.config())?;
    if decider.name.is_empty() {
        // The local user, recorded by their login name.
        decider.name = crate::approvals::whoami();
    }
    let decided = app
        .decide_change_set(
            Surface::Cli,
            &set.id,
            apply,
            &decider,
            (!args.only.is_empty()).then_some(args.only.as_slice()),
        )
        .await;
    if let Some(store) = app.store() {
        store.close().await;
    }
    let decided = decided?;
    if args.json {
        say!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "change_set": decided.set,
                "applied": decided.applied,
            }))?
        );
        return Ok(crate::exit::OK);
    }
    let style = Style::stderr();
    match &decided.applied {
        Some(applied) => {
            let n = applied.outputs.len() - applied.already;
            note!(
                "{} change set {}: {n} change{} written{}",
                style.good("applied"),
                decided.set.id,
                if n == 1 { "" } else { "s" },
                if applied.created.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", applied.created.join(", "))
                }
            );
        }
        None => note!(
            "{} change set {}: nothing was written",
            style.warn("discarded"),
            decided.set.id
        ),
    }
    Ok(crate::exit::OK)
}

fn who(name: &str) -> String {
    if name.is_empty() {
        "local user".to_owned()
    } else {
        name.to_owned()
    }
}

fn summary(set: &ChangeSet) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for s in &set.calls {
        match counts.iter_mut().find(|(n, _)| *n == s.call.name) {
            Some((_, c)) => *c += 1,
            None => counts.push((s.call.name.clone(), 1)),
        }
    }
    counts
        .iter()
        .map(|(n, c)| format!("{c} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}
