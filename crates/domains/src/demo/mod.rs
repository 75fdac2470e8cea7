//! The demo database: a coffee-equipment shop with customers, products, orders, shipments, expenses, projects
//! and tasks, generated deterministically from a seed and a scale, on SQLite, PostgreSQL or MySQL/MariaDB.
//!
//! Money is generated in whole cents (integers), so every total is the exact sum of its items and every gross
//! amount is its net plus tax. A SQLite demo database is put in WAL mode: readers never wait for a writer, and
//! a writer killed mid-transaction leaves nothing a reader must roll back.

mod generate;
mod schema;

use std::collections::HashSet;

use chrono::{Days, NaiveDate};
use steward_sql::{Catalog, Database, Dialect, QueryLimits, SqlError, cell_text};

pub use generate::{DemoConfig, IN_TRANSIT_ORDER};
pub use schema::{TABLES, ddl, drop_all};

use generate::{
    CARRIERS, EXPENSE_CATEGORIES, FIRST, HUBS, LAST, PLACES, PRODUCT_LINES, PROJECTS, Rng, TASKS,
    at_time, day_before, order_code,
};

/// Rows per INSERT statement.
const ROWS_PER_INSERT: usize = 500;
/// Orders written per transaction.
const ORDERS_PER_COMMIT: u64 = 5_000;

/// What was generated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemoSummary {
    /// Rows per table.
    pub rows: Vec<(String, u64)>,
    /// The order that is in transit with an ETA.
    pub in_transit_order: String,
}

/// The demo's tables that `catalog` already has (all of them: a demo database; some: a database that is not
/// a demo, which creating the demo must not clobber).
pub fn existing_tables(catalog: &Catalog) -> Vec<String> {
    TABLES
        .iter()
        .filter(|t| catalog.table(t).is_some())
        .map(|t| (*t).to_owned())
        .collect()
}

/// Whether `catalog` has every demo table (the expenses, orders and tasks agents need them).
pub fn has_schema(catalog: &Catalog) -> bool {
    TABLES.iter().all(|t| catalog.table(t).is_some())
}

