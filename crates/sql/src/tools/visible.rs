//! The catalog as one principal may see it. Every surface that shows a schema to a model or a person
//! (`list_tables`, `describe_tables`, `query_table`'s names, `ask_database`'s and the analyst's schema context,
//! `steward schema`, the MCP `schema://` resources) passes its catalog through [`visible_catalog`] first, so a
//! role sees only the tables and columns it may read, and no value of a row it may not read.
//!
//! Sample values are rows: a table whose rows the principal sees filtered shows no samples (they may come from
//! other principals' rows) and no row estimate (it counts every row), and a masked column shows no samples
//! (they are its unmasked values).

use std::borrow::Cow;

use steward_core::Principal;

use super::access::{Access, AccessFn};
use crate::catalog::{Catalog, Table};
use crate::guard::same_table;

/// The catalog as a principal with `access` may see it (`None`: nothing limits it, the catalog itself):
///
/// - only the tables `access.read.tables` lists (all when `None`);
/// - of a table `access.read.columns` lists, only those columns and the masked ones;
/// - a table whose rows are filtered: no sample values, no row estimate;
/// - a masked column: no sample values;
/// - primary keys and foreign keys only over visible columns, foreign keys only to visible tables and columns.
///
/// Names match as the guard matches them: case-insensitively, with or without a schema.
pub fn visible_catalog<'a>(catalog: &'a Catalog, access: Option<&Access>) -> Cow<'a, Catalog> {
    let Some(access) = access else {
        return Cow::Borrowed(catalog);
    };
    let filtered: Vec<String> = access
        .scope
        .filters()
        .into_iter()
        .map(|(table, _)| table)
        .collect();
    let masks = access.scope.masks();
    if access.read.tables.is_none()
        && access.read.columns.is_none()
        && filtered.is_empty()
        && masks.is_empty()
    {
        return Cow::Borrowed(catalog);
    }
    // A view reads its tables past the scope: the guard refuses one that is not scoped itself or named in the
    // read list to a scoped role, so it is not shown either.
    let scoped = !access.scope.is_empty();
    let named = |t: &Table| {
        access
            .read
            .tables
            .as_ref()
            .is_some_and(|allowed| allowed.iter().any(|a| same_table(a, &t.name)))
    };
    let mut tables: Vec<Table> = catalog
        .tables
        .iter()
        .filter(|t| access.read.tables.is_none() || named(t))
        .filter(|t| {
            !scoped
                || t.kind != crate::catalog::TableKind::View
                || named(t)
                || access.scope.scopes(&t.name)
        })
        .map(|t| visible_table(t, access, &filtered, &masks))
        .collect();
    // Foreign keys: only to a visible table, over columns visible on both sides.
    let shown: Vec<(String, Vec<String>)> = tables
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                t.columns.iter().map(|c| c.name.clone()).collect(),
            )
        })
        .collect();
    let has = |columns: &[String], name: &str| columns.iter().any(|c| c.eq_ignore_ascii_case(name));
    for table in &mut tables {
        let own: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
        table.foreign_keys.retain(|fk| {
            // The catalog names the referenced table as it names the table itself: no loose match here.
            let target = shown
                .iter()
                .find(|(name, _)| name == &fk.table)
                .or_else(|| {
                    shown
                        .iter()
                        .find(|(name, _)| name.eq_ignore_ascii_case(&fk.table))
                });
            target.is_some_and(|(_, theirs)| {
                fk.columns.iter().all(|c| has(&own, c))
                    && fk.referenced.iter().all(|c| has(theirs, c))
            })
        });
    }
    Cow::Owned(Catalog::new(catalog.dialect, tables))
}

/// One table as `access` lets it be seen (the table itself is allowed).
fn visible_table(
    table: &Table,
    access: &Access,
    filtered: &[String],
    masks: &[(String, String, crate::guard::Mask)],
) -> Table {
    let mut table = table.clone();
    let masked: Vec<&str> = masks
        .iter()
        .filter(|(t, _, _)| same_table(t, &table.name))
        .map(|(_, c, _)| c.as_str())
        .collect();
    let listed = access.read.columns.as_ref().and_then(|columns| {
        columns
            .iter()
            .find(|(t, _)| t.eq_ignore_ascii_case(&table.name))
            .or_else(|| columns.iter().find(|(t, _)| same_table(t, &table.name)))
            .map(|(_, list)| list)
    });
    if let Some(listed) = listed {
        let keep = |name: &str| {
            listed.iter().any(|c| c.eq_ignore_ascii_case(name))
                || masked.iter().any(|c| c.eq_ignore_ascii_case(name))
        };
        table.columns.retain(|c| keep(&c.name));
        table.primary_key.retain(|c| keep(c));
    }
    if filtered.iter().any(|f| same_table(f, &table.name)) {
        table.rows = None;
        for column in &mut table.columns {
            column.samples.clear();
        }
    }
    for column in &mut table.columns {
        if masked.iter().any(|c| c.eq_ignore_ascii_case(&column.name)) {
            column.samples.clear();
        }
    }
    table
}

