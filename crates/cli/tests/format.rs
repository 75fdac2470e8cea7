//! `--format` of `steward sql run` and `steward tools call`: the exact text of every format for values that
//! need care (NULL, a comma, a quote, a newline, a tab, a `|`, unicode, an empty string, a repeated column name).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::{Value, json};

/// An empty SQLite database (the rows come from the query itself).
fn empty_db() -> String {
    format!("sqlite://{}/format.sqlite?mode=rwc", scratch_dir("format"))
}

/// Four rows over the awkward values; the last column repeats the name `id`.
const QUERY: &str = "SELECT 1 AS id, 'a,b' AS text, NULL AS maybe, 1 AS id \
     UNION ALL SELECT 2, 'say \"hi\"', 'x', 2 \
     UNION ALL SELECT 3, 'line1' || char(10) || 'line2', 'tab' || char(9) || 'here', 3 \
     UNION ALL SELECT 4, 'pipe|café ☕', '', 4 \
     ORDER BY 1";

fn run(db: &str, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["sql", "run", "--db", db];
    all.extend_from_slice(args);
    let out = steward(&all, &[], "");
    (
        out.status.code().unwrap(),
        text(&out.stdout),
        text(&out.stderr),
    )
}

#[test]
fn csv_is_rfc_4180_with_null_as_an_empty_field() {
    let db = empty_db();
    let (code, stdout, stderr) = run(&db, &["--format", "csv", QUERY]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "id,text,maybe,id\n\
         1,\"a,b\",,1\n\
         2,\"say \"\"hi\"\"\",x,2\n\
         3,\"line1\nline2\",tab\there,3\n\
         4,pipe|café ☕,\"\",4\n"
    );
    assert!(!stderr.contains("more exist"), "{stderr}");
}

#[test]
fn tsv_escapes_tabs_and_newlines_and_writes_null_as_backslash_n() {
    let db = empty_db();
    let (code, stdout, stderr) = run(&db, &["--format", "tsv", QUERY]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "id\ttext\tmaybe\tid\n\
         1\ta,b\t\\N\t1\n\
         2\tsay \"hi\"\tx\t2\n\
         3\tline1\\nline2\ttab\\there\t3\n\
         4\tpipe|café ☕\t\t4\n"
    );
    // Every line has exactly as many fields as the header.
    assert!(stdout.lines().all(|l| l.split('\t').count() == 4));
}

#[test]
fn markdown_escapes_pipes_and_line_breaks() {
    let db = empty_db();
    let (code, stdout, stderr) = run(&db, &["--format", "markdown", QUERY]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "| id | text | maybe | id |\n\
         | --- | --- | --- | --- |\n\
         | 1 | a,b | *NULL* | 1 |\n\
         | 2 | say \"hi\" | x | 2 |\n\
         | 3 | line1<br>line2 | tab\there | 3 |\n\
         | 4 | pipe\\|café ☕ |  | 4 |\n"
    );
}

#[test]
fn ndjson_is_one_object_per_row_with_repeated_names_kept_apart() {
    let db = empty_db();
    let (code, stdout, stderr) = run(&db, &["--format", "ndjson", QUERY]);
    assert_eq!(code, 0, "{stderr}");
    let rows: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        rows,
        [
            json!({"id": 1, "text": "a,b", "maybe": null, "id_2": 1}),
            json!({"id": 2, "text": "say \"hi\"", "maybe": "x", "id_2": 2}),
            json!({"id": 3, "text": "line1\nline2", "maybe": "tab\there", "id_2": 3}),
            json!({"id": 4, "text": "pipe|café ☕", "maybe": "", "id_2": 4}),
        ]
    );
    // Keys keep the columns' order.
    assert!(stdout.starts_with("{\"id\":1,\"text\":\"a,b\",\"maybe\":null,\"id_2\":1}\n"));
}

