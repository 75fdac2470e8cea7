//! Synthetic distractor tables, as an enterprise schema has them: `<module>__<entity>[_<variant>]` (CRM,
//! ERP, HR, warehouse, travel, learning…) with an `id` key, foreign keys to other tables of the same module,
//! plausible columns (names, codes, statuses, dates, amounts, places) and a few rows of plausible values. The
//! vocabulary overlaps the real databases' on purpose (customers, orders, flights, courses, cars, artists):
//! a distractor must look like an answer. Deterministic: a seeded SplitMix64.

use std::collections::BTreeSet;

use super::merge::{ColumnDef, FkDef, TableDef, string_literal};

const MODULES: &[&str] = &[
    "crm",
    "erp",
    "hr",
    "fin",
    "wms",
    "scm",
    "mkt",
    "ops",
    "it",
    "lms",
    "pos",
    "bi",
    "legal",
    "proc",
    "fleet",
    "travel",
    "support",
    "billing",
    "cms",
    "iot",
    "qa",
    "risk",
    "tax",
    "payroll",
    "ecom",
    "events",
    "media",
    "facilities",
    "research",
    "compliance",
    "sales",
    "logistics",
];

const ENTITIES: &[&str] = &[
    "customer",
    "customer_contact",
    "customer_address",
    "account",
    "contact",
    "lead",
    "opportunity",
    "order",
    "order_line",
    "order_status",
    "invoice",
    "invoice_line",
    "payment",
    "refund",
    "product",
    "product_category",
    "price_list",
    "discount",
    "coupon",
    "shipment",
    "carrier",
    "warehouse",
    "bin_location",
    "stock_level",
    "stock_movement",
    "supplier",
    "purchase_order",
    "requisition",
    "contract",
    "employee",
    "department",
    "job_position",
    "salary_band",
    "timesheet",
    "leave_request",
    "benefit_plan",
    "training_course",
    "course_enrollment",
    "certification",
    "asset",
    "software_license",
    "ticket",
    "incident",
    "service_level",
    "campaign",
    "channel",
    "audience_segment",
    "email_event",
    "web_session",
    "page_view",
    "vehicle",
    "driver",
    "route",
    "trip",
    "booking",
    "flight_booking",
    "hotel_booking",
    "airport_transfer",
    "expense_report",
    "expense_item",
    "budget",
    "cost_center",
    "ledger_entry",
    "journal",
    "fiscal_period",
    "tax_code",
    "currency_rate",
    "country",
    "region",
    "city",
    "store",
    "terminal",
    "receipt",
    "loyalty_member",
    "review",
    "survey_response",
    "device",
    "sensor_reading",
    "alert",
    "user",
    "role",
    "permission",
    "audit_event",
    "document",
    "attachment",
    "project",
    "task",
    "milestone",
    "event",
    "venue",
    "ticket_sale",
    "artist_contract",
    "media_asset",
    "playlist",
    "track_license",
    "student",
    "instructor",
    "classroom",
    "semester",
    "grade",
    "publication",
    "author_profile",
    "citation",
    "keyword",
    "business_unit",
    "partner",
    "reseller",
    "subscription",
    "plan",
    "usage_record",
    "car_lease",
    "pet_insurance_policy",
    "claim",
    "patient_visit",
    "doctor_schedule",
    "prescription",
    "restaurant_supplier",
    "menu_item",
    "reservation",
    "broker_account",
    "trade",
    "portfolio",
    "wallet",
    "merchant",
    "notification",
    "session",
    "setting",
    "geography_zone",
    "mountain_site",
    "river_gauge",
    "lake_permit",
    "state_office",
];

const VARIANTS: &[&str] = &[
    "",
    "",
    "",
    "_history",
    "_archive",
    "_staging",
    "_snapshot",
    "_log",
    "_v2",
    "_daily",
    "_monthly",
    "_summary",
    "_map",
    "_xref",
    "_audit",
    "_backup",
    "_tmp",
    "_import",
];

