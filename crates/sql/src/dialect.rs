//! SQL dialects: how each engine is parsed, quoted and named.

use serde::{Deserialize, Serialize};

/// The SQL dialect of an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Dialect {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
    /// MySQL and MariaDB.
    Mysql,
}

impl Dialect {
    /// Parses `sqlite`, `postgres` (or `postgresql`, `pg`) and `mysql` (or `mariadb`).
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "sqlite" | "sqlite3" => Some(Self::Sqlite),
            "postgres" | "postgresql" | "pg" => Some(Self::Postgres),
            "mysql" | "mariadb" => Some(Self::Mysql),
            _ => None,
        }
    }

    /// The dialect's name as the model should read it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "SQLite",
            Self::Postgres => "PostgreSQL",
            Self::Mysql => "MySQL/MariaDB",
        }
    }

    /// The sqlparser dialect.
    pub(crate) fn parser(self) -> Box<dyn sqlparser::dialect::Dialect> {
        match self {
            Self::Sqlite => Box::new(sqlparser::dialect::SQLiteDialect {}),
            Self::Postgres => Box::new(sqlparser::dialect::PostgreSqlDialect {}),
            Self::Mysql => Box::new(sqlparser::dialect::MySqlDialect {}),
        }
    }

    /// Quotes an identifier.
    pub fn quote(self, ident: &str) -> String {
        match self {
            Self::Mysql => format!("`{}`", ident.replace('`', "``")),
            _ => format!("\"{}\"", ident.replace('"', "\"\"")),
        }
    }

    /// Quotes a table name as the catalog writes it: PostgreSQL names outside the current schema are
    /// `schema.table`, and each part is quoted.
    pub fn quote_table(self, name: &str) -> String {
        match (self, name.split_once('.')) {
            (Self::Postgres, Some((schema, table))) => {
                format!("{}.{}", self.quote(schema), self.quote(table))
            }
            _ => self.quote(name),
        }
    }

    /// SQL written with `?` placeholders, in this dialect's form (`$1`, `$2`, … for PostgreSQL).
    pub fn placeholders(self, sql: &str) -> String {
        match self {
            Self::Postgres => numbered(sql),
            _ => sql.to_owned(),
        }
    }

    /// The placeholder for the `n`th (1-based) bound parameter.
    pub fn placeholder(self, n: usize) -> String {
        match self {
            Self::Postgres => format!("${n}"),
            Self::Sqlite => format!("?{n}"),
            Self::Mysql => "?".to_owned(),
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
            Self::Mysql => "mysql",
        })
    }
}

/// `?` → `$1`, `$2`, … (outside quoted text), for PostgreSQL.
pub(crate) fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    let mut quote: Option<char> = None;
    for c in sql.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '?') => {
                n += 1;
                out.push_str(&format!("${n}"));
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_outside_quotes() {
        assert_eq!(
            numbered("SELECT * FROM t WHERE a = ? AND b = '?' AND c = ?"),
            "SELECT * FROM t WHERE a = $1 AND b = '?' AND c = $2"
        );
    }
}
