//! `steward approvals`: the calls that saved runs wait for, and a person's decision on each; then
//! `steward runs resume RUN_ID` carries the run on.

use anyhow::Context as _;
use clap::{Args, Subcommand};
use serde_json::Value;
use steward_app::store::PendingApproval;
use steward_core::Approval;

use crate::agents::{ConfigFile, build_app_with};
use crate::out::{note, say};
use crate::runs::StoreArgs;
use crate::style::Style;

/// `steward approvals …`
#[derive(Subcommand, Debug)]
pub(crate) enum ApprovalsCommand {
    /// List the calls that saved runs wait for (with --all, decided ones too).
    List(ListArgs),
    /// Approve a waiting call (or run it with edited arguments).
    Approve(ApproveArgs),
    /// Deny a waiting call; the model that made it is told the reason.
    Deny(DenyArgs),
    /// Deny every call that has waited longer than --older-than (nobody decided it); each run can then be
    /// resumed, its model told the call expired. Run it from cron to keep the list short.
    Expire(ExpireArgs),
}

/// Arguments of `steward approvals expire`.
#[derive(Args, Debug)]
pub(crate) struct ExpireArgs {
    /// Deny the calls asked for before this: a time ago (`7d`, `12h`) or a date.
    #[arg(long, value_name = "WHEN", value_parser = crate::runs::since)]
    older_than: chrono::DateTime<chrono::Utc>,

    /// List what would be denied, and deny nothing.
    #[arg(long)]
    dry_run: bool,

    #[command(flatten)]
    store: StoreArgs,
}

/// Arguments of `steward approvals list`.
#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    /// Also decided calls, and those of runs already resumed.
    #[arg(long)]
    all: bool,

    /// Only the calls of this tool.
    #[arg(long, value_name = "TOOL")]
    tool: Option<String>,

    /// Only the calls of runs of this agent.
    #[arg(long, value_name = "AGENT")]
    agent: Option<String>,

    /// Only the calls of runs on this database: a URL, a file, or a name from the config's `databases`.
    #[arg(long, value_name = "DB")]
    db: Option<String>,

    /// Only the calls in this state: waiting (the default without --all), approved, denied, edited, or
    /// decided (any of the three).
    #[arg(long, value_enum, value_name = "STATE")]
    status: Option<Status>,

    /// Only the calls asked for since: a time ago (`30m`, `12h`, `7d`, `2w`) or a date.
    #[arg(long, value_name = "WHEN", value_parser = crate::runs::since)]
    since: Option<chrono::DateTime<chrono::Utc>>,

    /// Only the calls asked for before: a time ago (`7d`) or a date (the ones nobody decided for long).
    #[arg(long, value_name = "WHEN", value_parser = crate::runs::since)]
    older_than: Option<chrono::DateTime<chrono::Utc>>,

    /// Print them as a JSON array.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    store: StoreArgs,
}

/// A call's state, for `approvals list --status`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// Nobody decided it yet (and its run was not resumed).
    Waiting,
    /// Approved as asked.
    Approved,
    /// Denied (expired calls too).
    Denied,
    /// Approved with edited arguments.
    Edited,
    /// Approved, denied or edited.
    Decided,
}

impl Status {
    /// Whether a call with `decision` (as stored: `approve`, `deny`, `edit`; `None` while waiting) is in this
    /// state.
    fn holds(self, decision: Option<&str>) -> bool {
        match self {
            Self::Waiting => decision.is_none(),
            Self::Approved => decision == Some("approve"),
            Self::Denied => decision == Some("deny"),
            Self::Edited => decision == Some("edit"),
            Self::Decided => decision.is_some(),
        }
    }
}

/// Arguments of `steward approvals approve`.
#[derive(Args, Debug)]
pub(crate) struct ApproveArgs {
    /// The approval's id (or the start of it), as `steward approvals list` shows it.
    id: String,

    /// Run the call with these arguments instead of the model's (a JSON object, checked against the tool's
    /// schema when the run resumes).
    #[arg(long, value_name = "JSON")]
    edit: Option<String>,

    /// Who approves (`--principal`, `--role`): checked against the asker's role's `approve_by` and
    /// `self_approval` (four eyes).
    #[command(flatten)]
    identity: crate::agents::IdentityArgs,

    #[command(flatten)]
    store: StoreArgs,
}