#[test]
fn json_is_the_same_with_the_flag_or_the_format_and_values_match_every_format() {
    let db = empty_db();
    let (code, by_flag, stderr) = run(&db, &["--json", QUERY]);
    assert_eq!(code, 0, "{stderr}");
    let (_, by_format, _) = run(&db, &["--format", "json", QUERY]);
    assert_eq!(by_flag, by_format);
    let (_, both, _) = run(&db, &["--json", "--format", "json", QUERY]);
    assert_eq!(both, by_flag);
    let json: Value = serde_json::from_str(&by_flag).unwrap();
    assert_eq!(json["columns"], json!(["id", "text", "maybe", "id"]));
    assert_eq!(json["truncated"], false);
    assert_eq!(json["rows"][3], json!([4, "pipe|café ☕", "", 4]));
    // The NDJSON rows hold exactly the JSON rows' values.
    let (_, ndjson, _) = run(&db, &["--format", "ndjson", QUERY]);
    for (line, row) in ndjson.lines().zip(json["rows"].as_array().unwrap()) {
        let object: Value = serde_json::from_str(line).unwrap();
        let values: Vec<&Value> = object.as_object().unwrap().values().collect();
        assert_eq!(values, row.as_array().unwrap().iter().collect::<Vec<_>>());
    }
    // --json with another format is a usage error.
    let (code, stdout, stderr) = run(&db, &["--json", "--format", "csv", QUERY]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("--json means --format json, but --format csv was given too"),
        "{stderr}"
    );
}

#[test]
fn table_stays_the_default() {
    let db = empty_db();
    let (code, default, stderr) = run(&db, &[QUERY]);
    assert_eq!(code, 0, "{stderr}");
    let (_, table, _) = run(&db, &["--format", "table", QUERY]);
    assert_eq!(default, table);
    assert_eq!(
        default,
        // ☕ takes two columns on a terminal: the column is as wide as that cell looks.
        "id | text         | maybe    | id\n\
         ---+--------------+----------+---\n\
         1  | a,b          | NULL     | 1\n\
         2  | say \"hi\"     | x        | 2\n\
         3  | line1 line2  | tab here | 3\n\
         4  | pipe|café ☕ |          | 4\n"
    );
    assert!(stderr.contains("(4 rows)"), "{stderr}");
}

