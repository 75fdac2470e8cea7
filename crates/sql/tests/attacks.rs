//! The guard against real engines. Every attack of `testdata/guard/attacks.sql` is sent through
//! `Database::query` with the database's own guard on SQLite, PostgreSQL (with `standard_conforming_strings`
//! on and off) and MariaDB, and must be held *by its effect*: no file created, no sleep taken, no row changed,
//! no secret returned, no other connection killed, no setting, sequence or lock changed. A refusal by the
//! guard or an error from the engine both count as held; the guard's verdict is asserted too. Every read of
//! `testdata/guard/legit.sql` must be allowed and return rows.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sqlx::Connection;
use steward_sql::{Database, Dialect, Guard, QueryLimits, QueryResult, SqlError, cell_text};

/// One block of a corpus file.
#[derive(Debug, Clone)]
struct Case {
    name: String,
    engines: Vec<String>,
    expect: String,
    effects: Vec<String>,
    guard: Option<String>,
    offline: Option<String>,
    sql: String,
}

fn corpus(file: &str) -> Vec<Case> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/guard")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut cases: Vec<Case> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(name) = line.strip_prefix("-- name:") else {
            continue;
        };
        let mut case = Case {
            name: name.trim().to_owned(),
            engines: Vec::new(),
            expect: String::new(),
            effects: Vec::new(),
            guard: None,
            offline: None,
            sql: String::new(),
        };
        while let Some(header) = lines.peek().and_then(|l| l.strip_prefix("-- ")) {
            let Some((key, value)) = header.split_once(':') else {
                break;
            };
            let value = value.trim();
            match key {
                "engines" => {
                    case.engines = value
                        .split([',', ' '])
                        .filter(|e| !e.is_empty())
                        .map(str::to_owned)
                        .collect();
                }
                "expect" => case.expect = value.to_owned(),
                "effect" => case.effects.extend(value.split(' ').map(str::to_owned)),
                "guard" => case.guard = Some(value.to_owned()),
                "offline" => case.offline = Some(value.to_owned()),
                _ => break,
            }
            lines.next();
        }
        let mut body: Vec<&str> = Vec::new();
        while let Some(l) = lines.peek() {
            if l.starts_with("-- name:") {
                break;
            }
            body.push(l);
            lines.next();
        }
        while body
            .last()
            .is_some_and(|l| l.trim().is_empty() || l.starts_with("-- ##"))
        {
            body.pop();
        }
        case.sql = body.join("\n");
        cases.push(case);
    }
    cases
}

#[test]
fn the_corpus_is_well_formed() {
    let attacks = corpus("attacks.sql");
    let legit = corpus("legit.sql");
    assert!(attacks.len() >= 80, "{}", attacks.len());
    assert!(legit.len() >= 30, "{}", legit.len());
    let mut names = std::collections::BTreeSet::new();
    for case in attacks.iter().chain(&legit) {
        assert!(names.insert(case.name.clone()), "{} twice", case.name);
        assert!(!case.sql.trim().is_empty(), "{}", case.name);
        assert!(!case.engines.is_empty(), "{}", case.name);
        for e in &case.engines {
            assert!(
                ["postgres", "postgres_scs_off", "mariadb", "sqlite"].contains(&e.as_str()),
                "{}: {e}",
                case.name
            );
        }
    }
    for case in &attacks {
        assert_eq!(case.expect, "held", "{}", case.name);
        assert!(!case.effects.is_empty(), "{}", case.name);
        assert!(case.guard.is_some(), "{}", case.name);
    }
    for case in &legit {
        assert_eq!(case.expect, "runs", "{}", case.name);
    }
}

/// Where the cases run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Engine {
    Sqlite,
    Postgres,
    PostgresScsOff,
    Mariadb,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
            Self::PostgresScsOff => "postgres_scs_off",
            Self::Mariadb => "mariadb",
        }
    }

    fn dialect(self) -> Dialect {
        match self {
            Self::Sqlite => Dialect::Sqlite,
            Self::Postgres | Self::PostgresScsOff => Dialect::Postgres,
            Self::Mariadb => Dialect::Mysql,
        }
    }
}

const SETUP_POSTGRES: &str = include_str!("../../../testdata/guard/setup/postgres.sql");

