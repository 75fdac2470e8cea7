//! Least privilege, the third wall: what the database role Steward connected as may do, found out once at
//! connect, and the SQL that creates a read-only role instead.
//!
//! The guard and the engine's read-only mode each stop a write on their own; a role that cannot write, read
//! server files or run programs stops it a third time, whatever a future bug in the first two lets through.

use serde::Serialize;
use sqlx::{MySqlConnection, PgConnection, Row as _};

/// What the connected role may do beyond reading.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Privileges {
    /// The role (PostgreSQL) or account (MySQL) name.
    pub role: String,
    /// The database name.
    pub database: String,
    /// Powers beyond reading, each a short phrase ("is a superuser", "may write rows"); empty when the role
    /// only reads.
    pub powers: Vec<String>,
    /// SQL an administrator can run to create a read-only role for Steward.
    pub read_only_role_sql: String,
}

impl Privileges {
    /// One notice for people, or `None` when the role only reads.
    pub fn notice(&self) -> Option<String> {
        if self.powers.is_empty() {
            return None;
        }
        Some(format!(
            "note: the database role `{}` {}. Steward's guard and read-only transactions stop writes, but a \
             role that can only read is a third wall. To create one, run as an administrator:\n{}",
            self.role,
            join_and(&self.powers),
            self.read_only_role_sql
        ))
    }
}

fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Reads a PostgreSQL role's powers.
pub(crate) async fn postgres(conn: &mut PgConnection) -> Result<Privileges, sqlx::Error> {
    let row = sqlx::query(
        "SELECT current_user::text AS role, current_database()::text AS db, r.rolsuper AS superuser, \
           EXISTS (SELECT 1 FROM pg_roles g WHERE g.rolname = 'pg_read_server_files' \
                   AND pg_has_role(current_user, g.oid, 'MEMBER')) AS read_files, \
           EXISTS (SELECT 1 FROM pg_roles g WHERE g.rolname = 'pg_write_server_files' \
                   AND pg_has_role(current_user, g.oid, 'MEMBER')) AS write_files, \
           EXISTS (SELECT 1 FROM pg_roles g WHERE g.rolname = 'pg_execute_server_program' \
                   AND pg_has_role(current_user, g.oid, 'MEMBER')) AS programs, \
           EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                   WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') \
                     AND n.nspname NOT LIKE 'pg\\_toast%' \
                     AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')) AS writes, \
           has_database_privilege(current_database(), 'CREATE') AS creates \
         FROM pg_roles r WHERE r.rolname = current_user",
    )
    .fetch_one(&mut *conn)
    .await?;
    let flag = |name: &str| row.try_get::<bool, _>(name).unwrap_or(false);
    let role: String = row.try_get("role")?;
    let database: String = row.try_get("db")?;
    let mut powers = Vec::new();
    if flag("superuser") {
        powers.push(
            "is a superuser (it may write rows, read and write server files and run programs)"
                .to_owned(),
        );
    } else {
        if flag("read_files") {
            powers.push("may read server files (pg_read_server_files)".to_owned());
        }
        if flag("write_files") {
            powers.push("may write server files (pg_write_server_files)".to_owned());
        }
        if flag("programs") {
            powers.push("may run programs on the server (pg_execute_server_program)".to_owned());
        }
        if flag("writes") {
            powers.push("may change rows of some tables".to_owned());
        }
        if flag("creates") {
            powers.push("may create schemas in the database".to_owned());
        }
    }
    let db = quote_pg(&database);
    let read_only_role_sql = format!(
        "  CREATE ROLE steward_reader LOGIN PASSWORD 'choose-a-password';\n  \
         GRANT CONNECT ON DATABASE {db} TO steward_reader;\n  \
         GRANT USAGE ON SCHEMA public TO steward_reader;\n  \
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO steward_reader;\n  \
         ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO steward_reader;\n\
         then connect as postgres://steward_reader:…@host/{database}"
    );
    Ok(Privileges {
        role,
        database,
        powers,
        read_only_role_sql,
    })
}

