//! The starter tools `steward init` proposes for a database: a lookup of one table by a column people search
//! by (`<table>_by_<column>`, with a typed parameter), and the newest rows of a table with a date
//! (`recent_<table>`), else a row count (`count_<table>`).

use steward_sql::{Catalog, Column, Dialect, Table, TableKind};

use super::ident::{ident, snake, table as table_ident};

/// Columns a generated statement shows at most.
const MAX_COLUMNS: usize = 8;
/// Rows a lookup returns at most.
pub(super) const LOOKUP_ROWS: u64 = 20;

/// A declarative SQL tool to write into the config.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct StarterTool {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) statement: String,
    /// The parameter, if any: its name, and its declaration as YAML flow mapping.
    pub(super) parameter: Option<(String, String)>,
    pub(super) max_rows: Option<u64>,
    /// The table and column a call's example value comes from.
    pub(super) example: Option<(String, String)>,
    /// What the analyst's instructions say about it.
    pub(super) hint: String,
}

/// What kind of value a column holds, as far as a parameter or an ordering cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Integer,
    Text,
    Date,
    Other,
}

/// The column's kind, from the type as the engine names it (`character varying(120)`, `bigint(20) unsigned`,
/// `VARCHAR(80)`, `timestamp without time zone`, …).
pub(super) fn kind(data_type: &str) -> Kind {
    let lower = data_type.to_ascii_lowercase();
    let base = lower.split('(').next().unwrap_or("").trim();
    let base = base
        .trim_end_matches(" zerofill")
        .trim_end_matches(" unsigned")
        .trim();
    match base {
        "int" | "integer" | "bigint" | "smallint" | "tinyint" | "mediumint" | "int2" | "int4"
        | "int8" | "serial" | "bigserial" | "smallserial" => Kind::Integer,
        "text" | "varchar" | "char" | "character" | "character varying" | "nvarchar" | "nchar"
        | "varchar2" | "nvarchar2" | "clob" | "citext" | "tinytext" | "mediumtext" | "longtext"
        | "bpchar" | "string" => Kind::Text,
        "date" | "datetime" | "timestamptz" | "smalldatetime" => Kind::Date,
        _ if base.starts_with("timestamp") => Kind::Date,
        _ => Kind::Other,
    }
}

/// The declared length of a text type (`varchar(120)` → 120).
fn length(data_type: &str) -> Option<u64> {
    let (_, rest) = data_type.split_once('(')?;
    rest.split([')', ',']).next()?.trim().parse().ok()
}

/// Tables that hold the application's own bookkeeping rather than business data.
fn bookkeeping(table: &Table) -> bool {
    let name = table.name.to_ascii_lowercase();
    ["steward_", "sqlite_", "_sqlx", "__"]
        .iter()
        .any(|p| name.starts_with(p))
        || [
            "migration",
            "audit",
            "_log",
            "tool_calls",
            "session",
            "schema_version",
        ]
        .iter()
        .any(|w| name.contains(w))
}

/// Column names people look rows up by, best first.
const LOOKUP_NAMES: &[&str] = &[
    "name",
    "email",
    "title",
    "code",
    "sku",
    "username",
    "slug",
    "last_name",
    "city",
    "country",
    "category",
    "status",
];

fn lookup_score(table: &Table, column: &Column) -> u32 {
    let name = snake(&column.name, 64, "");
    let single_key = table.primary_key.len() == 1 && table.primary_key[0] == column.name;
    match kind(&column.data_type) {
        Kind::Text => match LOOKUP_NAMES.iter().position(|n| *n == name) {
            Some(i) => 100 - u32::try_from(i).unwrap_or(50),
            None if ["_name", "_code", "email"]
                .iter()
                .any(|s| name.ends_with(s)) =>
            {
                40
            }
            None if single_key => 20,
            None => 5,
        },
        Kind::Integer if single_key => 10,
        _ => 0,
    }
}

/// The tables worth a tool: business tables before views; bookkeeping only when there is nothing else.
fn candidates(catalog: &Catalog) -> Vec<&Table> {
    let business: Vec<&Table> = catalog.tables.iter().filter(|t| !bookkeeping(t)).collect();
    let mut tables = if business.is_empty() {
        catalog.tables.iter().collect()
    } else {
        business
    };
    // Tables first, then the ones with more rows, then by name: the same catalog gives the same choice.
    tables.sort_by(|a, b| {
        (a.kind == TableKind::View)
            .cmp(&(b.kind == TableKind::View))
            .then(b.rows.unwrap_or(0).cmp(&a.rows.unwrap_or(0)))
            .then(a.name.cmp(&b.name))
    });
    tables
}