/// Attribute columns: name (a `*` is the entity), type, value pool.
const ATTRIBUTES: &[(&str, &str, &[&str])] = &[
    ("name", "TEXT", PEOPLE),
    ("*_name", "TEXT", COMPANIES),
    ("title", "TEXT", TITLES),
    ("code", "TEXT", CODES),
    ("*_code", "TEXT", CODES),
    ("status", "TEXT", STATUSES),
    ("*_status", "TEXT", STATUSES),
    ("description", "TEXT", TITLES),
    ("notes", "TEXT", TITLES),
    ("category", "TEXT", CATEGORIES),
    ("type", "TEXT", CATEGORIES),
    ("priority", "TEXT", &["low", "medium", "high", "urgent"]),
    ("created_at", "TIMESTAMP", DATES),
    ("updated_at", "TIMESTAMP", DATES),
    ("start_date", "DATE", DATES),
    ("end_date", "DATE", DATES),
    ("due_date", "DATE", DATES),
    ("amount", "NUMERIC(12,2)", &[]),
    ("total_amount", "NUMERIC(12,2)", &[]),
    ("unit_price", "NUMERIC(10,2)", &[]),
    ("quantity", "INTEGER", &[]),
    (
        "currency_code",
        "TEXT",
        &["EUR", "USD", "GBP", "JPY", "CHF"],
    ),
    ("country", "TEXT", COUNTRIES),
    ("city", "TEXT", CITIES),
    (
        "region",
        "TEXT",
        &["EMEA", "APAC", "NA", "LATAM", "North", "South"],
    ),
    (
        "email",
        "TEXT",
        &["ops@example.com", "info@example.org", "jane@example.net"],
    ),
    ("phone", "TEXT", &["555-0100", "555-0199", "555-0142"]),
    ("rating", "INTEGER", &[]),
    ("score", "REAL", &[]),
    ("year", "INTEGER", &[]),
    ("is_active", "BOOLEAN", &[]),
    ("owner", "TEXT", PEOPLE),
    (
        "language",
        "TEXT",
        &["English", "French", "German", "Spanish", "Japanese"],
    ),
    (
        "source_system",
        "TEXT",
        &["SAP", "Salesforce", "Workday", "legacy", "manual"],
    ),
    ("external_ref", "TEXT", CODES),
    ("version", "INTEGER", &[]),
    ("age", "INTEGER", &[]),
    ("weight", "REAL", &[]),
    ("capacity", "INTEGER", &[]),
    ("duration_minutes", "INTEGER", &[]),
    (
        "color",
        "TEXT",
        &["red", "blue", "black", "white", "silver"],
    ),
    (
        "brand",
        "TEXT",
        &["Acme", "Globex", "Initech", "Umbrella", "Stark"],
    ),
    ("model", "TEXT", &["X1", "Pro", "Lite", "Max", "Classic"]),
    (
        "genre",
        "TEXT",
        &["Rock", "Jazz", "Pop", "Classical", "Metal"],
    ),
    ("level", "TEXT", &["junior", "senior", "lead", "principal"]),
    (
        "channel",
        "TEXT",
        &["web", "mobile", "store", "phone", "partner"],
    ),
];

const PEOPLE: &[&str] = &[
    "John Smith",
    "Maria Garcia",
    "Wei Chen",
    "Fatima Khan",
    "Lukas Meyer",
    "Aiko Tanaka",
    "Olga Petrova",
    "James Brown",
    "Sofia Rossi",
    "Ahmed Ali",
    "Emma Wilson",
    "Noah Martin",
];
const COMPANIES: &[&str] = &[
    "Northwind",
    "Contoso",
    "Fabrikam",
    "Tailspin",
    "Woodgrove",
    "Adventure Works",
    "Litware",
    "Proseware",
    "Wingtip",
    "Alpine Ski House",
    "Blue Yonder",
    "Coho Winery",
];
const TITLES: &[&str] = &[
    "quarterly review",
    "annual report",
    "kickoff meeting",
    "safety training",
    "price update",
    "migration plan",
    "customer feedback",
    "year end close",
    "onboarding",
    "product launch",
];
const CODES: &[&str] = &[
    "AB-1023", "ZX-4410", "QK-7781", "MM-0042", "PL-9350", "RT-1188", "CN-5521", "EU-3307",
];
const STATUSES: &[&str] = &[
    "active",
    "inactive",
    "pending",
    "closed",
    "cancelled",
    "open",
    "approved",
    "rejected",
    "in transit",
    "delivered",
    "draft",
    "completed",
];
const CATEGORIES: &[&str] = &[
    "hardware",
    "software",
    "services",
    "travel",
    "office",
    "marketing",
    "logistics",
    "training",
    "maintenance",
    "consulting",
];
const DATES: &[&str] = &[
    "2023-01-15",
    "2023-06-30",
    "2023-11-02",
    "2024-02-29",
    "2024-05-17",
    "2024-09-09",
];
const COUNTRIES: &[&str] = &[
    "USA",
    "France",
    "Germany",
    "Japan",
    "United Kingdom",
    "Canada",
    "Brazil",
    "India",
    "Netherlands",
    "Spain",
    "Italy",
    "Australia",
];
const CITIES: &[&str] = &[
    "New York", "Paris", "Berlin", "Tokyo", "London", "Toronto", "Madrid", "Chicago", "Boston",
    "Seattle", "Austin", "Denver",
];

