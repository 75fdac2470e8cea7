//! Order tools: `get_order`, `find_orders` (small pages), `order_stats`.

use bigdecimal::BigDecimal;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use steward_core::{Tool, ToolData, ToolError, ToolOutput, TypedTool};
use steward_sql::Param;

use crate::cells::{self, Kind, amount_sum, first, objects};
use crate::common::parse_day;
use crate::money::{AMOUNT_SCALE, amount_text};
use crate::store::Store;

/// Arguments of `get_order`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetOrder {
    /// The order code, which users also call the order number: exactly 10 upper-case letters, e.g. QZKDLWPRTM.
    #[schemars(regex(pattern = r"^[A-Z]{10}$"))]
    pub order_code: String,
}

/// `get_order`.
pub fn get_order(store: Store) -> impl Tool {
    TypedTool::with_state(
        "get_order",
        "Looks up one order by its order code (users also say \"order number\"): status, delivery ETA, shipment, \
         items and customer.",
        store,
        |store, ctx, args: GetOrder| async move {
            let code = Param::Text(args.order_code.clone());
            let order = store
                .read(&ctx, "SELECT o.id, o.order_code, o.status, o.ordered_at, o.total, c.name, c.email, c.city, c.country \
                     FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.order_code = ?",
                    &[code],
                )
                .await?;
            let Some(o) = first(&order) else {
                return Err(ToolError::new(format!(
                    "There is no order with code {}. Check the code (10 letters) with the user, or search with \
                     find_orders by the customer's name or email.",
                    args.order_code
                ))
                .for_people(format!(
                    "There is no order with code {}. Check the code (10 letters), or search with find_orders by \
                     the customer's name or email.",
                    args.order_code
                )));
            };
            let id = Param::Int(o.int(0)?);
            let items = store
                .read(&ctx, "SELECT p.name, i.quantity, i.unit_price FROM order_items i JOIN products p ON p.id = i.product_id \
                     WHERE i.order_id = ? ORDER BY i.id",
                    std::slice::from_ref(&id),
                )
                .await?;
            let shipment = store
                .read(&ctx, "SELECT carrier, tracking_number, status, shipped_at, eta, delivered_at, last_location FROM shipments WHERE order_id = ?",
                    &[id],
                )
                .await?;
            let status = o.text(2)?;
            let place: Vec<String> = [o.opt_text(7)?, o.opt_text(8)?].into_iter().flatten().collect();
            let place = if place.is_empty() { String::new() } else { format!(" ({})", place.join(", ")) };
            let mut lines = vec![format!(
                "Order {}: {status}. Ordered on {} by {} <{}>{place}. Total {}.",
                o.text(1)?,
                o.day(3)?,
                o.text(5)?,
                o.text(6)?,
                amount_text(&o.amount(4)?)
            )];
            let unknown = |day: Option<chrono::NaiveDate>| day.map_or_else(|| "unknown".to_owned(), |d| d.to_string());
            match first(&shipment) {
                Some(s) if status == "DELIVERED" => lines.push(format!(
                    "Delivered on {} by {} (tracking {}).",
                    unknown(s.opt_day(5)?),
                    s.text(0)?,
                    s.text(1)?
                )),
                Some(s) => lines.push(format!(
                    "Shipped on {} with {} (tracking {}); estimated delivery (ETA) {}; last seen: {}.",
                    unknown(s.opt_day(3)?),
                    s.text(0)?,
                    s.text(1)?,
                    unknown(s.opt_day(4)?),
                    s.opt_text(6)?.unwrap_or_else(|| "unknown".to_owned())
                )),
                None if status == "CANCELLED" => lines.push("The order was cancelled; nothing will be delivered.".into()),
                None => lines.push("Not shipped yet, so there is no delivery date yet.".into()),
            }
            for item in cells::rows(&items) {
                lines.push(format!("- {} × {} at {}", item.int(1)?, item.text(0)?, amount_text(&item.amount(2)?)));
            }
            let data = json!({"order": objects(&order, &[("id", Kind::Int), ("total", Kind::Amount)])?,
                              "items": objects(&items, &[("quantity", Kind::Int), ("unit_price", Kind::Amount)])?,
                              "shipment": objects(&shipment, &[])?});
            Ok(ToolOutput::text(lines.join("\n")).with_data(ToolData::Json { value: data }))
        },
    )
    .read_only()
}

