//! `steward audit list|verify`: the run store's audit trail, one record per tool call from every surface
//! (`ask`, `chat`, `tools call`, the server, `/v1`, MCP), and the check that its hash chain is whole.

use clap::{Args, Subcommand};
use steward_app::store::{AuditRecord, AuditReport};

use crate::agents::ConfigFile;
use crate::out::{note, say};
use crate::runs::{StoreArgs, open};
use crate::style::Style;

/// `steward audit …`
#[derive(Subcommand, Debug)]
pub(crate) enum AuditCommand {
    /// List the audit trail, newest first: who called which tool through which agents, what was decided, how
    /// it ended.
    List(ListArgs),
    /// Check the audit trail's hash chain: exit code 0 when every record is intact, 1 naming the first record
    /// that was changed, deleted or inserted.
    Verify(VerifyArgs),
}

/// Arguments of `steward audit list`.
#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    /// Most records listed.
    #[arg(
        short = 'n',
        long,
        default_value_t = 50,
        value_name = "N",
        value_parser = crate::setup::bounded::<u32, 1, 1_000_000>
    )]
    limit: u32,

    /// Records skipped first (for paging).
    #[arg(long, default_value_t = 0, value_name = "N")]
    offset: u32,

    /// Print the records as a JSON array, every field and both hashes included.
    #[arg(long)]
    json: bool,

    /// Every record of the chain: also the intent written before each call ran (`started`), which the list
    /// leaves out once the call settled.
    #[arg(long)]
    all: bool,

    #[command(flatten)]
    store: StoreArgs,
}

/// Arguments of `steward audit verify`.
#[derive(Args, Debug)]
pub(crate) struct VerifyArgs {
    #[command(flatten)]
    store: StoreArgs,
}

/// Exit code when the chain is broken.
const BROKEN: u8 = 1;

/// Runs `steward audit …`.
pub(crate) async fn run(command: AuditCommand, config: &ConfigFile) -> anyhow::Result<u8> {
    match command {
        AuditCommand::List(args) => list(args, config).await,
        AuditCommand::Verify(args) => verify(args, config).await,
    }
}

async fn list(args: ListArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let store = open(config, &args.store).await?;
    let records = if args.all {
        store.audit_chain(args.limit, args.offset).await
    } else {
        store.audit(args.limit, args.offset).await
    };
    store.close().await;
    let records = records?;
    if args.json {
        say!("{}", serde_json::to_string_pretty(&records)?);
        return Ok(crate::exit::OK);
    }
    if records.is_empty() {
        note!(
            "{}",
            Style::stderr().dim(&format!(
                "(no tool calls audited in {} yet: each call of a recorded run, of `tools call` and of MCP is)",
                store.url()
            ))
        );
        return Ok(crate::exit::OK);
    }
    let header = [
        "seq",
        "time",
        "via",
        "principal",
        "role",
        "agents",
        "tool",
        "decision",
        "status",
        "arguments",
    ];
    let rows: Vec<Vec<String>> = records.iter().map(row).collect();
    crate::out::aligned(&header, &rows);
    Ok(crate::exit::OK)
}

/// Longest arguments shown in the list.
const ARGUMENTS_WIDTH: usize = 40;

fn row(record: &AuditRecord) -> Vec<String> {
    let arguments = crate::out::flat_cut(&record.arguments, ARGUMENTS_WIDTH);
    let or_dash = |text: &str| {
        if text.is_empty() {
            "-".to_owned()
        } else {
            text.to_owned()
        }
    };
    let decision = match &record.approval {
        Some(approval) => format!("{} ({approval})", record.decision),
        None => record.decision.clone(),
    };
    vec![
        record.seq.to_string(),
        record
            .at
            .with_timezone(&chrono::Local)
            .format("%Y-%m-%d %H:%M:%S")
            .to_string(),
        or_dash(record.surface.as_deref().unwrap_or_default()),
        or_dash(&record.principal),
        or_dash(record.role.as_deref().unwrap_or_default()),
        record.agent_path.clone(),
        record.tool.clone(),
        decision,
        record.status.clone(),
        arguments,
    ]
}

async fn verify(args: VerifyArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let store = open(config, &args.store).await?;
    let report = store.verify_audit().await;
    store.close().await;
    let report = report?;
    say!("{}", verdict(&report));
    Ok(if report.is_intact() {
        crate::exit::OK
    } else {
        BROKEN
    })
}

/// What `verify` says: the count and that the chain is intact (with its head, to keep elsewhere), or the
/// first bad record and what is wrong with it.
fn verdict(report: &AuditReport) -> String {
    let records = |n: u64| format!("{n} record{}", if n == 1 { "" } else { "s" });
    match (&report.broken, &report.head) {
        (Some(broken), _) => format!(
            "the chain is broken: {broken} ({} checked)",
            records(report.checked)
        ),
        (None, Some((seq, hash))) => format!(
            "{}, the chain is intact\nhead: record {seq}, hash {hash}",
            records(report.checked)
        ),
        (None, None) => format!("{}, the chain is intact", records(report.checked)),
    }
}