/// Creates the schema (dropping the demo tables first) and fills it. `progress` is told `(done, total)` orders.
pub async fn create(
    db: &Database,
    config: DemoConfig,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<DemoSummary, SqlError> {
    let dialect = db.dialect();
    if dialect == Dialect::Sqlite {
        // Persistent in the file; an in-memory database answers `memory` and stays as it is.
        db.execute_script("PRAGMA journal_mode=WAL").await?;
    }
    db.execute_script(&drop_all(dialect)).await?;
    db.execute_script(&ddl(dialect)).await?;
    let mut w = Writer::new(db, dialect);
    let mut rng = Rng::new(config.seed);
    let today = config.today;

    // Products.
    let mut products: Vec<(u64, u64)> = Vec::new();
    for (prefix, category, names, (low, high)) in PRODUCT_LINES {
        for (i, name) in names.iter().enumerate() {
            let id = products.len() as u64 + 1;
            let price = low + rng.below(high - low);
            products.push((id, price));
            w.row(
                "products",
                "id, sku, name, category, unit_price",
                format!(
                    "{id}, {}, {}, {}, {}",
                    text(&format!("{prefix}-{:03}", i + 1)),
                    text(name),
                    text(category),
                    money(price)
                ),
            );
        }
    }
    // Customers; the first is the one in the source material's example.
    let customers = config.customers();
    let mut emails = HashSet::new();
    for id in 1..=customers {
        let (first, last) = if id == 1 {
            ("Ada", "Lovelace")
        } else {
            (*rng.pick(FIRST), *rng.pick(LAST))
        };
        let mut email = format!(
            "{}.{}@example.com",
            first.to_lowercase(),
            last.to_lowercase().replace([' ', '-'], "")
        );
        if !emails.insert(email.clone()) {
            email = format!(
                "{}.{}{id}@example.com",
                first.to_lowercase(),
                last.to_lowercase().replace([' ', '-'], "")
            );
            emails.insert(email.clone());
        }
        let (city, country) = rng.pick(PLACES);
        let joined = at_time(day_before(&mut rng, today), &mut rng);
        w.row(
            "customers",
            "id, name, email, city, country, created_at",
            format!(
                "{id}, {}, {}, {}, {}, {}",
                text(&format!("{first} {last}")),
                text(&email),
                text(city),
                text(country),
                stamp(joined)
            ),
        );
    }
    w.flush_all().await?;

    // Orders with their items and shipments.
    let total_orders = config.orders();
    let mut codes = HashSet::from([IN_TRANSIT_ORDER.to_owned()]);
    let mut item_id = 0u64;
    let mut shipment_id = 0u64;
    for id in 1..=total_orders {
        let example = id == 1;
        let code = if example {
            IN_TRANSIT_ORDER.to_owned()
        } else {
            loop {
                let c = order_code(&mut rng);
                if codes.insert(c.clone()) {
                    break c;
                }
            }
        };
        let customer = if example { 1 } else { 1 + rng.below(customers) };
        let day = if example {
            today.checked_sub_days(Days::new(3)).unwrap_or(today)
        } else {
            day_before(&mut rng, today)
        };
        let age = (today - day).num_days();
        let roll = rng.unit();
        let status = if example {
            "IN TRANSIT"
        } else if age <= 2 {
            if roll < 0.3 {
                "PENDING"
            } else if roll < 0.7 {
                "PAID"
            } else {
                "SHIPPED"
            }
        } else if age <= 10 {
            if roll < 0.2 {
                "SHIPPED"
            } else if roll < 0.6 {
                "IN TRANSIT"
            } else {
                "DELIVERED"
            }
        } else if roll < 0.07 {
            "CANCELLED"
        } else {
            "DELIVERED"
        };
        let ordered_at = at_time(day, &mut rng);
        let mut total = 0u64;
        let lines = if example { 2 } else { 1 + rng.below(4) };
        for line in 0..lines {
            item_id += 1;
            // The example order: an espresso machine and a bag of beans.
            let (product, price) = if example {
                products
                    .get(if line == 0 { 18 } else { 0 })
                    .copied()
                    .unwrap_or((1, 0))
            } else {
                *rng.pick(&products)
            };
            let quantity = if example { 1 } else { 1 + rng.below(3) };
            total += price * quantity;
            w.row(
                "order_items",
                "id, order_id, product_id, quantity, unit_price",
                format!("{item_id}, {id}, {product}, {quantity}, {}", money(price)),
            );
        }
        w.row(
            "orders",
            "id, order_code, customer_id, status, ordered_at, total",
            format!(
                "{id}, {}, {customer}, {}, {}, {}",
                text(&code),
                text(status),
                stamp(ordered_at),
                money(total)
            ),
        );
        if matches!(status, "SHIPPED" | "IN TRANSIT" | "DELIVERED") {
            shipment_id += 1;
            let shipped = at_time(day.checked_add_days(Days::new(1)).unwrap_or(day), &mut rng);
            let mut eta = shipped
                .date()
                .checked_add_days(Days::new(2 + rng.below(4)))
                .unwrap_or(day);
            if status != "DELIVERED" && eta <= today {
                eta = today
                    .checked_add_days(Days::new(1 + rng.below(3)))
                    .unwrap_or(today);
            }
            if example {
                eta = today.checked_add_days(Days::new(2)).unwrap_or(today);
            }
            let (delivered, location) = match status {
                "DELIVERED" => {
                    let on = eta.min(today);
                    (
                        stamp(at_time(on, &mut rng)),
                        "delivered to the customer".to_owned(),
                    )
                }
                "IN TRANSIT" => (
                    "NULL".to_owned(),
                    if example {
                        "Leipzig hub".to_owned()
                    } else {
                        (*rng.pick(HUBS)).to_owned()
                    },
                ),
                _ => ("NULL".to_owned(), "left the warehouse".to_owned()),
            };
            let carrier = if example { "DHL" } else { *rng.pick(CARRIERS) };
            let tracking = format!(
                "{}{:010}",
                &carrier[..2.min(carrier.len())].to_uppercase(),
                rng.below(10_000_000_000)
            );
            w.row(
                "shipments",
                "id, order_id, carrier, tracking_number, status, shipped_at, eta, delivered_at, last_location",
                format!("{shipment_id}, {id}, {}, {}, {}, {}, {}, {delivered}, {}", text(carrier), text(&tracking), text(status), stamp(shipped), date(eta), text(&location)),
            );
        }
        if id % ORDERS_PER_COMMIT == 0 || id == total_orders {
            w.flush_all().await?;
            progress(id, total_orders);
        }
    }

    // Expense categories and expenses; coffee comes often, and twice in the last days.
    for (i, (name, rate, _, _)) in EXPENSE_CATEGORIES.iter().enumerate() {
        w.row(
            "expense_categories",
            "id, name, default_tax_rate",
            format!("{}, {}, {}", i + 1, text(name), rate_text(*rate)),
        );
    }
    for id in 1..=DemoConfig::EXPENSES {
        let category = if id <= 2 || rng.unit() < 0.25 {
            0
        } else {
            rng.below(EXPENSE_CATEGORIES.len() as u64) as usize
        };
        let Some(&(_, rate, descriptions, (low, high))) = EXPENSE_CATEGORIES.get(category) else {
            continue;
        };
        let day = if id <= 2 {
            today.checked_sub_days(Days::new(id)).unwrap_or(today)
        } else {
            day_before(&mut rng, today)
        };
        let net = low + rng.below(high - low);
        // Gross = net × (1 + rate), rounded to the cent, halves up; the tax is the difference.
        let gross = (net * (10_000 + rate) + 5_000) / 10_000;
        let tax = gross - net;
        w.row(
            "expenses",
            "id, description, category_id, net_amount, tax_rate, tax_amount, gross_amount, spent_on, created_at",
            format!("{id}, {}, {}, {}, {}, {}, {}, {}, {}", text(rng.pick::<&str>(descriptions)), category + 1, money(net), rate_text(rate), money(tax), money(gross), date(day), stamp(at_time(day, &mut rng))),
        );
    }
    // Projects and tasks; the inbox holds the birthday and personal-website tasks.
    for (i, (name, description)) in PROJECTS.iter().enumerate() {
        let created = at_time(day_before(&mut rng, today), &mut rng);
        w.row(
            "projects",
            "id, name, description, created_at",
            format!(
                "{}, {}, {}, {}",
                i + 1,
                text(name),
                text(description),
                stamp(created)
            ),
        );
    }
    for (i, (title, project, done)) in TASKS.iter().enumerate() {
        let created = at_time(
            today
                .checked_sub_days(Days::new(1 + rng.below(60)))
                .unwrap_or(today),
            &mut rng,
        );
        let due = if rng.unit() < 0.4 {
            date(
                today
                    .checked_add_days(Days::new(rng.below(30)))
                    .unwrap_or(today),
            )
        } else {
            "NULL".to_owned()
        };
        let completed = if *done {
            stamp(at_time(
                today
                    .checked_sub_days(Days::new(rng.below(10)))
                    .unwrap_or(today),
                &mut rng,
            ))
        } else {
            "NULL".to_owned()
        };
        let project = project.map_or("NULL".to_owned(), |p| (p + 1).to_string());
        w.row(
            "tasks",
            "id, title, notes, project_id, status, due_date, created_at, completed_at",
            format!(
                "{}, {}, NULL, {project}, {}, {due}, {}, {completed}",
                i + 1,
                text(title),
                text(if *done { "DONE" } else { "OPEN" }),
                stamp(created)
            ),
        );
    }
    w.flush_all().await?;
    if dialect == Dialect::Postgres {
        // Ids were given explicitly: move each identity past them so new rows get fresh ids.
        let reset: String = TABLES
            .iter()
            .filter(|t| **t != "tool_calls")
            .map(|t| format!("SELECT setval(pg_get_serial_sequence('{t}', 'id'), COALESCE((SELECT MAX(id) FROM {t}), 0) + 1, false);"))
            .collect();
        db.execute_script(&reset).await?;
    }
    Ok(DemoSummary {
        rows: w.counts,
        in_transit_order: IN_TRANSIT_ORDER.to_owned(),
    })
}

/// Some order codes in a given status (for suggestions and tests).
pub async fn order_codes(
    db: &Database,
    status: &str,
    limit: usize,
) -> Result<Vec<String>, SqlError> {
    let sql = format!("SELECT order_code FROM orders WHERE status = ? ORDER BY id LIMIT {limit}");
    let sql = if db.dialect() == Dialect::Postgres {
        sql.replace('?', "$1")
    } else {
        sql
    };
    let result = db
        .query_read_only(
            &sql,
            &[steward_sql::Param::Text(status.to_owned())],
            &QueryLimits::default(),
        )
        .await?;
    Ok(result
        .rows
        .iter()
        .map(|r| r.first().map(cell_text).unwrap_or_default())
        .collect())
}

/// Whole cents as a decimal literal: `1250` → `12.50`.
fn money(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// A rate in basis points as a decimal literal: `1900` → `0.1900`.
fn rate_text(basis_points: u64) -> String {
    format!("{}.{:04}", basis_points / 10_000, basis_points % 10_000)
}

/// A SQL string literal.
fn text(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

fn date(day: NaiveDate) -> String {
    format!("'{}'", day.format("%Y-%m-%d"))
}

fn stamp(at: chrono::NaiveDateTime) -> String {
    format!("'{}'", at.format("%Y-%m-%d %H:%M:%S"))
}

/// Batches rows into multi-row INSERTs, and statements into one transaction per flush, parent tables first
/// (foreign keys are checked statement by statement).
struct Writer<'a> {
    db: &'a Database,
    dialect: Dialect,
    pending: Vec<(&'static str, &'static str, Vec<String>)>,
    script: String,
    counts: Vec<(String, u64)>,
}

impl<'a> Writer<'a> {
    fn new(db: &'a Database, dialect: Dialect) -> Self {
        Self {
            db,
            dialect,
            pending: Vec::new(),
            script: String::new(),
            counts: Vec::new(),
        }
    }

    fn row(&mut self, table: &'static str, columns: &'static str, values: String) {
        match self.counts.iter_mut().find(|(t, _)| t == table) {
            Some((_, n)) => *n += 1,
            None => self.counts.push((table.to_owned(), 1)),
        }
        let index = match self.pending.iter().position(|(t, _, _)| *t == table) {
            Some(i) => i,
            None => {
                self.pending.push((table, columns, Vec::new()));
                self.pending.len() - 1
            }
        };
        self.pending[index].2.push(values);
    }

    fn statements(&mut self, table: &str, columns: &str, rows: &[String]) {
        for chunk in rows.chunks(ROWS_PER_INSERT) {
            self.script.push_str(&format!(
                "INSERT INTO {table} ({columns}) VALUES ({});\n",
                chunk.join("), (")
            ));
        }
    }

    /// Writes everything pending in one transaction, parents before children.
    async fn flush_all(&mut self) -> Result<(), SqlError> {
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_by_key(|(t, _, _)| TABLES.iter().position(|x| x == t).unwrap_or(usize::MAX));
        for (table, columns, rows) in &pending {
            self.statements(table, columns, rows);
        }
        if self.script.is_empty() {
            return Ok(());
        }
        let begin = if self.dialect == Dialect::Mysql {
            "START TRANSACTION"
        } else {
            "BEGIN"
        };
        let script = format!("{begin};\n{}COMMIT;", std::mem::take(&mut self.script));
        self.db.execute_script(&script).await
    }
}
