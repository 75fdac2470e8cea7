//! `steward sql check` and `steward sql run`.

use crate::out::{note, say};
use std::io::Read;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;
use steward_sql::{Dialect, Guard, QueryLimits, QueryResult, SqlErrorKind};

use crate::agents::{ConfigFile, default_db, resolve_db};
use crate::format::{Format, MORE_ROWS_SQL_RUN, note_truncated, print_table};

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

/// Arguments of `steward sql check`. With neither `--dialect` nor `--db`, the SQL is checked against the
/// database `sql run` would use (STEWARD_DB, the config's, or the demo database), else as SQLite.
#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    /// The SQL dialect (checked offline, without the server's settings and functions). Default: the dialect
    /// of STEWARD_DB or the configured database, else sqlite.
    #[arg(long, value_enum)]
    dialect: Option<DialectArg>,

    /// A database to check against: its dialect, lexing settings and function catalog (nothing runs); a URL,
    /// a SQLite path or a name from the config's `databases`.
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
    #[arg(
        short,
        long,
        env = "STEWARD_DB",
        hide_env_values = true,
        value_name = "URL"
    )]
    db: Option<String>,

    /// Most rows returned (1 to 1000000).
    #[arg(
        short = 'n',
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
        alias = "timeout",
        default_value_t = 30,
        value_name = "SECONDS",
        allow_negative_numbers = true,
        value_parser = bounded::<u64, 1, { steward_sql::MAX_TIMEOUT.as_secs() }>
    )]
    time_limit: u64,

    /// How to print the rows: table (the default), csv, tsv, markdown, json ({"columns", "types", "rows",
    /// "truncated"}) or ndjson (one object per row). Formats other than json say on stderr when rows were
    /// left out.
    #[arg(short, long, value_enum, value_name = "FORMAT")]
    format: Option<Format>,

    /// The same as --format json: print {"columns", "types", "rows", "truncated"}.
    #[arg(long)]
    json: bool,

    /// The SQL; `-` reads it from standard input.
    sql: String,

    #[command(flatten)]
    identity: crate::agents::IdentityArgs,
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

/// The guard of a live database: its dialect, lexing settings and function catalog.
async fn live_guard(url: &str) -> anyhow::Result<Guard> {
    let db = db::connect(url).await?;
    let guard = db.guard().await;
    db.close().await;
    Ok(guard?)
}

/// Runs `steward sql …`.
pub(crate) async fn run(command: SqlCommand, config: &ConfigFile) -> anyhow::Result<u8> {
    match command {
        SqlCommand::Check(args) => check(args, config).await,
        SqlCommand::Run(args) => run_sql(args, config).await,
    }
}

async fn check(args: CheckArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let sql = read_sql(&args.sql)?;
    let guard = match (&args.db, args.dialect) {
        (Some(db), _) => live_guard(&resolve_db(config, Some(db))?).await?,
        (None, Some(dialect)) => Guard::new(match dialect {
            DialectArg::Postgres => Dialect::Postgres,
            DialectArg::Mysql => Dialect::Mysql,
            DialectArg::Sqlite => Dialect::Sqlite,
        }),
        (None, None) => {
            let style = Style::stderr();
            let from_env = std::env::var("STEWARD_DB")
                .ok()
                .filter(|v| !v.trim().is_empty());
            let url = match from_env {
                Some(db) => Some(resolve_db(config, Some(&db))?),
                None => default_db(config)?,
            };
            match url {
                Some(url) => {
                    let guard = live_guard(&url).await?;
                    note!(
                        "{}",
                        style.dim(&format!(
                            "(checked as {} against {}; --dialect checks offline)",
                            guard.dialect().name(),
                            steward_sql::redact_url(&url)
                        ))
                    );
                    guard
                }
                None => {
                    note!(
                        "{}",
                        style.dim(
                            "(no --dialect or --db and no configured database: checked as SQLite; \
                             pass --dialect postgres or --dialect mysql for another dialect)"
                        )
                    );
                    Guard::new(Dialect::Sqlite)
                }
            }
        }
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

async fn run_sql(args: RunArgs, config: &ConfigFile) -> anyhow::Result<u8> {
    let format = Format::pick(args.format, args.json)?;
    let sql = read_sql(&args.sql)?;
    let url = resolve_db(config, args.db.as_deref())?;
    let db = db::connect(&url).await?;
    db::note_privileges(&db, &url, db::Repeat::Once);
    let guard = db.guard().await?;
    // Both are within the library's own limits (see the flags' parsers); `query` checks them again.
    let limits = QueryLimits {
        max_rows: args.max_rows,
        timeout: Duration::from_secs(args.time_limit),
        ..QueryLimits::default()
    };
    // A principal or role reads only what its role's `sql` rules allow, rows filtered.
    let config = config.load()?;
    let principal = args.identity.principal(&config)?;
    let access = steward_app::roles::access_fn(&config.roles);
    let bar = db::spinner("running the query");
    let result = {
        let query =
            steward_sql::read_as(&db, &guard, Some(&access), &principal, &sql, &[], &limits);
        tokio::select! {
            result = query => Some(result),
            _ = tokio::signal::ctrl_c() => None,
        }
    };
    bar.finish_and_clear();
    let Some(result) = result else {
        // Ctrl-C: the query's future is dropped, which sends the engine its cancel; it must arrive before
        // this process exits, or the statement runs on to its time limit.
        let style = Style::stderr();
        if steward_sql::settle_cancellations().await {
            note!("{} the query was cancelled", style.warn("interrupted:"));
        } else {
            note!(
                "{} the cancel did not reach the database in time; the query stops at its time limit ({} s)",
                style.warn("interrupted:"),
                args.time_limit
            );
        }
        return Ok(exit::INTERRUPTED);
    };
    db.close().await;
    match result {
        Ok((result, filtered)) => {
            print_rows(format, &result)?;
            for (table, filter) in filtered {
                note!(
                    "{}",
                    Style::stderr()
                        .dim(&format!("(rows of {table} filtered by the role: {filter})"))
                );
            }
            Ok(exit::OK)
        }
        Err(error)
            if matches!(
                error.kind(),
                SqlErrorKind::Refused
                    | SqlErrorKind::Query
                    | SqlErrorKind::Invalid
                    | SqlErrorKind::Timeout
                    | SqlErrorKind::Unavailable
            ) =>
        {
            if format == Format::Json {
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

/// Prints a result in the chosen format.
fn print_rows(format: Format, result: &QueryResult) -> anyhow::Result<()> {
    let columns: Vec<String> = result.columns.iter().map(|c| c.name.clone()).collect();
    match format {
        Format::Json => say!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "columns": columns,
                "types": result.columns.iter().map(|c| &c.type_name).collect::<Vec<_>>(),
                "rows": result.rows,
                "truncated": result.truncated,
            }))?
        ),
        Format::Table => print_table(&columns, &result.rows, result.truncated, MORE_ROWS_SQL_RUN),
        other => {
            if let Some(text) = other.rows(&columns, &result.rows).filter(|t| !t.is_empty()) {
                crate::out::text(&text);
            }
            if result.truncated {
                note_truncated(result.rows.len(), MORE_ROWS_SQL_RUN);
            }
        }
    }
    Ok(())
}