fn quote_pg(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// Reads a MySQL/MariaDB account's powers from `SHOW GRANTS`.
pub(crate) async fn mysql(conn: &mut MySqlConnection) -> Result<Privileges, sqlx::Error> {
    let who =
        sqlx::query("SELECT CAST(CURRENT_USER() AS CHAR) AS who, CAST(DATABASE() AS CHAR) AS db")
            .fetch_one(&mut *conn)
            .await?;
    let role: String = who.try_get("who")?;
    let database: String = who.try_get::<Option<String>, _>("db")?.unwrap_or_default();
    let grants: Vec<String> = sqlx::raw_sql("SHOW GRANTS")
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .filter_map(|row| {
            row.try_get::<String, _>(0).ok().or_else(|| {
                row.try_get::<Vec<u8>, _>(0)
                    .ok()
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
            })
        })
        .collect();
    let powers = mysql_powers(&grants, &database);
    let read_only_role_sql = format!(
        "  CREATE USER 'steward_reader'@'%' IDENTIFIED BY 'choose-a-password';\n  \
         GRANT SELECT ON `{}`.* TO 'steward_reader'@'%';\n\
         then connect as mysql://steward_reader:…@host/{database}",
        database.replace('`', "``")
    );
    Ok(Privileges {
        role,
        database,
        powers,
        read_only_role_sql,
    })
}

/// The powers in `SHOW GRANTS` lines that reach beyond reading, on every database (`*.*`) or this one.
fn mysql_powers(grants: &[String], database: &str) -> Vec<String> {
    let mut powers = Vec::new();
    let mut push = |p: &str| {
        if !powers.iter().any(|q| q == p) {
            powers.push(p.to_owned());
        }
    };
    for grant in grants {
        let upper = grant.to_ascii_uppercase();
        let Some(rest) = upper.strip_prefix("GRANT ") else {
            continue;
        };
        let Some((privileges, on)) = rest.split_once(" ON ") else {
            continue;
        };
        let target = on.split_whitespace().next().unwrap_or("");
        let here = target == "*.*"
            || target
                .trim_matches('`')
                .split('.')
                .next()
                .is_some_and(|db| db.trim_matches('`').eq_ignore_ascii_case(database) || db == "*");
        if !here {
            continue;
        }
        let names: Vec<&str> = privileges.split(',').map(str::trim).collect();
        let all = names.iter().any(|n| n.starts_with("ALL"));
        if all && target == "*.*" {
            push("has all privileges on every database (it may write rows and files)");
            continue;
        }
        if names.contains(&"FILE") {
            push("may read and write files on the server (FILE)");
        }
        if names.contains(&"SUPER") {
            push("has SUPER");
        }
        if all
            || names.iter().any(|n| {
                matches!(
                    *n,
                    "INSERT" | "UPDATE" | "DELETE" | "DROP" | "CREATE" | "ALTER" | "INDEX"
                )
            })
        {
            push("may change rows or tables");
        }
    }
    powers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_grants_are_read() {
        let root = vec![
            "GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION".to_owned(),
            "GRANT PROXY ON ''@'%' TO 'root'@'localhost' WITH GRANT OPTION".to_owned(),
        ];
        assert_eq!(
            mysql_powers(&root, "shop"),
            ["has all privileges on every database (it may write rows and files)"]
        );
        let reader = vec![
            "GRANT USAGE ON *.* TO `r`@`%`".to_owned(),
            "GRANT SELECT ON `shop`.* TO `r`@`%`".to_owned(),
        ];
        assert!(mysql_powers(&reader, "shop").is_empty());
        let writer = vec![
            "GRANT FILE ON *.* TO `w`@`%`".to_owned(),
            "GRANT SELECT, INSERT ON `shop`.* TO `w`@`%`".to_owned(),
            "GRANT DELETE ON `other`.* TO `w`@`%`".to_owned(),
        ];
        assert_eq!(
            mysql_powers(&writer, "shop"),
            [
                "may read and write files on the server (FILE)",
                "may change rows or tables"
            ]
        );
    }
}
