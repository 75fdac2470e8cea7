//! Differential fidelity ("the numbers you see are the numbers in the database"): hundreds of queries per engine,
//! generated from the corpus of types × values in `testdata/fidelity/`, each run through `steward sql run --json`
//! and through the engine's own client (`psql`, `mariadb`, `sqlite3`), with every value compared exactly and by
//! type: a number must equal the client's number, a string the client's text byte for byte, JSON the client's
//! JSON, `\x` hex the client's bytes, and NULL only NULL. The database settings have teeth: one PostgreSQL
//! database has `timezone = 'America/New_York'` and `datestyle = 'SQL, DMY'`, and MariaDB runs with a server
//! `time_zone` of `+05:30` (set globally for the test and restored afterwards; MariaDB has no per-database
//! time zone). Every mismatch is listed (query, steward's value, the client's) before the test fails.
//!
//! Needs `psql`, `mariadb` and `sqlite3` on the PATH and the test servers of docs/testing.md; without them
//! SKIPPED (a failure under `CI=true`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/clients.rs"]
mod clients;
mod common;

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use clients::{Cell, MariaUrl};
use serde_json::Value;

const PG_ADMIN: &str = "postgres://postgres@127.0.0.1:5432/test";
const MARIA_ADMIN: &str = "mysql://root@127.0.0.1:3306/test";
/// Queries run at once (each spawns steward and a client).
const WORKERS: usize = 4;

fn skip(what: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("{what} (CI=true: required)");
    }
    eprintln!("SKIPPED: {what}");
}

#[derive(Clone, Copy, PartialEq)]
enum Engine {
    Postgres,
    Mariadb,
    Sqlite,
}

/// The corpus of one engine: setup statements, columns (type and value expressions), and queries as written.
struct Corpus {
    setup: Vec<String>,
    columns: Vec<(String, Vec<String>)>,
    queries: Vec<String>,
    /// Queries known to differ, with the reason: reported, not failed; one that matches again fails the test
    /// so that the corpus stays true.
    known: Vec<(String, String)>,
}

fn corpus(file: &str) -> Corpus {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/fidelity")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut corpus = Corpus {
        setup: Vec::new(),
        columns: Vec::new(),
        queries: Vec::new(),
        known: Vec::new(),
    };
    for line in text.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (kind, sql) = line
            .split_once('\t')
            .unwrap_or_else(|| panic!("{file}: no tab in {line:?}"));
        match kind {
            "setup" => corpus.setup.push(sql.to_owned()),
            "query" => corpus.queries.push(sql.to_owned()),
            "known" => {
                let (sql, why) = sql
                    .split_once('\t')
                    .unwrap_or_else(|| panic!("{file}: a known gap needs a reason: {line:?}"));
                corpus.queries.push(sql.to_owned());
                corpus.known.push((sql.to_owned(), why.to_owned()));
            }
            ty => match corpus.columns.iter_mut().find(|(t, _)| t == ty) {
                Some((_, values)) => values.push(sql.to_owned()),
                None => corpus.columns.push((ty.to_owned(), vec![sql.to_owned()])),
            },
        }
    }
    corpus
}

impl Corpus {
    /// Rows of the table: one more than the longest column, so that every column has a NULL.
    fn rows(&self) -> usize {
        self.columns.iter().map(|(_, v)| v.len()).max().unwrap_or(0) + 1
    }

    /// The script that creates and fills the table `vals`.
    fn load_script(&self, engine: Engine) -> String {
        let mut script: Vec<String> = self.setup.iter().map(|s| format!("{s};")).collect();
        let id = if engine == Engine::Sqlite {
            "id INTEGER PRIMARY KEY"
        } else {
            "id INT PRIMARY KEY"
        };
        let columns: Vec<String> = std::iter::once(id.to_owned())
            .chain(self.columns.iter().enumerate().map(|(j, (ty, _))| {
                let ty = if ty == "-" { "" } else { ty };
                format!("c{} {ty}", j + 1)
            }))
            .collect();
        script.push(format!("CREATE TABLE vals ({});", columns.join(", ")));
        let ids: Vec<String> = (1..=self.rows()).map(|k| format!("({k})")).collect();
        script.push(format!("INSERT INTO vals (id) VALUES {};", ids.join(", ")));
        for (j, (_, values)) in self.columns.iter().enumerate() {
            for (k, value) in values.iter().enumerate() {
                script.push(format!(
                    "UPDATE vals SET c{} = {value} WHERE id = {};",
                    j + 1,
                    k + 1
                ));
            }
        }
        script.join("\n")
    }

