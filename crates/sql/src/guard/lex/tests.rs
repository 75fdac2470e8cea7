//! The lexers against the engines' rules: where strings, names, comments and statements end.

use super::*;

fn mode(dialect: Dialect, backslash: bool, ansi_quotes: bool) -> Mode {
    Mode {
        dialect,
        backslash,
        ansi_quotes,
    }
}

/// The kinds and texts of the tokens that are not comments.
fn code(sql: &str, mode: Mode) -> Vec<(Kind, String)> {
    lex(sql, mode)
        .code()
        .map(|t| (t.kind, t.text(sql).to_owned()))
        .collect()
}

fn semicolons(sql: &str, mode: Mode) -> usize {
    lex(sql, mode)
        .code()
        .filter(|t| t.is_punct(sql, ";"))
        .count()
}

fn canon(sql: &str, mode: Mode) -> String {
    let lexed = lex(sql, mode);
    canonical(sql, &lexed.tokens).into_owned()
}

const PG: Mode = Mode {
    dialect: Dialect::Postgres,
    backslash: false,
    ansi_quotes: false,
};
const MY: Mode = Mode {
    dialect: Dialect::Mysql,
    backslash: true,
    ansi_quotes: false,
};
const LITE: Mode = Mode {
    dialect: Dialect::Sqlite,
    backslash: false,
    ansi_quotes: false,
};

#[test]
fn backslash_quote_ends_a_standard_string_but_not_an_escaped_one() {
    let sql = r"SELECT '\'; DROP TABLE t; --'";
    assert_eq!(semicolons(sql, PG), 2, "scs on: the string is '\\'");
    assert_eq!(semicolons(sql, mode(Dialect::Postgres, true, false)), 0);
    assert_eq!(semicolons(sql, LITE), 2);
    assert_eq!(semicolons(sql, MY), 0);
    assert_eq!(semicolons(sql, mode(Dialect::Mysql, false, false)), 2);
    // E'' always escapes.
    assert_eq!(semicolons(r"SELECT E'\'; x'", PG), 0);
    assert_eq!(canon(r"SELECT E'a\'b\\'", PG), "SELECT 'a''b\\'");
}

#[test]
fn mysql_double_backslash_ends_the_string() {
    let sql = r"SELECT '\\'; DROP TABLE t; -- '";
    assert_eq!(semicolons(sql, MY), 2);
    assert_eq!(
        canon(r"SELECT 'it\'s', 'a\\b'", MY),
        r"SELECT 'it''s', 'a\b'"
    );
}

#[test]
fn postgres_comments_nest_and_end_operators() {
    let sql = "SELECT 1 /* a /* b */ ; c */ + 1";
    assert_eq!(semicolons(sql, PG), 0);
    assert_eq!(semicolons(sql, MY), 1, "MySQL comments do not nest");
    assert_eq!(semicolons(sql, LITE), 1);
    assert_eq!(
        code("SELECT 2 *-- c\n3", PG),
        [
            (Kind::Word, "SELECT".into()),
            (Kind::Number, "2".into()),
            (Kind::Op, "*".into()),
            (Kind::Number, "3".into())
        ]
    );
    assert!(!lex("SELECT 1 /* open", PG).problems.is_empty());
    assert!(lex("SELECT 1 /* open", LITE).problems.is_empty());
}

#[test]
fn dollar_quotes_and_identifiers_with_dollars() {
    let sql = "SELECT $x$ ; ' $y$ $x$, a$b$c FROM t";
    assert_eq!(semicolons(sql, PG), 0);
    assert_eq!(canon(sql, PG), "SELECT ' ; '' $y$ ', \"a$b$c\" FROM t");
    assert_eq!(
        code("SELECT $1", PG),
        [(Kind::Word, "SELECT".into()), (Kind::Param, "$1".into())]
    );
    // A dollar quote may follow a number directly.
    assert_eq!(semicolons("SELECT 1$a$; x$a$", PG), 0);
}

#[test]
fn strings_continue_over_a_newline_in_their_mode() {
    // The continuation of an E'' string is escaped too.
    let sql = "SELECT E'a'\n'\\'; DROP TABLE t; --'";
    assert_eq!(semicolons(sql, PG), 0);
    assert_eq!(canon(sql, PG), "SELECT 'a''; DROP TABLE t; --'");
    // Without a newline, two strings (a syntax error in PostgreSQL).
    assert_eq!(code("SELECT 'a' 'b'", PG).len(), 3);
    assert_eq!(code("SELECT 'a' -- c\n 'b'", PG).len(), 2);
    assert_eq!(code("SELECT 'a' /* c */\n'b'", PG).len(), 3);
}

