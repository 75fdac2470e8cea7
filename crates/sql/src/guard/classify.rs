//! What kind of statement it is: by its parsed form, or, for SQL the parser could not read, by its words.

use sqlparser::ast::Statement;
use sqlparser::tokenizer::{Token, Tokenizer};

use super::functions;
use super::{Reason, StatementClass, reason};
use crate::dialect::Dialect;

/// The class of a top-level statement and the reasons it is not a read.
pub(super) fn classify(statement: &Statement) -> (StatementClass, Vec<Reason>) {
    match statement {
        Statement::Query(_) => (StatementClass::Read, Vec::new()),
        Statement::Explain {
            analyze,
            statement: inner,
            options,
            ..
        } => {
            let analyze = *analyze
                || options.as_ref().is_some_and(|o| {
                    o.iter()
                        .any(|opt| opt.name.value.eq_ignore_ascii_case("analyze"))
                });
            let (class, mut reasons) = classify(inner);
            if analyze {
                reasons.push(reason(
                    "explain_analyze",
                    "EXPLAIN ANALYZE runs the statement; use EXPLAIN without ANALYZE.",
                ));
            }
            (class, reasons)
        }
        other => {
            let text = other.to_string();
            let first = text
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_ascii_uppercase();
            let (class, code, what) = keyword_class(&first);
            (class, vec![refusal(code, &what)])
        }
    }
}

fn refusal(code: &str, what: &str) -> Reason {
    reason(
        code,
        format!(
            "{what} is not allowed: only one SELECT, WITH, VALUES or EXPLAIN statement may run."
        ),
    )
}

/// The class, reason code and description of a statement by its first keyword.
fn keyword_class(first: &str) -> (StatementClass, &'static str, String) {
    match first {
        "INSERT" | "UPDATE" | "DELETE" | "MERGE" | "REPLACE" | "UPSERT" => (
            StatementClass::Write,
            "not_read_only",
            format!("{first} (it changes data)"),
        ),
        "CREATE" | "ALTER" | "DROP" | "TRUNCATE" | "RENAME" | "COMMENT" => (
            StatementClass::Ddl,
            "not_read_only",
            format!("{first} (it changes the schema)"),
        ),
        "COPY" | "UNLOAD" => (
            StatementClass::Admin,
            "copy",
            "COPY (it reads or writes files)".to_owned(),
        ),
        "SET" | "RESET" => (
            StatementClass::Admin,
            "set",
            "SET (it changes the session)".to_owned(),
        ),
        "BEGIN" | "START" | "COMMIT" | "ROLLBACK" | "SAVEPOINT" | "RELEASE" | "END" | "ABORT" => (
            StatementClass::Admin,
            "transaction_control",
            "Transaction control".to_owned(),
        ),
        "ATTACH" | "DETACH" => (
            StatementClass::Admin,
            "attach",
            "ATTACH (it opens other databases)".to_owned(),
        ),
        "PRAGMA" => (
            StatementClass::Admin,
            "pragma",
            "PRAGMA (it changes or reveals settings)".to_owned(),
        ),
        "GRANT" | "REVOKE" | "KILL" | "LOAD" | "LOCK" | "UNLOCK" | "VACUUM" | "ANALYZE"
        | "CALL" | "EXECUTE" | "EXEC" | "PREPARE" | "DEALLOCATE" | "DECLARE" | "FETCH"
        | "CLOSE" | "LISTEN" | "NOTIFY" | "UNLISTEN" | "DISCARD" | "REINDEX" | "CLUSTER"
        | "CHECKPOINT" | "USE" | "FLUSH" | "INSTALL" | "UNINSTALL" | "DO" | "SHUTDOWN"
        | "OPTIMIZE" | "HANDLER" => (
            StatementClass::Admin,
            "not_read_only",
            format!("{first} (an administrative statement)"),
        ),
        _ => (StatementClass::Other, "not_read_only", format!("`{first}`")),
    }
}

/// For SQL the parser could not read: what its words show (a write, a locking read, a file, a forbidden
/// function), so the refusal still says why.
pub(super) fn lexical_reasons(dialect: Dialect, sql: &str) -> (StatementClass, Vec<Reason>) {
    let Ok(tokens) = Tokenizer::new(dialect.parser().as_ref(), sql).tokenize() else {
        return (StatementClass::Other, Vec::new());
    };
    let words: Vec<(String, bool)> = tokens
        .iter()
        .filter_map(|t| match t {
            Token::Word(w) => Some((w.value.to_ascii_uppercase(), w.quote_style.is_some())),
            Token::LParen => Some(("(".to_owned(), false)),
            _ => None,
        })
        .collect();
    let mut class = StatementClass::Other;
    let mut reasons = Vec::new();
    if let Some((first, false)) = words.first()
        && !matches!(
            first.as_str(),
            "SELECT" | "WITH" | "VALUES" | "EXPLAIN" | "("
        )
    {
        let (c, code, what) = keyword_class(first);
        class = c;
        reasons.push(refusal(code, &what));
    }
    for window in words.windows(2) {
        let (a, b) = (&window[0].0, &window[1].0);
        match (a.as_str(), b.as_str()) {
            ("FOR", "UPDATE" | "SHARE" | "NO" | "KEY") | ("LOCK", "IN") => reasons.push(reason(
                "locking_read",
                "Locking reads (FOR UPDATE / FOR SHARE / LOCK IN SHARE MODE) are not allowed; remove that clause.",
            )),
            ("INTO", "OUTFILE" | "DUMPFILE") => reasons.push(reason(
                "select_into",
                "SELECT … INTO OUTFILE/DUMPFILE writes a file; remove INTO.",
            )),
            (name, "(") if !window[0].1 && functions::forbidden(dialect, name) => reasons.push(reason(
                "forbidden_function",
                format!("Function `{}` is not allowed: it has side effects or reaches files, the network or the server.", name.to_ascii_lowercase()),
            )),
            _ => {}
        }
    }
    reasons.dedup();
    (class, reasons)
}
