//! The two-sided corpus: `attacks.sql` (attacks by class, each with the effects that must not happen) and
//! `legit.sql` (unusual reads that must run), with the fixtures each engine needs (`setup/<engine>.sql`).
//! The format is described at the top of `testdata/guard/attacks.sql`; the repository's corpus is built in.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

use crate::error::EvalError;

const BUILTIN_ATTACKS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/guard/attacks.sql"
));
const BUILTIN_LEGIT: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/guard/legit.sql"
));
const BUILTIN_SQLITE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/guard/setup/sqlite.sql"
));
const BUILTIN_POSTGRES: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/guard/setup/postgres.sql"
));
const BUILTIN_MARIADB: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/guard/setup/mariadb.sql"
));

/// The class of the blocks that come before any `-- ## heading`.
const NO_CLASS: &str = "unclassified";

/// Where a block runs: an engine, in one configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GuardEngine {
    /// SQLite.
    Sqlite,
    /// PostgreSQL with `standard_conforming_strings` on (the default).
    Postgres,
    /// PostgreSQL with `standard_conforming_strings` off: a backslash escapes a quote in every string.
    PostgresScsOff,
    /// MariaDB (MySQL runs its blocks too).
    Mariadb,
}

impl GuardEngine {
    /// The name the corpus uses: `sqlite`, `postgres`, `postgres_scs_off`, `mariadb`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
            Self::PostgresScsOff => "postgres_scs_off",
            Self::Mariadb => "mariadb",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        [
            Self::Sqlite,
            Self::Postgres,
            Self::PostgresScsOff,
            Self::Mariadb,
        ]
        .into_iter()
        .find(|e| e.name() == name)
    }
}

impl fmt::Display for GuardEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What an attack must not do, judged on the engine after it ran (or was refused).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// The rows of table `canary` change.
    Canary,
    /// The file `{file}` exists afterwards.
    File,
    /// It takes the 3 s it asks for (2.5 s or more).
    Time,
    /// The other live connection `{pid}` no longer answers.
    Alive,
    /// It returns rows.
    Rows,
    /// It succeeds.
    Error,
    /// A cell it returns contains this text.
    Secret(String),
    /// The sequence `canary_seq` moves.
    Sequence,
    /// An advisory or user lock is left held.
    Locks,
    /// The session setting it changes is changed for later queries.
    Setting,
    /// A table was created.
    Tables,
    /// A large object was created.
    Objects,
}

impl Effect {
    fn parse(word: &str) -> Option<Self> {
        if let Some(text) = word.strip_prefix("secret:") {
            return (!text.is_empty()).then(|| Self::Secret(text.to_owned()));
        }
        Some(match word {
            "canary" => Self::Canary,
            "file" => Self::File,
            "time" => Self::Time,
            "alive" => Self::Alive,
            "rows" => Self::Rows,
            "error" => Self::Error,
            "sequence" => Self::Sequence,
            "locks" => Self::Locks,
            "setting" => Self::Setting,
            "tables" => Self::Tables,
            "objects" => Self::Objects,
            _ => return None,
        })
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = match self {
            Self::Canary => "canary",
            Self::File => "file",
            Self::Time => "time",
            Self::Alive => "alive",
            Self::Rows => "rows",
            Self::Error => "error",
            Self::Secret(text) => return write!(f, "secret:{text}"),
            Self::Sequence => "sequence",
            Self::Locks => "locks",
            Self::Setting => "setting",
            Self::Tables => "tables",
            Self::Objects => "objects",
        };
        f.write_str(word)
    }
}

/// One block of a corpus file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardCase {
    /// Its unique id (`-- name:`).
    pub name: String,
    /// Its class: the `-- ## heading` above it.
    pub class: String,
    /// Where it runs (`-- engines:`).
    pub engines: Vec<GuardEngine>,
    /// `held` for an attack, `runs` for a legitimate read (`-- expect:`).
    pub expect: String,
    /// What an attack must not do (`-- effect:`); empty for a read.
    pub effects: Vec<Effect>,
    /// The reason code the guard gives an attack (`-- guard:`), for the record.
    pub guard: Option<String>,
    /// The SQL, sent as it is once `{file}` and `{pid}` are filled in.
    pub sql: String,
    /// The line of its `-- name:`.
    pub line: u64,
}

impl GuardCase {
    /// Whether it runs on `engine`.
    pub fn runs_on(&self, engine: GuardEngine) -> bool {
        self.engines.contains(&engine)
    }
}

/// The attacks, the legitimate reads, and the fixtures of each engine.
#[derive(Clone, Debug)]
pub struct GuardCorpus {
    /// The attacks, in file order.
    pub attacks: Vec<GuardCase>,
    /// The legitimate reads, in file order.
    pub legit: Vec<GuardCase>,
    setup_sqlite: String,
    setup_postgres: String,
    setup_mariadb: String,
}

