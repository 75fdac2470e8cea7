//! `steward init`: the starter steward.yaml it writes loads (`steward config check`), its tools return rows,
//! names that need quoting are quoted, a password stays out of the file, and an existing file is kept.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::Value;

fn ok(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = steward(args, env, "");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The rows a tool returns, through `--format ndjson`.
fn rows(config: &str, tool: &str, arguments: &str, env: &[(&str, &str)]) -> Vec<Value> {
    ok(
        &[
            "tools", "call", "--config", config, tool, arguments, "--format", "ndjson",
        ],
        env,
    )
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect()
}

/// The JSON arguments of the example call `init` printed for `tool`.
fn printed_example(stdout: &str, tool: &str) -> String {
    let line = stdout
        .lines()
        .find(|l| l.contains(&format!(" {tool} '")))
        .unwrap_or_else(|| panic!("no example call of {tool} in:\n{stdout}"));
    let start = line.find('\'').unwrap();
    line[start + 1..line.len() - 1].to_owned()
}

#[test]
fn init_on_the_demo_database_writes_a_config_that_loads_and_whose_tools_return_rows() {
    let dir = scratch_dir("init-demo");
    let db = format!("{dir}/demo.sqlite");
    ok(&["demo", "--db", &db], &[]);
    let config = format!("{dir}/steward.yaml");
    let stdout = ok(&["init", "--db", &db, "--output", &config], &[]);
    assert!(
        stdout.contains(&format!(
            "Wrote {config} for {db} (11 tables): the database `demo`, the agent `analyst`, \
             the tools `customers_by_name` and `recent_expenses`."
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("steward config check --config {config}")),
        "{stdout}"
    );
    let yaml = std::fs::read_to_string(&config).unwrap();
    assert!(
        yaml.contains("# Keep passwords and keys out of this file: write ${VAR}"),
        "{yaml}"
    );
    assert!(yaml.contains(&format!("  demo: '{db}'\n")), "{yaml}");
    assert!(
        yaml.contains(
            "    statement: 'SELECT id, name, email, city, country, created_at FROM customers WHERE name = :name ORDER BY id'\n"
        ),
        "{yaml}"
    );

    let check = ok(&["config", "check", "--config", &config], &[]);
    assert!(check.contains("is valid"), "{check}");
    assert!(check.contains("1 configured database"), "{check}");

    // The example call it printed finds rows, with the value it names.
    let example = printed_example(&stdout, "customers_by_name");
    let arguments: Value = serde_json::from_str(&example).unwrap();
    let found = rows(&config, "customers_by_name", &example, &[]);
    assert!(!found.is_empty(), "{example}");
    assert!(
        found.iter().all(|r| r["name"] == arguments["name"]),
        "{found:?}"
    );
    let recent = rows(&config, "recent_expenses", r#"{"limit": 3}"#, &[]);
    assert_eq!(recent.len(), 3, "{recent:?}");
    assert!(
        recent[0]["spent_on"].as_str() >= recent[2]["spent_on"].as_str(),
        "{recent:?}"
    );
    // The parameter is typed: a string where an integer belongs is refused before anything runs.
    let out = steward(
        &[
            "tools",
            "call",
            "--config",
            &config,
            "recent_expenses",
            r#"{"limit": "many"}"#,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));

    // The analyst is the default agent and has its tools.
    let tools: Vec<Value> = serde_json::from_str(&ok(
        &[
            "tools", "list", "--config", &config, "--agent", "analyst", "--json",
        ],
        &[],
    ))
    .unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for name in [
        "customers_by_name",
        "recent_expenses",
        "run_sql",
        "ask_database",
        "current_date",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
}

#[test]
fn init_keeps_an_existing_file_unless_forced() {
    let dir = scratch_dir("init-force");
    let db = format!("{dir}/demo.sqlite");
    ok(&["demo", "--db", &db], &[]);
    let config = format!("{dir}/mine.yaml");
    std::fs::write(&config, "# my own config\n").unwrap();
    let out = steward(&["init", "--db", &db, "--output", &config], &[], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(&format!(
            "{config} already exists; pass --force to replace it"
        )),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "# my own config\n"
    );
    ok(&["init", "--db", &db, "--output", &config, "--force"], &[]);
    assert!(
        std::fs::read_to_string(&config)
            .unwrap()
            .starts_with(&format!("# steward.yaml for {db} (11 tables)")),
    );
    ok(&["config", "check", "--config", &config], &[]);
}

#[tokio::test]
async fn init_quotes_the_names_that_need_it() {
    let dir = scratch_dir("init-quoting");
    let file = format!("{dir}/shop.sqlite");
    let db = steward_sql::Database::connect(&format!("sqlite://{file}?mode=rwc"))
        .await
        .unwrap();
    db.execute_script(
        "CREATE TABLE \"Order Lines\" (id INTEGER PRIMARY KEY, \"Product Name\" VARCHAR(80) NOT NULL, \
         \"when\" TIMESTAMP NOT NULL, \"select\" INTEGER);
         INSERT INTO \"Order Lines\" VALUES (1, 'Grinder', '2026-01-01 10:00:00', 1),
             (2, 'O''Brien''s \"Best\" | ☕', '2026-03-01 10:00:00', 2),
             (3, 'Kettle', '2026-02-01 10:00:00', NULL);",
    )
    .await
    .unwrap();
    db.close().await;
    let config = format!("{dir}/steward.yaml");
    let url = format!("sqlite://{file}");
    ok(&["init", "--db", &url, "--output", &config], &[]);
    let yaml = std::fs::read_to_string(&config).unwrap();
    assert!(
        yaml.contains(
            "statement: 'SELECT id, \"Product Name\", \"when\", \"select\" FROM \"Order Lines\" \
             WHERE \"Product Name\" = :product_name ORDER BY id'"
        ),
        "{yaml}"
    );
    assert!(
        yaml.contains("ORDER BY \"when\" DESC, id DESC LIMIT :limit'"),
        "{yaml}"
    );
    ok(&["config", "check", "--config", &config], &[]);
    let found = rows(
        &config,
        "order_lines_by_product_name",
        r#"{"product_name": "O'Brien's \"Best\" | ☕"}"#,
        &[],
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["id"], 2);
    let recent = rows(&config, "recent_order_lines", r#"{"limit": 2}"#, &[]);
    let ids: Vec<&Value> = recent.iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [2, 3], "newest first");
}

/// On a server: the demo database in a fresh database, `init` with `init_url`, then the config checks and its
/// tools return rows.
fn init_on_a_server(demo_url: &str, init_url: &str, env: &[(&str, &str)]) -> (String, String) {
    ok(&["demo", "--db", demo_url], &[]);
    let dir = scratch_dir("init-server");
    let config = format!("{dir}/steward.yaml");
    let stdout = ok(&["init", "--db", init_url, "--output", &config], &[]);
    let check = steward(&["config", "check", "--config", &config], env, "");
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
    let example = printed_example(&stdout, "customers_by_name");
    assert!(!rows(&config, "customers_by_name", &example, env).is_empty());
    assert_eq!(
        rows(&config, "recent_expenses", r#"{"limit": 4}"#, env).len(),
        4
    );
    (stdout, std::fs::read_to_string(&config).unwrap())
}

#[test]
fn init_keeps_a_password_out_of_the_file() {
    if !postgres_up() {
        return;
    }
    let name = fresh_name("steward_init");
    let (url, _cleanup) = ServerDb::postgres(&name);
    // Trust authentication ignores the password; it stands for a real one.
    let with_password = url.replace("postgres@", "postgres:hunter2@");
    let env = [("STEWARD_DB_URL", with_password.as_str())];
    let (stdout, yaml) = init_on_a_server(&url, &with_password, &env);
    assert!(!stdout.contains("hunter2"), "{stdout}");
    assert!(!yaml.contains("hunter2"), "{yaml}");
    assert!(yaml.contains(": '${STEWARD_DB_URL}'\n"), "{yaml}");
    assert!(
        stdout.contains("export STEWARD_DB_URL='postgres://postgres:***@127.0.0.1:5432/"),
        "{stdout}"
    );
    // Without the variable the file says what is missing.
    let dir = scratch_dir("init-env");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(&config, &yaml).unwrap();
    let out = steward(&["config", "check", "--config", &config], &[], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("the environment variable STEWARD_DB_URL is not set"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn init_on_mariadb_writes_tools_that_run_there() {
    if !mariadb_up() {
        return;
    }
    let name = fresh_name("steward_init");
    let (url, _cleanup) = ServerDb::mariadb(&name);
    let (_, yaml) = init_on_a_server(&url, &url, &[]);
    // A URL without a password is written as given.
    assert!(yaml.contains(&format!(": '{url}'\n")), "{yaml}");
}

/// `config check` asks each database to prepare the declared SQL tools' statements (nothing is run): a table or
/// a column the database lacks is named with its place in the file, on SQLite, PostgreSQL and MariaDB;
/// `--offline` skips it, and a config whose statements all prepare passes.
#[test]
fn config_check_finds_a_table_or_column_the_database_lacks() {
    let dir = scratch_dir("check-prepare");
    let mut urls = vec![format!("{dir}/demo.sqlite")];
    let mut cleanups = Vec::new();
    if postgres_up() {
        let (url, cleanup) = ServerDb::postgres(&fresh_name("steward_check"));
        urls.push(url);
        cleanups.push(cleanup);
    }
    if mariadb_up() {
        let (url, cleanup) = ServerDb::mariadb(&fresh_name("steward_check"));
        urls.push(url);
        cleanups.push(cleanup);
    }
    for (i, url) in urls.iter().enumerate() {
        let out = steward(&["demo", "--db", url], &[], "");
        assert_eq!(out.status.code(), Some(0), "{url}: {}", text(&out.stderr));
        let tool = |name: &str, mode: &str, statement: &str| {
            format!(
                "  {name}:\n    kind: sql\n    database: shop\n    mode: {mode}\n    description: A tool.\n    statement: {statement}\n    parameters:\n      city: {{type: string, description: The city}}\n"
            )
        };
        let good = tool(
            "by_city",
            "read",
            "SELECT name, email FROM customers WHERE city = :city",
        );
        let bad = format!(
            "{good}{}{}",
            tool(
                "no_table",
                "read",
                "SELECT name FROM customerz WHERE city = :city"
            ),
            tool(
                "no_column",
                "write",
                "UPDATE customers SET nmae = 'x' WHERE city = :city"
            ),
        );
        for (tools, expect) in [(&bad, 2), (&good, 0)] {
            let config = format!("{dir}/steward-{i}-{expect}.yaml");
            std::fs::write(
                &config,
                format!("databases:\n  shop: '{url}'\ntools:\n{tools}"),
            )
            .unwrap();
            let out = steward(&["config", "check", "--config", &config], &[], "");
            let said = text(&out.stderr);
            assert_eq!(out.status.code(), Some(expect), "{url}: {said}");
            if expect == 2 {
                for (name, missing) in [("no_table", "customerz"), ("no_column", "nmae")] {
                    let line = said
                        .lines()
                        .find(|l| l.contains(&format!("tool `{name}`")))
                        .unwrap_or_else(|| panic!("{url}: {said}"));
                    assert!(
                        line.contains("the database refuses its statement"),
                        "{url}: {line}"
                    );
                    assert!(line.contains(missing), "{url}: {line}");
                    assert!(
                        line.contains(&format!("steward-{i}-2.yaml:")),
                        "{url}: {line}"
                    );
                }
                assert!(!said.contains("tool `by_city`"), "{url}: {said}");
                let out = steward(
                    &["config", "check", "--offline", "--config", &config],
                    &[],
                    "",
                );
                assert_eq!(out.status.code(), Some(0), "{url}: {}", text(&out.stderr));
            }
        }
    }
    drop(cleanups);
}

/// `config check --offline` where a database cannot be reached checks the file alone and says what it did not
/// check; without `--offline` the unreachable database is an error; a wrong file is wrong offline too.
#[test]
fn config_check_offline_checks_the_file_when_a_database_cannot_be_reached() {
    let dir = scratch_dir("check-offline");
    let config = format!("{dir}/steward.yaml");
    std::fs::write(
        &config,
        "databases:\n  shop: postgres://postgres@127.0.0.1:1/nothing\nagents:\n  clerk:\n    description: x\n    \
         instructions: y\n    tools: [run_sql]\n",
    )
    .unwrap();
    let out = steward(&["config", "check", "--config", &config], &[], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("cannot be opened"),
        "{}",
        text(&out.stderr)
    );
    let out = steward(
        &["config", "check", "--offline", "--config", &config],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("YAML shape and server section valid (the rest unchecked"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("warning: ") && text(&out.stderr).contains("were NOT checked"),
        "{}",
        text(&out.stderr)
    );
    let wrong = format!("{dir}/wrong.yaml");
    std::fs::write(
        &wrong,
        "databases:\n  shop: postgres://postgres@127.0.0.1:1/nothing\nagents:\n  clerk:\n    descripton: x\n",
    )
    .unwrap();
    let out = steward(
        &["config", "check", "--offline", "--config", &wrong],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("descripton"),
        "{}",
        text(&out.stderr)
    );
}

/// The ledger of declarative writes: `config check` says once which table the first write creates and where;
/// `ledger:` places it (the write then records there, and `steward_tool_calls` is never made); a ledger name
/// that is not a table name is refused.
#[test]
fn the_ledger_table_is_announced_and_placed_by_the_config() {
    let (dir, db) = demo_in("ledger-place");
    let tool = |ledger: &str| {
        format!(
            "databases:\n  shop: sqlite://{db}\nroles:\n  editor: {{skip_approval: [rename_city]}}\ndefaults: {{role: editor}}\ntools:\n  rename_city:\n    kind: sql\n    database: shop\n    mode: write\n{ledger}    description: Rename a city.\n    statement: UPDATE customers SET city = :to WHERE city = :from\n    parameters:\n      from: {{type: string, description: The old name}}\n      to: {{type: string, description: The new name}}\n"
        )
    };
    let config = format!("{dir}/default.yaml");
    std::fs::write(&config, tool("")).unwrap();
    let out = steward(&["config", "check", "--config", &config], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr)
            .contains("the first write of `rename_city` creates the table \"steward_tool_calls\""),
        "{}",
        text(&out.stderr)
    );
    let placed = format!("{dir}/placed.yaml");
    std::fs::write(&placed, tool("    ledger: city_changes\n")).unwrap();
    let out = steward(&["config", "check", "--config", &placed], &[], "");
    assert!(
        text(&out.stderr).contains("\"city_changes\"")
            && text(&out.stderr).contains("where the tool's `ledger:` places it"),
        "{}",
        text(&out.stderr)
    );
    // A schema the database lacks (SQLite: no database attached by that name) is found by the check; a call
    // says the tool is misconfigured, not "try again later", and changes nothing.
    let nowhere = format!("{dir}/nowhere.yaml");
    std::fs::write(&nowhere, tool("    ledger: elsewhere.calls\n")).unwrap();
    let out = steward(&["config", "check", "--config", &nowhere], &[], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("names the schema `elsewhere`, which the database `shop` lacks"),
        "{}",
        text(&out.stderr)
    );
    let before = sqlite3(&db, "SELECT group_concat(city) FROM customers");
    let out = steward(
        &[
            "tools",
            "call",
            "--config",
            &nowhere,
            "-f",
            "table",
            "rename_city",
            r#"{"from": "x", "to": "y"}"#,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("refuses the table \"elsewhere\".\"calls\"")
            && !text(&out.stderr).contains("try again later"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        sqlite3(&db, "SELECT group_concat(city) FROM customers"),
        before
    );
    // A business table as the ledger: found by the check; a call is refused as misconfigured and writes nothing.
    let business = format!("{dir}/business.yaml");
    std::fs::write(&business, tool("    ledger: customers\n")).unwrap();
    let out = steward(&["config", "check", "--config", &business], &[], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("is a table already there with other columns"),
        "{}",
        text(&out.stderr)
    );
    let out = steward(
        &[
            "tools",
            "call",
            "--config",
            &business,
            "-f",
            "table",
            "rename_city",
            r#"{"from": "x", "to": "y"}"#,
        ],
        &[],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("refuses the table \"customers\"")
            && !text(&out.stderr).contains("try again later"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        sqlite3(&db, "SELECT group_concat(city) FROM customers"),
        before
    );
    let city = sqlite3(&db, "SELECT city FROM customers ORDER BY id LIMIT 1");
    // The first write says, once, where it will be recorded: a later command with the same state says nothing.
    let state = scratch_dir("ledger-place-state");
    let out = steward(
        &[
            "tools",
            "call",
            "--config",
            &placed,
            "rename_city",
            &format!(r#"{{"from": "{city}", "to": "Atlantis"}}"#),
        ],
        &[("XDG_STATE_HOME", &state)],
        "",
    );
    assert!(
        text(&out.stderr)
            .contains("note: the first write of `rename_city` creates the table \"city_changes\"")
            && text(&out.stderr).contains("Steward says this once per database and table"),
        "{}",
        text(&out.stderr)
    );
    let again = steward(
        &[
            "tools",
            "call",
            "--config",
            &placed,
            "rename_city",
            r#"{"from": "x", "to": "y"}"#,
        ],
        &[("XDG_STATE_HOME", &state)],
        "",
    );
    assert!(
        !text(&again.stderr).contains("first write"),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // Both calls are recorded (the second changed no row).
    assert_eq!(sqlite3(&db, "SELECT count(*) FROM city_changes"), "2");
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(*) FROM sqlite_master WHERE name = 'steward_tool_calls'"
        ),
        "0"
    );
    // Now that it exists, nothing is announced.
    let out = steward(&["config", "check", "--config", &placed], &[], "");
    assert!(
        !text(&out.stderr).contains("first write"),
        "{}",
        text(&out.stderr)
    );
    let bad = format!("{dir}/bad.yaml");
    std::fs::write(&bad, tool("    ledger: \"x; DROP TABLE customers\"\n")).unwrap();
    let out = steward(&["config", "check", "--config", &bad], &[], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is not a table name"),
        "{}",
        text(&out.stderr)
    );
}

/// A role's column list of the wrong shape names the table and says what the entry may be (not serde's "did
/// not match any variant of untagged enum").
#[test]
fn a_role_column_list_of_the_wrong_shape_says_what_it_may_be() {
    let (dir, db) = demo_in("columns-shape");
    for (entry, said) in [
        (
            "{name: true}",
            "expected \"*\" (every column) or a list of column names",
        ),
        ("[name, {city: 1}]", "each column in the list is a name"),
        (
            "7",
            "expected \"*\" (every column) or a list of column names",
        ),
        ("name", "write \"*\" for every column, or a list of columns"),
    ] {
        let config = format!("{dir}/steward.yaml");
        std::fs::write(
            &config,
            format!("databases:\n  shop: sqlite://{db}\nroles:\n  viewer:\n    sql:\n      read:\n        customers: {entry}\n"),
        )
        .unwrap();
        let out = steward(&["config", "check", "--config", &config], &[], "");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{entry}: {stderr}");
        assert!(stderr.contains(said), "{entry}: {stderr}");
        assert!(stderr.contains("customers"), "{entry}: {stderr}");
        assert!(!stderr.contains("untagged"), "{entry}: {stderr}");
    }
}