const SETUP_MARIADB: &str = include_str!("../../../testdata/guard/setup/mariadb.sql");

const SETUP_SQLITE: &str = include_str!("../../../testdata/guard/setup/sqlite.sql");

/// Another live connection, for the attacks that try to end it.
enum Other {
    Postgres(sqlx::PgConnection),
    Mysql(sqlx::MySqlConnection),
}

/// A database with the test tables, its guard, and another live connection.
struct Target {
    engine: Engine,
    db: Database,
    guard: Guard,
    other: Option<Other>,
    pid: String,
}

async fn target(engine: Engine) -> Option<Target> {
    let db = match engine {
        Engine::Sqlite => common::scratch_sqlite(SETUP_SQLITE).await,
        Engine::Postgres | Engine::PostgresScsOff => {
            let url = match common::fresh(common::PG_ADMIN, SETUP_POSTGRES, false).await {
                Ok(url) => url,
                Err(e) => {
                    common::skip(&format!("PostgreSQL at 127.0.0.1:5432 is not usable: {e}"));
                    return None;
                }
            };
            if engine == Engine::PostgresScsOff {
                let name = url.rsplit('/').next().unwrap();
                let admin = Database::connect(common::PG_ADMIN).await.unwrap();
                admin
                    .execute_script(&format!(
                        "ALTER DATABASE {name} SET standard_conforming_strings = off"
                    ))
                    .await
                    .unwrap();
                admin.close().await;
            }
            Database::connect(&url).await.unwrap()
        }
        Engine::Mariadb => match common::fresh(common::MARIA_ADMIN, SETUP_MARIADB, true).await {
            Ok(url) => Database::connect(&url).await.unwrap(),
            Err(e) => {
                common::skip(&format!("MariaDB at 127.0.0.1:3306 is not usable: {e}"));
                return None;
            }
        },
    };
    let guard = db.guard().await.unwrap();
    let url = db.url().to_owned();
    let (other, pid) = match engine {
        Engine::Sqlite => (None, "0".to_owned()),
        Engine::Postgres | Engine::PostgresScsOff => {
            let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
            let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
                .fetch_one(&mut conn)
                .await
                .unwrap();
            (Some(Other::Postgres(conn)), pid.to_string())
        }
        Engine::Mariadb => {
            let mut conn = sqlx::MySqlConnection::connect(&url).await.unwrap();
            let pid: i64 = sqlx::query_scalar("SELECT CAST(CONNECTION_ID() AS SIGNED)")
                .fetch_one(&mut conn)
                .await
                .unwrap();
            (Some(Other::Mysql(conn)), pid.to_string())
        }
    };
    Some(Target {
        engine,
        db,
        guard,
        other,
        pid,
    })
}

fn limits() -> QueryLimits {
    QueryLimits {
        max_rows: 100,
        max_bytes: 1_000_000,
        timeout: Duration::from_secs(10),
    }
}

