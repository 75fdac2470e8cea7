//! `steward sql check` and `steward sql run`.

use crate::out::{note, say};
use std::io::Read;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;
use steward_sql::{Dialect, Guard, QueryLimits, QueryResult, SqlError, cell_text};

use crate::setup::bounded;
use crate::style::Style;
use crate::{db, exit};

/// `steward sql …`
#[derive(Subcommand, Debug)]
pub(crate) enum SqlCommand {
    /// Check SQL with the read-only guard; exit code 0 when allowed, 1 when refused.
    Check(CheckArgs),
    /// Check and run SQL read-only; exit code 0 with rows, 1 when refused or failed.
    Run(RunArgs),
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum DialectArg {
    Sqlite,
    Postgres,
    Mysql,
}

/// Arguments of `steward sql check`.
#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("target").required(true).args(["dialect", "db"]))]
pub(crate) struct CheckArgs {
    /// The SQL dialect (checked offline, without the server's settings and functions).
    #[arg(long, value_enum)]
    dialect: Option<DialectArg>,

    /// A database to check against: its dialect, lexing settings and function catalog (nothing runs).
    #[arg(long, value_name = "URL", conflicts_with = "dialect")]
    db: Option<String>,

    /// Print {"allowed", "class", "reasons", "tables"}.
    #[arg(long)]
    json: bool,

    /// The SQL; `-` reads it from standard input.
    sql: String,
}

/// Arguments of `steward sql run`.
#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    /// The database URL (or a path to a SQLite file, or a name from the config's `databases`; default: the
    /// config's database, else the demo database).
    #[arg(long, env = "STEWARD_DB", hide_env_values = true, value_name = "URL")]
    db: Option<String>,

    /// Most rows returned (1 to 1000000).
    #[arg(
        long,
        default_value_t = 100,
        value_name = "N",
        allow_negative_numbers = true,
        value_parser = bounded::<usize, 1, { steward_sql::MAX_ROWS as u64 }>
    )]
    max_rows: usize,

    /// Most seconds the query may run (1 to 86400, a day).
    #[arg(
        long,
        default_value_t = 30,
        value_name = "SECONDS",
        allow_negative_numbers = true,
        value_parser = bounded::<u64, 1, { steward_sql::MAX_TIMEOUT.as_secs() }>
    )]
    timeout: u64,

    /// Print {"columns", "rows", "truncated"}.
    #[arg(long)]
    json: bool,

    /// The SQL; `-` reads it from standard input.
    sql: String,
}

/// Exit code when the guard refused the SQL or the query failed.
const REFUSED: u8 = 1;

fn read_sql(arg: &str) -> anyhow::Result<String> {
    if arg == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the SQL from standard input")?;
        Ok(text)
    } else {
        Ok(arg.to_owned())
    }
}

/// Runs `steward sql …`.
pub(crate) async fn run(command: SqlCommand) -> anyhow::Result<u8> {
    match command {
        SqlCommand::Check(args) => check(args).await,
        SqlCommand::Run(args) => run_sql(args).await,
    }
}

async fn check(args: CheckArgs) -> anyhow::Result<u8> {
    let sql = read_sql(&args.sql)?;
    let guard = match (&args.db, args.dialect) {
        (Some(url), _) => {
            let db = db::connect(url).await?;
            let guard = db.guard().await;
            db.close().await;
            guard?
        }
        (None, dialect) => Guard::new(match dialect {
            Some(DialectArg::Postgres) => Dialect::Postgres,
            Some(DialectArg::Mysql) => Dialect::Mysql,
            _ => Dialect::Sqlite,
        }),
    };
    let verdict = guard.check(&sql);
    if args.json {
        let reasons: Vec<&str> = verdict.reasons.iter().map(|r| r.message.as_str()).collect();
        let codes: Vec<&str> = verdict.reasons.iter().map(|r| r.code.as_str()).collect();
        say!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "allowed": verdict.allowed,
                "class": verdict.class,
                "reasons": reasons,
                "codes": codes,
                "tables": verdict.tables,
            }))?
        );
    } else {
        let style = Style::stderr();
        let class = serde_json::to_value(verdict.class)?
            .as_str()
            .unwrap_or("other")
            .to_owned();
        if verdict.allowed {
            say!(
                "allowed ({class}); tables: {}",
                if verdict.tables.is_empty() {
                    "none".to_owned()
                } else {
                    verdict.tables.join(", ")
                }
            );
        } else {
            say!("{} ({class})", style.error("refused"));
            for reason in &verdict.reasons {
                say!("- {} [{}]", reason.message, reason.code);
            }
        }
    }
    Ok(if verdict.allowed { exit::OK } else { REFUSED })
}

async fn run_sql(args: RunArgs) -> anyhow::Result<u8> {
    let sql = read_sql(&args.sql)?;
    let url = crate::agents::resolve_db(args.db.as_deref())?;
    let db = db::connect(&url).await?;
    db::note_privileges(&db);
    let guard = db.guard().await?;
    // Both are within the library's own limits (see the flags' parsers); `query` checks them again.
    let limits = QueryLimits {
        max_rows: args.max_rows,
        timeout: Duration::from_secs(args.timeout),
        ..QueryLimits::default()
    };
    let bar = db::spinner("running the query");
    let result = db.query(&guard, &sql, &limits).await;
    bar.finish_and_clear();
    db.close().await;
    match result {
        Ok(result) => {
            if args.json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&json!({
                        "columns": result.columns.iter().map(|c| &c.name).collect::<Vec<_>>(),
                        "types": result.columns.iter().map(|c| &c.type_name).collect::<Vec<_>>(),
                        "rows": result.rows,
                        "truncated": result.truncated,
                    }))?
                );
            } else {
                print_table(&result);
            }
            Ok(exit::OK)
        }
        Err(
            error @ (SqlError::Refused(_)
            | SqlError::Query(_)
            | SqlError::Invalid(_)
            | SqlError::Timeout(_)
            | SqlError::Unavailable(_)),
        ) => {
            if args.json {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&json!({"error": error.to_string()}))?
                );
            }
            note!("{} {error}", Style::stderr().error("error:"));
            Ok(REFUSED)
        }
        Err(other) => Err(other.into()),
    }
}

/// Longest cell shown in the terminal table.
const MAX_CELL: usize = 60;

fn print_table(result: &QueryResult) {
    let cells: Vec<Vec<String>> = result
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| {
                    let text = cell_text(v).replace(['\n', '\r', '\t'], " ");
                    if text.chars().count() > MAX_CELL {
                        text.chars().take(MAX_CELL - 1).collect::<String>() + "…"
                    } else {
                        text
                    }
                })
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = result
        .columns
        .iter()
        .map(|c| c.name.chars().count())
        .collect();
    for row in &cells {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let line = |values: Vec<&str>| -> String {
        values
            .iter()
            .zip(&widths)
            .map(|(v, w)| format!("{v:<w$}"))
            .collect::<Vec<_>>()
            .join(" | ")
            .trim_end()
            .to_owned()
    };
    say!(
        "{}",
        line(result.columns.iter().map(|c| c.name.as_str()).collect())
    );
    say!(
        "{}",
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("-+-")
    );
    for row in &cells {
        say!("{}", line(row.iter().map(String::as_str).collect()));
    }
    let n = result.rows.len();
    let style = Style::stderr();
    if result.truncated {
        note!(
            "{}",
            style.warn(&format!(
                "({n} rows shown; more exist: raise --max-rows or narrow the query)"
            ))
        );
    } else {
        note!(
            "{}",
            style.dim(&format!("({n} row{})", if n == 1 { "" } else { "s" }))
        );
    }
}