/// Conditions on `o.ordered_at` for an inclusive range of days.
fn ordered_between(
    store: &Store,
    from: Option<&str>,
    to: Option<&str>,
    clauses: &mut Vec<String>,
    params: &mut Vec<Param>,
) -> Result<(), ToolError> {
    let today = store.today();
    if let Some(from) = from {
        clauses.push("o.ordered_at >= ?".into());
        params.push(Param::Timestamp(
            parse_day(from, today)
                .map_err(ToolError::new)?
                .and_time(chrono::NaiveTime::MIN),
        ));
    }
    if let Some(to) = to {
        let end = parse_day(to, today)
            .map_err(ToolError::new)?
            .succ_opt()
            .unwrap_or(today);
        clauses.push("o.ordered_at < ?".into());
        params.push(Param::Timestamp(end.and_time(chrono::NaiveTime::MIN)));
    }
    Ok(())
}

/// Order statuses.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
pub enum OrderStatus {
    /// Placed, not paid.
    #[serde(rename = "PENDING")]
    Pending,
    /// Paid, not shipped.
    #[serde(rename = "PAID")]
    Paid,
    /// Left the warehouse.
    #[serde(rename = "SHIPPED")]
    Shipped,
    /// On its way.
    #[serde(rename = "IN TRANSIT")]
    InTransit,
    /// Arrived.
    #[serde(rename = "DELIVERED")]
    Delivered,
    /// Cancelled.
    #[serde(rename = "CANCELLED")]
    Cancelled,
}

impl OrderStatus {
    fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Paid => "PAID",
            Self::Shipped => "SHIPPED",
            Self::InTransit => "IN TRANSIT",
            Self::Delivered => "DELIVERED",
            Self::Cancelled => "CANCELLED",
        }
    }
}

/// Arguments of `find_orders`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindOrders {
    /// Part of the customer's name or email.
    pub customer: Option<String>,
    /// Only orders in this status.
    pub status: Option<OrderStatus>,
    /// Ordered on or after this day (YYYY-MM-DD).
    pub from: Option<String>,
    /// Ordered on or before this day (YYYY-MM-DD).
    pub to: Option<String>,
    /// The page, from 1 (default 1).
    #[schemars(range(min = 1))]
    pub page: Option<u32>,
    /// Orders per page (default 10).
    #[schemars(range(min = 1, max = 25))]
    pub page_size: Option<u32>,
}

/// `find_orders`.
pub fn find_orders(store: Store) -> impl Tool {
    TypedTool::with_state(
        "find_orders",
        "Finds orders by customer name or email, status and order date, newest first, a small page at a time.",
        store,
        |store, ctx, args: FindOrders| async move {
            let mut clauses = vec!["1 = 1".to_owned()];
            let mut params = Vec::new();
            if let Some(customer) = args.customer.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
                clauses.push("(LOWER(c.name) LIKE ? OR LOWER(c.email) LIKE ?)".into());
                let pattern = format!("%{}%", customer.to_lowercase());
                params.push(Param::Text(pattern.clone()));
                params.push(Param::Text(pattern));
            }
            if let Some(status) = args.status {
                clauses.push("o.status = ?".into());
                params.push(Param::Text(status.as_str().to_owned()));
            }
            ordered_between(&store, args.from.as_deref(), args.to.as_deref(), &mut clauses, &mut params)?;
            let clause = clauses.join(" AND ");
            let size = args.page_size.unwrap_or(10).clamp(1, 25);
            let page = args.page.unwrap_or(1).max(1);
            let total = store
                .read(&ctx, &format!("SELECT COUNT(*) FROM orders o JOIN customers c ON c.id = o.customer_id WHERE {clause}"), &params)
                .await?;
            let total = match first(&total) {
                Some(r) => r.int(0)?,
                None => return Err(ToolError::internal("COUNT(*) returned no row")),
            };
            let result = store
                .read(&ctx, &format!(
                        "SELECT o.order_code, o.status, o.ordered_at, o.total, c.name, c.email FROM orders o \
                         JOIN customers c ON c.id = o.customer_id WHERE {clause} ORDER BY o.ordered_at DESC, o.id DESC \
                         LIMIT {size} OFFSET {}",
                        (page - 1) * size
                    ),
                    &params,
                )
                .await?;
            if total == 0 {
                return Ok(ToolOutput::text("No orders match."));
            }
            let first = (page - 1) * size + 1;
            let mut lines = vec![format!(
                "Orders {first}–{} of {total}{}:",
                first as i64 + result.rows.len() as i64 - 1,
                if (first as i64 - 1 + result.rows.len() as i64) < total { format!("; ask for page {} for more", page + 1) } else { String::new() }
            )];
            for r in cells::rows(&result) {
                lines.push(format!("{} {} ordered {} total {} by {} <{}>", r.text(0)?, r.text(1)?, r.day(2)?, amount_text(&r.amount(3)?), r.text(4)?, r.text(5)?));
            }
            let orders = objects(&result, &[("total", Kind::Amount)])?;
            Ok(ToolOutput::text(lines.join("\n")).with_data(ToolData::Json { value: json!({"total": total, "page": page, "orders": orders}) }))
        },
    )
    .read_only()
}