/// The columns a statement shows: the first few, binary ones left out.
fn shown(dialect: Dialect, table: &Table) -> String {
    let columns: Vec<String> = table
        .columns
        .iter()
        .filter(|c| {
            let t = c.data_type.to_ascii_lowercase();
            !(t.contains("blob") || t.contains("bytea") || t.contains("binary"))
        })
        .take(MAX_COLUMNS)
        .map(|c| ident(dialect, &c.name))
        .collect();
    if columns.is_empty() {
        "*".to_owned()
    } else {
        columns.join(", ")
    }
}

/// `<table>_by_<column>`: the rows whose column equals a typed parameter.
pub(super) fn lookup(catalog: &Catalog, taken: &dyn Fn(&str) -> bool) -> Option<StarterTool> {
    let dialect = catalog.dialect;
    let (table, column) = candidates(catalog)
        .into_iter()
        .flat_map(|t| t.columns.iter().map(move |c| (t, c)))
        .filter(|(t, c)| lookup_score(t, c) > 0)
        // The first best: `max_by_key` would take the last of equals.
        .fold(None::<(&Table, &Column)>, |best, next| match best {
            Some(b) if lookup_score(b.0, b.1) >= lookup_score(next.0, next.1) => Some(b),
            _ => Some(next),
        })?;
    let param = snake(&column.name, 64, "value");
    let name = unique(
        &format!(
            "{}_by_{}",
            snake(&table.name, 30, "table"),
            snake(&column.name, 30, "value")
        ),
        taken,
    );
    let kind = kind(&column.data_type);
    let declaration = match kind {
        Kind::Integer => format!(
            "{{type: integer, description: {}}}",
            super::ident::yaml_str(&format!("The {} to look for.", column.name))
        ),
        _ => format!(
            "{{type: string, description: {}, maxLength: {}}}",
            super::ident::yaml_str(&format!("The {} to look for (exact match).", column.name)),
            length(&column.data_type).unwrap_or(200)
        ),
    };
    let order = match table.primary_key.as_slice() {
        [key] => format!(" ORDER BY {}", ident(dialect, key)),
        _ => String::new(),
    };
    Some(StarterTool {
        description: format!(
            "Rows of {} whose {} is the given value (at most {LOOKUP_ROWS}).",
            table.name, column.name
        ),
        statement: format!(
            "SELECT {} FROM {} WHERE {} = :{param}{order}",
            shown(dialect, table),
            table_ident(dialect, &table.name),
            ident(dialect, &column.name),
        ),
        parameter: Some((param, declaration)),
        max_rows: Some(LOOKUP_ROWS),
        example: Some((table.name.clone(), column.name.clone())),
        hint: format!(
            "To find {} by {}, call {name}.",
            plain(&table.name),
            plain(&column.name)
        ),
        name,
    })
}