/// Arguments of `steward approvals deny`.
#[derive(Args, Debug)]
pub(crate) struct DenyArgs {
    /// The approval's id (or the start of it).
    id: String,

    /// Why; the model is told.
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,

    #[command(flatten)]
    store: StoreArgs,
}

/// Runs `steward approvals …`.
pub(crate) async fn run(command: ApprovalsCommand, config: &ConfigFile) -> anyhow::Result<u8> {
    match command {
        ApprovalsCommand::List(args) => list(args, config).await,
        ApprovalsCommand::Expire(args) => expire(args, config).await,
        ApprovalsCommand::Approve(args) => {
            let decision = match &args.edit {
                None => Approval::Approve,
                Some(text) => {
                    let arguments: Value = serde_json::from_str(text)
                        .context("--edit takes the call's arguments as a JSON object")?;
                    anyhow::ensure!(
                        arguments.is_object(),
                        "--edit takes the call's arguments as a JSON object, e.g. '{{\"amount\": 10}}'"
                    );
                    Approval::Edit { arguments }
                }
            };
            let by = four_eyes(config, &args).await?;
            decide(config, &args.store, &args.id, &decision, &by).await
        }
        ApprovalsCommand::Deny(args) => {
            let decision = Approval::Reject {
                reason: args.reason.clone(),
            };
            decide(config, &args.store, &args.id, &decision, &whoami()).await
        }
    }
}

async fn list(args: ListArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let database = match &args.db {
        Some(db) => Some(crate::runs::database_identity(config, db)?),
        None => None,
    };
    let store = crate::runs::open(config, &args.store).await?;
    // A decided state is looked for among all calls; `waiting` among the waiting ones, as without --status.
    let all = args.all || args.status.is_some_and(|s| s != Status::Waiting);
    let approvals = store
        .approvals_of(all, args.agent.as_deref(), database.as_deref())
        .await;
    store.close().await;
    let approvals: Vec<PendingApproval> = approvals?
        .into_iter()
        .filter(|a| args.status.is_none_or(|s| s.holds(a.decision.as_deref())))
        .filter(|a| args.tool.as_ref().is_none_or(|t| &a.tool == t))
        .filter(|a| args.since.is_none_or(|since| a.requested_at >= since))
        .filter(|a| args.older_than.is_none_or(|before| a.requested_at < before))
        .collect();
    if args.json {
        say!("{}", serde_json::to_string_pretty(&approvals)?);
        return Ok(crate::exit::OK);
    }
    if approvals.is_empty() {
        let filters = [
            ("--tool", args.tool.is_some()),
            ("--agent", args.agent.is_some()),
            ("--db", args.db.is_some()),
            ("--status", args.status.is_some()),
            ("--since", args.since.is_some()),
            ("--older-than", args.older_than.is_some()),
        ];
        let what = if filters.iter().any(|(_, on)| *on) {
            format!("(no call matches {})", crate::runs::given_filters(&filters))
        } else if args.all {
            "(no call was ever held for approval)".to_owned()
        } else {
            "(no call waits for approval)".to_owned()
        };
        note!("{}", Style::stderr().dim(&what));
        return Ok(crate::exit::OK);
    }
    let rows: Vec<Vec<String>> = approvals.iter().map(row).collect();
    crate::out::aligned(
        &["id", "run", "tool", "arguments", "reason", "decision"],
        &rows,
    );
    Ok(crate::exit::OK)
}

/// Denies every waiting call asked for before `--older-than`.
async fn expire(args: ExpireArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let store = crate::runs::open(config, &args.store).await?;
    let waiting = store.approvals(false).await;
    let old: Vec<PendingApproval> = match waiting {
        Ok(all) => all
            .into_iter()
            .filter(|a| a.decision.is_none() && a.requested_at < args.older_than)
            .collect(),
        Err(e) => {
            store.close().await;
            return Err(e.into());
        }
    };
    let since = args
        .older_than
        .with_timezone(&chrono::Local)
        .format("%Y-%m-%d %H:%M");
    let reason = format!("expired: nobody decided it (it waited since before {since})");
    let style = Style::stderr();
    let mut runs = std::collections::BTreeSet::new();
    for a in &old {
        if args.dry_run {
            say!(
                "{}\t{}\t{}\t{}",
                a.id,
                a.run_id,
                a.tool,
                a.requested_at.to_rfc3339()
            );
            continue;
        }
        let decision = Approval::Reject {
            reason: Some(reason.clone()),
        };
        match store
            .decide_approval(&a.id, &decision, "steward approvals expire")
            .await
        {
            Ok(_) => {
                runs.insert(a.run_id.clone());
            }
            Err(e) => note!("{} {}: {e}", style.warn("not expired"), a.id),
        }
    }
    store.close().await;
    let verb = if args.dry_run {
        "would expire"
    } else {
        "expired"
    };
    note!(
        "{verb} {} call{} asked for before {since}{}",
        old.len(),
        if old.len() == 1 { "" } else { "s" },
        if runs.is_empty() {
            String::new()
        } else {
            format!(
                "; `steward runs resume ID` carries each run on ({})",
                runs.into_iter().collect::<Vec<_>>().join(", ")
            )
        }
    );
    Ok(crate::exit::OK)
}

