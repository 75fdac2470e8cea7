use serde_json::{Value, json};

use super::svg::Axis;
use super::*;

fn cols(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

fn draw(names: &[&str], rows: &[Vec<Value>]) -> Chart {
    chart(&cols(names), rows, None).expect("a chart")
}

/// What every chart must satisfy, whatever its data.
fn assert_well_formed(svg: &str) {
    assert!(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 720 360\""),
        "{svg}"
    );
    assert!(svg.ends_with("</svg>"));
    assert!(svg.contains(r#"role="img""#));
    assert!(svg.contains("<title>") && svg.contains("<desc>"));
    for bad in ["NaN", "inf", "<script", "style=", "href"] {
        assert!(!svg.contains(bad), "{bad} in {svg}");
    }
    assert_eq!(svg.matches("<svg").count(), 1);
    // Every opened element closes: the tags that hold children balance.
    for tag in ["title", "desc", "text", "g", "rect", "circle"] {
        let opened =
            svg.matches(&format!("<{tag}>")).count() + svg.matches(&format!("<{tag} ")).count();
        let self_closed = svg
            .split(&format!("<{tag} "))
            .skip(1)
            .filter(|rest| {
                rest.find("/>")
                    .is_some_and(|end| rest.find('>') == Some(end + 1))
            })
            .count();
        assert_eq!(
            opened - self_closed,
            svg.matches(&format!("</{tag}>")).count(),
            "<{tag}> in {svg}"
        );
    }
}

#[test]
fn one_bar_per_row_and_series() {
    let rows = vec![
        vec![json!("north"), json!(10), json!("12.50")],
        vec![json!("south"), json!(20), json!("7.25")],
        vec![json!("east"), json!(5), json!("-3")],
    ];
    let drawn = draw(&["region", "orders", "revenue"], &rows);
    assert_eq!(drawn.kind, ChartKind::Bar);
    assert_eq!(drawn.svg.matches(r#"class="bar""#).count(), 6);
    assert_eq!(
        drawn.svg.matches(r#"class="legend""#).count(),
        2,
        "a legend for two series"
    );
    assert!(
        drawn
            .svg
            .contains("<title>orders, revenue by region</title>")
    );
    assert!(drawn.svg.contains("east · revenue: -3"));
    assert_well_formed(&drawn.svg);
}

#[test]
fn a_single_series_has_no_legend() {
    let rows = vec![vec![json!("a"), json!(1)], vec![json!("b"), json!(2)]];
    let drawn = draw(&["name", "n"], &rows);
    assert_eq!(drawn.svg.matches(r#"class="bar""#).count(), 2);
    assert!(!drawn.svg.contains("legend"));
}

#[test]
fn every_text_is_escaped() {
    let rows = vec![
        vec![json!("<script>alert(1)</script>"), json!(1)],
        vec![json!("Tom & \"Jerry\" 'x'"), json!(2)],
    ];
    let drawn = draw(&["<b>name</b>", "<i>total</i>"], &rows);
    assert!(!drawn.svg.contains("<script"));
    assert!(!drawn.svg.contains("<b>") && !drawn.svg.contains("<i>"));
    assert!(drawn.svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(
        drawn
            .svg
            .contains("Tom &amp; &quot;Jerry&quot; &#39;x&#39;")
    );
    assert!(
        drawn
            .svg
            .contains("&lt;i&gt;total&lt;/i&gt; by &lt;b&gt;name&lt;/b&gt;")
    );
    assert_well_formed(&drawn.svg);
}

#[test]
fn months_and_dates_draw_lines() {
    for labels in [
        ["2024-01", "2024-02", "2024-03"],
        ["2024-01-31", "2024-02-29", "2024-03-31"],
        ["2024-01-31T00:00:00Z", "2024-02-29 00:00:00", "2024-03-31"],
        ["2024-Q1", "2024-Q2", "2024-Q3"],
        ["Jan", "February", "mar"],
    ] {
        let rows: Vec<Vec<Value>> = labels
            .iter()
            .map(|l| vec![json!(l), json!("100.00")])
            .collect();
        let drawn = draw(&["period_label", "total"], &rows);
        assert_eq!(drawn.kind, ChartKind::Line, "{labels:?}");
        assert_eq!(drawn.svg.matches(r#"class="line""#).count(), 1);
        assert_eq!(drawn.svg.matches(r#"class="point""#).count(), 3);
        assert!(!drawn.svg.contains(r#"class="bar""#));
        assert_well_formed(&drawn.svg);
    }
}

#[test]
fn a_period_named_column_draws_a_line() {
    let rows = vec![vec![json!(2022), json!(5)], vec![json!(2023), json!(8)]];
    assert_eq!(draw(&["year", "orders"], &rows).kind, ChartKind::Line);
    let rows = vec![vec![json!(1), json!(5)], vec![json!(2), json!(8)]];
    assert_eq!(
        draw(&["order_month", "orders"], &rows).kind,
        ChartKind::Line
    );
}

#[test]
fn categories_draw_bars_and_kind_overrides() {
    let rows = vec![
        vec![json!("coffee"), json!(3)],
        vec![json!("tea"), json!(4)],
    ];
    assert_eq!(draw(&["category", "n"], &rows).kind, ChartKind::Bar);
    let line = chart(&cols(&["category", "n"]), &rows, Some(ChartKind::Line)).expect("a chart");
    assert_eq!(line.kind, ChartKind::Line);
    assert!(line.svg.contains(r#"class="line""#));
    let months = vec![
        vec![json!("2024-01"), json!(3)],
        vec![json!("2024-02"), json!(4)],
    ];
    let bar = chart(&cols(&["month", "n"]), &months, Some(ChartKind::Bar)).expect("a chart");
    assert_eq!(bar.kind, ChartKind::Bar);
    assert_eq!(bar.svg.matches(r#"class="bar""#).count(), 2);
}

#[test]
fn no_chart_without_numbers_or_enough_rows() {
    let text = vec![vec![json!("a"), json!("b")], vec![json!("c"), json!("d")]];
    assert_eq!(chart(&cols(&["x", "y"]), &text, None), None);
    let one = vec![vec![json!("a"), json!(1)]];
    assert_eq!(chart(&cols(&["x", "y"]), &one, None), None);
    let many: Vec<Vec<Value>> = (0..=MAX_ROWS)
        .map(|i| vec![json!(i.to_string()), json!(i)])
        .collect();
    assert_eq!(chart(&cols(&["x", "y"]), &many, None), None);
    assert!(chart(&cols(&["x", "y"]), &many[..MAX_ROWS], None).is_some());
    assert_eq!(chart(&[], &text, None), None);
    let nulls = vec![vec![json!("a"), Value::Null], vec![json!("b"), Value::Null]];
    assert_eq!(
        chart(&cols(&["x", "y"]), &nulls, None),
        None,
        "an all-null column is no series"
    );
    let odd = vec![
        vec![json!("a"), json!("NaN")],
        vec![json!("b"), json!("inf")],
    ];
    assert_eq!(
        chart(&cols(&["x", "y"]), &odd, None),
        None,
        "NaN and inf are not numbers"
    );
}

#[test]
fn negative_zero_and_huge_values_stay_finite() {
    let negative = vec![vec![json!("a"), json!(-50)], vec![json!("b"), json!(100)]];
    let drawn = draw(&["x", "y"], &negative);
    assert!(drawn.svg.contains(">-50</text>") && drawn.svg.contains(">100</text>"));
    assert_well_formed(&drawn.svg);
    let zeros = vec![vec![json!("a"), json!(0)], vec![json!("b"), json!("0.00")]];
    let drawn = draw(&["x", "y"], &zeros);
    assert_eq!(drawn.svg.matches(r#"class="bar""#).count(), 2);
    assert_well_formed(&drawn.svg);
    let huge = vec![
        vec![json!("a"), json!(1e300)],
        vec![json!("b"), json!(-1e300)],
    ];
    let drawn = draw(&["x", "y"], &huge);
    assert_well_formed(&drawn.svg);
    let overflow = vec![
        vec![json!("a"), json!(f64::MAX)],
        vec![json!("b"), json!(-f64::MAX)],
    ];
    assert_eq!(
        chart(&cols(&["x", "y"]), &overflow, None),
        None,
        "a range past f64 is not drawn"
    );
    let tiny = vec![
        vec![json!("a"), json!(1e-300)],
        vec![json!("b"), json!(2e-300)],
    ];
    assert_well_formed(&draw(&["x", "y"], &tiny).svg);
}

#[test]
fn nulls_leave_gaps() {
    let rows = vec![
        vec![json!("2024-01"), json!(1)],
        vec![json!("2024-02"), Value::Null],
        vec![json!("2024-03"), json!(3)],
        vec![json!("2024-04"), json!(4)],
    ];
    let line = draw(&["month", "n"], &rows);
    assert_eq!(line.svg.matches(r#"class="point""#).count(), 3);
    let path = line
        .svg
        .split(r#"class="line" d=""#)
        .nth(1)
        .and_then(|p| p.split('"').next());
    assert_eq!(
        path.map(|p| p.matches('M').count()),
        Some(2),
        "the gap starts a new segment"
    );
    let bars = chart(&cols(&["month", "n"]), &rows, Some(ChartKind::Bar)).expect("a chart");
    assert_eq!(bars.svg.matches(r#"class="bar""#).count(), 3);
}

#[test]
fn labels_and_series_are_chosen_by_the_rules() {
    // Ids are skipped when another series remains; the label is the first non-numeric column.
    let rows = vec![
        vec![json!(7), json!("Ada"), json!("10.5")],
        vec![json!(9), json!("Bob"), json!("3")],
    ];
    let drawn = draw(&["customer_id", "name", "total"], &rows);
    assert_eq!(drawn.svg.matches(r#"class="bar""#).count(), 2);
    assert!(drawn.svg.contains("<title>total by name</title>"));
    // All numeric: the first column labels, the rest are series; an id alone is still a series.
    let rows = vec![vec![json!(1), json!(5)], vec![json!(2), json!(6)]];
    assert!(
        draw(&["customer_id", "order_id"], &rows)
            .svg
            .contains("order_id by customer_id")
    );
    // One numeric column: rows are numbered.
    let rows = vec![vec![json!(5)], vec![json!(6)], vec![json!(7)]];
    let drawn = draw(&["total"], &rows);
    assert!(drawn.svg.contains("total by row") && drawn.svg.contains(">3</text>"));
    // Short rows read as nulls; wide results are cut to MAX_SERIES.
    let names: Vec<String> = (0..12).map(|i| format!("s{i}")).collect();
    let mut wide = vec![vec![json!("a")], vec![json!("b")]];
    for row in &mut wide {
        row.extend((0..12).map(|i| json!(i)));
    }
    let mut all = vec!["label".to_string()];
    all.extend(names);
    let drawn = chart(&all, &wide, None).expect("a chart");
    assert_eq!(drawn.svg.matches(r#"class="bar""#).count(), 2 * MAX_SERIES);
    let short = vec![vec![json!("a"), json!(1)], vec![json!("b")]];
    assert_eq!(
        draw(&["x", "y"], &short)
            .svg
            .matches(r#"class="bar""#)
            .count(),
        1
    );
}

#[test]
fn many_rows_thin_their_labels() {
    let rows: Vec<Vec<Value>> = (0..MAX_ROWS)
        .map(|i| vec![json!(format!("item number {i}")), json!(i)])
        .collect();
    let drawn = draw(&["name", "n"], &rows);
    assert_eq!(drawn.svg.matches(r#"class="bar""#).count(), MAX_ROWS);
    assert!(drawn.svg.contains("item number 1…"), "long labels are cut");
    let labels = drawn.svg.matches("rotate(-40").count();
    assert!(labels > 10 && labels < 100, "{labels} labels");
    assert_well_formed(&drawn.svg);
}

#[test]
fn axes_use_round_steps() {
    let ticks = |min: f64, max: f64| {
        let axis = Axis::new(min, max).expect("an axis");
        axis.ticks().map(|t| axis.tick_text(t)).collect::<Vec<_>>()
    };
    assert_eq!(ticks(0.0, 87.0), ["0", "20", "40", "60", "80", "100"]);
    assert_eq!(ticks(-50.0, 100.0), ["-50", "0", "50", "100"]);
    assert_eq!(ticks(0.0, 0.0), ["0", "0.2", "0.4", "0.6", "0.8", "1"]);
    assert_eq!(ticks(0.0, 0.3), ["0", "0.1", "0.2", "0.3"]);
    assert_eq!(
        ticks(0.0, 12_400.0),
        ["0", "2.5k", "5k", "7.5k", "10k", "12.5k"]
    );
    assert_eq!(ticks(3.0, 7.0), ["0", "2", "4", "6", "8"]);
    assert_eq!(ticks(-7.0, -3.0), ["-8", "-6", "-4", "-2", "0"]);
    assert_eq!(ticks(0.0, 2.5e9)[1], "0.5B");
    assert_eq!(Axis::new(-f64::MAX, f64::MAX), None);
}

#[test]
fn numeric_text_is_strict() {
    for yes in ["12.50", "-3", "+4", "1e3", "1.5E-2", ".5", "5.", " 42 "] {
        assert!(is_numeric_text(yes), "{yes}");
    }
    for no in [
        "",
        "-",
        ".",
        "1.2.3",
        "inf",
        "NaN",
        "0x10",
        "1e",
        "12 apples",
        "1,000",
    ] {
        assert!(!is_numeric_text(no), "{no}");
    }
}

#[test]
fn kind_serializes_in_lowercase() {
    let drawn = Chart {
        kind: ChartKind::Line,
        svg: "<svg/>".to_string(),
    };
    assert_eq!(
        serde_json::to_value(&drawn).ok(),
        Some(json!({"kind": "line", "svg": "<svg/>"}))
    );
    assert_eq!(
        serde_json::from_value::<ChartKind>(json!("bar")).ok(),
        Some(ChartKind::Bar)
    );
}
