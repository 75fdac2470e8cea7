//! Names in generated SQL and YAML: identifiers quoted only when the dialect needs it, names made safe for
//! tools and parameters, and YAML scalars that read back as the same text.

use steward_sql::Dialect;

/// Words reserved in SQLite, PostgreSQL or MySQL/MariaDB (or in standard SQL), which an identifier may only
/// be when quoted.
#[rustfmt::skip]
const RESERVED: &[&str] = &[
    "abort", "add", "all", "alter", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric",
    "attach", "authorization", "autoincrement", "before", "begin", "between", "binary", "both", "by", "call",
    "cascade", "case", "cast", "change", "char", "check", "collate", "column", "commit", "condition",
    "conflict", "constraint", "continue", "convert", "create", "cross", "current", "current_catalog",
    "current_date", "current_role", "current_schema", "current_time", "current_timestamp", "current_user",
    "cursor", "database", "databases", "default", "deferrable", "deferred", "delete", "desc", "describe",
    "detach", "distinct", "div", "do", "drop", "each", "else", "elseif", "end", "escape", "except", "exclusive",
    "exists", "explain", "false", "fetch", "filter", "for", "force", "foreign", "freeze", "from", "full",
    "function", "generated", "glob", "grant", "group", "groups", "having", "if", "ignore", "ilike", "immediate",
    "in", "index", "initially", "inner", "insert", "instead", "interval", "intersect", "into", "is", "isnull",
    "join", "key", "keys", "kill", "lateral", "leading", "leave", "left", "like", "limit", "load", "localtime",
    "localtimestamp", "lock", "loop", "match", "natural", "no", "not", "notnull", "null", "nulls", "of",
    "offset", "on", "only", "option", "or", "order", "out", "outer", "over", "overlaps", "partition", "placing",
    "plan", "pragma", "primary", "procedure", "purge", "query", "raise", "range", "read", "recursive",
    "references", "regexp", "reindex", "release", "rename", "repeat", "replace", "require", "restrict",
    "return", "returning", "revoke", "right", "rlike", "rollback", "row", "rows", "savepoint", "schema",
    "select", "session_user", "set", "show", "similar", "some", "symmetric", "table", "temp", "temporary",
    "then", "to", "trailing", "transaction", "trigger", "true", "union", "unique", "unlock", "until", "update",
    "usage", "use", "user", "using", "vacuum", "values", "variadic", "verbose", "view", "virtual", "when",
    "where", "while", "window", "with", "without", "write", "xor",
    // MySQL 8 and MariaDB: window functions, types and a few more that are reserved there.
    "bigint", "cume_dist", "decimal", "dense_rank", "double", "first_value", "float", "int", "integer", "lag",
    "last_value", "lead", "lines", "nth_value", "ntile", "numeric", "percent_rank", "rank", "real",
    "row_number", "smallint", "sql", "system", "tinyint", "varchar",
];

/// An identifier as SQL should write it: as it is when the dialect reads it back unchanged without quotes
/// (letters, digits and `_`, not starting with a digit, not a reserved word, and on PostgreSQL, which folds
/// unquoted names to lower case, no capitals), else quoted for the dialect.
pub(super) fn ident(dialect: Dialect, name: &str) -> String {
    let mut chars = name.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !(dialect == Dialect::Postgres && name.chars().any(|c| c.is_ascii_uppercase()))
        && !RESERVED.contains(&name.to_ascii_lowercase().as_str());
    if plain {
        name.to_owned()
    } else {
        dialect.quote(name)
    }
}

/// A table name as the catalog writes it (PostgreSQL: `schema.table` outside the current schema), each part
/// quoted when it needs it.
pub(super) fn table(dialect: Dialect, name: &str) -> String {
    match (dialect, name.split_once('.')) {
        (Dialect::Postgres, Some((schema, table))) => {
            format!("{}.{}", ident(dialect, schema), ident(dialect, table))
        }
        _ => ident(dialect, name),
    }
}

