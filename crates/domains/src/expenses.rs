//! Expense tools: `add_expense` (net, gross and tax rate: any two give the third, computed here),
//! `list_expenses`, `expense_summary`.

use bigdecimal::{BigDecimal, Zero};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use steward_core::{RowChange, Tool, ToolData, ToolError, ToolOutput, TypedTool};
use steward_sql::Param;

use crate::cells::{self, Kind, amount_sum, objects};
use crate::changes::{WriteCx, Written};
use crate::common::parse_day;
use crate::money::{
    self, AMOUNT_SCALE, Decimal, MAX_AMOUNT, MAX_RATE, RATE_SCALE, amount_text, fits_amount,
    fits_rate, plain, rate_text, round,
};
use crate::store::{Store, unavailable};

/// Arguments of `add_expense`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddExpense {
    /// What was bought, e.g. "Coffee" or "Train ticket to Berlin".
    #[schemars(length(min = 1, max = 200))]
    pub description: String,
    /// The category, e.g. Coffee, Meals, Travel, Office supplies, Software, Hardware, Other (default Other).
    pub category: Option<String>,
    /// The amount before tax.
    #[schemars(range(min = 0, max = 9_999_999_999.99))]
    pub net_amount: Option<Decimal>,
    /// The amount including tax.
    #[schemars(range(min = 0, max = 9_999_999_999.99))]
    pub gross_amount: Option<Decimal>,
    /// The tax rate as a fraction: 0.2 for 20 %.
    #[schemars(range(min = 0, max = 1))]
    pub tax_rate: Option<Decimal>,
    /// The day of the expense: YYYY-MM-DD (today and yesterday work too).
    pub date: String,
}

/// Net, tax and gross, consistent to the cent: `gross = net + tax` exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Amounts {
    /// Before tax, at cents.
    pub net: BigDecimal,
    /// The rate, as a fraction with four decimals.
    pub rate: BigDecimal,
    /// The tax, at cents.
    pub tax: BigDecimal,
    /// After tax, at cents.
    pub gross: BigDecimal,
}

impl Amounts {
    /// The rate as a percentage for people: `0.2000` → `20`, `0.0333` → `3.33`.
    pub fn percent(&self) -> String {
        plain(&(&self.rate * BigDecimal::from(100)))
    }
}

/// Gross from net and rate, at cents; refused when it does not fit an amount column.
fn gross_of(net: &BigDecimal, rate: &BigDecimal) -> Result<BigDecimal, ToolError> {
    let gross = round(&(net * (BigDecimal::from(1) + rate)), AMOUNT_SCALE);
    if fits_amount(&gross) {
        Ok(gross)
    } else {
        let fact = format!(
            "A net amount of {} with a tax rate of {} gives a gross amount of {}, beyond the largest amount, \
             {MAX_AMOUNT:.2}.",
            amount_text(net),
            plain(rate),
            amount_text(&gross)
        );
        Err(
            ToolError::new(format!("{fact} Check the amounts with the user."))
                .for_people(format!("{fact} Check the amounts.")),
        )
    }
}

