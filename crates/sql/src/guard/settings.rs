//! The server settings that change how SQL text is read: where a string, a quoted name or a comment ends.
//! A live database reports them ([`crate::Database::guard`]); offline they are unknown, and the guard refuses
//! text that would be read differently under the possible settings.

/// How the server reads SQL text, as far as it is known. `None` means unknown: the guard then considers every
/// possible value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerSettings {
    /// PostgreSQL `standard_conforming_strings`: when off, a backslash escapes the next character inside
    /// `'…'` strings too (not only inside `E'…'`).
    pub standard_conforming_strings: Option<bool>,
    /// MySQL/MariaDB: a backslash escapes the next character inside strings (false under the
    /// `NO_BACKSLASH_ESCAPES` sql_mode).
    pub backslash_escapes: Option<bool>,
    /// MySQL/MariaDB `ANSI_QUOTES` sql_mode: `"x"` is a name, not a string.
    pub ansi_quotes: Option<bool>,
    /// MariaDB rather than MySQL.
    pub mariadb: Option<bool>,
    /// The database a MySQL/MariaDB connection starts in: unqualified table names resolve there.
    pub current_database: Option<String>,
}

impl ServerSettings {
    /// Nothing known: the offline default.
    pub fn unknown() -> Self {
        Self::default()
    }

    /// PostgreSQL with `standard_conforming_strings` as given.
    pub fn postgres(standard_conforming_strings: bool) -> Self {
        Self {
            standard_conforming_strings: Some(standard_conforming_strings),
            ..Self::default()
        }
    }

    /// MySQL or MariaDB with the flags of its `@@sql_mode` (a comma-separated list, as the server reports it).
    pub fn mysql(sql_mode: &str, mariadb: bool) -> Self {
        let has = |flag: &str| {
            sql_mode
                .split(',')
                .any(|m| m.trim().eq_ignore_ascii_case(flag))
        };
        Self {
            backslash_escapes: Some(!has("NO_BACKSLASH_ESCAPES")),
            ansi_quotes: Some(has("ANSI_QUOTES") || has("ANSI")),
            mariadb: Some(mariadb),
            ..Self::default()
        }
    }

    /// The same settings with the connection's current database.
    pub fn with_current_database(mut self, name: Option<String>) -> Self {
        self.current_database = name;
        self
    }
}