/// The catalog as a principal whose access cannot be worked out sees it: no table at all (it may read nothing).
pub fn nothing_visible(catalog: &Catalog) -> Catalog {
    Catalog::new(catalog.dialect, Vec::new())
}

/// The catalog as `principal` may see it, its access found by `access` (`None`: nothing limits anyone). Also
/// when its access cannot be worked out: then it sees no table (see [`nothing_visible`]). For surfaces that
/// should say why, [`crate::SqlToolkit::catalog_as`] keeps the reason.
pub fn visible_to<'a>(
    catalog: &'a Catalog,
    access: Option<&AccessFn>,
    principal: &Principal,
) -> Cow<'a, Catalog> {
    match access.map(|f| f.of(principal, catalog.dialect)) {
        None | Some(Ok(None)) => Cow::Borrowed(catalog),
        Some(Ok(Some(access))) => visible_catalog(catalog, Some(&access)),
        Some(Err(_)) => Cow::Owned(nothing_visible(catalog)),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::catalog::{Column, ForeignKey, TableKind};
    use crate::context::{describe_tables, schema_context};
    use crate::dialect::Dialect;
    use crate::guard::{GuardPolicy, Mask, Scope};

    fn col(name: &str, samples: &[&str]) -> Column {
        Column {
            name: name.into(),
            data_type: "TEXT".into(),
            nullable: true,
            default: None,
            comment: None,
            samples: samples.iter().collect(),
        }
    }

    fn table(name: &str, columns: Vec<Column>, fks: &[(&str, &str, &str)]) -> Table {
        Table {
            name: name.into(),
            kind: TableKind::Table,
            comment: None,
            primary_key: vec![columns[0].name.clone()],
            columns,
            foreign_keys: fks
                .iter()
                .map(|(c, t, r)| ForeignKey {
                    columns: vec![(*c).into()],
                    table: (*t).into(),
                    referenced: vec![(*r).into()],
                })
                .collect(),
            rows: Some(42),
        }
    }

    /// Canaries everywhere a schema could leak one: a forbidden column, another customer's row, a forbidden
    /// table, a masked column.
    fn shop() -> Catalog {
        Catalog::new(
            Dialect::Sqlite,
            vec![
                table(
                    "customers",
                    vec![
                        col("id", &["1", "2"]),
                        col("name", &["Ada", "CanaryOtherCustomer"]),
                        col("email", &["canary-email-7f3a@leak.test"]),
                        col("phone", &["+44 canary-phone-91"]),
                        col("city", &["Leeds"]),
                        col("referrer_id", &[]),
                    ],
                    &[("referrer_id", "customers", "id")],
                ),
                table(
                    "orders",
                    vec![
                        col("id", &[]),
                        col("customer_id", &[]),
                        col("status", &["SHIPPED"]),
                        col("coupon_id", &[]),
                    ],
                    &[
                        ("customer_id", "customers", "id"),
                        ("coupon_id", "coupons", "id"),
                    ],
                ),
                table(
                    "coupons",
                    vec![col("id", &[]), col("code", &["CANARY-COUPON-55"])],
                    &[],
                ),
                table(
                    "products",
                    vec![col("id", &[]), col("title", &["Espresso machine"])],
                    &[],
                ),
            ],
        )
    }

    /// The `support` role of docs/roles.md, for customer 1, with `customers.phone` masked.
    fn support() -> Access {
        let mut scope = Scope::new();
        let attributes = BTreeMap::from([("customer_id".to_owned(), serde_json::json!(1))]);
        scope
            .filter(
                Dialect::Sqlite,
                "orders",
                "customer_id = {principal.customer_id}",
                &attributes,
            )
            .unwrap_or_else(|e| panic!("{e}"));
        scope
            .filter(
                Dialect::Sqlite,
                "customers",
                "id = {principal.customer_id}",
                &attributes,
            )
            .unwrap_or_else(|e| panic!("{e}"));
        scope.mask("customers", "phone", Mask::Partial);
        Access {
            read: GuardPolicy {
                tables: Some(vec!["orders".into(), "customers".into(), "products".into()]),
                columns: Some(BTreeMap::from([(
                    "customers".to_owned(),
                    vec!["id".into(), "name".into(), "city".into()],
                )])),
            },
            scope,
            write: None,
            max_rows: None,
        }
    }

    const CANARIES: &[&str] = &[
        "canary-email-7f3a@leak.test",
        "CanaryOtherCustomer",
        "CANARY-COUPON-55",
        "canary-phone-91",
        "coupons",
        "email",
        "referrer_id",
    ];

    fn assert_clean(text: &str) {
        for canary in CANARIES {
            assert!(!text.contains(canary), "`{canary}` leaked:\n{text}");
        }
    }

    #[test]
    fn a_scoped_principal_sees_only_its_tables_columns_and_no_values_of_rows_it_may_not_read() {
        let catalog = shop();
        let access = support();
        let seen = visible_catalog(&catalog, Some(&access));
        assert_eq!(
            seen.names().collect::<Vec<_>>(),
            ["customers", "orders", "products"]
        );
        let Some(customers) = seen.table("customers") else {
            panic!("customers is visible")
        };
        let names: Vec<&str> = customers.columns.iter().map(|c| c.name.as_str()).collect();
        // The masked column is there (it may be read masked), without its values.
        assert_eq!(names, ["id", "name", "phone", "city"]);
        assert!(customers.columns.iter().all(|c| c.samples.is_empty()));
        assert_eq!(customers.rows, None);
        // The self-reference is over a hidden column; the key to the hidden table goes too.
        assert!(customers.foreign_keys.is_empty());
        let Some(orders) = seen.table("orders") else {
            panic!("orders is visible")
        };
        assert_eq!(orders.rows, None);
        assert_eq!(orders.foreign_keys.len(), 1);
        assert_eq!(orders.foreign_keys[0].table, "customers");
        // A table without a row filter keeps its samples and its estimate.
        let Some(products) = seen.table("products") else {
            panic!("products is visible")
        };
        assert_eq!(products.rows, Some(42));
        assert_eq!(
            products.columns[1].samples.iter().collect::<Vec<_>>(),
            ["Espresso machine"]
        );
        // Every rendering of it is clean.
        assert_clean(&schema_context(&seen, None, 100_000).text);
        assert_clean(
            &schema_context(
                &seen,
                Some("email of CanaryOtherCustomer coupon CANARY"),
                100_000,
            )
            .text,
        );
        let all: Vec<&Table> = seen.tables.iter().collect();
        assert_clean(&describe_tables(&seen, &all));
        assert!(
            schema_context(&seen, None, 100_000)
                .text
                .contains("Espresso machine")
        );
    }

    #[test]
    fn an_unscoped_principal_sees_the_catalog_itself() {
        let catalog = shop();
        assert!(matches!(visible_catalog(&catalog, None), Cow::Borrowed(_)));
        assert!(matches!(
            visible_catalog(&catalog, Some(&Access::default())),
            Cow::Borrowed(_)
        ));
        let text = schema_context(&catalog, None, 100_000).text;
        // The canaries are there to be found: the test above would see a leak.
        for canary in [
            "canary-email-7f3a@leak.test",
            "CanaryOtherCustomer",
            "CANARY-COUPON-55",
        ] {
            assert!(text.contains(canary), "{canary}: {text}");
        }
    }

    #[test]
    fn names_match_with_or_without_a_schema_and_in_any_case() {
        let mut catalog = shop();
        for t in &mut catalog.tables {
            t.name = format!("Sales.{}", t.name.to_uppercase());
            for fk in &mut t.foreign_keys {
                fk.table = format!("Sales.{}", fk.table.to_uppercase());
            }
        }
        let catalog = Catalog::new(catalog.dialect, catalog.tables);
        let seen = visible_catalog(&catalog, Some(&support()));
        assert_eq!(
            seen.names().collect::<BTreeSet<_>>(),
            BTreeSet::from(["Sales.CUSTOMERS", "Sales.ORDERS", "Sales.PRODUCTS"])
        );
        assert_eq!(seen.tables[0].columns.len(), 4);
        assert_clean(&schema_context(&seen, None, 100_000).text);
    }

    #[test]
    fn access_that_cannot_be_worked_out_shows_nothing() {
        let catalog = shop();
        let failing = AccessFn::new(|_, _| Err("no customer_id".to_owned()));
        let seen = visible_to(&catalog, Some(&failing), &Principal::named("ada"));
        assert!(seen.tables.is_empty());
        assert_eq!(seen.dialect, Dialect::Sqlite);
        let open = AccessFn::new(|_, _| Ok(None));
        assert_eq!(
            visible_to(&catalog, Some(&open), &Principal::named("ada"))
                .tables
                .len(),
            4
        );
        assert_eq!(
            visible_to(&catalog, None, &Principal::local()).tables.len(),
            4
        );
    }
}

