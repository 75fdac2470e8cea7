//! The demo's rows, table by table, drawn from the seed: products, customers, orders with their items and
//! shipments, expenses, projects and tasks. The order of the draws is part of what a seed means: the same
//! seed, scale and day give the same rows only while every table draws in the same order.

use std::collections::HashSet;

use chrono::Days;
use steward_sql::SqlError;

use super::generate::{
    CARRIERS, DemoConfig, EXPENSE_CATEGORIES, FIRST, HUBS, IN_TRANSIT_ORDER, LAST, PLACES,
    PRODUCT_LINES, PROJECTS, Rng, TASKS, at_time, day_before, order_code,
};
use super::seed::{Writer, date, money, rate_text, stamp, text};

/// Orders written per transaction.
const ORDERS_PER_COMMIT: u64 = 5_000;

/// Writes every row of the demo through `w`: parents are flushed before the orders, the orders every
/// 5,000, the rest at the end. `progress` is told `(done, total)` orders.
pub(super) async fn write_all(
    w: &mut Writer<'_>,
    config: DemoConfig,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<(), SqlError> {
    let mut rng = Rng::new(config.seed);
    let products = products(w, &mut rng);
    customers(w, &mut rng, &config);
    w.flush_all().await?;
    orders(w, &mut rng, &config, &products, progress).await?;
    expenses(w, &mut rng, &config);
    projects_and_tasks(w, &mut rng, &config);
    w.flush_all().await
}

/// The products of every product line; returns each one's (id, unit price in cents).
fn products(w: &mut Writer<'_>, rng: &mut Rng) -> Vec<(u64, u64)> {
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
    products
}

/// The customers; the first is the one in the source material's example.
fn customers(w: &mut Writer<'_>, rng: &mut Rng, config: &DemoConfig) {
    let today = config.today;
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
        let joined = at_time(day_before(rng, today), rng);
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
}

/// The orders with their items and shipments; the first is the source material's order in transit.
async fn orders(
    w: &mut Writer<'_>,
    rng: &mut Rng,
    config: &DemoConfig,
    products: &[(u64, u64)],
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<(), SqlError> {
    let today = config.today;
    let customers = config.customers();
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
                let c = order_code(rng);
                if codes.insert(c.clone()) {
                    break c;
                }
            }
        };
        let customer = if example { 1 } else { 1 + rng.below(customers) };
        let day = if example {
            today.checked_sub_days(Days::new(3)).unwrap_or(today)
        } else {
            day_before(rng, today)
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
        let ordered_at = at_time(day, rng);
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
                *rng.pick(products)
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
            let shipped = at_time(day.checked_add_days(Days::new(1)).unwrap_or(day), rng);
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
                        stamp(at_time(on, rng)),
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
    Ok(())
}

/// The expense categories and expenses; coffee comes often, and twice in the last days.
fn expenses(w: &mut Writer<'_>, rng: &mut Rng, config: &DemoConfig) {
    let today = config.today;
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
            day_before(rng, today)
        };
        let net = low + rng.below(high - low);
        // Gross = net × (1 + rate), rounded to the cent, halves up; the tax is the difference.
        let gross = (net * (10_000 + rate) + 5_000) / 10_000;
        let tax = gross - net;
        w.row(
            "expenses",
            "id, description, category_id, net_amount, tax_rate, tax_amount, gross_amount, spent_on, created_at",
            format!("{id}, {}, {}, {}, {}, {}, {}, {}, {}", text(rng.pick::<&str>(descriptions)), category + 1, money(net), rate_text(rate), money(tax), money(gross), date(day), stamp(at_time(day, rng))),
        );
    }
}

/// The projects and tasks; the inbox holds the birthday and personal-website tasks.
fn projects_and_tasks(w: &mut Writer<'_>, rng: &mut Rng, config: &DemoConfig) {
    let today = config.today;
    for (i, (name, description)) in PROJECTS.iter().enumerate() {
        let created = at_time(day_before(rng, today), rng);
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
            rng,
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
                rng,
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
}