/// A name made of lower-case ASCII letters, digits and single `_` (other characters become `_`), at most
/// `max` long; `fallback` when nothing is left, and `_` before a leading digit.
pub(super) fn snake(name: &str, max: usize, fallback: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let mut out = out.trim_end_matches('_').to_owned();
    if out.is_empty() {
        out = fallback.to_owned();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out.truncate(max);
    out.trim_end_matches('_').to_owned()
}

/// Text as a YAML scalar that reads back as exactly that text: single-quoted (`''` for a quote), or, when it
/// holds control characters, double-quoted with JSON's escapes (which YAML shares).
pub(super) fn yaml_str(text: &str) -> String {
    if text.chars().any(char::is_control) {
        serde_json::Value::String(text.to_owned()).to_string()
    } else {
        format!("'{}'", text.replace('\'', "''"))
    }
}

/// A mapping key: plain when it is a simple lower-case name YAML reads as a string, else quoted.
pub(super) fn yaml_key(key: &str) -> String {
    const SPECIAL: &[&str] = &["y", "n", "yes", "no", "on", "off", "true", "false", "null"];
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !SPECIAL.contains(&key);
    if plain { key.to_owned() } else { yaml_str(key) }
}

/// Text as one word for a POSIX shell: as it is when it is safe, else in single quotes.
pub(super) fn shell_word(text: &str) -> String {
    let safe = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c));
    if safe {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted_only_when_needed() {
        assert_eq!(ident(Dialect::Sqlite, "customers"), "customers");
        assert_eq!(ident(Dialect::Sqlite, "Customers"), "Customers");
        assert_eq!(ident(Dialect::Postgres, "Customers"), "\"Customers\"");
        assert_eq!(ident(Dialect::Postgres, "order"), "\"order\"");
        assert_eq!(ident(Dialect::Mysql, "order"), "`order`");
        assert_eq!(ident(Dialect::Mysql, "a`b c"), "`a``b c`");
        assert_eq!(ident(Dialect::Sqlite, "Order Lines"), "\"Order Lines\"");
        assert_eq!(ident(Dialect::Sqlite, "say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(ident(Dialect::Sqlite, "2fa"), "\"2fa\"");
        assert_eq!(ident(Dialect::Sqlite, "café"), "\"café\"");
        assert_eq!(
            table(Dialect::Postgres, "Sales.Orders"),
            "\"Sales\".\"Orders\""
        );
        assert_eq!(table(Dialect::Postgres, "sales.orders"), "sales.orders");
        assert_eq!(table(Dialect::Sqlite, "a.b"), "\"a.b\"");
    }

    #[test]
    fn names_become_snake_case() {
        assert_eq!(snake("Order Lines", 64, "t"), "order_lines");
        assert_eq!(snake("sales.Orders", 64, "t"), "sales_orders");
        assert_eq!(snake("2fa", 64, "t"), "_2fa");
        assert_eq!(snake("☕", 64, "t"), "t");
        assert_eq!(snake("abc_def", 5, "t"), "abc_d");
        assert_eq!(snake("abc_def", 4, "t"), "abc");
    }

    #[test]
    fn yaml_scalars_read_back_as_the_same_text() {
        for text in [
            "plain",
            "it's",
            "a: b # c",
            "${X}",
            "line\nbreak",
            "\"q\"",
            "yes",
            "",
        ] {
            let yaml = format!("k: {}\n", yaml_str(text));
            let back: std::collections::BTreeMap<String, String> =
                serde_yaml::from_str(&yaml).unwrap();
            assert_eq!(back["k"], text, "{yaml}");
        }
        assert_eq!(yaml_key("name"), "name");
        assert_eq!(yaml_key("yes"), "'yes'");
        assert_eq!(yaml_key("Name"), "'Name'");
        assert_eq!(shell_word("steward.yaml"), "steward.yaml");
        assert_eq!(shell_word("{\"a\": \"O'B\"}"), "'{\"a\": \"O'\\''B\"}'");
    }
}
