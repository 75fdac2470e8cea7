//! Expense tools: `add_expense` (net, gross and tax rate: any two give the third, computed here),
//! `list_expenses`, `expense_summary`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use steward_core::{Tool, ToolData, ToolError, ToolOutput, TypedTool};
use steward_sql::Param;

use crate::common::parse_day;
use crate::store::{Begun, Store, at, day, int, num, objects, text, unavailable};

/// Arguments of `add_expense`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddExpense {
    /// What was bought, e.g. "Coffee" or "Train ticket to Berlin".
    #[schemars(length(min = 1, max = 200))]
    pub description: String,
    /// The category, e.g. Coffee, Meals, Travel, Office supplies, Software, Hardware, Other (default Other).
    pub category: Option<String>,
    /// The amount before tax.
    #[schemars(range(min = 0))]
    pub net_amount: Option<f64>,
    /// The amount including tax.
    #[schemars(range(min = 0))]
    pub gross_amount: Option<f64>,
    /// The tax rate as a fraction: 0.2 for 20 %.
    #[schemars(range(min = 0, max = 1))]
    pub tax_rate: Option<f64>,
    /// The day of the expense: YYYY-MM-DD (today and yesterday work too).
    pub date: String,
}

/// Net, tax and gross, consistent to the cent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Amounts {
    /// Before tax.
    pub net: f64,
    /// The rate, as a fraction.
    pub rate: f64,
    /// The tax.
    pub tax: f64,
    /// After tax.
    pub gross: f64,
}

fn cents(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The third of net, gross and tax rate from the other two; all three must agree to the cent.
pub fn amounts(
    net: Option<f64>,
    gross: Option<f64>,
    rate: Option<f64>,
) -> Result<Amounts, ToolError> {
    let done = |net: f64, rate: f64, gross: f64| Amounts {
        net: cents(net),
        rate: (rate * 10_000.0).round() / 10_000.0,
        tax: cents(gross - net),
        gross: cents(gross),
    };
    match (net, gross, rate) {
        (Some(n), Some(g), Some(r)) => {
            let expected = cents(n * (1.0 + r));
            if (expected - cents(g)).abs() > 0.01 + 1e-9 {
                return Err(ToolError::new(format!(
                    "The amounts do not agree: net {n:.2} with a tax rate of {r} gives a gross amount of {expected:.2}, not {g:.2}. \
                     Send only two of net_amount, gross_amount and tax_rate; the third is computed."
                )));
            }
            Ok(done(n, r, g))
        }
        (Some(n), None, Some(r)) => Ok(done(n, r, n * (1.0 + r))),
        (None, Some(g), Some(r)) => Ok(done(g / (1.0 + r), r, g)),
        (Some(n), Some(g), None) => {
            if n <= 0.0 {
                return Err(ToolError::new(
                    "With a net amount of 0 the tax rate cannot be computed; send tax_rate instead.",
                ));
            }
            if g < n {
                return Err(ToolError::new(format!(
                    "The gross amount {g:.2} is less than the net amount {n:.2}; check which is which."
                )));
            }
            Ok(done(n, g / n - 1.0, g))
        }
        (net, gross, rate) => {
            let missing: Vec<&str> = [
                ("net_amount", net.is_none()),
                ("gross_amount", gross.is_none()),
                ("tax_rate", rate.is_none()),
            ]
            .iter()
            .filter(|(_, missing)| *missing)
            .map(|(name, _)| *name)
            .collect();
            Err(ToolError::new(format!(
                "Missing values: {} (two of net_amount, gross_amount and tax_rate are needed; the third is computed). \
                 Ask the user for them or use a tool that provides them.",
                missing.join(" or ")
            )))
        }
    }
}

async fn category_id(
    tx: &mut steward_sql::WriteTx,
    name: Option<&str>,
) -> Result<(i64, String), ToolError> {
    let rows = tx
        .fetch("SELECT id, name FROM expense_categories ORDER BY name", &[])
        .await
        .map_err(unavailable)?;
    let wanted = name
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or("Other");
    rows.rows
        .iter()
        .find(|r| text(at(r, 1)).eq_ignore_ascii_case(wanted))
        .map(|r| (int(at(r, 0)), text(at(r, 1))))
        .ok_or_else(|| {
            let names: Vec<String> = rows.rows.iter().map(|r| text(at(r, 1))).collect();
            ToolError::new(format!(
                "Unknown category `{wanted}`. The categories are: {}.",
                names.join(", ")
            ))
        })
}

/// `add_expense`.
pub fn add_expense(store: Store) -> impl Tool {
    TypedTool::new(
        "add_expense",
        "Records one expense. Give two of net_amount, gross_amount and tax_rate: the third is computed. \
         The description and the date are required; ask the user when they did not say.",
        move |ctx, args: AddExpense| {
            let store = store.clone();
            async move {
                let spent_on = parse_day(&args.date, store.today()).map_err(ToolError::new)?;
                let a = amounts(args.net_amount, args.gross_amount, args.tax_rate)?;
                let mut tx = match store.begin(&ctx).await? {
                    Begun::Replay(output) => return Ok(output),
                    Begun::Fresh(tx) => tx,
                };
                let (category, category_name) = category_id(&mut tx, args.category.as_deref()).await?;
                let now = Param::Timestamp(store.clock.now().0.naive_local());
                let id = tx
                    .insert(
                        "INSERT INTO expenses (description, category_id, net_amount, tax_rate, tax_amount, gross_amount, spent_on, created_at) \
                         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        &[Param::Text(args.description.trim().to_owned()), Param::Int(category), Param::Float(a.net), Param::Float(a.rate), Param::Float(a.tax), Param::Float(a.gross), Param::Date(spent_on), now],
                    )
                    .await
                    .map_err(unavailable)?;
                let content = format!(
                    "Recorded expense #{id}: {} ({category_name}) on {spent_on}: net {:.2}, tax {}% = {:.2}, gross {:.2}.",
                    args.description.trim(),
                    a.net,
                    (a.rate * 10000.0).round() / 100.0,
                    a.tax,
                    a.gross
                );
                let data = json!({"id": id, "description": args.description.trim(), "category": category_name, "net_amount": a.net,
                                  "tax_rate": a.rate, "tax_amount": a.tax, "gross_amount": a.gross, "date": spent_on.to_string()});
                let output = ToolOutput::text(content).with_data(ToolData::Json { value: data });
                store.finish(tx, &ctx, "add_expense", &format!("add expense #{id}"), output).await
            }
        },
    )
    .lenient()
}

/// Arguments of `list_expenses`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListExpenses {
    /// The first day (YYYY-MM-DD).
    pub from: Option<String>,
    /// The last day (YYYY-MM-DD).
    pub to: Option<String>,
    /// Only this category.
    pub category: Option<String>,
    /// Only expenses whose description contains this text.
    pub search: Option<String>,
    /// Most expenses to list, newest first (default 20).
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
}