/// `recent_<table>`: the newest rows of a table with a date, by that date; else `count_<table>`.
pub(super) fn recent_or_count(
    catalog: &Catalog,
    avoid: Option<&str>,
    taken: &dyn Fn(&str) -> bool,
) -> Option<StarterTool> {
    let dialect = catalog.dialect;
    let tables = candidates(catalog);
    let dated = tables
        .iter()
        .copied()
        .filter(|t| Some(t.name.as_str()) != avoid)
        .chain(
            tables
                .iter()
                .copied()
                .filter(|t| Some(t.name.as_str()) == avoid),
        )
        .find_map(|t| {
            let mut dates: Vec<&Column> = t
                .columns
                .iter()
                .filter(|c| kind(&c.data_type) == Kind::Date)
                .collect();
            // NOT NULL dates first: a NULL would sort first on PostgreSQL.
            dates.sort_by_key(|c| c.nullable);
            dates.first().map(|c| (t, *c))
        });
    let Some((table, column)) = dated else {
        let table = tables
            .iter()
            .copied()
            .find(|t| Some(t.name.as_str()) != avoid)
            .or_else(|| tables.first().copied())?;
        let name = unique(&format!("count_{}", snake(&table.name, 50, "table")), taken);
        return Some(StarterTool {
            description: format!("How many rows {} has.", table.name),
            statement: format!(
                "SELECT COUNT(*) AS row_count FROM {}",
                table_ident(dialect, &table.name)
            ),
            parameter: None,
            max_rows: None,
            example: None,
            hint: format!(
                "For the number of rows of {}, call {name}.",
                plain(&table.name)
            ),
            name,
        });
    };
    let name = unique(
        &format!("recent_{}", snake(&table.name, 50, "table")),
        taken,
    );
    let date = ident(dialect, &column.name);
    let filter = if column.nullable {
        format!(" WHERE {date} IS NOT NULL")
    } else {
        String::new()
    };
    let tiebreak = match table.primary_key.as_slice() {
        [key] => format!(", {} DESC", ident(dialect, key)),
        _ => String::new(),
    };
    Some(StarterTool {
        description: format!(
            "The newest rows of {}, by {}, newest first.",
            table.name, column.name
        ),
        statement: format!(
            "SELECT {} FROM {}{filter} ORDER BY {date} DESC{tiebreak} LIMIT :limit",
            shown(dialect, table),
            table_ident(dialect, &table.name),
        ),
        parameter: Some((
            "limit".to_owned(),
            "{type: integer, description: 'How many rows, newest first.', minimum: 1, maximum: 100, default: 10}"
                .to_owned(),
        )),
        max_rows: Some(100),
        example: None,
        hint: format!("For the latest {}, call {name}.", plain(&table.name)),
        name,
    })
}

/// A name on one line (for the instructions' text).
fn plain(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `name`, or `name_2`, `name_3`, … when it is taken (a built-in tool's name).
fn unique(name: &str, taken: &dyn Fn(&str) -> bool) -> String {
    let mut candidate = name.to_owned();
    let mut n = 2;
    while taken(&candidate) {
        candidate = format!("{name}_{n}");
        n += 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str, data_type: &str, nullable: bool) -> Column {
        Column {
            name: name.to_owned(),
            data_type: data_type.into(),
            nullable,
            default: None,
            comment: None,
            samples: Default::default(),
        }
    }

    fn table(name: &str, columns: Vec<Column>, key: &[&str]) -> Table {
        Table {
            name: name.to_owned(),
            kind: TableKind::Table,
            comment: None,
            columns,
            primary_key: key.iter().map(|k| (*k).to_owned()).collect(),
            foreign_keys: Vec::new(),
            rows: None,
        }
    }

    #[test]
    fn types_are_read_as_engines_name_them() {
        assert_eq!(kind("character varying(120)"), Kind::Text);
        assert_eq!(kind("bigint(20) unsigned"), Kind::Integer);
        assert_eq!(kind("VARCHAR(80)"), Kind::Text);
        assert_eq!(kind("timestamp(3) without time zone"), Kind::Date);
        assert_eq!(kind("point"), Kind::Other);
        assert_eq!(kind("interval"), Kind::Other);
        assert_eq!(kind("numeric(12,2)"), Kind::Other);
        assert_eq!(length("character varying(120)"), Some(120));
        assert_eq!(length("text"), None);
    }

    #[test]
    fn the_tools_quote_what_needs_quoting_and_skip_bookkeeping() {
        let catalog = Catalog::new(
            Dialect::Postgres,
            vec![
                table(
                    "Order Lines",
                    vec![
                        column("id", "integer", false),
                        column("Product Name", "character varying(80)", false),
                        column("when", "timestamp without time zone", true),
                    ],
                    &["id"],
                ),
                table(
                    "audit_log",
                    vec![column("name", "text", false), column("at", "date", false)],
                    &[],
                ),
            ],
        );
        let none = |_: &str| false;
        let lookup = lookup(&catalog, &none).unwrap();
        assert_eq!(lookup.name, "order_lines_by_product_name");
        assert_eq!(
            lookup.statement,
            "SELECT id, \"Product Name\", \"when\" FROM \"Order Lines\" WHERE \"Product Name\" = :product_name ORDER BY id"
        );
        assert!(lookup.parameter.unwrap().1.contains("maxLength: 80"));
        let recent = recent_or_count(&catalog, None, &|n: &str| n == "recent_order_lines").unwrap();
        assert_eq!(recent.name, "recent_order_lines_2");
        assert_eq!(
            recent.statement,
            "SELECT id, \"Product Name\", \"when\" FROM \"Order Lines\" WHERE \"when\" IS NOT NULL ORDER BY \"when\" DESC, id DESC LIMIT :limit"
        );
    }
}
