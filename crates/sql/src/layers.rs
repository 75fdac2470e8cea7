//! The crate's one layering rule, checked: **the pure half imports no driver.**
//!
//! steward-sql has two halves. The pure half is data and checks that hold no connection: `dialect`, `error`,
//! `catalog` (the model), `query` (parameters, limits, results), `guard`, `context` and `enrich`. The driver
//! half talks to servers through sqlx: `database`, `session`, `privileges`, `introspect`, `execute`, `write`,
//! and `tools` on top of both. Driver modules may use pure modules, never the reverse; a type both halves
//! need belongs in the pure half.
//!
//! The test reads the pure modules' sources (every `.rs` file under them, so a new file is covered without
//! being listed) and fails on `sqlx` or `libsqlite3_sys`, on a `crate::` path into any module that is not
//! pure, and on the driver's types by name.

use std::path::{Path, PathBuf};

/// The pure modules, as paths under `src/`: a file, or a directory whose every file is pure.
const PURE: &[&str] = &[
    "dialect.rs",
    "error.rs",
    "catalog.rs",
    "query",
    "guard",
    "context",
    "enrich.rs",
];

/// The modules a pure module may name after `crate::`.
const PURE_MODULES: &[&str] = &[
    "dialect", "error", "catalog", "query", "guard", "context", "enrich",
];

/// Driver crates, and driver types however they are reached (`super::super::Database` included).
const FORBIDDEN_WORDS: &[&str] = &[
    "sqlx",
    "libsqlite3_sys",
    "Database",
    "Pools",
    "WriteTx",
    "Lease",
    "SqlToolkit",
];

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .map(|entry| entry.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        entries.sort();
        for entry in entries {
            rust_files(&entry, out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_owned());
    }
}

/// The code of a line: what comes before a `//` (doc comments and comments may name anything).
fn code(line: &str) -> &str {
    line.split_once("//").map_or(line, |(code, _)| code)
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `word` occurs in `text` as a whole identifier.
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// What is wrong with one line of pure code, if anything.
fn violations(code: &str) -> Vec<String> {
    let mut found: Vec<String> = FORBIDDEN_WORDS
        .iter()
        .filter(|w| has_word(code, w))
        .map(|w| format!("names `{w}`"))
        .collect();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let module: String = rest.chars().take_while(|c| is_ident(*c)).collect();
        if module.is_empty() {
            found.push("uses a grouped `crate::{…}` import; name each module's path".to_owned());
        } else if !PURE_MODULES.contains(&module.as_str()) {
            found.push(format!(
                "uses `crate::{module}`, which is not a pure module"
            ));
        }
    }
    found
}

#[test]
fn pure_modules_import_no_driver() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for module in PURE {
        let path = src.join(module);
        assert!(
            path.exists(),
            "{} is listed as pure but does not exist",
            path.display()
        );
        rust_files(&path, &mut files);
    }
    assert!(
        files.iter().any(|f| f.ends_with("guard/walker.rs")),
        "the walk missed files: {files:?}"
    );
    let mut problems = Vec::new();
    for file in &files {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (n, line) in text.lines().enumerate() {
            for problem in violations(code(line)) {
                let shown = file.strip_prefix(&src).unwrap_or(file).display();
                problems.push(format!("src/{shown}:{}: {problem}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "the pure half of steward-sql must not depend on the driver half (see src/layers.rs); move the shared \
         type into a pure module instead:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_check_catches_what_it_should() {
    assert!(!violations("use sqlx::Row;").is_empty());
    assert!(!violations("use crate::database::one_line;").is_empty());
    assert!(!violations("use crate::execute::Collector;").is_empty());
    assert!(!violations("use crate::{catalog::Catalog, database::Database};").is_empty());
    assert!(!violations("fn f(db: &super::super::Database) {}").is_empty());
    assert!(!violations("    crate::write::numbered(sql)").is_empty());
    assert!(violations("use crate::catalog::{Catalog, Table};").is_empty());
    assert!(violations("use crate::dialect::Dialect; let s = \"database\";").is_empty());
    assert!(violations(code("x // see crate::Database::guard")).is_empty());
    assert!(violations("let databases = 1;").is_empty());
}
