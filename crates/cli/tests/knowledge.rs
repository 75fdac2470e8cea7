//! Business knowledge in `steward.yaml`, by effect: `config check` locates what is wrong (a fragment the
//! guard refuses at load, a name the database lacks when it prepares), `steward schema --question` shows the
//! metric, glossary entry and examples the question uses, and a role never sees an example, metric or entry
//! over a table or column it may not read — neither in `steward schema` nor in the analyst's prompt, on
//! SQLite and PostgreSQL. The principal without rules sees them, so each search can fail.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

const SCHEMA: &str = "
CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR(60) NOT NULL, email VARCHAR(60), country VARCHAR(40));
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
  status VARCHAR(20) NOT NULL, total NUMERIC(10,2) NOT NULL, ordered_at DATE NOT NULL);
CREATE TABLE salaries (employee VARCHAR(60) PRIMARY KEY, amount NUMERIC(10,2) NOT NULL);
INSERT INTO customers VALUES (1, 'Ada', 'ada@example.test', 'France'), (2, 'Bob', 'bob@example.test', 'Norway');
INSERT INTO orders VALUES (10, 1, 'shipped', 120.50, '2026-10-03'), (11, 2, 'pending', 80.00, '2026-10-05');
INSERT INTO salaries VALUES ('Eve', 5000.00);
";

/// Names and texts a `clerk` must never be shown: the forbidden table and column, and the knowledge over them.
const CANARIES: &[&str] = &[
    "salaries",
    "payroll",
    "headcount_cost",
    "email",
    "What is the total salary paid?",
    "Which emails",
];

fn knowledge() -> &'static str {
    r#"knowledge:
  tables:
    orders:
      description: One row per order a customer placed.
      columns:
        total: The order's amount in euros, taxes included.
  glossary:
    - term: active customer
      meaning: a customer with an order since September
      synonyms: [regular customer]
      sql: "customers.id IN (SELECT customer_id FROM orders WHERE ordered_at >= '2026-09-01')"
    - term: payroll
      meaning: what the employees are paid in a month
      sql: SUM(salaries.amount)
  metrics:
    revenue:
      sql: SUM(orders.total)
      where: orders.status = 'shipped'
      dimensions: [orders.ordered_at, customers.country]
      synonyms: [sales]
    headcount_cost:
      sql: SUM(salaries.amount)
      synonyms: [salary cost, paid]
  examples:
    - question: What was the revenue per country last month?
      sql: |
        SELECT c.country, SUM(o.total) AS revenue
        FROM orders o JOIN customers c ON c.id = o.customer_id
        WHERE o.status = 'shipped' AND o.ordered_at >= '2026-10-01'
        GROUP BY c.country
    - question: How many active customers ordered last month?
      sql: SELECT COUNT(DISTINCT customer_id) FROM orders WHERE ordered_at >= '2026-10-01'
    - question: What is the total salary paid?
      sql: SELECT SUM(amount) FROM salaries
    - question: Which emails do the customers paid with have?
      sql: SELECT email FROM customers
"#
}

fn config(url: &str, extra: &str) -> String {
    let path = format!("{}/steward.yaml", scratch_dir("knowledge-config"));
    std::fs::write(
        &path,
        format!(
            "databases:\n  shop: \"{url}\"\n{}roles:\n  clerk:\n    agents: [analyst]\n    sql:\n      read: {{orders: \"*\", customers: [id, name, country]}}\n  boss:\n    agents: [analyst]\nprincipals:\n  carl: {{role: clerk}}\n  bea: {{role: boss}}\n{extra}",
            knowledge()
        ),
    )
    .unwrap();
    path
}

fn sqlite_db() -> String {
    let path = format!("{}/shop.sqlite", scratch_dir("knowledge"));
    sqlite3(&path, SCHEMA);
    format!("sqlite://{path}")
}

