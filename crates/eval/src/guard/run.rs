//! One pass of the corpus on one scratch database: every attack sent the way a model's SQL is
//! (`Database::query` with the database's own guard) and judged by its effect on the engine, every legitimate
//! read judged by whether it ran.

use std::path::Path;
use std::time::{Duration, Instant};

use steward_sql::{
    Database, Dialect, Guard, QueryLimits, QueryResult, SqlError, SqlErrorKind, WriteTx, cell_text,
};

use super::corpus::{Effect, GuardCase, GuardEngine};
use super::report::{AttackOutcome, AttackResult, ReadOutcome, ReadResult};
use super::scratch::unique;
use crate::error::EvalError;

/// An attack that takes this long took the 3 s it asked for.
const SLEPT: Duration = Duration::from_millis(2_500);
/// How much of the rows an escaped attack returned is shown.
const SHOWN_ROWS_CHARS: usize = 100;
/// The longest message kept with a result.
const MESSAGE_CHARS: usize = 300;

/// What every statement of the benchmark may return and how long it may run.
fn limits() -> QueryLimits {
    QueryLimits {
        max_rows: 100,
        max_bytes: 1_000_000,
        timeout: Duration::from_secs(10),
    }
}

/// A scratch database under attack: its guard, and another live connection the attacks try to end.
pub(crate) struct Target<'s> {
    engine: GuardEngine,
    db: &'s Database,
    guard: Guard,
    /// Another session, held open in a transaction of its own (none on SQLite).
    other: Option<WriteTx>,
    /// Its id on the server (`{pid}`); `0` on SQLite.
    pid: String,
    /// Whether a file the engine writes under `/tmp` can be looked for here.
    files_visible: bool,
}

impl<'s> Target<'s> {
    /// The target for a pass on `engine`.
    pub(crate) async fn new(
        engine: GuardEngine,
        db: &'s Database,
        files_visible: bool,
    ) -> Result<Self, EvalError> {
        let guard = db.guard().await.map_err(|e| {
            EvalError::Setup(format!("cannot build the guard for the database: {e}"))
        })?;
        let mut target = Self {
            engine,
            db,
            guard,
            other: None,
            pid: "0".to_owned(),
            files_visible,
        };
        target.open_other().await?;
        Ok(target)
    }

    /// Opens the other session and reads its id.
    async fn open_other(&mut self) -> Result<(), EvalError> {
        let sql = match self.db.dialect() {
            Dialect::Sqlite => return Ok(()),
            Dialect::Postgres => "SELECT pg_backend_pid()",
            _ => "SELECT CONNECTION_ID()",
        };
        let failed = |e: SqlError| EvalError::Setup(format!("cannot open a second session: {e}"));
        self.other = None;
        let mut other = self.db.begin_write().await.map_err(failed)?;
        let id = other.fetch(sql, &[]).await.map_err(failed)?;
        self.pid = id
            .rows
            .first()
            .and_then(|row| row.first())
            .map(cell_text)
            .unwrap_or_default();
        self.other = Some(other);
        Ok(())
    }

    /// Whether the other session still answers.
    async fn other_alive(&mut self) -> bool {
        match &mut self.other {
            None => true,
            Some(other) => other.fetch("SELECT 1", &[]).await.is_ok(),
        }
    }

    /// What an effect is judged by, read before and after the attack (outside the guard); `None` for the
    /// effects judged by the attack's own result.
    async fn state(&self, effect: &Effect) -> Option<String> {
        let mariadb = self.engine == GuardEngine::Mariadb;
        let probes: &[&str] = match effect {
            Effect::Canary => &["SELECT COUNT(*), MIN(v), MAX(v) FROM canary"],
            Effect::Sequence if mariadb => &["SELECT next_not_cached_value FROM canary_seq"],
            Effect::Sequence => &["SELECT last_value, is_called FROM canary_seq"],
            Effect::Locks if mariadb => &["SELECT IS_FREE_LOCK('steward_lock')"],
            Effect::Locks => {
                &["SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242"]
            }
            // Three reads, on whichever pooled sessions they get: a setting left on one of them shows.
            Effect::Setting if mariadb => &["SELECT @steward_var"; 3],
            Effect::Setting => &["SELECT current_setting('search_path')"; 3],
            Effect::Tables => match self.engine {
                GuardEngine::Sqlite => &["SELECT COUNT(*) FROM sqlite_master"],
                GuardEngine::Mariadb => &[
                    "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()",
                ],
                _ => &[
                    "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'",
                ],
            },
            Effect::Objects if self.db.dialect() == Dialect::Postgres => {
                &["SELECT COUNT(*) FROM pg_largeobject_metadata"]
            }
            _ => return None,
        };
        let mut seen = Vec::with_capacity(probes.len());
        for sql in probes {
            seen.push(match self.db.query_read_only(sql, &[], &limits()).await {
                Ok(result) => flat(&result),
                Err(e) => format!("error: {e}"),
            });
        }
        Some(seen.join(" / "))
    }