#[cfg(test)]
mod view_tests {
    use super::*;
    use crate::catalog::{Column, TableKind};
    use crate::dialect::Dialect;
    use crate::guard::{Mask, Scope};

    #[test]
    fn a_scoped_role_is_not_shown_views_it_may_not_read() {
        let column = |name: &str| Column {
            name: name.into(),
            data_type: "TEXT".into(),
            nullable: true,
            default: None,
            comment: None,
            samples: Default::default(),
        };
        let relation = |name: &str, kind: TableKind| Table {
            name: name.into(),
            kind,
            comment: None,
            primary_key: Vec::new(),
            columns: vec![column("email")],
            foreign_keys: Vec::new(),
            rows: None,
        };
        let catalog = Catalog::new(
            Dialect::Sqlite,
            vec![
                relation("customers", TableKind::Table),
                relation("customer_directory", TableKind::View),
            ],
        );
        let mut scope = Scope::new();
        scope.mask("customers", "email", Mask::Hash);
        let masked = Access {
            scope,
            ..Access::default()
        };
        let names = |access: Option<&Access>| -> Vec<String> {
            visible_catalog(&catalog, access)
                .tables
                .iter()
                .map(|t| t.name.clone())
                .collect()
        };
        assert_eq!(names(Some(&masked)), ["customers"]);
        assert_eq!(names(None), ["customer_directory", "customers"]);
    }
}