/// The WHERE clause and parameters for a date range and a category.
fn filters(
    store: &Store,
    from: Option<&str>,
    to: Option<&str>,
    category: Option<&str>,
) -> Result<(String, Vec<Param>), ToolError> {
    let mut clauses = vec!["1 = 1".to_owned()];
    let mut params = Vec::new();
    if let Some(from) = from {
        clauses.push("e.spent_on >= ?".into());
        params.push(Param::Date(
            parse_day(from, store.today()).map_err(ToolError::new)?,
        ));
    }
    if let Some(to) = to {
        clauses.push("e.spent_on <= ?".into());
        params.push(Param::Date(
            parse_day(to, store.today()).map_err(ToolError::new)?,
        ));
    }
    if let Some(category) = category.map(str::trim).filter(|c| !c.is_empty()) {
        clauses.push("LOWER(c.name) = LOWER(?)".into());
        params.push(Param::Text(category.to_owned()));
    }
    Ok((clauses.join(" AND "), params))
}

/// `list_expenses`.
pub fn list_expenses(store: Store) -> impl Tool {
    TypedTool::new(
        "list_expenses",
        "Lists expenses, newest first, optionally within dates, in one category or matching a text.",
        move |_ctx, args: ListExpenses| {
            let store = store.clone();
            async move {
                let (mut clause, mut params) = filters(&store, args.from.as_deref(), args.to.as_deref(), args.category.as_deref())?;
                if let Some(search) = args.search.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
                    clause.push_str(" AND LOWER(e.description) LIKE ?");
                    params.push(Param::Text(format!("%{}%", search.to_lowercase())));
                }
                let limit = args.limit.unwrap_or(20).clamp(1, 50);
                let sql = format!(
                    "SELECT e.id, e.spent_on, e.description, c.name AS category, e.net_amount, e.tax_rate, e.gross_amount \
                     FROM expenses e JOIN expense_categories c ON c.id = e.category_id WHERE {clause} \
                     ORDER BY e.spent_on DESC, e.id DESC LIMIT {limit}"
                );
                let result = store.read(&sql, &params).await?;
                if result.rows.is_empty() {
                    return Ok(ToolOutput::text("No expenses match."));
                }
                let lines: Vec<String> = result
                    .rows
                    .iter()
                    .map(|r| format!("#{} {} {} ({}): net {:.2}, gross {:.2}", text(at(r, 0)), day(at(r, 1)), text(at(r, 2)), text(at(r, 3)), num(at(r, 4)), num(at(r, 6))))
                    .collect();
                Ok(ToolOutput::text(lines.join("\n")).with_data(ToolData::Json { value: objects(&result) }))
            }
        },
    )
    .read_only()
}