/// Arguments of `order_stats`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderStats {
    /// From this day (YYYY-MM-DD); all time when omitted.
    pub from: Option<String>,
    /// To this day (YYYY-MM-DD).
    pub to: Option<String>,
}

/// `order_stats`.
pub fn order_stats(store: Store) -> impl Tool {
    TypedTool::with_state(
        "order_stats",
        "Order statistics over a period: orders and revenue by status, average order value, best-selling products.",
        store,
        |store, ctx, args: OrderStats| async move {
            let mut clauses = vec!["1 = 1".to_owned()];
            let mut params = Vec::new();
            ordered_between(&store, args.from.as_deref(), args.to.as_deref(), &mut clauses, &mut params)?;
            let clause = clauses.join(" AND ");
            let dialect = store.db.dialect();
            let by_status = store
                .read(&ctx, &format!(
                        "SELECT o.status, COUNT(*) AS orders, {} AS revenue FROM orders o WHERE {clause} \
                         GROUP BY o.status ORDER BY COUNT(*) DESC, o.status",
                        amount_sum(dialect, "o.total")
                    ),
                    &params,
                )
                .await?;
            let top = store
                .read(&ctx, &format!(
                        "SELECT p.name, SUM(i.quantity) AS units FROM order_items i JOIN orders o ON o.id = i.order_id \
                         JOIN products p ON p.id = i.product_id WHERE {clause} AND o.status <> 'CANCELLED' \
                         GROUP BY p.name ORDER BY units DESC, p.name LIMIT 5"
                    ),
                    &params,
                )
                .await?;
            let (mut orders, mut revenue) = (0i64, BigDecimal::new(0.into(), AMOUNT_SCALE));
            let mut lines = Vec::new();
            let mut statuses = Vec::new();
            for r in cells::rows(&by_status) {
                let (status, n, sum) = (r.text(0)?, r.int(1)?, r.amount_sum(2, dialect)?);
                if status != "CANCELLED" {
                    orders += n;
                    revenue += &sum;
                }
                lines.push(format!("{status}: {n} orders, {}", amount_text(&sum)));
                statuses.push(json!({"status": status, "orders": n, "revenue": amount_text(&sum)}));
            }
            let average = if orders > 0 {
                crate::money::round(&(&revenue / BigDecimal::from(orders)), AMOUNT_SCALE)
            } else {
                BigDecimal::new(0.into(), AMOUNT_SCALE)
            };
            let period = match (&args.from, &args.to) {
                (None, None) => "all time".to_owned(),
                (from, to) => format!("{} to {}", from.as_deref().unwrap_or("the start"), to.as_deref().unwrap_or("today")),
            };
            let (revenue, average) = (amount_text(&revenue), amount_text(&average));
            lines.insert(0, format!("{period}: {orders} orders (not cancelled), revenue {revenue}, average order {average}."));
            let mut best = Vec::new();
            for r in cells::rows(&top) {
                best.push(format!("{} ({} units)", r.text(0)?, r.int(1)?));
            }
            if !best.is_empty() {
                lines.push(format!("Best sellers: {}.", best.join(", ")));
            }
            Ok(ToolOutput::text(lines.join("\n")).with_data(ToolData::Json {
                value: json!({"orders": orders, "revenue": revenue, "average": average,
                              "by_status": statuses, "best_sellers": objects(&top, &[("units", Kind::Int)])?}),
            }))
        },
    )
    .read_only()
}