    /// The queries: each value alone, from the table and as an expression; each column over all rows;
    /// (PostgreSQL) each column in an array and in records; then the corpus's own queries.
    fn queries(&self, engine: Engine) -> Vec<String> {
        let mut out = Vec::new();
        for (j, (ty, values)) in self.columns.iter().enumerate() {
            let c = format!("c{}", j + 1);
            for (k, value) in values.iter().enumerate() {
                out.push(format!("SELECT {c} AS v FROM vals WHERE id = {}", k + 1));
                // The value as an expression: PostgreSQL casts it to the column's type; the others type it
                // themselves.
                out.push(match engine {
                    Engine::Postgres => format!("SELECT CAST({value} AS {ty}) AS v"),
                    Engine::Mariadb | Engine::Sqlite => format!("SELECT {value} AS v"),
                });
            }
            out.push(format!("SELECT id, {c} AS v FROM vals ORDER BY id"));
            if engine == Engine::Postgres {
                if !ty.ends_with("[]") {
                    out.push(format!("SELECT array_agg({c} ORDER BY id) AS v FROM vals"));
                }
                out.push(format!("SELECT ROW(id, {c}) AS v FROM vals ORDER BY id"));
            }
        }
        out.extend(self.queries.iter().cloned());
        out
    }
}

/// An engine's own client: the rows of a query, cell by cell.
type Client<'a> = dyn Fn(&str) -> Result<Vec<Vec<Cell>>, String> + Sync + 'a;

/// One value that differs.
struct Mismatch {
    query: String,
    ours: String,
    theirs: String,
}

/// Fails on every mismatch that is not a known gap, and on every known gap that no longer differs.
fn verdict(label: &str, corpus: &Corpus, found: &[Mismatch]) {
    let unexpected: Vec<&Mismatch> = found
        .iter()
        .filter(|m| !corpus.known.iter().any(|(sql, _)| *sql == m.query))
        .collect();
    let mut problems = Vec::new();
    for (sql, why) in &corpus.known {
        if found.iter().any(|m| m.query == *sql) {
            eprintln!("{label}: known gap: {sql} ({why})");
        } else {
            problems.push(format!(
                "known gap now matches, remove it from the corpus: {sql}"
            ));
        }
    }
    if !unexpected.is_empty() {
        problems.push(format!(
            "{} values differ from the client (listed above)",
            unexpected.len()
        ));
    }
    assert!(problems.is_empty(), "{label}: {}", problems.join("; "));
}

/// Runs every query through steward and through `client`, comparing value by value.
fn differential(label: &str, url: &str, queries: &[String], client: &Client) -> Vec<Mismatch> {
    let next = AtomicUsize::new(0);
    let found = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(query) = queries.get(i) else { break };
                    let mismatches = compare(url, query, client);
                    found.lock().unwrap().extend(mismatches);
                }
            });
        }
    });
    let mut found = found.into_inner().unwrap();
    found.sort_by(|a, b| a.query.cmp(&b.query));
    eprintln!(
        "{label}: {} queries, {} values differ",
        queries.len(),
        found.len()
    );
    for m in &found {
        eprintln!(
            "  {label} | {}\n      steward: {}\n      client:  {}",
            m.query, m.ours, m.theirs
        );
    }
    found
}