impl GuardCorpus {
    /// The corpus of the repository (`testdata/guard`), built in.
    pub fn builtin() -> Result<Self, EvalError> {
        let dir = Path::new("testdata/guard");
        Self::from_texts(
            (&dir.join("attacks.sql"), BUILTIN_ATTACKS),
            (&dir.join("legit.sql"), BUILTIN_LEGIT),
            [BUILTIN_SQLITE, BUILTIN_POSTGRES, BUILTIN_MARIADB].map(str::to_owned),
        )
    }

    /// The corpus in `dir`: `attacks.sql` and `legit.sql`, and `setup/sqlite.sql`, `setup/postgres.sql`,
    /// `setup/mariadb.sql` where present (the built-in fixtures otherwise).
    pub fn load(dir: &Path) -> Result<Self, EvalError> {
        let read = |path: &Path| std::fs::read_to_string(path).map_err(|e| EvalError::io(path, e));
        let attacks = dir.join("attacks.sql");
        let legit = dir.join("legit.sql");
        let setup = |engine: &str, builtin: &str| -> Result<String, EvalError> {
            let path = dir.join("setup").join(format!("{engine}.sql"));
            if path.is_file() {
                read(&path)
            } else {
                Ok(builtin.to_owned())
            }
        };
        Self::from_texts(
            (&attacks, &read(&attacks)?),
            (&legit, &read(&legit)?),
            [
                setup("sqlite", BUILTIN_SQLITE)?,
                setup("postgres", BUILTIN_POSTGRES)?,
                setup("mariadb", BUILTIN_MARIADB)?,
            ],
        )
    }

    fn from_texts(
        attacks: (&Path, &str),
        legit: (&Path, &str),
        [setup_sqlite, setup_postgres, setup_mariadb]: [String; 3],
    ) -> Result<Self, EvalError> {
        let corpus = Self {
            attacks: parse_cases(attacks.1, attacks.0, "held")?,
            legit: parse_cases(legit.1, legit.0, "runs")?,
            setup_sqlite,
            setup_postgres,
            setup_mariadb,
        };
        let mut names = BTreeSet::new();
        for (case, path) in corpus
            .attacks
            .iter()
            .map(|c| (c, attacks.0))
            .chain(corpus.legit.iter().map(|c| (c, legit.0)))
        {
            if !names.insert(case.name.as_str()) {
                return Err(EvalError::malformed(
                    path,
                    Some(case.line),
                    format!("`{}` names two blocks", case.name),
                ));
            }
        }
        Ok(corpus)
    }

    /// The script that makes the tables, sequences and functions the blocks of `engine` use.
    pub fn setup(&self, engine: GuardEngine) -> &str {
        match engine {
            GuardEngine::Sqlite => &self.setup_sqlite,
            GuardEngine::Postgres | GuardEngine::PostgresScsOff => &self.setup_postgres,
            GuardEngine::Mariadb => &self.setup_mariadb,
        }
    }
}

/// A block being read: its headers so far, and its SQL lines.
struct Open<'t> {
    case: GuardCase,
    in_headers: bool,
    body: Vec<&'t str>,
}

/// Reads the blocks of one corpus file; every block must `expect` the given word.
fn parse_cases(text: &str, path: &Path, expect: &str) -> Result<Vec<GuardCase>, EvalError> {
    let mut done: Vec<GuardCase> = Vec::new();
    let mut class = NO_CLASS.to_owned();
    let mut open: Option<Open<'_>> = None;
    for (index, line) in text.lines().enumerate() {
        let number = u64::try_from(index).map_or(u64::MAX, |i| i + 1);
        if let Some(name) = line.strip_prefix("-- name:") {
            if let Some(previous) = open.take() {
                done.push(close(previous, path, expect)?);
            }
            open = Some(Open {
                case: GuardCase {
                    name: name.trim().to_owned(),
                    class: class.clone(),
                    engines: Vec::new(),
                    expect: String::new(),
                    effects: Vec::new(),
                    guard: None,
                    sql: String::new(),
                    line: number,
                },
                in_headers: true,
                body: Vec::new(),
            });
        } else if let Some(heading) = line.strip_prefix("-- ## ") {
            class = heading.trim().to_owned();
        } else if let Some(block) = open.as_mut() {
            if block.in_headers && header(&mut block.case, line, path, number)? {
                continue;
            }
            block.in_headers = false;
            block.body.push(line);
        }
    }
    if let Some(last) = open {
        done.push(close(last, path, expect)?);
    }
    Ok(done)
}