fn run(args: &[&str]) -> String {
    let out = steward(args, &[], "");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

#[test]
fn a_question_gets_its_metric_glossary_entry_and_examples() {
    let config = config(&sqlite_db(), "");
    let shown = run(&[
        "schema",
        "-c",
        &config,
        "--question",
        "revenue last month from active customers",
    ]);
    for part in [
        "-- revenue = SUM(orders.total) WHERE orders.status = 'shipped'; by orders.ordered_at, customers.country",
        "-- active customer (also: regular customer): a customer with an order since September",
        "-- Q: What was the revenue per country last month?\nSELECT c.country, SUM(o.total) AS revenue",
        "-- Q: How many active customers ordered last month?",
        "CREATE TABLE orders ( -- ~2 rows; One row per order a customer placed.",
        "total NUMERIC(10,2) NOT NULL, -- The order's amount in euros, taxes included.",
    ] {
        assert!(shown.contains(part), "{part}:\n{shown}");
    }
    // Only what the question uses.
    assert!(!shown.contains("payroll"), "{shown}");
    assert!(!shown.contains("headcount_cost"), "{shown}");
    let json: serde_json::Value = serde_json::from_str(&run(&[
        "schema",
        "-c",
        &config,
        "--json",
        "--question",
        "sales from regular customers",
    ]))
    .unwrap();
    assert_eq!(json["metrics"], serde_json::json!(["revenue"]));
    assert_eq!(json["glossary"], serde_json::json!(["active customer"]));
}

#[test]
fn config_check_locates_what_is_wrong() {
    let db = sqlite_db();
    let config = config(&db, "");
    let ok = steward(&["config", "check", "-c", &config], &[], "");
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));

    // Refused by the guard at load: every command says where.
    let text_of = std::fs::read_to_string(&config).unwrap();
    let refused = text_of.replace(
        "      sql: SELECT SUM(amount) FROM salaries",
        "      sql: DELETE FROM salaries",
    );
    assert_ne!(refused, text_of);
    std::fs::write(&config, &refused).unwrap();
    let line = refused
        .lines()
        .position(|l| l.contains("DELETE FROM salaries"))
        .unwrap()
        + 1;
    for args in [
        vec!["config", "check", "-c", &config],
        vec!["schema", "-c", &config],
    ] {
        let out = steward(&args, &[], "");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!(
                "steward.yaml:{line}:7: the guard refuses this query"
            )),
            "{args:?}: {err}"
        );
    }

    // A misspelt column: the database's refusal when it prepares, at the metric's place.
    let misspelt = text_of.replace("sql: SUM(orders.total)", "sql: SUM(orders.totl)");
    std::fs::write(&config, &misspelt).unwrap();
    let line = misspelt
        .lines()
        .position(|l| l.contains("SUM(orders.totl)"))
        .unwrap()
        + 1;
    let out = steward(&["config", "check", "-c", &config], &[], "");
    assert_ne!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("steward.yaml:{line}:7: the database refuses it"))
            && err.contains("totl"),
        "{err}"
    );
    let offline = steward(&["config", "check", "--offline", "-c", &config], &[], "");
    assert_eq!(offline.status.code(), Some(0), "{}", text(&offline.stderr));

    // A description of a column the table lacks, and a fragment naming no table.
    let unknown = text_of
        .replace("        total: The order's", "        totl: The order's")
        .replace(
            "      sql: SUM(salaries.amount)\n      synonyms",
            "      sql: SUM(amount)\n      synonyms",
        );
    std::fs::write(&config, &unknown).unwrap();
    let out = steward(&["config", "check", "-c", &config], &[], "");
    let err = text(&out.stderr);
    assert!(
        err.contains("the table `orders` has no column `totl`"),
        "{err}"
    );
    assert!(err.contains("`SUM(amount)` names no table"), "{err}");
}

fn leaks(shown: &str) -> Vec<&'static str> {
    CANARIES
        .iter()
        .copied()
        .filter(|c| shown.contains(c))
        .collect()
}

