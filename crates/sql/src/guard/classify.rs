//! What kind of statement it is: by its parsed form and its first word (as the lexer read it, so that no
//! statement is printed back to text).

use sqlparser::ast::Statement;

use super::{Reason, StatementClass, reason};

/// The class of a top-level statement and the reasons it is not a read. `first_word` is its first word
/// after `EXPLAIN` and its options, uppercase.
pub(super) fn classify(statement: &Statement, first_word: &str) -> (StatementClass, Vec<Reason>) {
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
                    o.iter().any(|opt| {
                        let name = &opt.name.value;
                        name.eq_ignore_ascii_case("analyze") || name.eq_ignore_ascii_case("analyse")
                    })
                });
            let (class, mut reasons) = classify(inner, first_word);
            if analyze {
                reasons.push(reason(
                    "explain_analyze",
                    "EXPLAIN ANALYZE runs the statement; use EXPLAIN without ANALYZE.",
                ));
            }
            (class, reasons)
        }
        _ => {
            let (class, code, what) = keyword_class(first_word);
            (class, vec![refusal(code, &what)])
        }
    }
}

/// For SQL the parser could not read: the class its first word shows, and the refusal when that is not a
/// read.
pub(super) fn lexical_class(first_word: &str) -> (StatementClass, Vec<Reason>) {
    if matches!(
        first_word,
        "SELECT" | "WITH" | "VALUES" | "TABLE" | "(" | ""
    ) {
        return (StatementClass::Other, Vec::new());
    }
    let (class, code, what) = keyword_class(first_word);
    (class, vec![refusal(code, &what)])
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
        | "OPTIMIZE" | "HANDLER" | "SHOW" | "DESCRIBE" | "DESC" | "HELP" | "BINLOG" | "PURGE"
        | "RESTORE" | "BACKUP" => (
            StatementClass::Admin,
            "not_read_only",
            format!("{first} (an administrative statement)"),
        ),
        _ => (StatementClass::Other, "not_read_only", format!("`{first}`")),
    }
}