#[test]
fn unicode_names_and_strings_are_decoded() {
    assert_eq!(
        canon(r#"SELECT U&"pg\005fsleep"(3)"#, PG),
        r#"SELECT "pg_sleep"(3)"#
    );
    let spaced = canon(r#"SELECT u&"pg!005fsleep" /* x */ UESCAPE '!' (3)"#, PG);
    assert_eq!(
        spaced.split_whitespace().collect::<Vec<_>>().join(" "),
        "SELECT \"pg_sleep\" (3)"
    );
    assert_eq!(canon(r"SELECT U&'\0041\+000042\\'", PG), r"SELECT 'AB\'");
    assert_eq!(canon(r"SELECT U&'\D83D\DE00'", PG), "SELECT '😀'");
    assert!(!lex(r"SELECT U&'\00'", PG).problems.is_empty());
    assert!(!lex(r"SELECT U&'x' UESCAPE 'ab'", PG).problems.is_empty());
    // Without standard_conforming_strings the engine refuses U&'…'.
    assert!(
        !lex(r"SELECT U&'x'", mode(Dialect::Postgres, true, false))
            .problems
            .is_empty()
    );
    // `u & "x"` with spaces is an operator, as the engine reads it.
    assert_eq!(canon(r#"SELECT u & "x""#, PG), r#"SELECT u & "x""#);
}

#[test]
fn mysql_comments_and_quotes() {
    assert_eq!(semicolons("SELECT 1 # ;\n", MY), 0);
    assert_eq!(semicolons("SELECT 1 # ;\n", PG), 1);
    assert_eq!(
        code("SELECT 1--1", MY).len(),
        5,
        "-- without a space is two minuses"
    );
    assert_eq!(canon("SELECT 1--1", MY), "SELECT 1- -1");
    assert_eq!(semicolons("SELECT 1 --\t;\n", MY), 0);
    assert_eq!(semicolons("SELECT 1 --", MY), 0);
    assert_eq!(canon("SELECT \"a'b\"", MY), "SELECT 'a''b'");
    assert_eq!(
        canon("SELECT \"a\"\"b\"", mode(Dialect::Mysql, true, true)),
        "SELECT `a\"b`"
    );
    assert_eq!(canon("SELECT `a``b`", MY), "SELECT `a``b`");
    let lexed = lex("SELECT 1 /*! ; DROP TABLE t */", MY);
    assert!(
        lexed
            .problems
            .iter()
            .any(|p| p.code == "executable_comment")
    );
    let lexed = lex("SELECT 1 /*M!100000 , SLEEP(3) */", MY);
    assert!(
        lexed
            .problems
            .iter()
            .any(|p| p.code == "executable_comment")
    );
    let lexed = lex("SELECT /*+ SET_VAR(sql_mode='') */ 1", MY);
    assert!(lexed.problems.iter().any(|p| p.code == "optimizer_hint"));
    // Inside a string it is text.
    assert!(lex("SELECT '/*! x */'", MY).problems.is_empty());
    let lexed = lex("SELECT @a := 1", MY);
    assert!(
        lexed
            .problems
            .iter()
            .any(|p| p.code == "variable_assignment")
    );
    assert_eq!(
        canon("SELECT @'a;b', @@sql_mode", MY),
        "SELECT @v     , @@sql_mode"
    );
}

#[test]
fn sqlite_variables_brackets_and_backticks() {
    // SQLite reads `@a(')` as one variable: the `;` after it ends a statement.
    let sql = "SELECT @a(');DELETE FROM t;--')";
    assert_eq!(semicolons(sql, LITE), 2);
    assert_eq!(canon(sql, LITE), "SELECT ?;DELETE FROM t;    ");
    assert_eq!(
        canon("SELECT [a b], `c``d` FROM t", LITE),
        "SELECT \"a b\", \"c`d\" FROM t"
    );
    assert_eq!(canon("SELECT $a::b(x), ?3, :n", LITE), "SELECT ?, ?3, ?");
    assert_eq!(semicolons("SELECT 1 /**/; /*/ ; */ 2", LITE), 1);
    assert!(!lex("SELECT X'0g'", LITE).problems.is_empty());
    assert!(lex("SELECT X'0A'", LITE).problems.is_empty());
}

#[test]
fn unusual_words_are_quoted_in_the_canonical_text() {
    assert_eq!(canon("SELECT café FROM t", PG), "SELECT \"café\" FROM t");
    assert_eq!(canon("SELECT Abc$1 FROM t", PG), "SELECT \"abc$1\" FROM t");
    assert_eq!(canon("SELECT café FROM t", LITE), "SELECT \"café\" FROM t");
    assert_eq!(canon("SELECT 1abc FROM t", MY), "SELECT `1abc` FROM t");
    assert_eq!(
        canon("SELECT a, b FROM t WHERE c = 'x'", PG),
        "SELECT a, b FROM t WHERE c = 'x'"
    );
}

#[test]
fn shapes_differ_only_when_a_backslash_moves_a_string_end() {
    let same = |sql: &str, d: Dialect, a: bool, b: bool| {
        lex(sql, mode(d, a, false)).same_shape(&lex(sql, mode(d, b, false)))
    };
    assert!(same(
        r"SELECT 'a\nb' LIKE '%\_%'",
        Dialect::Mysql,
        true,
        false
    ));
    assert!(!same(r"SELECT 'a\'b'", Dialect::Mysql, true, false));
    assert!(!same(r"SELECT 'C:\'", Dialect::Postgres, false, true));
    assert!(same(r"SELECT 'C:\x'", Dialect::Postgres, false, true));
}