fn compare(url: &str, query: &str, client: &Client) -> Vec<Mismatch> {
    let mismatch = |ours: String, theirs: String| Mismatch {
        query: query.to_owned(),
        ours,
        theirs,
    };
    let theirs = match client(query) {
        Ok(rows) => rows,
        Err(e) => {
            return vec![mismatch(
                "(not run)".to_owned(),
                format!("client error: {e}"),
            )];
        }
    };
    let out = common::steward(
        &[
            "sql",
            "run",
            "--json",
            "--db",
            url,
            "--max-rows",
            "1000",
            query,
        ],
        &[],
        "",
    );
    let json: Option<Value> = serde_json::from_slice(&out.stdout).ok();
    let Some(json) = json.filter(|j| j.get("rows").is_some()) else {
        return vec![mismatch(
            format!(
                "error (exit {:?}): {}",
                out.status.code(),
                common::text(&out.stderr).trim()
            ),
            format!("{} rows", theirs.len()),
        )];
    };
    let rows = json["rows"].as_array().cloned().unwrap_or_default();
    let types: Vec<String> = json["types"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|v| v.as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default();
    let mut found = Vec::new();
    if json["truncated"] != Value::Bool(false) {
        found.push(mismatch("truncated".to_owned(), "complete".to_owned()));
    }
    if rows.len() != theirs.len() {
        found.push(mismatch(
            format!("{} rows: {}", rows.len(), Value::Array(rows.clone())),
            format!("{} rows", theirs.len()),
        ));
        return found;
    }
    for (ours, theirs) in rows.iter().zip(&theirs) {
        let ours = ours.as_array().cloned().unwrap_or_default();
        if ours.len() != theirs.len() {
            found.push(mismatch(
                format!("{} cells", ours.len()),
                format!("{} cells", theirs.len()),
            ));
            continue;
        }
        for (i, (o, t)) in ours.iter().zip(theirs).enumerate() {
            let ty = types.get(i).map_or("", String::as_str);
            if !clients::same(o, t, ty) {
                found.push(mismatch(format!("{o} ({ty})"), t.show()));
            }
        }
    }
    found
}

/// A name for a scratch database of this run, and the time it was born (old ones are dropped by their age).
fn scratch_name() -> (String, u64) {
    static N: AtomicUsize = AtomicUsize::new(0);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let n = N.fetch_add(1, Ordering::Relaxed);
    (format!("steward_fid_{now}_{}_{n}", std::process::id()), now)
}

fn born(name: &str) -> Option<u64> {
    name.strip_prefix("steward_fid_")?
        .split('_')
        .next()?
        .parse()
        .ok()
}

/// Drops a PostgreSQL database when the test ends, however it ends.
struct PgDrop(String);

impl Drop for PgDrop {
    fn drop(&mut self) {
        let _ = clients::psql_script(
            PG_ADMIN,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE);", self.0),
        );
    }
}

fn postgres(settings: &[&str]) {
    if !clients::available("psql") {
        return skip("psql is not installed");
    }
    if let Err(e) = clients::psql_script(PG_ADMIN, "SELECT 1;") {
        return skip(&format!("PostgreSQL at 127.0.0.1:5432 is not usable: {e}"));
    }
    let (name, now) = scratch_name();
    if let Ok(old) = clients::psql(
        PG_ADMIN,
        "SELECT datname FROM pg_database WHERE datname LIKE 'steward\\_fid\\_%'",
    ) {
        for row in old {
            if let Some(Cell::Bytes(old)) = row.first() {
                let old = String::from_utf8_lossy(old).into_owned();
                if born(&old).is_some_and(|t| now.saturating_sub(t) > 7200) {
                    drop(PgDrop(old));
                }
            }
        }
    }
    let mut create = format!("CREATE DATABASE {name};");
    for setting in settings {
        create.push_str(&format!("\nALTER DATABASE {name} SET {setting};"));
    }
    clients::psql_script(PG_ADMIN, &create).unwrap();
    let _drop = PgDrop(name.clone());
    // Plain TCP: a TLS handshake in a debug build costs more than the query; values are the same either way.
    let url = format!("postgres://postgres@127.0.0.1:5432/{name}?sslmode=disable");
    let corpus = corpus("postgres.tsv");
    clients::psql_script(&url, &corpus.load_script(Engine::Postgres))
        .unwrap_or_else(|e| panic!("loading the corpus: {e}"));
    let queries = corpus.queries(Engine::Postgres);
    let label = if settings.is_empty() {
        "postgres".to_owned()
    } else {
        format!("postgres ({})", settings.join(", "))
    };
    let found = differential(&label, &url, &queries, &|sql| clients::psql(&url, sql));
    verdict(&label, &corpus, &found);
}

