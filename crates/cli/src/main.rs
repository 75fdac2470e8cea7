//! `steward`: run Steward's agents from a terminal.

use clap::Parser;

/// Steward runs LLM agents that act reliably on business data: they record expenses, answer questions
/// about orders, file tasks into projects, and answer questions over any SQL database by writing SQL,
/// checking it and correcting it.
#[derive(Parser, Debug)]
#[command(name = "steward", version, arg_required_else_help = true)]
struct Cli {}

fn main() {
    let Cli {} = Cli::parse();
}