/// Applies `line` to `case` when it is one of the header lines; false when it is not (the SQL begins).
fn header(case: &mut GuardCase, line: &str, path: &Path, number: u64) -> Result<bool, EvalError> {
    let Some((key, value)) = line
        .strip_prefix("-- ")
        .and_then(|rest| rest.split_once(':'))
    else {
        return Ok(false);
    };
    let value = value.trim();
    match key {
        "engines" => {
            for word in value.split([',', ' ']).filter(|w| !w.is_empty()) {
                let engine = GuardEngine::from_name(word).ok_or_else(|| {
                    EvalError::malformed(
                        path,
                        Some(number),
                        format!(
                            "unknown engine `{word}` (sqlite, postgres, postgres_scs_off, mariadb)"
                        ),
                    )
                })?;
                case.engines.push(engine);
            }
        }
        "expect" => value.clone_into(&mut case.expect),
        "effect" => {
            for word in value.split(' ').filter(|w| !w.is_empty()) {
                let effect = Effect::parse(word).ok_or_else(|| {
                    EvalError::malformed(path, Some(number), format!("unknown effect `{word}`"))
                })?;
                case.effects.push(effect);
            }
        }
        "guard" => case.guard = Some(value.to_owned()),
        // The offline guard's verdict: the engine tests' business, not the benchmark's.
        "offline" => {}
        _ => return Ok(false),
    }
    Ok(true)
}

/// Finishes a block: its SQL without trailing blank lines, and checks.
fn close(block: Open<'_>, path: &Path, expect: &str) -> Result<GuardCase, EvalError> {
    let Open { mut case, body, .. } = block;
    let end = body
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    case.sql = body.get(..end).unwrap_or_default().join("\n");
    let problem = if case.name.is_empty() {
        Some("a block without a name".to_owned())
    } else if case.sql.trim().is_empty() {
        Some("no SQL".to_owned())
    } else if case.engines.is_empty() {
        Some("no `-- engines:`".to_owned())
    } else if case.expect != expect {
        Some(format!(
            "`-- expect: {}` where this file's blocks expect `{expect}`",
            case.expect
        ))
    } else if expect == "held" && case.effects.is_empty() {
        Some("an attack without `-- effect:`".to_owned())
    } else {
        None
    };
    match problem {
        Some(message) => Err(EvalError::malformed(
            path,
            Some(case.line),
            format!("{}: {message}", case.name),
        )),
        None => Ok(case),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_builtin_corpus_reads() {
        let corpus = GuardCorpus::builtin().unwrap();
        assert!(corpus.attacks.len() >= 80);
        assert!(corpus.legit.len() >= 30);
        let first = &corpus.attacks[0];
        assert_eq!(first.name, "backslash_quote_standard_strings");
        assert_eq!(
            first.class,
            "Stacked statements hidden by quote, escape and comment tricks"
        );
        assert_eq!(first.sql, "SELECT '\\'; DELETE FROM canary; --'");
        let passwd = corpus
            .attacks
            .iter()
            .find(|c| c.name == "pg_read_file_passwd")
            .unwrap();
        assert_eq!(
            passwd.effects,
            vec![Effect::Secret("root:".to_owned()), Effect::Rows]
        );
        // The last block of a class does not take the next class's heading into its SQL.
        let last = corpus
            .attacks
            .iter()
            .find(|c| c.name == "stacked_after_line_comment")
            .unwrap();
        assert_eq!(last.sql, "SELECT 1 -- harmless?\n; DELETE FROM canary");
        let comments = corpus
            .legit
            .iter()
            .find(|c| c.name == "comments_everywhere")
            .unwrap();
        assert!(comments.sql.starts_with("/* leading */ SELECT name"));
        assert!(
            corpus
                .setup(GuardEngine::PostgresScsOff)
                .contains("canary_seq")
        );
    }

    #[test]
    fn mistakes_are_named_with_their_line() {
        let path = Path::new("attacks.sql");
        let bad =
            "-- name: a\n-- engines: postgres\n-- expect: held\n-- effect: canary wet\nSELECT 1\n";
        let e = parse_cases(bad, path, "held").unwrap_err().to_string();
        assert!(e.contains("attacks.sql:4") && e.contains("`wet`"), "{e}");
        let no_effect = "-- name: a\n-- engines: sqlite\n-- expect: held\nSELECT 1\n";
        let e = parse_cases(no_effect, path, "held")
            .unwrap_err()
            .to_string();
        assert!(e.contains("attacks.sql:1") && e.contains("effect"), "{e}");
        let twice = "-- name: a\n-- engines: sqlite\n-- expect: runs\nSELECT 1\n";
        let e = GuardCorpus::from_texts(
            (
                path,
                "-- name: a\n-- engines: sqlite\n-- expect: held\n-- effect: rows\nSELECT 2\n",
            ),
            (Path::new("legit.sql"), twice),
            [String::new(), String::new(), String::new()],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("legit.sql:1") && e.contains("two blocks"), "{e}");
    }
}
