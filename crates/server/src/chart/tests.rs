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
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 720 "),
        "{svg}"
    );
    assert!(svg.ends_with("</svg>"));
    assert!(svg.contains(r#"role="img""#));
    assert!(svg.contains("<title>") && svg.contains("<desc>"));
    for bad in ["NaN", "inf", "<script", "style=", "href"] {
        assert!(!svg.contains(bad), "{bad} in {svg}");
    }
    // One picture; panels (small multiples) are documents nested in it.
    assert_eq!(svg.matches("<svg").count(), svg.matches("</svg>").count());
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
    // Two axes name their measures above the ticks and in the legend: escaped too.
    let rows = vec![
        vec![json!("a"), json!(1), json!(5000)],
        vec![json!("b"), json!(2), json!(7000)],
    ];
    let drawn = draw(&["name", "<i>n</i>", "<script>x</script>"], &rows);
    assert_eq!(tick_sets(&drawn.svg), 2);
    assert!(!drawn.svg.contains("<script") && !drawn.svg.contains("<i>"));
    assert!(drawn.svg.contains(">&lt;i&gt;n&lt;/i&gt;</text>"));
    assert!(
        drawn
            .svg
            .contains(">&lt;script&gt;x&lt;/script&gt; (right axis)</text>")
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
    assert_eq!(chart(&cols(&["day", "y"]), &many, None), None);
    assert!(chart(&cols(&["day", "y"]), &many[..MAX_ROWS], None).is_some());
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
    // Ids are never measures; the label is the first non-numeric column.
    let rows = vec![
        vec![json!(7), json!("Ada"), json!("10.5")],
        vec![json!(9), json!("Bob"), json!("3")],
    ];
    let drawn = draw(&["customer_id", "name", "total"], &rows);
    assert_eq!(drawn.svg.matches(r#"class="bar""#).count(), 2);
    assert!(drawn.svg.contains("<title>total by name</title>"));
    // All numeric: a first column named like a period labels; anything else is no category, so no chart.
    let rows = vec![vec![json!(2024), json!(5)], vec![json!(2025), json!(6)]];
    let years = draw(&["year", "orders"], &rows);
    assert_eq!(years.kind, ChartKind::Line);
    assert!(years.svg.contains("orders by year"));
    assert!(chart(&cols(&["customer_id", "order_id"]), &rows, None).is_none());
    assert!(chart(&cols(&["total"]), &[vec![json!(5)], vec![json!(6)]], None).is_none());
    // Only ids besides the label: nothing to measure.
    let rows = vec![vec![json!("a"), json!(1)], vec![json!("b"), json!(2)]];
    assert!(chart(&cols(&["name", "order_id"]), &rows, None).is_none());
    // More measures than panels: no chart; three of one scale: a panel each.
    let wide: Vec<Vec<Value>> = ["a", "b"]
        .iter()
        .map(|l| {
            let mut row = vec![json!(l)];
            row.extend((0..5).map(|i| json!(i + 1)));
            row
        })
        .collect();
    assert!(chart(&cols(&["label", "s0", "s1", "s2", "s3", "s4"]), &wide, None).is_none());
    let three: Vec<Vec<Value>> = wide.iter().map(|r| r[..4].to_vec()).collect();
    let drawn = draw(&["label", "s0", "s1", "s2"], &three);
    assert_eq!(
        drawn.svg.matches("<svg").count(),
        4,
        "three panels in one picture"
    );
    assert_eq!(drawn.svg.matches(r#"class="bar""#).count(), 6);
    assert_well_formed(&drawn.svg);
    // Short rows read as nulls.
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
    let day = |i: usize| {
        chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap() + chrono::Days::new(i as u64)
    };
    let rows: Vec<Vec<Value>> = (0..MAX_ROWS)
        .map(|i| vec![json!(day(i).to_string()), json!(i)])
        .collect();
    let drawn = draw(&["day", "n"], &rows);
    assert_eq!(drawn.kind, ChartKind::Line);
    let labels = drawn.svg.matches("rotate(-40").count();
    assert!(labels > 10 && labels < 100, "{labels} labels");
    assert_well_formed(&drawn.svg);
    // Long category labels are cut.
    let rows: Vec<Vec<Value>> = (0..MAX_BARS)
        .map(|i| vec![json!(format!("item number one hundred and {i}")), json!(i)])
        .collect();
    assert!(draw(&["name", "n"], &rows).svg.contains("item number o…"));
}

/// The five shapes the web UI meets: a listing gets no chart; a total per category, bars; a measure over
/// time, a line; two measures of one scale share an axis; two of different scales get a panel each.
#[test]
fn the_shape_of_a_result_decides_whether_and_how_it_is_drawn() {
    // A listing: 60 shipments, carriers repeating, a numeric weight: no chart (and no 60 bars).
    let carriers = ["DHL", "UPS", "GLS"];
    let listing: Vec<Vec<Value>> = (0..60)
        .map(|i| {
            vec![
                json!(i + 1),
                json!(carriers[i % 3]),
                json!(format!("{}.5", i % 7)),
            ]
        })
        .collect();
    assert!(chart(&cols(&["id", "carrier", "weight_kg"]), &listing, None).is_none());
    // Many categories, each once: a table reads better than 31 bars.
    let many: Vec<Vec<Value>> = (0..=MAX_BARS)
        .map(|i| vec![json!(format!("product {i}")), json!(i)])
        .collect();
    assert!(chart(&cols(&["product", "sold"]), &many, None).is_none());
    assert!(
        chart(&cols(&["product", "sold"]), &many[..MAX_BARS], None).is_some(),
        "{MAX_BARS} bars are drawn"
    );
    // A total per category: bars.
    let per_carrier = vec![
        vec![json!("DHL"), json!(20)],
        vec![json!("UPS"), json!(25)],
        vec![json!("GLS"), json!(15)],
    ];
    assert_eq!(
        draw(&["carrier", "shipments"], &per_carrier).kind,
        ChartKind::Bar
    );
    // A measure over time: a line.
    let monthly = vec![
        vec![json!("2026-09"), json!("1200.50")],
        vec![json!("2026-10"), json!("980")],
        vec![json!("2026-11"), json!("1430.10")],
    ];
    assert_eq!(draw(&["month", "revenue"], &monthly).kind, ChartKind::Line);
    // Two measures of one scale: one axis, a legend.
    let both = vec![
        vec![json!("2026-10"), json!(120), json!(95)],
        vec![json!("2026-11"), json!(130), json!(101)],
    ];
    let drawn = draw(&["month", "orders", "returns_x10"], &both);
    assert_eq!(drawn.svg.matches("<svg").count(), 1);
    assert_eq!(drawn.svg.matches(r#"class="legend""#).count(), 2);
    // Orders next to 15k of revenue: one panel, two axes, so neither is flat.
    let mixed = vec![
        vec![json!("2026-09"), json!(42), json!("15120.00")],
        vec![json!("2026-10"), json!(38), json!("13890.50")],
        vec![json!("2026-11"), json!(51), json!("17002.25")],
    ];
    let drawn = draw(&["month", "orders", "revenue"], &mixed);
    assert_eq!(drawn.svg.matches("<svg").count(), 1, "one panel");
    assert_eq!(tick_sets(&drawn.svg), 2, "two axes");
    assert!(
        drawn
            .svg
            .contains("<title>orders and revenue by month (two axes)</title>")
    );
    assert_well_formed(&drawn.svg);
    // Three or four measures of mixed scales: a panel each (small multiples), an axis each.
    let three: Vec<Vec<Value>> = mixed
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.push(json!(0.5));
            r
        })
        .collect();
    let drawn = draw(&["month", "orders", "revenue", "rate"], &three);
    assert_eq!(
        drawn.svg.matches("<svg").count(),
        4,
        "three panels in one picture"
    );
    assert!(
        drawn
            .svg
            .contains("orders and revenue and rate by month (one panel each")
    );
    assert_eq!(tick_sets(&drawn.svg), 3, "one axis per panel");
    assert!(!drawn.svg.contains("right axis"));
    assert_well_formed(&drawn.svg);
}

/// The elements of an SVG document in order: each tag's name and attributes (no nesting).
fn elements(svg: &str) -> Vec<(String, Vec<(String, String)>)> {
    svg.split('<')
        .skip(1)
        .filter(|piece| !piece.starts_with('/'))
        .filter_map(|piece| {
            let tag = piece.split('>').next()?.trim_end_matches('/');
            let (name, mut rest) = tag.split_once(' ').unwrap_or((tag, ""));
            let mut attributes = Vec::new();
            while let Some((key, after)) = rest.split_once("=\"") {
                let (value, after) = after.split_once('"')?;
                attributes.push((key.trim().to_string(), value.to_string()));
                rest = after;
            }
            Some((name.to_string(), attributes))
        })
        .collect()
}

/// How many sets of y-axis ticks a chart has.
fn tick_sets(svg: &str) -> usize {
    svg.matches(r#"<g class="axis "#).count()
}

/// The ticks of the axis `side` (`left` or `right`) of a one-panel chart: each one's height and value (`2.5k`
/// read as 2500).
fn ticks(svg: &str, side: &str) -> Vec<(f64, f64)> {
    let group = svg
        .split(&format!(r#"<g class="axis {side}">"#))
        .nth(1)
        .and_then(|rest| rest.split("</g>").next())
        .unwrap_or_else(|| panic!("no {side} axis in {svg}"));
    group
        .split("<text ")
        .skip(1)
        .filter(|t| !t.starts_with(r#"class="axis-name""#))
        .map(|t| {
            let y = attribute(t, "y").expect("a tick's height");
            let text = t
                .split('>')
                .nth(1)
                .and_then(|t| t.split('<').next())
                .expect("a tick's text");
            let (digits, factor) = match text.strip_suffix('k') {
                Some(d) => (d, 1e3),
                None => (text, 1.0),
            };
            (y, digits.parse::<f64>().expect("a number") * factor)
        })
        .collect()
}

fn attribute(tag: &str, name: &str) -> Option<f64> {
    tag.split(&format!(" {name}=\""))
        .nth(1)
        .or_else(|| tag.strip_prefix(&format!("{name}=\"")))?
        .split('"')
        .next()?
        .parse()
        .ok()
}

/// The marks (bars and points) of series `name`: each one's top (a bar's `y`, a point's `cy`).
fn marks(svg: &str, name: &str) -> Vec<f64> {
    let pieces: Vec<&str> = svg.split('<').collect();
    pieces
        .windows(2)
        .filter(|w| {
            w[0].starts_with(r#"rect class="bar""#) || w[0].starts_with(r#"circle class="point""#)
        })
        .filter(|w| w[1].starts_with("title>") && w[1].contains(&format!(" · {name}: ")))
        .filter_map(|w| attribute(w[0], "y").or_else(|| attribute(w[0], "cy")))
        .collect()
}

/// Orders next to revenue in thousands: one panel, the orders on a left axis and the revenue on a right one,
/// each reaching its own largest value, so that neither is flat; as bars, orders are the bars and revenue a line
/// over them; as lines, two lines.
#[test]
fn two_measures_of_different_scales_get_an_axis_each() {
    let rows = vec![
        vec![json!("Books"), json!(42), json!("15120.00")],
        vec![json!("Garden"), json!(38), json!("13890.50")],
        vec![json!("Toys"), json!(51), json!("17002.25")],
        vec![json!("Tools"), json!(12), json!("2210")],
    ];
    let drawn = draw(&["category", "orders", "revenue"], &rows);
    let svg = &drawn.svg;
    assert_eq!(drawn.kind, ChartKind::Bar);
    assert_well_formed(svg);
    assert_eq!(svg.matches("<svg").count(), 1, "one panel");
    let (left, right) = (ticks(svg, "left"), ticks(svg, "right"));
    let top = |ticks: &[(f64, f64)]| ticks.iter().map(|t| t.1).fold(f64::MIN, f64::max);
    // Each axis reaches its own measure's largest value, and not far past it.
    assert!(top(&left) >= 51.0 && top(&left) < 51.0 * 2.0, "{left:?}");
    assert!(
        top(&right) >= 17002.25 && top(&right) < 17002.25 * 2.0,
        "{right:?}"
    );
    // The same number of steps: the right ticks sit on the left ones' gridlines, zero at one height.
    assert_eq!(left.len(), right.len());
    for (l, r) in left.iter().zip(&right) {
        assert!((l.0 - r.0).abs() < 0.11, "{left:?} {right:?}");
    }
    // Orders are bars on the left axis, revenue points of a line on the right: the tallest of each reaches the
    // top tick's height (or near it), neither is flat.
    let plot_top = left.iter().map(|t| t.0).fold(f64::MAX, f64::min);
    let plot_bottom = left.iter().map(|t| t.0).fold(f64::MIN, f64::max);
    let height = plot_bottom - plot_top;
    let (orders, revenue) = (marks(svg, "orders"), marks(svg, "revenue"));
    assert_eq!((orders.len(), revenue.len()), (4, 4));
    assert_eq!(
        svg.matches(r#"<rect class="bar""#).count(),
        4,
        "bars for orders"
    );
    assert_eq!(
        svg.matches(r#"<circle class="point""#).count(),
        4,
        "points for revenue"
    );
    assert_eq!(
        svg.matches(r#"class="line""#).count(),
        1,
        "a line for revenue"
    );
    let highest = |tops: &[f64]| tops.iter().copied().fold(f64::MAX, f64::min);
    assert!(
        plot_bottom - highest(&orders) > height * 0.5,
        "{orders:?} in {height}"
    );
    assert!(
        plot_bottom - highest(&revenue) > height * 0.5,
        "{revenue:?} in {height}"
    );
    // Every mark still says its value.
    assert!(svg.contains("<title>Toys · orders: 51</title>"));
    assert!(svg.contains("<title>Toys · revenue: 17002.25</title>"));
    // The legend and the description say which axis is which.
    assert!(
        svg.contains(">orders (left axis)</text>") && svg.contains(">revenue (right axis)</text>")
    );
    assert!(svg.contains(
        "<desc>Bar chart of 4 rows with two y axes: orders as bars on the left axis, revenue as a line on the right axis."
    ));
    // As lines: two lines, still on two axes.
    let lines = chart(
        &cols(&["category", "orders", "revenue"]),
        &rows,
        Some(ChartKind::Line),
    )
    .expect("a chart");
    assert_eq!(lines.svg.matches(r#"class="line""#).count(), 2);
    assert_eq!(lines.svg.matches(r#"class="point""#).count(), 8);
    assert!(!lines.svg.contains(r#"class="bar""#));
    assert_eq!(tick_sets(&lines.svg), 2);
    assert!(top(&ticks(&lines.svg, "right")) >= 17002.25);
    assert_well_formed(&lines.svg);
    // The other way round: revenue on the left.
    let swapped: Vec<Vec<Value>> = rows
        .iter()
        .map(|r| vec![r[0].clone(), r[2].clone(), r[1].clone()])
        .collect();
    let drawn = draw(&["category", "revenue", "orders"], &swapped);
    assert!(top(&ticks(&drawn.svg, "left")) >= 17002.25);
    assert!(top(&ticks(&drawn.svg, "right")) < 102.0);
}

/// Below zero on one axis only: both axes put zero at one height, each still covering its values.
#[test]
fn two_axes_share_their_zero() {
    let rows = vec![
        vec![json!("north"), json!(-1200), json!(10)],
        vec![json!("south"), json!(3400), json!(25)],
        vec![json!("east"), json!(800), json!(40)],
    ];
    let drawn = draw(&["region", "profit", "orders"], &rows);
    assert_well_formed(&drawn.svg);
    let (left, right) = (ticks(&drawn.svg, "left"), ticks(&drawn.svg, "right"));
    let zero = |ticks: &[(f64, f64)]| ticks.iter().find(|t| t.1 == 0.0).map(|t| t.0);
    assert!(zero(&left).is_some());
    assert_eq!(zero(&left), zero(&right), "{left:?} {right:?}");
    let span = |ticks: &[(f64, f64)]| {
        let values = ticks.iter().map(|t| t.1);
        (
            values.clone().fold(f64::MAX, f64::min),
            values.fold(f64::MIN, f64::max),
        )
    };
    let (low, high) = span(&left);
    assert!(low <= -1200.0 && high >= 3400.0, "{left:?}");
    assert!(span(&right).1 >= 40.0, "{right:?}");
}

#[test]
fn aligned_axes_have_round_steps_and_one_count() {
    let texts = |axis: &Axis| axis.ticks().map(|t| axis.tick_text(t)).collect::<Vec<_>>();
    let (orders, revenue) = Axis::aligned((0.0, 51.0), (0.0, 17_002.25)).expect("two axes");
    assert_eq!(texts(&orders), ["0", "20", "40", "60", "80"]);
    assert_eq!(texts(&revenue), ["0", "5k", "10k", "15k", "20k"]);
    let (profit, orders) = Axis::aligned((-1200.0, 3400.0), (0.0, 40.0)).expect("two axes");
    assert_eq!(texts(&profit).len(), texts(&orders).len());
    assert!(profit.high() >= 3400.0 && orders.high() >= 40.0);
    let (zeros, other) = Axis::aligned((0.0, 0.0), (0.0, 5.0)).expect("two axes");
    assert_eq!(texts(&zeros).len(), texts(&other).len());
    assert_eq!(Axis::aligned((0.0, f64::MAX), (0.0, 1.0)), None);
}

/// The web UI rebuilds a chart from a short list of elements and attributes (`svgFrom` in `ui/app.js`) and drops
/// anything else: whatever the charts draw must be on it, or it would vanish from the page.
#[test]
fn the_web_ui_keeps_everything_a_chart_draws() {
    const APP_JS: &str = include_str!("../../ui/app.js");
    let listed = |name: &str| -> Vec<String> {
        APP_JS
            .split(&format!("const {name} = new Set(["))
            .nth(1)
            .and_then(|rest| rest.split("]);").next())
            .expect("the list in app.js")
            .split(',')
            .map(|item| item.trim().trim_matches('\'').to_string())
            .collect()
    };
    let (tags, attributes) = (listed("SVG_TAGS"), listed("SVG_ATTRS"));
    assert!(tags.contains(&"rect".to_string()) && attributes.contains(&"fill".to_string()));
    let categories = vec![
        vec![json!("Books"), json!(42), json!("15120.00"), json!(-30)],
        vec![json!("Garden"), json!(38), json!("13890.50"), json!(35)],
    ];
    let months: Vec<Vec<Value>> = categories
        .iter()
        .zip(["2026-10", "2026-11"])
        .map(|(r, m)| {
            let mut r = r.clone();
            r[0] = json!(m);
            r
        })
        .collect();
    let mut drawn = Vec::new();
    for rows in [&categories, &months] {
        // One measure; two of one scale; two of different scales; three.
        for columns in [&[0, 1][..], &[0, 1, 3], &[0, 1, 2], &[0, 1, 2, 3]] {
            let names = ["label", "orders", "revenue", "returns"];
            let names: Vec<String> = columns.iter().map(|&c| names[c].to_string()).collect();
            let rows: Vec<Vec<Value>> = rows
                .iter()
                .map(|r| columns.iter().map(|&c| r[c].clone()).collect())
                .collect();
            for kind in [ChartKind::Bar, ChartKind::Line] {
                drawn.push(chart(&names, &rows, Some(kind)).expect("a chart").svg);
            }
        }
    }
    assert!(drawn.iter().any(|svg| svg.contains("right axis")));
    assert!(drawn.iter().any(|svg| svg.contains("one panel each")));
    let colour = |v: &str| {
        v == "none"
            || v.chars().all(|c| c.is_ascii_alphabetic())
            || v.strip_prefix('#').is_some_and(|h| {
                (3..=8).contains(&h.len()) && h.chars().all(|c| c.is_ascii_hexdigit())
            })
    };
    for svg in &drawn {
        for (tag, attrs) in elements(svg) {
            assert!(tags.contains(&tag), "<{tag}> is not on the UI's list");
            for (name, value) in attrs {
                if tag == "svg" && name == "xmlns" {
                    continue;
                }
                assert!(
                    attributes.contains(&name),
                    "{name} (on <{tag}>) is not on the UI's list"
                );
                if name == "fill" || name == "stroke" {
                    assert!(
                        colour(&value),
                        "{name}=\"{value}\" is not a colour the UI keeps"
                    );
                }
                assert!(!value.contains(['\\', '&', '<', '>']), "{name}=\"{value}\"");
            }
        }
    }
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
