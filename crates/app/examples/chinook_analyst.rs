//! The SQL analyst on the Chinook music-store database.
//!
//! The analyst is the agent `steward ask --agent analyst` runs: its instructions hold a schema context ranked
//! for the question, and its tools list and describe tables and run SQL. Every statement passes the guard
//! (one read-only statement, nothing that writes, sleeps or reads files) and then runs on a read-only
//! connection with a row cap. A scripted model plays the model, so this runs offline:
//!
//! ```sh
//! cargo run -p steward-app --example chinook_analyst
//! ```
//!
//! Chinook comes from `testdata/chinook/` (lerocha/chinook-database, see its LICENSE.md).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use steward_app::{App, AppOptions, Config};
use steward_core::{Event, Limits, ModelResponse, Runner, ScriptedModel, ToolCall};

/// One `run_sql` call, as the model would make it.
fn run_sql(id: &str, sql: &str) -> ModelResponse {
    let args = json!({ "sql": sql }).to_string();
    ModelResponse::tool_calls(vec![ToolCall::new(id, "run_sql", args)])
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Work on a copy: the examples never touch the repository's files. STEWARD_SHARED_DATA, as for the
    // tests, may point at another copy of testdata/.
    let data = std::env::var_os("STEWARD_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata"));
    let chinook = data.join("chinook/Chinook_Sqlite.sqlite");
    let copy = std::env::temp_dir().join(format!("steward-chinook-{}.sqlite", std::process::id()));
    std::fs::copy(&chinook, &copy)?;

    // The composition root, as the CLI builds it for `--db`: the database, its catalog, the SQL tools.
    let options = AppOptions {
        db: Some(format!("sqlite://{}", copy.display())),
        ..AppOptions::default()
    };
    let app = App::build(Config::default(), options).await?;

    let question = "Which three artists have the most albums? Then delete the album 'Facelift'.";
    let model = Arc::new(ScriptedModel::new([
        // A typo: the error names the right column, in the query's own alias.
        run_sql(
            "q1",
            "SELECT ar.Nme, COUNT(*) AS albums FROM Album al JOIN Artist ar ON ar.ArtistId = al.ArtistId \
             GROUP BY ar.ArtistId ORDER BY albums DESC LIMIT 3",
        ),
        run_sql(
            "q2",
            "SELECT ar.Name, COUNT(*) AS albums FROM Album al JOIN Artist ar ON ar.ArtistId = al.ArtistId \
             GROUP BY ar.ArtistId ORDER BY albums DESC LIMIT 3",
        ),
        // The model is untrusted: the guard refuses anything but one read.
        run_sql("q3", "DELETE FROM Album WHERE Title = 'Facelift'"),
        ModelResponse::text(
            "Iron Maiden has the most albums (21), then Led Zeppelin (14) and Deep Purple (11). \
             I cannot delete albums: I can only read the database.",
        ),
    ]));
    let analyst = app.agent("analyst", model.clone(), Some(question), Limits::default())?;

    // Print each statement and what came back: rows, or the error the model is shown.
    let trace = |event: &Event| match event {
        Event::ToolCall { call, .. } => {
            let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap_or_default();
            println!(
                "{}> {}",
                call.name,
                args["sql"].as_str().unwrap_or(&call.arguments)
            );
        }
        Event::ToolResult { content, .. } => println!("{content}\n"),
        _ => {}
    };
    let runner = Runner::new(Arc::new(analyst), model).with_observer(Arc::new(trace));
    let answer = runner.ask(question).await;
    std::fs::remove_file(&copy)?;
    println!("{}", answer?);
    Ok(())
}
