//! The guard for a live database: its dialect, the settings that change how its server reads text, and (on
//! PostgreSQL and MySQL/MariaDB) its function catalog. Built once per [`Database`] and cached.

use sqlx::Row;

use crate::database::{Database, Pools, one_line};
use crate::dialect::Dialect;
use crate::error::SqlError;
use crate::guard::{CatalogFunction, FunctionCatalog, Guard, Origin, ServerSettings};

/// PostgreSQL functions the catalog may refuse: user-defined ones, and volatile parallel-unsafe ones.
const PG_FUNCTIONS: &str = "
SELECT f.proname, f.nspname, f.volatile, f.parallel_unsafe, f.builtin, f.extension, f.row_argument
FROM (
    SELECT p.proname::text AS proname,
           n.nspname::text AS nspname,
           p.provolatile = 'v' AS volatile,
           p.proparallel = 'u' AS parallel_unsafe,
           n.nspname IN ('pg_catalog', 'information_schema') AS builtin,
           EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                   WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
               AS extension,
           p.pronargs = 1 AND EXISTS (SELECT 1 FROM pg_catalog.pg_type t
                                      WHERE t.oid = p.proargtypes[0] AND t.typtype IN ('c', 'p'))
               AS row_argument
    FROM pg_catalog.pg_proc p
    JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
) f
WHERE (NOT f.builtin AND NOT f.extension) OR (f.volatile AND f.parallel_unsafe)";

/// PostgreSQL operators whose function is user-defined, or volatile and parallel-unsafe.
const PG_OPERATORS: &str = "
SELECT DISTINCT o.oprname::text
FROM pg_catalog.pg_operator o
JOIN pg_catalog.pg_proc p ON p.oid = o.oprcode
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE (n.nspname NOT IN ('pg_catalog', 'information_schema')
       AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                       WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'))
   OR (p.provolatile = 'v' AND p.proparallel = 'u')";

/// MySQL/MariaDB stored functions.
const MYSQL_FUNCTIONS: &str = "SELECT CAST(ROUTINE_SCHEMA AS CHAR), CAST(ROUTINE_NAME AS CHAR) FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = 'FUNCTION'";

impl Database {
    /// The guard for this database: its dialect, its server's text settings (PostgreSQL
    /// `standard_conforming_strings`; MySQL/MariaDB `sql_mode`), and its function catalog (PostgreSQL
    /// `pg_proc`, MySQL/MariaDB stored and loadable functions). Read once and cached for the life of the
    /// `Database`; functions created later are only caught by the static rules.
    pub async fn guard(&self) -> Result<Guard, SqlError> {
        self.guard.get_or_try_init(|| build(self)).await.cloned()
    }
}

fn catalog_error(e: &sqlx::Error) -> SqlError {
    SqlError::catalog(format!(
        "reading the server settings and functions for the guard: {}",
        one_line(&e.to_string())
    ))
}

async fn build(db: &Database) -> Result<Guard, SqlError> {
    match &db.pools {
        Pools::Sqlite { .. } => Ok(Guard::new(Dialect::Sqlite).with_settings(ServerSettings {
            standard_conforming_strings: Some(true),
            backslash_escapes: Some(false),
            ansi_quotes: Some(false),
            mariadb: Some(false),
            current_database: None,
        })),
        Pools::Postgres { read: pool, .. } => {
            let scs: String =
                sqlx::query_scalar("SELECT current_setting('standard_conforming_strings')")
                    .fetch_one(pool)
                    .await
                    .map_err(|e| catalog_error(&e))?;
            let rows = sqlx::query(PG_FUNCTIONS)
                .fetch_all(pool)
                .await
                .map_err(|e| catalog_error(&e))?;
            let mut functions = Vec::with_capacity(rows.len());
            for row in &rows {
                let get = |i: usize| row.try_get::<bool, _>(i).unwrap_or(false);
                let origin = if get(4) {
                    Origin::BuiltIn
                } else if get(5) {
                    Origin::Extension
                } else {
                    Origin::User
                };
                functions.push(CatalogFunction {
                    name: row.try_get(0).map_err(|e| catalog_error(&e))?,
                    schema: row.try_get(1).map_err(|e| catalog_error(&e))?,
                    volatile: get(2),
                    parallel_unsafe: get(3),
                    origin,
                    row_argument: get(6),
                });
            }
            let operators: Vec<String> = sqlx::query_scalar(PG_OPERATORS)
                .fetch_all(pool)
                .await
                .map_err(|e| catalog_error(&e))?;
            Ok(Guard::new(Dialect::Postgres)
                .with_settings(ServerSettings::postgres(scs.eq_ignore_ascii_case("on")))
                .with_functions(FunctionCatalog::new(functions, operators)))
        }
        Pools::Mysql { read: pool, .. } => {
            let (mode, current): (String, Option<String>) =
                sqlx::query_as("SELECT CAST(@@sql_mode AS CHAR), CAST(DATABASE() AS CHAR)")
                    .fetch_one(pool)
                    .await
                    .map_err(|e| catalog_error(&e))?;
            let rows: Vec<(String, String)> = sqlx::query_as(MYSQL_FUNCTIONS)
                .fetch_all(pool)
                .await
                .map_err(|e| catalog_error(&e))?;
            let user = |schema: String, name: String| CatalogFunction {
                schema,
                name,
                volatile: true,
                parallel_unsafe: true,
                origin: Origin::User,
                row_argument: false,
            };
            let mut functions: Vec<CatalogFunction> =
                rows.into_iter().map(|(s, n)| user(s, n)).collect();
            // Loadable functions (UDFs); reading mysql.func needs a privilege the account may not have.
            if let Ok(udfs) =
                sqlx::query_scalar::<_, String>("SELECT CAST(name AS CHAR) FROM mysql.func")
                    .fetch_all(pool)
                    .await
            {
                functions.extend(udfs.into_iter().map(|n| user("mysql".to_owned(), n)));
            }
            Ok(Guard::new(Dialect::Mysql)
                .with_settings(
                    ServerSettings::mysql(&mode, db.is_mariadb()).with_current_database(current),
                )
                .with_functions(FunctionCatalog::new(functions, Vec::new())))
        }
    }
}