#[test]
fn a_truncated_result_is_said_on_stderr_except_in_json() {
    let db = empty_db();
    for format in ["csv", "tsv", "markdown", "ndjson", "table"] {
        let (code, stdout, stderr) = run(&db, &["--format", format, "--max-rows", "2", QUERY]);
        assert_eq!(code, 0, "{format}: {stderr}");
        assert!(
            stderr.contains("2 rows shown; more exist: raise --max-rows"),
            "{format}: {stderr}"
        );
        assert!(!stdout.contains("more exist"), "{format}: {stdout}");
        assert!(!stdout.contains("pipe"), "{format}: {stdout}");
    }
    let (code, stdout, stderr) = run(&db, &["--format", "json", "--max-rows", "2", QUERY]);
    assert_eq!(code, 0);
    assert!(!stderr.contains("more exist"), "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["truncated"], true);
    assert_eq!(json["rows"].as_array().unwrap().len(), 2);
}

#[test]
fn tools_call_formats_a_tabular_result_and_refuses_others() {
    let db = empty_db();
    let args = serde_json::to_string(&json!({ "sql": QUERY })).unwrap();
    let call = |format: &str| {
        let out = steward(
            &[
                "tools", "call", "run_sql", &args, "--db", &db, "--format", format,
            ],
            &[],
            "",
        );
        (
            out.status.code().unwrap(),
            text(&out.stdout),
            text(&out.stderr),
        )
    };
    // The same rows as `sql run`, in each format.
    for format in ["csv", "tsv", "markdown", "ndjson"] {
        let (code, stdout, stderr) = call(format);
        assert_eq!(code, 0, "{format}: {stderr}");
        assert_eq!(stdout, run(&db, &["--format", format, QUERY]).1, "{format}");
    }
    // The default is the observation the model sees, as `--format observation` prints it.
    let (code, observation, _) = call("observation");
    assert_eq!(code, 0);
    assert!(
        observation.starts_with("id | text | maybe | id\n1 | a,b | NULL | 1\n"),
        "{observation}"
    );
    assert!(observation.ends_with("(4 rows)\n"), "{observation}");
    let out = steward(&["tools", "call", "run_sql", &args, "--db", &db], &[], "");
    assert_eq!(text(&out.stdout), observation);
    let (_, json_out, _) = call("json");
    let json: Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(json["ok"], true);
    assert_eq!(json["data"]["rows"][0], json!([1, "a,b", null, 1]));

    // A result that is not rows: csv is an error that says why; json and ndjson print its JSON.
    let out = steward(
        &["tools", "call", "current_date", "--format", "csv"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr)
            .contains("--format csv needs a tabular result (columns and rows, as run_sql"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("this tool (current_date) returned a JSON object"),
        "{}",
        text(&out.stderr)
    );
    let out = steward(
        &["tools", "call", "current_date", "--format", "ndjson"],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0));
    let line: Value = serde_json::from_str(text(&out.stdout).trim_end()).unwrap();
    assert_eq!(line["data"]["value"]["date"], "2026-11-21");
    assert_eq!(text(&out.stdout).lines().count(), 1);

    // A refused call: the reason on stderr, nothing on stdout, exit 1.
    let out = steward(
        &[
            "tools",
            "call",
            "run_sql",
            r#"{"sql": "DELETE FROM x"}"#,
            "--db",
            &db,
            "--format",
            "csv",
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("error:"),
        "{}",
        text(&out.stderr)
    );
}

/// `tools call` has no --max-rows (it gives what the model gets): when rows are cut short it says what this
/// call can do instead, by tool — run_sql points at `sql run --max-rows`, a declared SQL tool at its `max_rows`
/// in the config, a role's cap at the role's.
#[test]
fn tools_call_says_how_to_get_more_rows_with_what_it_has() {
    let dir = scratch_dir("more-rows");
    let db = format!("sqlite://{dir}/empty.sqlite?mode=rwc");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        format!(
            "databases:\n  main: {db}\ntools:\n  numbers:\n    kind: sql\n    database: main\n    \
             description: Numbers.\n    statement: {SERIES}\n    max_rows: 3\n  \
             all_numbers:\n    kind: sql\n    database: main\n    description: Numbers.\n    statement: {SERIES}\n\
             roles:\n  viewer:\n    max_rows: 2\n"
        ),
    )
    .unwrap();
    let call = |tool: &str, arguments: &str, extra: &[&str]| {
        let mut args = vec![
            "tools",
            "call",
            "--config",
            &config,
            "--no-store",
            "-f",
            "csv",
            tool,
            arguments,
        ];
        args.extend_from_slice(extra);
        let out = steward(&args, &[], "");
        assert_eq!(out.status.code(), Some(0), "{tool}: {}", text(&out.stderr));
        text(&out.stderr)
    };
    let run_sql = serde_json::to_string(&json!({ "sql": SERIES })).unwrap();
    let stderr = call("run_sql", &run_sql, &[]);
    assert!(
        stderr.contains(
            "(100 rows shown; more exist: `tools call` gives what the model gets; narrow the query, or run it \
             with `steward sql run --max-rows N`)"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("raise --max-rows"), "{stderr}");
    let stderr = call("numbers", "{}", &[]);
    assert!(
        stderr.contains(&format!(
            "(3 rows shown; more exist: raise the tool's `max_rows` (at {config}:9:5), or narrow the call's arguments)"
        )),
        "{stderr}"
    );
    let stderr = call("all_numbers", "{}", &[]);
    assert!(
        stderr.contains(&format!(
            "give the tool a `max_rows` above its default of 100 (at {config}:10:3)"
        )),
        "{stderr}"
    );
    let stderr = call("run_sql", &run_sql, &["--role", "viewer"]);
    assert!(
        stderr.contains(&format!(
            "(2 rows shown; more exist: the role `viewer` reads at most 2 rows per query (its `max_rows`, at \
             {config}:17:5); narrow the call)"
        )),
        "{stderr}"
    );
}

/// 150 rows from nothing (SQLite's recursive CTE).
const SERIES: &str =
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 150) SELECT i FROM n";

/// `tools call --format table` is what its help says, aligned columns by terminal width (`sql run`'s table,
/// the count on stderr), not the model's pipes; a result that is not rows prints its observation.
#[test]
fn tools_call_table_is_aligned_columns() {
    let db = empty_db();
    let args = serde_json::to_string(&json!({ "sql": QUERY })).unwrap();
    let out = steward(
        &[
            "tools", "call", "run_sql", &args, "--db", &db, "--format", "table",
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (_, sql_run, _) = run(&db, &["--format", "table", QUERY]);
    assert_eq!(text(&out.stdout), sql_run);
    assert!(
        text(&out.stdout).contains("4  | pipe|café ☕ |          | 4\n"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("(4 rows)"),
        "{}",
        text(&out.stderr)
    );

    let out = steward(&["tools", "call", "current_date", "-f", "table"], &[], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).starts_with("2026-11-21 (Saturday)"),
        "{}",
        text(&out.stdout)
    );

    let help = steward(&["tools", "call", "--help"], &[], "");
    let help = text(&help.stdout);
    assert!(
        help.contains("observation: The text the model sees, exactly (the default)"),
        "{help}"
    );
    assert!(
        help.contains("table:       Aligned columns for a terminal"),
        "{help}"
    );
}

/// NULL and an empty string never look the same, in any format: one row of each, plus the texts `NULL`,
/// `\N` and `*NULL*` that a careless format would confuse with NULL.
#[test]
fn null_and_an_empty_string_differ_in_every_format() {
    let db = empty_db();
    let query = "SELECT NULL AS n, '' AS e, 'NULL' AS t, '\\N' AS b, '*NULL*' AS s";
    for format in ["table", "csv", "tsv", "markdown", "json", "ndjson"] {
        let (code, stdout, stderr) = run(&db, &["--format", format, query]);
        assert_eq!(code, 0, "{format}: {stderr}");
        let cells: Vec<String> = match format {
            "json" => {
                let json: Value = serde_json::from_str(&stdout).unwrap();
                json["rows"][0]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(Value::to_string)
                    .collect()
            }
            "ndjson" => {
                let json: Value = serde_json::from_str(stdout.trim_end()).unwrap();
                json.as_object()
                    .unwrap()
                    .values()
                    .map(Value::to_string)
                    .collect()
            }
            _ => {
                let line = stdout.lines().last().unwrap();
                let separator = match format {
                    "csv" => ",",
                    "tsv" => "\t",
                    _ => "|",
                };
                line.trim_matches('|')
                    .split(separator)
                    .map(|c| c.trim().to_owned())
                    .collect()
            }
        };
        assert_eq!(cells.len(), 5, "{format}: {stdout}");
        assert_ne!(cells[0], cells[1], "{format}: NULL looks like '': {stdout}");
        if format != "table" {
            // Only the terminal table, for people, shows NULL as the text NULL would be shown.
            for text in &cells[2..] {
                assert_ne!(
                    &cells[0], text,
                    "{format}: NULL looks like a text: {stdout}"
                );
            }
        }
    }
    let (_, tsv, _) = run(&db, &["--format", "tsv", query]);
    assert_eq!(tsv, "n\te\tt\tb\ts\n\\N\t\tNULL\t\\\\N\t*NULL*\n");
    let (_, markdown, _) = run(&db, &["--format", "markdown", query]);
    assert!(
        markdown.ends_with("| *NULL* |  | NULL | \\\\N | \\*NULL\\* |\n"),
        "{markdown}"
    );
}

/// Data cannot drive the terminal: an escape sequence or a carriage return in a value prints as its picture in
/// the table (`␛[31m`, `␍`), never as the control character itself.
#[test]
fn control_characters_in_values_are_shown_not_sent() {
    let (_, db) = demo_in("format-control");
    let out = steward(
        &[
            "sql",
            "run",
            "--db",
            &db,
            "-f",
            "table",
            "SELECT char(27) || '[31mred' AS x, 'a' || char(13) || 'b' || char(7) AS y",
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(
        !printed.contains('\u{1b}') && !printed.contains('\u{7}'),
        "{printed:?}"
    );
    assert!(printed.contains("\u{241b}[31mred"), "{printed:?}");
}

/// `tools call` shows the observation the model would get on standard output, and says the refusal to the
/// person in their own words on standard error: no "ask the user" there.
#[test]
fn a_refused_call_is_said_to_the_person_in_their_words() {
    let (_, db) = demo_in("format-person");
    let out = steward(
        &[
            "tools",
            "call",
            "--db",
            &db,
            "add_expense",
            r#"{"description": "x", "tax_rate": "high"}"#,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let (shown, said) = (text(&out.stdout), text(&out.stderr));
    assert!(
        shown.contains("Ask the user for them"),
        "the model's words: {shown}"
    );
    assert!(
        said.contains("error: the arguments of `add_expense` do not fit its parameters"),
        "{said}"
    );
    assert!(said.contains("- missing: date"), "{said}");
    // A refusal from inside the tool (two of three amounts are needed) too; so is an unknown tool's.
    let out = steward(
        &[
            "tools",
            "call",
            "--db",
            &db,
            "-f",
            "table",
            "add_expense",
            r#"{"description": "x", "date": "2026-11-20", "tax_rate": 0.2}"#,
        ],
        &[],
        "",
    );
    let said = text(&out.stderr);
    assert!(
        said.contains("error: Missing values: net_amount or gross_amount"),
        "{said}"
    );
    assert!(!said.to_lowercase().contains("the user"), "{said}");
    // Arguments that are not JSON at all are the command line's mistake: exit 2.
    let out = steward(&["tools", "call", "calculator", "expression: 1+1"], &[], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("not valid JSON"),
        "{}",
        text(&out.stdout)
    );
    assert!(!said.to_lowercase().contains("ask the user"), "{said}");
    for format in ["table", "csv"] {
        let out = steward(
            &[
                "tools",
                "call",
                "--db",
                &db,
                "-f",
                format,
                "add_expense",
                r#"{"description": "x"}"#,
            ],
            &[],
            "",
        );
        assert_eq!(text(&out.stdout), "", "{format}");
        assert!(
            !text(&out.stderr).to_lowercase().contains("ask the user"),
            "{}",
            text(&out.stderr)
        );
    }
}

/// A tool that fails as it runs is said to a person in their words too: what happened and who can fix it, not
/// the model's "tell the user the tool is misconfigured"; the model's words stay where the model's output is
/// asked for (the observation, `content` in JSON).
#[test]
fn a_failed_call_is_said_to_the_person_in_their_words() {
    let config = misconfigured_tool("format-failed", "");
    let call = |format: &str| {
        steward(
            &[
                "tools",
                "call",
                "-c",
                &config,
                "-f",
                format,
                "orders_of",
                r#"{"customer": "a"}"#,
            ],
            &[],
            "",
        )
    };
    for format in ["table", "csv", "tsv", "markdown"] {
        let out = call(format);
        assert_eq!(out.status.code(), Some(1), "{format}");
        assert_eq!(text(&out.stdout), "", "{format}");
        let said = text(&out.stderr);
        assert!(
            said.contains("error: The database refused this tool's statement, so nothing was read: the tool's SQL does not fit the database"),
            "{format}: {said}"
        );
        assert!(said.contains("steward config check"), "{said}");
        assert!(!said.to_lowercase().contains("the user"), "{said}");
        assert!(
            said.contains("diagnostic: no such table: vanished"),
            "{said}"
        );
        assert!(said.contains("The database has no tables."), "{said}");
    }
    let out = call("observation");
    assert!(
        text(&out.stdout).contains("tell the user the tool is misconfigured"),
        "the model's words: {}",
        text(&out.stdout)
    );
    assert!(
        !text(&out.stderr).contains("the user"),
        "{}",
        text(&out.stderr)
    );
    let out = call("json");
    let failed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(failed["ok"], false);
    assert!(
        failed["content"]
            .as_str()
            .unwrap()
            .contains("tell the user")
    );
    let person = failed["error"].as_str().unwrap();
    assert!(
        person.contains("the tool's SQL does not fit the database") && !person.contains("the user"),
        "{person}"
    );
}