fn flat(result: &QueryResult) -> String {
    result
        .rows
        .iter()
        .map(|r| r.iter().map(cell_text).collect::<Vec<_>>().join("|"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Target {
    /// A read through the same pools, outside the guard.
    async fn read(&self, sql: &str) -> String {
        match self.db.query_read_only(sql, &[], &limits()).await {
            Ok(r) => flat(&r),
            Err(e) => format!("error: {e}"),
        }
    }

    /// The state an effect is judged by, before and after.
    async fn state(&self, effect: &str) -> Option<String> {
        let pg = self.engine.dialect() == Dialect::Postgres;
        let sql: &[&str] = match (effect, self.engine) {
            ("canary", _) => &["SELECT COUNT(*), MIN(v), MAX(v) FROM canary"],
            ("sequence", Engine::Mariadb) => &["SELECT next_not_cached_value FROM canary_seq"],
            ("sequence", _) => &["SELECT last_value, is_called FROM canary_seq"],
            ("locks", Engine::Mariadb) => &["SELECT IS_FREE_LOCK('steward_lock')"],
            ("locks", _) => {
                &["SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242"]
            }
            ("setting", Engine::Mariadb) => &[
                "SELECT @steward_var",
                "SELECT @steward_var",
                "SELECT @steward_var",
            ],
            ("setting", _) => &[
                "SELECT current_setting('search_path')",
                "SELECT current_setting('search_path')",
                "SELECT current_setting('search_path')",
            ],
            ("tables", Engine::Sqlite) => &["SELECT COUNT(*) FROM sqlite_master"],
            ("tables", Engine::Mariadb) => {
                &["SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"]
            }
            ("tables", _) => {
                &["SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'"]
            }
            ("objects", _) if pg => &["SELECT COUNT(*) FROM pg_largeobject_metadata"],
            _ => return None,
        };
        let mut out = Vec::new();
        for q in sql {
            out.push(self.read(q).await);
        }
        Some(out.join(" / "))
    }

    async fn other_alive(&mut self) -> bool {
        match &mut self.other {
            None => true,
            Some(Other::Postgres(conn)) => sqlx::query("SELECT 1").execute(conn).await.is_ok(),
            Some(Other::Mysql(conn)) => sqlx::query("SELECT 1").execute(conn).await.is_ok(),
        }
    }
}

/// What happened to one case.
struct Outcome {
    result: Result<QueryResult, SqlError>,
    elapsed: Duration,
}

async fn run(target: &Target, sql: &str, guarded: bool) -> Outcome {
    let started = Instant::now();
    let result = if guarded {
        target.db.query(&target.guard, sql, &limits()).await
    } else {
        target.db.query_read_only(sql, &[], &limits()).await
    };
    Outcome {
        result,
        elapsed: started.elapsed(),
    }
}

fn file_path() -> String {
    format!(
        "/tmp/steward-attack-{}-{}",
        std::process::id(),
        common::unique()
    )
}

/// Runs every attack for `engine` (through the guard, or with the engine's read-only mode alone); returns
/// the failures.
async fn attacks_on(engine: Engine, guarded: bool) -> Vec<String> {
    let Some(mut target) = target(engine).await else {
        return Vec::new();
    };
    let mut failures = Vec::new();
    let offline = Guard::new(engine.dialect());
    for case in corpus("attacks.sql")
        .into_iter()
        .filter(|c| c.engines.iter().any(|e| e == engine.name()))
    {
        let file = file_path();
        let sql = case
            .sql
            .replace("{file}", &file)
            .replace("{pid}", &target.pid);
        let mut fail =
            |what: String| failures.push(format!("{} [{}]: {what}", case.name, engine.name()));
        // The verdicts, for the record.
        let live = target.guard.check(&sql);
        if let Some(code) = &case.guard
            && (live.allowed || !live.has(code))
        {
            fail(format!(
                "live guard: expected {code}, got {:?}",
                live.reasons
            ));
        }
        let off = offline.check(&sql);
        match case.offline.as_deref() {
            Some("allowed") => {}
            _ if off.allowed => fail("the offline guard allowed it".to_owned()),
            _ => {}
        }
        // The effect.
        let mut before = Vec::new();
        for effect in &case.effects {
            before.push(target.state(effect).await);
        }
        let outcome = run(&target, &sql, guarded).await;
        for (effect, before) in case.effects.iter().zip(before) {
            let after = target.state(effect).await;
            if before != after {
                fail(format!("{effect} changed: {before:?} -> {after:?}"));
            }
            let ok_rows = outcome.result.as_ref().ok();
            match effect.as_str() {
                "file" if Path::new(&file).exists() => fail(format!("{file} was created")),
                "time" if outcome.elapsed >= Duration::from_millis(2_500) => {
                    fail(format!("it took {:?}", outcome.elapsed));
                }
                "alive" if !target.other_alive().await => {
                    fail("the other connection was ended".to_owned());
                }
                "rows" if ok_rows.is_some_and(|r| !r.rows.is_empty()) => {
                    let rows: String = flat(ok_rows.unwrap()).chars().take(200).collect();
                    fail(format!("it returned rows: {rows}"));
                }
                "error" if ok_rows.is_some() => fail("it ran".to_owned()),
                secret if secret.starts_with("secret:") => {
                    let text = secret.trim_start_matches("secret:");
                    if ok_rows.is_some_and(|r| flat(r).contains(text)) {
                        fail(format!("it returned `{text}`"));
                    }
                }
                _ => {}
            }
        }
        if let Ok(result) = &outcome.result
            && guarded
        {
            eprintln!(
                "NOTE {} [{}]: ran ({} rows) and was held by its effect only",
                case.name,
                engine.name(),
                result.rows.len()
            );
        }
        let _ = std::fs::remove_file(&file);
    }
    failures
}

/// Runs every legitimate read for `engine`; returns the failures.
async fn legit_on(engine: Engine) -> Vec<String> {
    let Some(target) = target(engine).await else {
        return Vec::new();
    };
    let mut failures = Vec::new();
    let offline = Guard::new(engine.dialect());
    for case in corpus("legit.sql")
        .into_iter()
        .filter(|c| c.engines.iter().any(|e| e == engine.name()))
    {
        let mut fail =
            |what: String| failures.push(format!("{} [{}]: {what}", case.name, engine.name()));
        let off = offline.check(&case.sql);
        if !off.allowed && !off.has("ambiguous_text") {
            fail(format!(
                "the offline guard refused it: {}",
                off.explanation()
            ));
        }
        match run(&target, &case.sql, true).await.result {
            Ok(result) if !result.rows.is_empty() => {}
            Ok(_) => fail("it returned no rows".to_owned()),
            Err(e) => fail(format!("it failed: {e}")),
        }
    }
    failures
}

fn report(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attacks_are_held_on_sqlite() {
    report(attacks_on(Engine::Sqlite, true).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attacks_are_held_on_postgres() {
    report(attacks_on(Engine::Postgres, true).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attacks_are_held_on_postgres_without_standard_conforming_strings() {
    report(attacks_on(Engine::PostgresScsOff, true).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attacks_are_held_on_mariadb() {
    report(attacks_on(Engine::Mariadb, true).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusual_reads_run_on_sqlite() {
    report(legit_on(Engine::Sqlite).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusual_reads_run_on_postgres() {
    report(legit_on(Engine::Postgres).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusual_reads_run_on_mariadb() {
    report(legit_on(Engine::Mariadb).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_guard_knows_its_server() {
    if let Some(t) = target(Engine::Postgres).await {
        assert_eq!(t.guard.settings().standard_conforming_strings, Some(true));
        assert!(
            t.guard.catalog_refusals() > 50,
            "{}",
            t.guard.catalog_refusals()
        );
        // Cached: the same guard again.
        let again = t.db.guard().await.unwrap();
        assert_eq!(again.catalog_refusals(), t.guard.catalog_refusals());
    }
    if let Some(t) = target(Engine::PostgresScsOff).await {
        assert_eq!(t.guard.settings().standard_conforming_strings, Some(false));
        // With standard_conforming_strings off, '\'' is one quote: the DELETE is a second statement.
        assert!(
            t.guard
                .check("SELECT '\\''; DELETE FROM canary; --'")
                .has("multiple_statements")
        );
        assert!(t.guard.check("SELECT 'a\\'b'").allowed);
    }
    if let Some(t) = target(Engine::Mariadb).await {
        let s = t.guard.settings();
        assert_eq!(s.backslash_escapes, Some(true));
        assert_eq!(s.ansi_quotes, Some(false));
        assert_eq!(s.mariadb, Some(true));
        assert!(
            s.current_database
                .as_deref()
                .is_some_and(|d| d.starts_with("steward_t_"))
        );
        assert!(t.guard.check("SELECT \"double quoted\"").allowed);
        assert!(
            t.guard
                .check("SELECT slow_total()")
                .has("forbidden_function")
        );
    }
}

/// The attacks with the engine's read-only mode as the only wall, to show what the guard alone stops and
/// that the effect checks see an escape. Slow (each sleep runs) and it really attacks the test databases:
/// `cargo test -p steward-sql --test attacks -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "runs the attacks without the guard"]
async fn without_the_guard_the_engines_let_these_through() {
    let mut escaped = Vec::new();
    for engine in [
        Engine::Sqlite,
        Engine::Postgres,
        Engine::PostgresScsOff,
        Engine::Mariadb,
    ] {
        escaped.extend(attacks_on(engine, false).await);
    }
    eprintln!(
        "{} effects without the guard:\n{}",
        escaped.len(),
        escaped.join("\n")
    );
    assert!(!escaped.is_empty());
}