/// Rows per distractor.
const ROWS: usize = 5;

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items.get(self.below(items.len())).copied().unwrap_or("")
    }
}

/// `count` distractor tables whose names are not in `taken` (lower case).
pub(super) fn generate(seed: u64, count: usize, taken: &BTreeSet<String>) -> Vec<TableDef> {
    let mut rng = Rng(seed);
    let mut names: BTreeSet<String> = taken.clone();
    let mut tables: Vec<TableDef> = Vec::new();
    let mut attempts = 0;
    while tables.len() < count && attempts < count * 50 {
        attempts += 1;
        let module = rng.pick(MODULES);
        let entity = rng.pick(ENTITIES);
        let variant = rng.pick(VARIANTS);
        let name = format!("{module}__{entity}{variant}");
        if !names.insert(name.to_lowercase()) {
            continue;
        }
        let mut def = TableDef {
            name,
            ..TableDef::default()
        };
        def.columns.push(ColumnDef {
            name: "id".into(),
            data_type: "INTEGER".into(),
            not_null: false,
        });
        def.primary_key.push("id".into());
        // Up to two foreign keys to earlier tables of the same module.
        let siblings: Vec<(String, String)> = tables
            .iter()
            .filter_map(|t| {
                let (m, rest) = t.name.split_once("__")?;
                (m == module).then(|| (t.name.clone(), entity_of(rest).to_owned()))
            })
            .collect();
        let links = if siblings.is_empty() { 0 } else { rng.below(3) };
        for _ in 0..links {
            let (target, target_entity) = &siblings[rng.below(siblings.len())];
            let column = format!("{target_entity}_id");
            if def.columns.iter().any(|c| c.name == column) {
                continue;
            }
            def.columns.push(ColumnDef {
                name: column.clone(),
                data_type: "INTEGER".into(),
                not_null: rng.below(2) == 0,
            });
            def.foreign_keys.push(FkDef {
                columns: vec![column],
                table: target.clone(),
                referenced: vec!["id".into()],
            });
        }
        let mut pools: Vec<&[&str]> = vec![&[]; def.columns.len()];
        let wanted = 3 + rng.below(9);
        for _ in 0..wanted {
            let (pattern, data_type, pool) = ATTRIBUTES[rng.below(ATTRIBUTES.len())];
            let column = pattern.replace('*', entity);
            if def.columns.iter().any(|c| c.name == column) {
                continue;
            }
            def.columns.push(ColumnDef {
                name: column,
                data_type: data_type.into(),
                not_null: rng.below(3) == 0,
            });
            pools.push(pool);
        }
        def.row_columns = def.columns.iter().map(|c| c.name.clone()).collect();
        for r in 0..ROWS {
            let row: Vec<String> = def
                .columns
                .iter()
                .zip(&pools)
                .enumerate()
                .map(|(i, (column, pool))| {
                    if i == 0 {
                        return (r + 1).to_string();
                    }
                    if !pool.is_empty() {
                        return string_literal(rng.pick(pool));
                    }
                    match column.data_type.as_str() {
                        "BOOLEAN" => rng.below(2).to_string(),
                        "REAL" => format!("{}.{}", rng.below(100), rng.below(10)),
                        t if t.starts_with("NUMERIC") => {
                            format!("{}.{:02}", rng.below(10_000), rng.below(100))
                        }
                        _ if column.name == "year" => (2015 + rng.below(10)).to_string(),
                        _ => (1 + rng.below(ROWS)).to_string(),
                    }
                })
                .collect();
            def.rows.push(row);
        }
        tables.push(def);
    }
    tables
}

/// The entity of a table name's rest (`order_line_archive` → `order_line`).
fn entity_of(rest: &str) -> &str {
    VARIANTS
        .iter()
        .filter(|v| !v.is_empty())
        .find_map(|v| rest.strip_suffix(v))
        .unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distractors_are_deterministic_and_new() {
        let taken = BTreeSet::from(["crm__customer".to_owned()]);
        let a = generate(7, 300, &taken);
        let b = generate(7, 300, &taken);
        assert_eq!(a.len(), 300);
        let names: Vec<&str> = a.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, b.iter().map(|t| t.name.as_str()).collect::<Vec<_>>());
        assert!(!names.contains(&"crm__customer"));
        assert!(a.iter().any(|t| !t.foreign_keys.is_empty()));
        assert!(a.iter().all(|t| t.rows.len() == ROWS));
    }
}