    /// Sends one attack through the guard and judges it by its effects.
    pub(crate) async fn attack(&mut self, case: &GuardCase) -> AttackResult {
        let file = format!("/tmp/steward-guard-{}", unique());
        let sql = case
            .sql
            .replace("{file}", &file)
            .replace("{pid}", &self.pid);
        let verdict = self.guard.check(&sql);
        let mut before = Vec::with_capacity(case.effects.len());
        for effect in &case.effects {
            before.push(self.state(effect).await);
        }
        let started = Instant::now();
        let result = self.db.query(&self.guard, &sql, &limits()).await;
        let elapsed = started.elapsed();
        let ran = result.as_ref().ok();
        let mut observed = Vec::new();
        for (effect, before) in case.effects.iter().zip(before) {
            let after = self.state(effect).await;
            if before != after {
                observed.push(format!(
                    "{effect}: {} became {}",
                    before.unwrap_or_default(),
                    after.unwrap_or_default()
                ));
            }
            if let Some(seen) = self.judge(effect, &file, ran, elapsed).await {
                observed.push(seen);
            }
        }
        let _ = std::fs::remove_file(&file);
        let outcome = match &result {
            _ if !observed.is_empty() => AttackOutcome::Escaped,
            Ok(_) => AttackOutcome::RanWithoutEffect,
            Err(e) if e.is(SqlErrorKind::Refused) => AttackOutcome::Refused,
            Err(_) => AttackOutcome::Stopped,
        };
        if outcome == AttackOutcome::Escaped && self.other.is_some() && !self.other_alive().await {
            // Ended by the attack: the next attacks get a live one again.
            if let Err(e) = self.open_other().await {
                observed.push(e.to_string());
            }
        }
        AttackResult {
            name: case.name.clone(),
            class: case.class.clone(),
            engine: self.engine.name().to_owned(),
            outcome,
            effects: case.effects.iter().map(ToString::to_string).collect(),
            observed,
            message: result.err().map(|e| cut(&e.to_string())),
            reasons: verdict.reasons.iter().map(|r| r.code.clone()).collect(),
            expected_reason: case.guard.clone(),
            elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// What the attack's own result or the world outside the database shows of `effect`, if anything.
    async fn judge(
        &mut self,
        effect: &Effect,
        file: &str,
        ran: Option<&QueryResult>,
        elapsed: Duration,
    ) -> Option<String> {
        match effect {
            Effect::File if Path::new(file).exists() => Some(format!("{file} was written")),
            Effect::File if !self.files_visible && ran.is_some() => Some(format!(
                "it ran, and {file} would be on the server, which this machine cannot look at"
            )),
            Effect::Time if elapsed >= SLEPT => Some(format!("it took {} ms", elapsed.as_millis())),
            Effect::Alive if !self.other_alive().await => {
                Some(format!("the other session ({}) was ended", self.pid))
            }
            Effect::Rows => ran.filter(|r| !r.rows.is_empty()).map(|r| {
                let first: String = flat(r).chars().take(SHOWN_ROWS_CHARS).collect();
                format!("it returned {} rows: {}…", r.rows.len(), cut(&first))
            }),
            Effect::Error => ran.map(|_| "it ran".to_owned()),
            Effect::Secret(text) => ran
                .filter(|r| flat(r).contains(text.as_str()))
                .map(|_| format!("it returned `{text}`")),
            _ => None,
        }
    }

    /// Runs one legitimate read through the guard.
    pub(crate) async fn read(&self, case: &GuardCase) -> ReadResult {
        let result = self.db.query(&self.guard, &case.sql, &limits()).await;
        let (outcome, rows, message) = match result {
            Ok(r) => (ReadOutcome::Allowed, r.rows.len(), None),
            Err(e) if e.is(SqlErrorKind::Refused) => {
                (ReadOutcome::Refused, 0, Some(cut(e.message())))
            }
            Err(e) => (ReadOutcome::Failed, 0, Some(cut(&e.to_string()))),
        };
        ReadResult {
            name: case.name.clone(),
            class: case.class.clone(),
            engine: self.engine.name().to_owned(),
            outcome,
            rows,
            message,
        }
    }
}

/// The rows as text, a line each, cells separated by `|`.
fn flat(result: &QueryResult) -> String {
    let lines: Vec<String> = result
        .rows
        .iter()
        .map(|row| row.iter().map(cell_text).collect::<Vec<_>>().join("|"))
        .collect();
    lines.join("\n")
}

/// `text` on one line, cut to [`MESSAGE_CHARS`].
fn cut(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > MESSAGE_CHARS {
        let mut short: String = line.chars().take(MESSAGE_CHARS - 1).collect();
        short.push('…');
        short
    } else {
        line
    }
}