/// How `expense_summary` groups.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GroupBy {
    /// One line per category.
    Category,
    /// One line per month.
    Month,
    /// One line per category and month.
    CategoryMonth,
    /// Only the totals.
    None,
}

/// Arguments of `expense_summary`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpenseSummary {
    /// The first day (YYYY-MM-DD); get today's date from current_date.
    pub from: String,
    /// The last day (YYYY-MM-DD).
    pub to: String,
    /// Only this category, e.g. Coffee.
    pub category: Option<String>,
    /// How to group (default category).
    pub group_by: Option<GroupBy>,
}

/// `expense_summary`.
pub fn expense_summary(store: Store) -> impl Tool {
    TypedTool::new(
        "expense_summary",
        "Totals of expenses (net, tax, gross and count) over a date range, by category and/or month.",
        move |_ctx, args: ExpenseSummary| {
            let store = store.clone();
            async move {
                let (clause, params) = filters(&store, Some(&args.from), Some(&args.to), args.category.as_deref())?;
                let month = match store.db.dialect() {
                    steward_sql::Dialect::Postgres => "TO_CHAR(e.spent_on, 'YYYY-MM')",
                    steward_sql::Dialect::Mysql => "DATE_FORMAT(e.spent_on, '%Y-%m')",
                    _ => "strftime('%Y-%m', e.spent_on)",
                };
                let group = args.group_by.unwrap_or(GroupBy::Category);
                let keys = match group {
                    GroupBy::Category => vec!["c.name".to_owned()],
                    GroupBy::Month => vec![month.to_owned()],
                    GroupBy::CategoryMonth => vec![month.to_owned(), "c.name".to_owned()],
                    GroupBy::None => vec![],
                };
                let select_keys = keys.iter().enumerate().map(|(i, k)| format!("{k} AS k{i}, ")).collect::<String>();
                let group_sql = if keys.is_empty() { String::new() } else { format!(" GROUP BY {} ORDER BY {}", keys.join(", "), keys.join(", ")) };
                let sql = format!(
                    "SELECT {select_keys}COUNT(*), ROUND(SUM(e.net_amount), 2), ROUND(SUM(e.tax_amount), 2), ROUND(SUM(e.gross_amount), 2) \
                     FROM expenses e JOIN expense_categories c ON c.id = e.category_id WHERE {clause}{group_sql}"
                );
                let result = store.read(&sql, &params).await?;
                let n = keys.len();
                let mut lines = Vec::new();
                let (mut count, mut net, mut tax, mut gross) = (0i64, 0.0, 0.0, 0.0);
                for r in &result.rows {
                    let label = (0..n).map(|i| text(at(r, i))).collect::<Vec<_>>().join(" ");
                    let (c, nt, tx, gr) = (int(at(r, n)), num(at(r, n + 1)), num(at(r, n + 2)), num(at(r, n + 3)));
                    count += c;
                    net += nt;
                    tax += tx;
                    gross += gr;
                    if n > 0 {
                        lines.push(format!("{label}: {c} expenses, net {nt:.2}, tax {tx:.2}, gross {gr:.2}"));
                    }
                }
                let scope = args.category.as_deref().map(|c| format!(" in {c}")).unwrap_or_default();
                lines.push(format!(
                    "Total{scope} from {} to {}: {count} expenses, net {net:.2}, tax {tax:.2}, gross {gross:.2}.",
                    args.from, args.to
                ));
                Ok(ToolOutput::text(lines.join("\n")).with_data(ToolData::Json {
                    value: json!({"count": count, "net": cents(net), "tax": cents(tax), "gross": cents(gross), "groups": objects(&result)}),
                }))
            }
        },
    )
    .read_only()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_two_give_the_third() {
        let a = amounts(Some(5.0), None, Some(0.2)).unwrap();
        assert_eq!((a.net, a.tax, a.gross), (5.0, 1.0, 6.0));
        let a = amounts(None, Some(6.0), Some(0.2)).unwrap();
        assert_eq!((a.net, a.tax, a.gross), (5.0, 1.0, 6.0));
        let a = amounts(Some(5.0), Some(6.0), None).unwrap();
        assert_eq!(a.rate, 0.2);
        let a = amounts(Some(3.33), None, Some(0.19)).unwrap();
        assert_eq!((a.tax, a.gross), (0.63, 3.96));
        assert!(amounts(Some(5.0), Some(6.0), Some(0.2)).is_ok());
        let err = amounts(Some(5.0), Some(7.0), Some(0.2))
            .unwrap_err()
            .message;
        assert!(err.starts_with("The amounts do not agree: net 5.00 with a tax rate of 0.2 gives a gross amount of 6.00, not 7.00."), "{err}");
        let err = amounts(Some(5.0), None, None).unwrap_err().message;
        assert!(
            err.starts_with("Missing values: gross_amount or tax_rate"),
            "{err}"
        );
        assert!(amounts(Some(6.0), Some(5.0), None).is_err());
    }
}