fn row(a: &PendingApproval) -> Vec<String> {
    vec![
        a.id.clone(),
        a.run_id.clone(),
        a.tool.clone(),
        crate::out::flat_cut(&a.arguments, 40),
        crate::out::flat_cut(&a.reason, 60),
        a.decision.clone().unwrap_or_else(|| "waiting".to_owned()),
    ]
}

/// Four eyes: refuses an approval by someone the asker's role does not let approve its writes (themselves, with
/// `self_approval: false`; a role `approve_by` does not name). The decider's name, for the audit trail.
async fn four_eyes(config: &ConfigFile, args: &ApproveArgs) -> anyhow::Result<String> {
    let loaded = config.load()?;
    let mut decider = args.identity.principal(&loaded)?;
    if decider.name.is_empty() {
        decider.name = whoami();
    }
    let store = crate::runs::open(config, &args.store).await?;
    let found = store.approval(&args.id).await;
    let pending = match &found {
        Ok(found) => store.pending_run(&found.run_id).await.ok(),
        Err(_) => None,
    };
    // An approval that is not found is said by `decide`.
    let (Ok(found), Some(pending)) = (found, pending) else {
        store.close().await;
        return Ok(decider.name);
    };
    loaded
        .four_eyes(&pending.principal, &decider)
        .map_err(|why| anyhow::Error::new(steward_app::AppError::Forbidden(why)))?;
    // A call that writes a row the decider's role hides is not theirs to let run.
    if pending.principal.name != decider.name {
        let app = build_app_with(config, pending.context.database.as_deref(), Some(store)).await?;
        let hidden = app
            .call_hides_rows_from(&pending.principal, &found.tool, &found.arguments, &decider)
            .await;
        if let Some(store) = app.store() {
            store.close().await;
        }
        anyhow::ensure!(
            !hidden,
            steward_app::AppError::Forbidden(format!(
                "the call waiting as {} writes rows your role does not see (or sees only in part); someone who sees them must decide it",
                found.id
            ))
        );
    } else {
        store.close().await;
    }
    Ok(decider.name)
}

async fn decide(
    config: &ConfigFile,
    store: &StoreArgs,
    id: &str,
    decision: &Approval,
    by: &str,
) -> anyhow::Result<u8> {
    let store = crate::runs::open(config, store).await?;
    let decided = store.decide_approval(id, decision, by).await;
    let waiting = match &decided {
        Ok(a) => store
            .pending_run(&a.run_id)
            .await
            .map(|run| {
                run.approvals
                    .iter()
                    .filter(|x| x.decision.is_none())
                    .count()
            })
            .unwrap_or(0),
        Err(_) => 0,
    };
    store.close().await;
    let decided = decided?;
    let style = Style::stderr();
    note!(
        "{} {} {} {}",
        style.good(decided.decision.as_deref().unwrap_or("decided")),
        decided.id,
        style.bold(&decided.tool),
        decided.arguments
    );
    if waiting == 0 {
        note!(
            "{}",
            style.dim(&format!(
                "(every call of run {} is decided: `steward runs resume {}` carries it on)",
                decided.run_id, decided.run_id
            ))
        );
    } else {
        note!(
            "{}",
            style.dim(&format!(
                "({waiting} more call{} of run {} wait{}: `steward approvals list`)",
                if waiting == 1 { "" } else { "s" },
                decided.run_id,
                if waiting == 1 { "s" } else { "" }
            ))
        );
    }
    Ok(crate::exit::OK)
}

/// Who decides, for the record: `$USER` (or `$USERNAME`), else "local user".
pub(crate) fn whoami() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .ok()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| "local user".to_owned())
}