/// The third of net, gross and tax rate from the other two, in exact decimal arithmetic rounded to the cent
/// (halves away from zero); when all three are given they must agree to the cent. Amounts must be from 0 to
/// 9,999,999,999.99 and rates from 0 to 1; the errors say so.
pub fn amounts(
    net: Option<&Decimal>,
    gross: Option<&Decimal>,
    rate: Option<&Decimal>,
) -> Result<Amounts, ToolError> {
    let net = net
        .map(|n| money::amount("net_amount", n))
        .transpose()
        .map_err(ToolError::new)?;
    let gross = gross
        .map(|g| money::amount("gross_amount", g))
        .transpose()
        .map_err(ToolError::new)?;
    let rate = rate
        .map(|r| money::rate("tax_rate", r))
        .transpose()
        .map_err(ToolError::new)?;
    let done = |net: BigDecimal, rate: BigDecimal, gross: BigDecimal| Amounts {
        tax: &gross - &net,
        net,
        rate,
        gross,
    };
    match (net, gross, rate) {
        (Some(n), Some(g), Some(r)) => {
            let expected = gross_of(&n, &r)?;
            if (&expected - &g).abs() > BigDecimal::new(1.into(), AMOUNT_SCALE) {
                return Err(ToolError::new(format!(
                    "The amounts do not agree: net {} with a tax rate of {} gives a gross amount of {}, not {}. \
                     Send only two of net_amount, gross_amount and tax_rate; the third is computed.",
                    amount_text(&n),
                    plain(&r),
                    amount_text(&expected),
                    amount_text(&g)
                )));
            }
            Ok(done(n, r, g))
        }
        (Some(n), None, Some(r)) => {
            let g = gross_of(&n, &r)?;
            Ok(done(n, r, g))
        }
        (None, Some(g), Some(r)) => {
            let n = round(&(&g / (BigDecimal::from(1) + &r)), AMOUNT_SCALE);
            Ok(done(n, r, g))
        }
        (Some(n), Some(g), None) => {
            if n.is_zero() {
                return Err(ToolError::new(
                    "With a net amount of 0 the tax rate cannot be computed; send tax_rate instead.",
                ));
            }
            if g < n {
                return Err(ToolError::new(format!(
                    "The gross amount {} is less than the net amount {}; check which is which.",
                    amount_text(&g),
                    amount_text(&n)
                )));
            }
            let r = round(&(&g / &n - BigDecimal::from(1)), RATE_SCALE);
            if !fits_rate(&r) {
                let fact = format!(
                    "A net amount of {} and a gross amount of {} give a tax rate of {}, above {MAX_RATE} (100 %)",
                    amount_text(&n),
                    amount_text(&g),
                    plain(&r)
                );
                return Err(
                    ToolError::new(format!("{fact}; check the amounts with the user."))
                        .for_people(format!("{fact}; check the amounts.")),
                );
            }
            Ok(done(n, r, g))
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
            let fact = format!(
                "Missing values: {} (two of net_amount, gross_amount and tax_rate are needed; the third is computed).",
                missing.join(" or ")
            );
            Err(ToolError::new(format!(
                "{fact} Ask the user for them or use a tool that provides them."
            ))
            .for_people(fact))
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
    let mut names = Vec::new();
    for row in cells::rows(&rows) {
        let found = row.text(1)?;
        if found.eq_ignore_ascii_case(wanted) {
            return Ok((row.int(0)?, found));
        }
        names.push(found);
    }
    Err(ToolError::new(format!(
        "Unknown category `{wanted}`. The categories are: {}.",
        names.join(", ")
    )))
}

/// `add_expense`.
pub fn add_expense(store: Store) -> impl Tool {
    let applier = std::sync::Arc::new(store.clone());
    TypedTool::with_state(
        "add_expense",
        "Records one expense. Give two of net_amount, gross_amount and tax_rate: the third is computed. \
         The description and the date are required; ask the user when they did not say.",
        store,
        |store, ctx, args: AddExpense| async move { store.write(&ctx, "add_expense", &args).await },
    )
    .lenient()
    .previewed_by_dry_run()
    .staged_by(applier)
}

/// The write of `add_expense`.
pub(crate) async fn add_expense_in(
    store: &Store,
    cx: &mut WriteCx<'_>,
    args: AddExpense,
) -> Result<Written, ToolError> {
    let spent_on = parse_day(&args.date, store.today()).map_err(ToolError::new)?;
    let a = amounts(
        args.net_amount.as_ref(),
        args.gross_amount.as_ref(),
        args.tax_rate.as_ref(),
    )?;
    let (category, category_name) = category_id(cx.tx, args.category.as_deref()).await?;
    let now = Param::Timestamp(store.clock.now().0.naive_local());
    let description = args.description.trim();
    let id = cx
        .tx
        .insert(
            "INSERT INTO expenses (description, category_id, net_amount, tax_rate, tax_amount, gross_amount, spent_on, created_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            &[Param::Text(description.to_owned()), Param::Int(category), Param::Decimal(a.net.clone()), Param::Decimal(a.rate.clone()),
              Param::Decimal(a.tax.clone()), Param::Decimal(a.gross.clone()), Param::Date(spent_on), now],
        )
        .await
        .map_err(unavailable)?;
    cx.keeps_in_view("expenses", id, &format!("the expense \"{description}\""))
        .await?;
    let shown = cx.ids.created("expense", id);
    let content = format!(
        "Recorded expense #{shown}: {description} ({category_name}) on {spent_on}: net {}, tax {}% = {}, gross {}.",
        amount_text(&a.net),
        a.percent(),
        amount_text(&a.tax),
        amount_text(&a.gross)
    );
    let data = json!({"id": shown, "description": description, "category": category_name, "net_amount": amount_text(&a.net),
                      "tax_rate": rate_text(&a.rate), "tax_amount": amount_text(&a.tax),
                      "gross_amount": amount_text(&a.gross), "date": spent_on.to_string()});
    let row = RowChange::insert(
        "expenses",
        format!("#{shown}"),
        &[
            ("description", description.to_owned()),
            ("category", category_name.clone()),
            ("net_amount", amount_text(&a.net)),
            ("tax_rate", format!("{} %", a.percent())),
            ("tax_amount", amount_text(&a.tax)),
            ("gross_amount", amount_text(&a.gross)),
            ("spent_on", spent_on.to_string()),
        ],
    );
    let output = ToolOutput::text(content)
        .with_data(ToolData::Json { value: data })
        .with_changes(vec![row]);
    Ok(Written {
        output,
        action: Some(format!("add expense #{id}")),
    })
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
    TypedTool::with_state(
        "list_expenses",
        "Lists expenses, newest first, optionally within dates, in one category or matching a text.",
        store,
        |store, ctx, args: ListExpenses| async move {
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
            let result = store.read(&ctx, &sql, &params).await?;
            if result.rows.is_empty() {
                return Ok(ToolOutput::text("No expenses match."));
            }
            let mut lines = Vec::with_capacity(result.rows.len());
            for r in cells::rows(&result) {
                lines.push(format!(
                    "#{} {} {} ({}): net {}, gross {}",
                    r.int(0)?,
                    r.day(1)?,
                    r.text(2)?,
                    r.text(3)?,
                    amount_text(&r.amount(4)?),
                    amount_text(&r.amount(6)?)
                ));
            }
            let kinds = [("id", Kind::Int), ("net_amount", Kind::Amount), ("tax_rate", Kind::Rate), ("gross_amount", Kind::Amount)];
            Ok(ToolOutput::text(lines.join("\n")).with_data(ToolData::Json { value: objects(&result, &kinds)? }))
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
    TypedTool::with_state(
        "expense_summary",
        "Totals of expenses (net, tax, gross and count) over a date range, by category and/or month.",
        store,
        |store, ctx, args: ExpenseSummary| async move {
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
            let dialect = store.db.dialect();
            let select_keys = keys.iter().enumerate().map(|(i, k)| format!("{k} AS k{i}, ")).collect::<String>();
            let group_sql = if keys.is_empty() { String::new() } else { format!(" GROUP BY {} ORDER BY {}", keys.join(", "), keys.join(", ")) };
            let sql = format!(
                "SELECT {select_keys}COUNT(*) AS expenses, {} AS net, {} AS tax, {} AS gross \
                 FROM expenses e JOIN expense_categories c ON c.id = e.category_id WHERE {clause}{group_sql}",
                amount_sum(dialect, "e.net_amount"),
                amount_sum(dialect, "e.tax_amount"),
                amount_sum(dialect, "e.gross_amount")
            );
            let result = store.read(&ctx, &sql, &params).await?;
            let names: &[&str] = match group {
                GroupBy::Category => &["category"],
                GroupBy::Month => &["month"],
                GroupBy::CategoryMonth => &["month", "category"],
                GroupBy::None => &[],
            };
            let n = keys.len();
            let mut lines = Vec::new();
            let mut groups = Vec::new();
            let zero = || BigDecimal::new(0.into(), AMOUNT_SCALE);
            let (mut count, mut net, mut tax, mut gross) = (0i64, zero(), zero(), zero());
            for r in cells::rows(&result) {
                let mut labels = Vec::with_capacity(n);
                for i in 0..n {
                    labels.push(r.text(i)?);
                }
                let (c, nt, tx, gr) = (r.int(n)?, r.amount_sum(n + 1, dialect)?, r.amount_sum(n + 2, dialect)?, r.amount_sum(n + 3, dialect)?);
                count += c;
                net += &nt;
                tax += &tx;
                gross += &gr;
                if n > 0 {
                    let (nt, tx, gr) = (amount_text(&nt), amount_text(&tx), amount_text(&gr));
                    lines.push(format!("{}: {c} expenses, net {nt}, tax {tx}, gross {gr}", labels.join(" ")));
                    let mut group: serde_json::Map<String, Value> =
                        names.iter().zip(labels).map(|(k, v)| ((*k).to_owned(), Value::String(v))).collect();
                    group.insert("count".into(), json!(c));
                    group.insert("net".into(), json!(nt));
                    group.insert("tax".into(), json!(tx));
                    group.insert("gross".into(), json!(gr));
                    groups.push(Value::Object(group));
                }
            }
            let scope = args.category.as_deref().map(|c| format!(" in {c}")).unwrap_or_default();
            let (net, tax, gross) = (amount_text(&net), amount_text(&tax), amount_text(&gross));
            lines.push(format!(
                "Total{scope} from {} to {}: {count} expenses, net {net}, tax {tax}, gross {gross}.",
                args.from, args.to
            ));
            Ok(ToolOutput::text(lines.join("\n")).with_data(ToolData::Json {
                value: json!({"count": count, "net": net, "tax": tax,
                              "gross": gross, "groups": groups}),
            }))
        },
    )
    .read_only()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Decimal {
        Decimal::from_text(text)
    }

    fn four(a: &Amounts) -> [String; 4] {
        [
            amount_text(&a.net),
            rate_text(&a.rate),
            amount_text(&a.tax),
            amount_text(&a.gross),
        ]
    }

    #[test]
    fn any_two_give_the_third() {
        let a = amounts(Some(&d("5")), None, Some(&d("0.2"))).unwrap();
        assert_eq!(four(&a), ["5.00", "0.2000", "1.00", "6.00"]);
        assert_eq!(a.percent(), "20");
        let a = amounts(None, Some(&d("6")), Some(&d("0.2"))).unwrap();
        assert_eq!(four(&a), ["5.00", "0.2000", "1.00", "6.00"]);
        let a = amounts(Some(&d("5")), Some(&d("6")), None).unwrap();
        assert_eq!(a.rate.to_string(), "0.2000");
        let a = amounts(Some(&d("3.33")), None, Some(&d("0.19"))).unwrap();
        assert_eq!(
            (a.tax.to_string(), a.gross.to_string()),
            ("0.63".into(), "3.96".into())
        );
        // 2.50 × 1.07 = 2.675 exactly: the half goes up (a float would make it 2.67).
        let a = amounts(Some(&d("2.5")), None, Some(&d("0.07"))).unwrap();
        assert_eq!(a.gross.to_string(), "2.68");
        assert!(amounts(Some(&d("5")), Some(&d("6")), Some(&d("0.2"))).is_ok());
        let err = amounts(Some(&d("5")), Some(&d("7")), Some(&d("0.2")))
            .unwrap_err()
            .message;
        assert!(err.starts_with("The amounts do not agree: net 5.00 with a tax rate of 0.2 gives a gross amount of 6.00, not 7.00."), "{err}");
        let err = amounts(Some(&d("5")), None, None).unwrap_err().message;
        assert!(
            err.starts_with("Missing values: gross_amount or tax_rate"),
            "{err}"
        );
        assert!(amounts(Some(&d("6")), Some(&d("5")), None).is_err());
    }

    #[test]
    fn amounts_outside_the_columns_are_refused_with_the_range() {
        let err = amounts(Some(&d("1e308")), None, Some(&d("0.2")))
            .unwrap_err()
            .message;
        assert!(
            err.starts_with(
                "net_amount: 1e308 is out of range: amounts must be from 0 to 9999999999.99"
            ),
            "{err}"
        );
        let err = amounts(None, Some(&d("-1")), Some(&d("0.2")))
            .unwrap_err()
            .message;
        assert!(err.starts_with("gross_amount: -1 is out of range"), "{err}");
        let err = amounts(Some(&d("9999999999")), None, Some(&d("0.2")))
            .unwrap_err()
            .message;
        assert!(
            err.contains(
                "gives a gross amount of 11999999998.80, beyond the largest amount, 9999999999.99"
            ),
            "{err}"
        );
        let err = amounts(Some(&d("1")), Some(&d("50")), None)
            .unwrap_err()
            .message;
        assert!(
            err.contains("give a tax rate of 49, above 1 (100 %)"),
            "{err}"
        );
        let err = amounts(Some(&d("1")), None, Some(&d("1.5")))
            .unwrap_err()
            .message;
        assert!(
            err.starts_with("tax_rate: 1.5 is out of range: a tax rate is a fraction from 0 to 1"),
            "{err}"
        );
        let a = amounts(Some(&d("9999999999.99")), None, Some(&d("0"))).unwrap();
        assert_eq!(a.gross.to_string(), "9999999999.99");
    }
}
