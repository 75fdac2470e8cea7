//! `steward`: run Steward's agents from a terminal.

mod agents;
mod alloc;
mod approvals;
mod ask;
mod audit;
mod changes;
mod chat;
mod config_cmd;
mod db;
mod demo;
mod eval;
mod examples;
mod exit;
mod format;
mod init;
mod knowledge;
mod markdown;
mod mcp;
mod out;
mod runs;
mod schema;
mod serve;
mod session;
mod setup;
mod sql;
mod style;
mod tools;
mod trace;

use std::process::ExitCode;

use crate::out::note;

use clap::{Parser, Subcommand};

/// Steward runs LLM agents that act reliably on business data: they record expenses, answer questions
/// about orders, file tasks into projects, and answer questions over any SQL database by writing SQL,
/// checking it and correcting it.
#[derive(Parser, Debug)]
#[command(name = "steward", version, arg_required_else_help = true, after_help = exit::HELP)]
struct Cli {
    /// The config file (default: STEWARD_CONFIG, else ./steward.yaml when it exists, else the built-in demo
    /// configuration).
    #[arg(
        short,
        long,
        global = true,
        env = "STEWARD_CONFIG",
        value_name = "FILE"
    )]
    config: Option<std::path::PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Ask one question; prints the answer (exit code 0 only when the run answered).
    Ask(ask::AskArgs),
    /// Talk with the assistant in a terminal session.
    Chat(chat::ChatArgs),
    /// Show the schema context a model gets for a database (and a question).
    Schema(schema::SchemaArgs),
    /// Check SQL with the read-only guard, or run it read-only.
    #[command(subcommand)]
    Sql(sql::SqlCommand),
    /// Create the demo database (a small shop), list things to ask, and open chat when a model is configured.
    Demo(demo::DemoArgs),
    /// List the tools the model sees, or call one exactly as the model would, without a model.
    #[command(subcommand)]
    Tools(tools::ToolsCommand),
    /// Show, import, export or clear the business knowledge (glossary, metrics, examples) kept in the run store.
    #[command(subcommand)]
    Knowledge(knowledge::KnowledgeCommand),
    /// Check the config file, or show it resolved.
    #[command(subcommand)]
    Config(config_cmd::ConfigCommand),
    /// List the recorded runs, show one step by step, or resume one that waited for approval.
    #[command(subcommand)]
    Runs(runs::RunsCommand),
    /// List the calls saved runs wait for, and approve or deny them.
    #[command(subcommand)]
    Approvals(approvals::ApprovalsCommand),
    /// List the change sets runs staged, and apply or discard them (each as one transaction).
    #[command(subcommand)]
    Changes(changes::ChangesCommand),
    /// Save, list, check, export and import the verified examples (questions with the SQL that answers them)
    /// the analyst sees for questions like theirs.
    #[command(subcommand)]
    Examples(examples::ExamplesCommand),
    /// Write a starter steward.yaml for a database: the database, an analyst agent and two SQL tools.
    Init(init::InitArgs),
    /// List the audit trail of tool calls, or check that its hash chain is intact.
    #[command(subcommand)]
    Audit(audit::AuditCommand),
    /// Serve the web UI, the HTTP API (streamed runs, approvals), an OpenAI-compatible API and MCP over HTTP.
    Serve(serve::ServeArgs),
    /// Serve the tools, ask_database and the schema to an MCP client over standard input and output.
    Mcp(mcp::McpArgs),
    /// Measure an agent on a text-to-SQL data set (Spider, BIRD, defog, Steward's own), or score given SQL.
    Eval(eval::EvalArgs),
}

fn main() -> ExitCode {
    alloc::return_large_blocks();
    let cli = Cli::parse();
    // The flags every command shares, as plain values handed to the commands that use them.
    let config = agents::ConfigFile::new(cli.config);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            note!("error: could not start the async runtime: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let result = match cli.command {
        Command::Ask(args) => runtime.block_on(ask::run(args, &config)),
        Command::Chat(args) => chat::run(args, &config, &runtime),
        Command::Schema(args) => runtime.block_on(schema::run(args, &config)),
        Command::Sql(command) => runtime.block_on(sql::run(command, &config)),
        Command::Demo(args) => demo::run(args, &config, &runtime),
        Command::Tools(command) => runtime.block_on(tools::run(command, &config)),
        Command::Config(command) => runtime.block_on(config_cmd::run(command, &config)),
        Command::Knowledge(command) => runtime.block_on(knowledge::run(command, &config)),
        Command::Runs(command) => runtime.block_on(runs::run(command, &config)),
        Command::Approvals(command) => runtime.block_on(approvals::run(command, &config)),
        Command::Changes(command) => runtime.block_on(changes::run(command, &config)),
        Command::Examples(command) => runtime.block_on(examples::run(command, &config)),
        Command::Init(args) => runtime.block_on(init::run(args)),
        Command::Audit(command) => runtime.block_on(audit::run(command, &config)),
        Command::Serve(args) => {
            serve::init_logging();
            runtime.block_on(serve::run(args, &config))
        }
        Command::Mcp(args) => {
            serve::init_logging();
            runtime.block_on(mcp::run(args, &config))
        }
        Command::Eval(args) => runtime.block_on(eval::run(args, &config)),
    };
    let code = match result {
        Ok(code) => code,
        Err(error) => {
            note!(
                "{} {}",
                style::Style::stderr().error("error:"),
                error_text(&error)
            );
            exit::code_for(&error)
        }
    };
    // A reader that went away is not an error (`steward … | head`); a disk that is full is.
    if let Some(failure) = out::failure() {
        note!(
            "{} cannot write the output: {failure}",
            style::Style::stderr().error("error:")
        );
        return ExitCode::from(exit::USAGE);
    }
    ExitCode::from(code)
}

/// An error and the context it was met in, as one line: `reading x: cause`. A database error's message is
/// already written for the reader from the driver's error, so the driver's own words (its cause) are left
/// out.
fn error_text(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause.to_string());
        if cause.is::<steward_sql::SqlError>() {
            break;
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    /// Every command's flags are consistent (no two share a short flag, defaults parse, …).
    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }

    #[test]
    fn an_error_shows_its_context_but_not_a_database_error_s_driver_words_twice() {
        let io = std::io::Error::other("error returned from database: (code: 1) no such table: x");
        let sql = steward_sql::SqlError::query("no such table: x").caused_by(io);
        let error = anyhow::Error::from(sql).context("running the query");
        assert_eq!(
            super::error_text(&error),
            "running the query: no such table: x"
        );
        let plain = anyhow::Error::from(std::io::Error::other("disk full")).context("saving");
        assert_eq!(super::error_text(&plain), "saving: disk full");
    }
}