/// What the analyst's model is given when `who` asks `question`.
async fn analyst_prompt(config: &str, who: &str, question: &str) -> String {
    let server = mock_openai(vec![text_reply("Noted.")]).await;
    let base = format!("{}/v1", server.uri());
    let out = steward(
        &[
            "ask",
            "-c",
            config,
            "--principal",
            who,
            "--agent",
            "analyst",
            "--no-store",
            question,
        ],
        &[("OPENAI_BASE_URL", &base)],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{who}: {}", text(&out.stderr));
    let bodies = bodies(&server).await;
    bodies[0]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn roles_apply(url: &str) {
    let config = config(
        url,
        "models:\n  mock: openai:gpt-4o-mini\ndefaults:\n  model: mock\n",
    );
    let question =
        "What is the total salary paid, the payroll, and which emails do customers have?";
    // The control: a principal without rules is shown the knowledge over salaries and emails.
    let open = run(&[
        "schema",
        "-c",
        &config,
        "--principal",
        "bea",
        "--question",
        question,
    ]);
    for canary in [
        "payroll",
        "headcount_cost",
        "What is the total salary paid?",
    ] {
        assert!(open.contains(canary), "{canary}:\n{open}");
    }
    let prompt = analyst_prompt(&config, "bea", question).await;
    assert!(
        prompt.contains("What is the total salary paid?"),
        "{prompt}"
    );

    // The clerk: none of it, anywhere.
    for args in [
        vec![
            "schema",
            "-c",
            &config,
            "--principal",
            "carl",
            "--question",
            question,
        ],
        vec![
            "schema",
            "-c",
            &config,
            "--principal",
            "carl",
            "--json",
            "--question",
            question,
        ],
        vec!["schema", "-c", &config, "--principal", "carl"],
    ] {
        let shown = run(&args);
        assert!(
            leaks(&shown).is_empty(),
            "{args:?} leaks {:?}:\n{shown}",
            leaks(&shown)
        );
    }
    let prompt = analyst_prompt(&config, "carl", question).await;
    assert!(
        leaks(&prompt).is_empty(),
        "the prompt leaks {:?}:\n{prompt}",
        leaks(&prompt)
    );
    // What it may read is still there.
    let mine = run(&[
        "schema",
        "-c",
        &config,
        "--principal",
        "carl",
        "--question",
        "revenue from active customers",
    ]);
    assert!(mine.contains("-- revenue = SUM(orders.total)"), "{mine}");
}

#[tokio::test]
async fn a_role_never_sees_knowledge_over_what_it_may_not_read_sqlite() {
    roles_apply(&sqlite_db()).await;
}

#[tokio::test]
async fn a_role_never_sees_knowledge_over_what_it_may_not_read_postgres() {
    if !postgres_up() {
        return;
    }
    let name = fresh_name("knowledge");
    let (url, _cleanup) = ServerDb::postgres(&name);
    client(
        "psql",
        &[
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-c",
            &format!("CREATE DATABASE \"{name}\""),
        ],
    );
    let out = std::process::Command::new("psql")
        .args(["-q", "-v", "ON_ERROR_STOP=1", &url, "-c", SCHEMA])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    roles_apply(&url).await;
}

#[test]
fn knowledge_imported_into_the_store_is_checked_shared_exported_and_cleared() {
    let db = sqlite_db();
    let config = config(&db, "");
    let dir = scratch_dir("knowledge-store");
    let store = format!("sqlite://{dir}/store.sqlite");
    let file = format!("{dir}/team.yaml");
    let team = "glossary:\n  - term: big order\n    meaning: an order over 100 euros\n    sql: orders.total > 100\nmetrics:\n  average_basket:\n    sql: AVG(orders.total)\n    synonyms: [basket size]\n";
    std::fs::write(&file, team).unwrap();
    let with_store = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["-c", &config, "--store", &store]);
        steward(&all, &[], "")
    };
    // Refused, located in the file, nothing saved.
    let bad = format!("{dir}/bad.yaml");
    std::fs::write(&bad, "metrics:\n  m:\n    sql: AVG(orders.nope)\nexamples:\n  - {question: x, sql: DROP TABLE orders}\n").unwrap();
    let out = with_store(&["knowledge", "import", &bad]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("bad.yaml:3:5: the database refuses it") && err.contains("nope"),
        "{err}"
    );
    assert!(
        err.contains("bad.yaml:5:19: the guard refuses this query"),
        "{err}"
    );
    assert!(err.contains("nothing was saved"), "{err}");
    let out = with_store(&["knowledge", "export"]);
    assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
    // An unknown key: the reader's message at its place.
    std::fs::write(&bad, "glossary:\n  - term: t\n    meening: m\n").unwrap();
    let out = with_store(&["knowledge", "import", &bad]);
    let err = text(&out.stderr);
    assert!(
        err.contains("bad.yaml:3:5: glossary[0]: unknown field `meening`"),
        "{err}"
    );

    // Saved: another command (another server) with the same store uses it.
    let out = with_store(&["knowledge", "import", &file]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("1 glossary entry, 1 metric"),
        "{}",
        text(&out.stdout)
    );
    let out = with_store(&["schema", "--question", "average basket size of big orders"]);
    let shown = text(&out.stdout);
    assert!(
        shown.contains("-- average_basket = AVG(orders.total)"),
        "{shown}"
    );
    assert!(
        shown.contains("-- big order: an order over 100 euros SQL: orders.total > 100"),
        "{shown}"
    );
    // Merged with the config's.
    let out = with_store(&["knowledge", "show"]);
    let all = text(&out.stdout);
    assert!(
        all.contains("average_basket") && all.contains("revenue"),
        "{all}"
    );
    // Exported as it was imported.
    let out = with_store(&["knowledge", "export"]);
    assert_eq!(text(&out.stdout).trim_end(), team.trim_end());
    // Another store knows nothing of it.
    let other = format!("sqlite://{dir}/other.sqlite");
    let out = steward(
        &[
            "schema",
            "-c",
            &config,
            "--store",
            &other,
            "--question",
            "average basket size of big orders",
        ],
        &[],
        "",
    );
    assert!(!text(&out.stdout).contains("average_basket"));
    // Cleared.
    let out = with_store(&["knowledge", "clear"]);
    assert_eq!(out.status.code(), Some(0));
    let out = with_store(&["schema", "--question", "average basket size of big orders"]);
    assert!(!text(&out.stdout).contains("average_basket"));
}