#[test]
fn postgres_values_match_psql() {
    postgres(&[]);
}

#[test]
fn postgres_values_match_psql_under_database_settings() {
    postgres(&["timezone = 'America/New_York'", "datestyle = 'SQL, DMY'"]);
}

/// Restores MariaDB's global `time_zone` and drops the scratch database when the test ends.
struct MariaRestore {
    admin: MariaUrl,
    time_zone: String,
    database: String,
}

impl Drop for MariaRestore {
    fn drop(&mut self) {
        let _ = clients::mariadb_script(
            &self.admin,
            &format!(
                "SET GLOBAL time_zone = '{}'; DROP DATABASE IF EXISTS {};",
                self.time_zone, self.database
            ),
        );
    }
}

#[test]
fn mariadb_values_match_the_client_under_a_server_time_zone() {
    if !clients::available("mariadb") {
        return skip("the mariadb client is not installed");
    }
    let admin = MariaUrl::parse(MARIA_ADMIN);
    let time_zone = match clients::mariadb(&admin, "SELECT @@global.time_zone") {
        Ok(rows) => match rows.first().and_then(|r| r.first()) {
            Some(Cell::Bytes(tz)) => String::from_utf8_lossy(tz).into_owned(),
            _ => "SYSTEM".to_owned(),
        },
        Err(e) => return skip(&format!("MariaDB at 127.0.0.1:3306 is not usable: {e}")),
    };
    let (name, now) = scratch_name();
    if let Ok(old) = clients::mariadb(
        &admin,
        "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'steward\\_fid\\_%'",
    ) {
        for row in old {
            if let Some(Cell::Bytes(old)) = row.first() {
                let old = String::from_utf8_lossy(old).into_owned();
                if born(&old).is_some_and(|t| now.saturating_sub(t) > 7200) {
                    let _ =
                        clients::mariadb_script(&admin, &format!("DROP DATABASE IF EXISTS {old};"));
                }
            }
        }
    }
    let _restore = MariaRestore {
        admin: admin.clone(),
        time_zone: time_zone.replace('\'', ""),
        database: name.clone(),
    };
    clients::mariadb_script(
        &admin,
        &format!("SET GLOBAL time_zone = '+05:30'; CREATE DATABASE {name};"),
    )
    .unwrap();
    let url = format!("mysql://root@127.0.0.1:3306/{name}");
    let db = MariaUrl::parse(&url);
    let corpus = corpus("mariadb.tsv");
    let script = format!(
        "SET SESSION sql_mode = '';\n{}",
        corpus.load_script(Engine::Mariadb)
    );
    clients::mariadb_script(&db, &script).unwrap_or_else(|e| panic!("loading the corpus: {e}"));
    let queries = corpus.queries(Engine::Mariadb);
    let found = differential("mariadb (time_zone +05:30)", &url, &queries, &|sql| {
        clients::mariadb(&db, sql)
    });
    verdict("mariadb", &corpus, &found);
}

#[test]
fn sqlite_values_match_sqlite3() {
    if !clients::available("sqlite3") {
        return skip("sqlite3 is not installed");
    }
    let file = PathBuf::from(common::scratch_dir("fidelity")).join("fidelity.sqlite");
    let file = file.display().to_string();
    let corpus = corpus("sqlite.tsv");
    clients::sqlite3_script(&file, &corpus.load_script(Engine::Sqlite))
        .unwrap_or_else(|e| panic!("loading the corpus: {e}"));
    let queries = corpus.queries(Engine::Sqlite);
    let url = format!("sqlite://{file}");
    let found = differential("sqlite", &url, &queries, &|sql| {
        clients::sqlite3(&file, sql)
    });
    verdict("sqlite", &corpus, &found);
}
