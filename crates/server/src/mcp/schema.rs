//! The database schema as MCP resources: `schema://{database}` lists the tables, `schema://{database}/{table}`
//! describes one (columns with types, keys, foreign keys, comments). A caller sees only what its role may read
//! with SQL (its `sql.read` tables and columns), and no sample values or row counts of tables it sees filtered:
//! a schema is structure, not data.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use steward_core::Principal;
use steward_sql::{Catalog, Database, Table, TableKind, describe_tables, visible_catalog};

use super::McpServer;

/// The scheme of schema resources.
const SCHEME: &str = "schema://";

/// The SQL tools that read the schema or the data: a role that may use none of them (nor the analyst) is not
/// shown the schema either.
const SQL_TOOLS: &[&str] = &[
    "list_tables",
    "describe_tables",
    "run_sql",
    "query_table",
    "ask_database",
];

/// The databases `principal` may see the schema of, by name: the config's `databases`, and the business
/// database as `default` when the config does not name it.
fn databases(server: &McpServer, principal: &Principal) -> Vec<(String, Arc<Database>)> {
    let app = &server.app;
    let policy = app.policy(principal);
    let may_read = SQL_TOOLS.iter().any(|t| policy.allows_tool(t))
        || (app.agent_def("analyst").is_some() && app.may_run(principal, "analyst").is_ok());
    if !may_read {
        return Vec::new();
    }
    let mut out: Vec<(String, Arc<Database>)> = app
        .config()
        .databases
        .keys()
        .filter_map(|name| app.database(name).map(|db| (name.clone(), db.clone())))
        .collect();
    if let Some(business) = app.business()
        && !out.iter().any(|(_, db)| Arc::ptr_eq(db, &business.db))
    {
        let name = if out.iter().any(|(n, _)| n == "default") {
            "business"
        } else {
            "default"
        };
        out.push((name.to_owned(), business.db.clone()));
    }
    out
}

/// The catalog of `db` as `principal` may see it (see [`visible_catalog`]): only the tables and columns its
/// role may read, without row counts where its rows are filtered; and here, a schema being structure, without
/// any sample value.
async fn catalog_for(
    server: &McpServer,
    principal: &Principal,
    db: &Database,
) -> Result<Catalog, String> {
    let mut catalog = db.catalog().await.map_err(|e| e.to_string())?;
    // The business database's tables and columns carry the team's descriptions, as the agents see them.
    let business = server
        .app
        .business()
        .is_some_and(|b| std::ptr::eq(Arc::as_ptr(&b.db), db));
    if business && let Some(knowledge) = server.app.knowledge() {
        catalog = Arc::new(knowledge.annotate(&catalog));
    }
    let access = steward_app::roles::access_fn(&server.app.config().roles)
        .of(principal, db.dialect())
        // A role whose access cannot be worked out reads nothing.
        .map_err(|why| format!("no tables may be read: {why}"))?;
    let mut catalog = visible_catalog(&catalog, access.as_ref()).into_owned();
    for table in &mut catalog.tables {
        for column in &mut table.columns {
            column.samples.clear();
        }
    }
    Ok(catalog)
}

/// `%`-encodes a name for a URI path segment.
fn encode(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Undoes [`encode`]; `None` for a malformed escape or text that is not UTF-8.
fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn database_uri(name: &str) -> String {
    format!("{SCHEME}{}", encode(name))
}

fn table_uri(database: &str, table: &str) -> String {
    format!("{SCHEME}{}/{}", encode(database), encode(table))
}

/// The schema resources `principal` may read: each database, then each of its tables.
pub(super) async fn list(server: &McpServer, principal: &Principal) -> Vec<Resource> {
    let mut out = Vec::new();
    for (name, db) in databases(server, principal) {
        let Ok(catalog) = catalog_for(server, principal, &db).await else {
            continue;
        };
        out.push(
            Resource::new(database_uri(&name), name.clone())
                .with_title(format!("Tables of the database {name}"))
                .with_description(format!(
                    "The {} tables and views of the {} database `{name}` you may read, with row estimates \
                     and comments.",
                    catalog.tables.len(),
                    catalog.dialect.name()
                ))
                .with_mime_type("text/plain"),
        );
        for table in &catalog.tables {
            let mut description = format!(
                "{} `{}`: {} columns, keys, foreign keys.",
                if table.kind == TableKind::View {
                    "The view"
                } else {
                    "The table"
                },
                table.name,
                table.columns.len()
            );
            if let Some(comment) = &table.comment {
                description.push(' ');
                description.push_str(comment);
            }
            out.push(
                Resource::new(
                    table_uri(&name, &table.name),
                    format!("{name}/{}", table.name),
                )
                .with_description(description)
                .with_mime_type("text/plain"),
            );
        }
    }
    out
}

/// The URI templates of schema resources.
pub(super) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new("schema://{database}", "database")
            .with_title("The tables of a database")
            .with_mime_type("text/plain"),
        ResourceTemplate::new("schema://{database}/{table}", "table")
            .with_title("One table: columns, keys, foreign keys")
            .with_mime_type("text/plain"),
    ]
}

/// Reads `schema://{database}` or `schema://{database}/{table}` for `principal`.
pub(super) async fn read(
    server: &McpServer,
    principal: &Principal,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let not_found = |what: String| ErrorData::resource_not_found(what, None);
    let Some(path) = uri.strip_prefix(SCHEME) else {
        return Err(not_found(format!(
            "no resource {uri}: resources here are schema://{{database}} and schema://{{database}}/{{table}}"
        )));
    };
    let (database, table) = match path.split_once('/') {
        Some((database, table)) => (database, Some(table)),
        None => (path, None),
    };
    let malformed = || {
        not_found(format!(
            "no resource {uri}: a name in it is not %-encoded UTF-8"
        ))
    };
    let database = decode(database).ok_or_else(malformed)?;
    let table = table
        .map(decode)
        .map(|t| t.ok_or_else(malformed))
        .transpose()?;
    let databases = databases(server, principal);
    let Some((_, db)) = databases.iter().find(|(name, _)| *name == database) else {
        let names: Vec<&str> = databases.iter().map(|(n, _)| n.as_str()).collect();
        return Err(not_found(format!(
            "no database `{database}` you may read; the databases are: {}",
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    };
    let catalog = catalog_for(server, principal, db)
        .await
        .map_err(|e| ErrorData::internal_error(format!("the schema of `{database}`: {e}"), None))?;
    let text = match table {
        None => tables_text(&catalog),
        Some(name) => {
            let Some(table) = catalog.tables.iter().find(|t| t.name == name) else {
                return Err(not_found(format!(
                    "no table `{name}` you may read in `{database}`; the tables are: {}",
                    catalog.names().collect::<Vec<_>>().join(", ")
                )));
            };
            describe_tables(&catalog, &[table])
        }
    };
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type("text/plain"),
    ]))
}

/// One line per table: its name, whether it is a view, its row estimate and its comment.
fn tables_text(catalog: &Catalog) -> String {
    if catalog.tables.is_empty() {
        return "The database has no tables you may read.".to_owned();
    }
    let line = |t: &Table| {
        let mut line = t.name.clone();
        if t.kind == TableKind::View {
            line.push_str(" (view)");
        }
        if let Some(n) = t.rows {
            line.push_str(&format!(" ~{n} rows"));
        }
        if let Some(c) = &t.comment {
            line.push_str(&format!(" — {c}"));
        }
        line
    };
    catalog
        .tables
        .iter()
        .map(line)
        .collect::<Vec<_>>()
        .join("\n")
}
