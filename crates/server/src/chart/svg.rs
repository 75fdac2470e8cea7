//! Drawing a [`Plot`] as SVG: layout, the y axes' round ticks, bars, lines, the legend, and escaping.

use std::fmt::Write as _;

use super::{ChartKind, MAX_SERIES};

const WIDTH: f64 = 720.0;
/// The height of a chart of one panel.
pub(super) const HEIGHT: f64 = 360.0;
/// The height of each panel of a stack (small multiples).
pub(super) const PANEL_HEIGHT: f64 = 220.0;
const RIGHT: f64 = 16.0;
/// The average width of a character at the chart's font size, to lay out text without measuring it.
const CHAR_W: f64 = 7.0;
/// Labels longer than this are cut, with an ellipsis.
const LABEL_CHARS: usize = 14;
const PALETTE: [&str; MAX_SERIES] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948", "#9c755f",
];
/// Darker shades of the first two colours, for the text of the axis each of two measures is read on (readable
/// on white, at least 4.5:1).
const AXIS_TEXT: [&str; 2] = ["#35597f", "#a4550f"];
const TEXT: &str = "#4b5563";
const GRID: &str = "#e5e7eb";
const BASELINE: &str = "#9ca3af";

/// The data of one chart: labels along x, one row of values per series.
pub(super) struct Plot<'a> {
    /// The label column's name (or `row`).
    pub(super) label_name: &'a str,
    /// One label per row.
    pub(super) labels: Vec<String>,
    /// The series' names.
    pub(super) names: Vec<String>,
    /// Per series, one value per row (`None` for a null).
    pub(super) values: Vec<Vec<Option<f64>>>,
    /// The picture's height.
    pub(super) height: f64,
    /// Two measures of different scales: the first read on the left axis, the second on a right axis of its
    /// own (for bars, the first as bars and the second as a line with points).
    pub(super) two_axes: bool,
}

/// Panels of one series each, stacked with the same labels (small multiples): one SVG document whose panels
/// are nested documents, each with its own axis.
pub(super) fn stack(panels: &[Plot<'_>], kind: ChartKind) -> Option<String> {
    let first = panels.first()?;
    let names: Vec<&str> = panels
        .iter()
        .flat_map(|p| p.names.iter().map(String::as_str))
        .collect();
    let title = format!(
        "{} by {} (one panel each)",
        names.join(" and "),
        first.label_name
    );
    let description: Vec<String> = panels.iter().map(|p| p.description(kind)).collect();
    let total: f64 = panels.iter().map(|p| p.height).sum();
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" font-size="12"><title>{t}</title><desc>{d}</desc>"#,
        w = num(WIDTH),
        h = num(total),
        t = escape(&title),
        d = escape(&description.join(" ")),
    );
    let mut y = 0.0;
    for panel in panels {
        let inner = panel.render(kind)?;
        let inner = inner.strip_prefix("<svg ")?;
        let _ = write!(svg, r#"<svg y="{}" {inner}"#, num(y));
        y += panel.height;
    }
    svg.push_str("</svg>");
    Some(svg)
}

impl Plot<'_> {
    fn title(&self) -> String {
        if self.two_axes {
            format!(
                "{} by {} (two axes)",
                self.names.join(" and "),
                self.label_name
            )
        } else {
            format!("{} by {}", self.names.join(", "), self.label_name)
        }
    }

    fn description(&self, kind: ChartKind) -> String {
        let kind_text = match kind {
            ChartKind::Bar => "Bar chart",
            ChartKind::Line => "Line chart",
        };
        let mut desc = format!("{kind_text} of {} rows", self.labels.len());
        match (self.two_axes, self.names.as_slice()) {
            (true, [first, second]) if kind == ChartKind::Bar => {
                let _ = write!(
                    desc,
                    " with two y axes: {first} as bars on the left axis, {second} as a line on the right axis."
                );
            }
            (true, [first, second]) => {
                let _ = write!(
                    desc,
                    " with two y axes: {first} on the left axis, {second} on the right axis."
                );
            }
            _ => desc.push('.'),
        }
        for (name, values) in self.names.iter().zip(&self.values) {
            let present = values.iter().flatten().copied();
            let low = present.clone().fold(f64::INFINITY, f64::min);
            let high = present.fold(f64::NEG_INFINITY, f64::max);
            if low.is_finite() && high.is_finite() {
                let _ = write!(
                    desc,
                    " {name}: from {} to {}.",
                    value_text(low),
                    value_text(high)
                );
            }
        }
        desc
    }

    /// The SVG document, or `None` when the values cannot be scaled.
    pub(super) fn render(&self, kind: ChartKind) -> Option<String> {
        // One axis for every series, or with two axes one per series, their ticks on the same gridlines.
        let axes: Vec<Axis> = if self.two_axes {
            let (left, right) = Axis::aligned(self.range(0), self.range(1))?;
            vec![left, right]
        } else {
            let (low, high) = self
                .values
                .iter()
                .flatten()
                .flatten()
                .fold((0.0_f64, 0.0_f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
            vec![Axis::new(low, high)?]
        };
        let ticks: Vec<Vec<(f64, String)>> = axes
            .iter()
            .map(|axis| axis.ticks().map(|t| (t, axis.tick_text(t))).collect())
            .collect();
        let tick_chars = |side: usize| {
            ticks
                .get(side)
                .and_then(|t| t.iter().map(|(_, t)| t.chars().count()).max())
                .unwrap_or(1) as f64
        };
        let right = if self.two_axes {
            12.0 + tick_chars(1) * CHAR_W
        } else {
            RIGHT
        };
        let count = self.labels.len();
        let shown: Vec<String> = self.labels.iter().map(|l| cut(l, LABEL_CHARS)).collect();
        let longest = shown.iter().map(|l| l.chars().count()).max().unwrap_or(1) as f64 * CHAR_W;
        let mut left = 12.0 + tick_chars(0) * CHAR_W;
        let mut slot = (WIDTH - left - right) / count as f64;
        let rotate = longest + 6.0 > slot;
        if rotate {
            // Labels turned by 40° reach left of their slot: the first one must stay inside the picture.
            left = left.max(longest * 0.77 - slot / 2.0 + 4.0);
            slot = (WIDTH - left - right) / count as f64;
        }
        let plot_w = WIDTH - left - right;
        let every = if rotate {
            16.0 / slot
        } else {
            (longest + 6.0) / slot
        };
        let every = every.ceil().max(1.0) as usize;
        let bottom = if rotate { 24.0 + longest * 0.64 } else { 26.0 };
        let legend = self.legend_layout(left);
        let legend_h = legend
            .last()
            .map_or(0.0, |item| item.row as f64 * 18.0 + 18.0);
        // Two axes are named above their ticks.
        let top = 30.0 + legend_h + if self.two_axes { 18.0 } else { 0.0 };
        let plot_h = self.height - top - bottom;
        // The height of `v` on the axis series `s` is read on.
        let y = |s: usize, v: f64| {
            let axis = axes.get(s).or(axes.first());
            axis.map_or(top + plot_h, |a| {
                top + plot_h * (a.high - v) / (a.high - a.low)
            })
        };

        let title = self.title();
        let mut svg = String::with_capacity(4096 + count * self.names.len() * 160);
        let _ = write!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" font-size="12"><title>{t}</title><desc>{d}</desc>"#,
            w = num(WIDTH),
            h = num(self.height),
            t = escape(&title),
            d = escape(&self.description(kind)),
        );
        let _ = write!(
            svg,
            r#"<text x="{}" y="18" font-size="13" font-weight="600" fill="{TEXT}">{}</text>"#,
            num(left),
            escape(&cut(&title, 90)),
        );
        for item in &legend {
            let (x, ly) = (item.x, 30.0 + item.row as f64 * 18.0);
            let _ = write!(
                svg,
                r#"<g class="legend"><rect x="{}" y="{}" width="10" height="10" rx="2" fill="{}"/><text x="{}" y="{}" fill="{TEXT}">{}</text></g>"#,
                num(x),
                num(ly),
                item.colour,
                num(x + 14.0),
                num(ly + 9.0),
                escape(&item.text),
            );
        }
        // Gridlines at the (first) axis's ticks; with two axes the second's ticks fall on the same lines.
        svg.push_str(r#"<g class="grid">"#);
        for (tick, _) in ticks.first().into_iter().flatten() {
            let stroke = if *tick == 0.0 { BASELINE } else { GRID };
            let _ = write!(
                svg,
                r#"<line x1="{}" x2="{}" y1="{ty}" y2="{ty}" stroke="{stroke}"/>"#,
                num(left),
                num(left + plot_w),
                ty = num(y(0, *tick)),
            );
        }
        svg.push_str("</g>");
        for (side, ticks) in ticks.iter().enumerate() {
            let (class, x, anchor) = if side == 0 {
                ("left", left - 6.0, "end")
            } else {
                ("right", left + plot_w + 6.0, "start")
            };
            let fill = if self.two_axes {
                AXIS_TEXT.get(side).copied().unwrap_or(TEXT)
            } else {
                TEXT
            };
            let _ = write!(svg, r#"<g class="axis {class}">"#);
            if self.two_axes {
                // The axis line in its series' colour, and the series' name above it.
                let ax = if side == 0 { left } else { left + plot_w };
                let name = self.names.get(side).map_or("", String::as_str);
                let _ = write!(
                    svg,
                    r#"<line x1="{ax}" x2="{ax}" y1="{}" y2="{}" stroke="{}" stroke-width="2"/><text class="axis-name" x="{}" y="{}" text-anchor="{}" font-weight="600" fill="{fill}">{}</text>"#,
                    num(top),
                    num(top + plot_h),
                    colour(side),
                    num(if side == 0 { 4.0 } else { WIDTH - 4.0 }),
                    num(top - 10.0),
                    if side == 0 { "start" } else { "end" },
                    escape(&cut(name, 40)),
                    ax = num(ax),
                );
            }
            for (tick, text) in ticks {
                let _ = write!(
                    svg,
                    r#"<text x="{}" y="{}" dy="0.32em" text-anchor="{anchor}" fill="{fill}">{}</text>"#,
                    num(x),
                    num(y(side, *tick)),
                    escape(text),
                );
            }
            svg.push_str("</g>");
        }
        let label_y = top + plot_h + 16.0;
        for (i, label) in shown.iter().enumerate().step_by(every) {
            let x = num(left + (i as f64 + 0.5) * slot);
            let ly = num(label_y);
            let text = escape(label);
            if rotate {
                let _ = write!(
                    svg,
                    r#"<text x="{x}" y="{ly}" text-anchor="end" transform="rotate(-40 {x} {ly})" fill="{TEXT}">{text}</text>"#
                );
            } else {
                let _ = write!(
                    svg,
                    r#"<text x="{x}" y="{ly}" text-anchor="middle" fill="{TEXT}">{text}</text>"#
                );
            }
        }
        let all: Vec<usize> = (0..self.names.len()).collect();
        match kind {
            // Bars on two axes would invite comparing heights that mean different things: the second measure
            // is a line over the first's bars.
            ChartKind::Bar if self.two_axes => {
                self.bars(&mut svg, &[0], left, slot, &y);
                self.lines(&mut svg, &[1], left, slot, &y, true);
            }
            ChartKind::Bar => self.bars(&mut svg, &all, left, slot, &y),
            ChartKind::Line => self.lines(&mut svg, &all, left, slot, &y, false),
        }
        svg.push_str("</svg>");
        Some(svg)
    }

    /// The lowest and highest value of series `s`, and zero.
    fn range(&self, s: usize) -> (f64, f64) {
        self.values
            .get(s)
            .into_iter()
            .flatten()
            .flatten()
            .fold((0.0_f64, 0.0_f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)))
    }

    /// Bars of the series `series`, grouped by label; `y(s, v)` is the height of `v` of series `s`.
    fn bars(
        &self,
        svg: &mut String,
        series: &[usize],
        left: f64,
        slot: f64,
        y: &dyn Fn(usize, f64) -> f64,
    ) {
        let group = slot * 0.8;
        let width = group / series.len().max(1) as f64;
        let gap = if width > 4.0 { 1.0 } else { 0.0 };
        for (place, &s) in series.iter().enumerate() {
            let (Some(name), Some(values)) = (self.names.get(s), self.values.get(s)) else {
                continue;
            };
            let colour = colour(s);
            for (i, value) in values.iter().enumerate() {
                let Some(value) = value else { continue };
                let x = left + i as f64 * slot + slot * 0.1 + place as f64 * width;
                let (y0, y1) = (y(s, value.max(0.0)), y(s, value.min(0.0)));
                let _ = write!(
                    svg,
                    r#"<rect class="bar" x="{}" y="{}" width="{}" height="{}" fill="{colour}"><title>{}</title></rect>"#,
                    num(x),
                    num(y0),
                    num((width - gap).max(0.5)),
                    num(y1 - y0),
                    self.point_title(i, name, *value),
                );
            }
        }
    }

    /// A line for each of the series `series`, with a point per value when there are few; `over_bars` rings
    /// the points in white so that they stand out on bars.
    fn lines(
        &self,
        svg: &mut String,
        series: &[usize],
        left: f64,
        slot: f64,
        y: &dyn Fn(usize, f64) -> f64,
        over_bars: bool,
    ) {
        let dots = self.labels.len() <= 60;
        let ring = if over_bars {
            r##" stroke="#ffffff" stroke-width="1.5""##
        } else {
            ""
        };
        for &s in series {
            let (Some(name), Some(values)) = (self.names.get(s), self.values.get(s)) else {
                continue;
            };
            let colour = colour(s);
            let mut path = String::new();
            let mut pen_down = false;
            for (i, value) in values.iter().enumerate() {
                match value {
                    Some(v) => {
                        let command = if pen_down { 'L' } else { 'M' };
                        let _ = write!(
                            path,
                            "{command}{} {} ",
                            num(left + (i as f64 + 0.5) * slot),
                            num(y(s, *v))
                        );
                        pen_down = true;
                    }
                    None => pen_down = false,
                }
            }
            let _ = write!(
                svg,
                r#"<path class="line" d="{}" fill="none" stroke="{colour}" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"/>"#,
                path.trim_end(),
            );
            if dots {
                for (i, value) in values.iter().enumerate() {
                    let Some(value) = value else { continue };
                    let _ = write!(
                        svg,
                        r#"<circle class="point" cx="{}" cy="{}" r="{}" fill="{colour}"{ring}><title>{}</title></circle>"#,
                        num(left + (i as f64 + 0.5) * slot),
                        num(y(s, *value)),
                        if over_bars { "4" } else { "3" },
                        self.point_title(i, name, *value),
                    );
                }
            }
        }
    }

    fn point_title(&self, row: usize, name: &str, value: f64) -> String {
        let label = self.labels.get(row).map_or("", String::as_str);
        escape(&format!("{label} · {name}: {}", value_text(value)))
    }

    /// Where the legend's items go (none for a single series), wrapping onto further rows.
    fn legend_layout(&self, left: f64) -> Vec<LegendItem> {
        if self.names.len() < 2 {
            return Vec::new();
        }
        let (mut x, mut row) = (left, 0);
        let mut items = Vec::new();
        for (s, name) in self.names.iter().enumerate() {
            let mut text = cut(name, 24);
            if self.two_axes {
                text.push_str(if s == 0 {
                    " (left axis)"
                } else {
                    " (right axis)"
                });
            }
            let width = 14.0 + text.chars().count() as f64 * CHAR_W + 16.0;
            if x + width > WIDTH - RIGHT && x > left {
                (x, row) = (left, row + 1);
            }
            items.push(LegendItem {
                x,
                row,
                colour: colour(s),
                text,
            });
            x += width;
        }
        items
    }
}

struct LegendItem {
    x: f64,
    row: usize,
    colour: &'static str,
    text: String,
}

/// A y axis from `low` to `high` in round steps.
#[derive(Debug, PartialEq)]
pub(super) struct Axis {
    low: f64,
    high: f64,
    step: f64,
}

impl Axis {
    /// An axis that covers `min..=max` and zero with about five round steps (1, 2, 2.5 or 5 times a power
    /// of ten), or `None` when the range cannot be scaled (not finite).
    pub(super) fn new(min: f64, max: f64) -> Option<Self> {
        let (min, max) = (min.min(0.0), max.max(0.0));
        let (min, max) = if max - min > 0.0 {
            (min, max)
        } else {
            (0.0, 1.0)
        };
        let raw = (max - min) / 5.0;
        let step = round_step(raw);
        let low = ((min / step) + 1e-9).floor() * step;
        let high = ((max / step) - 1e-9).ceil() * step;
        Self::checked(low, high, step)
    }

    /// Two axes, for `first` and `second` (each the lowest and highest value), with the same number of round
    /// steps below and above zero, so that zero is at one height and the second's ticks fall on the first's
    /// gridlines. Of 3 to 6 steps, the split that leaves the emptier axis fullest; `None` when a range cannot be
    /// scaled.
    pub(super) fn aligned(first: (f64, f64), second: (f64, f64)) -> Option<(Self, Self)> {
        let mut best: Option<(f64, Self, Self)> = None;
        // Five steps first, as for one axis: a later split must fill the axes better to be chosen.
        for steps in [5_u32, 4, 6, 3] {
            for below in 0..steps {
                let above = steps - below;
                let (Some(a), Some(b)) = (
                    Self::fit(first, below, above),
                    Self::fit(second, below, above),
                ) else {
                    continue;
                };
                let fill = a.fill(first).min(b.fill(second));
                if best.as_ref().is_none_or(|(most, ..)| fill > *most + 1e-9) {
                    best = Some((fill, a, b));
                }
            }
        }
        best.map(|(_, a, b)| (a, b))
    }

    /// The axis of `below` round steps under zero and `above` over it that covers `min..=max` with the smallest
    /// step, or `None` when it cannot (values below zero and no step there).
    fn fit((min, max): (f64, f64), below: u32, above: u32) -> Option<Self> {
        let (under, over) = ((-min).max(0.0), max.max(0.0));
        if (under > 0.0 && below == 0) || (over > 0.0 && above == 0) {
            return None;
        }
        let per = |extent: f64, steps: u32| {
            if steps == 0 {
                0.0
            } else {
                extent / f64::from(steps)
            }
        };
        let raw = per(under, below).max(per(over, above));
        // All zero: steps of 1, as one axis has.
        let raw = if raw > 0.0 {
            raw
        } else {
            1.0 / f64::from(below + above)
        };
        let step = round_step(raw);
        Self::checked(-f64::from(below) * step, f64::from(above) * step, step)
    }

    /// How much of the axis `min..=max` (and zero) takes: 1 when it spans the axis.
    fn fill(&self, (min, max): (f64, f64)) -> f64 {
        let extent = max.max(0.0) - min.min(0.0);
        if extent > 0.0 {
            extent / (self.high - self.low)
        } else {
            1.0
        }
    }

    fn checked(low: f64, high: f64, step: f64) -> Option<Self> {
        let finite = [step, low, high, high - low].iter().all(|v| v.is_finite());
        (finite && step > 0.0 && high > low).then_some(Self { low, high, step })
    }

    /// The highest tick.
    #[cfg(test)]
    pub(super) fn high(&self) -> f64 {
        self.high
    }

    pub(super) fn ticks(&self) -> impl Iterator<Item = f64> + '_ {
        let count = ((self.high - self.low) / self.step).round() as usize;
        (0..=count).map(move |i| {
            let tick = self.low + i as f64 * self.step;
            // Snap to the step so that 0.1 + 0.2 shows as 0.3 and zero is exactly zero.
            let snapped = (tick / self.step).round() * self.step;
            if snapped == 0.0 { 0.0 } else { snapped }
        })
    }

    /// A tick's text: compact (`2.5k`, `1.2M`) when the axis passes ten thousand, with as many decimals as the step needs.
    pub(super) fn tick_text(&self, tick: f64) -> String {
        let largest = self.low.abs().max(self.high.abs());
        let (divisor, suffix) = [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")]
            .into_iter()
            .find(|(d, _)| largest >= 1e4 && largest >= *d)
            .unwrap_or((1.0, ""));
        let step = self.step / divisor;
        let decimals = (0..=6)
            .find(|d| {
                let scaled = step * 10_f64.powi(*d);
                (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
            })
            .unwrap_or(6) as usize;
        let text = format!("{:.*}", decimals, tick / divisor);
        let text = if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        };
        match text.as_str() {
            "0" | "-0" => "0".to_string(),
            _ => format!("{text}{suffix}"),
        }
    }
}

/// The smallest round step (1, 2, 2.5 or 5 times a power of ten) of at least `raw`.
fn round_step(raw: f64) -> f64 {
    let magnitude = 10_f64.powf(raw.log10().floor());
    magnitude
        * match raw / magnitude {
            n if n <= 1.0 => 1.0,
            n if n <= 2.0 => 2.0,
            n if n <= 2.5 => 2.5,
            n if n <= 5.0 => 5.0,
            _ => 10.0,
        }
}

fn colour(series: usize) -> &'static str {
    PALETTE
        .get(series % PALETTE.len())
        .copied()
        .unwrap_or("#4e79a7")
}

/// `text` cut to `max` characters, with an ellipsis when it was longer.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut short: String = text.chars().take(max.saturating_sub(1)).collect();
    short.push('…');
    short
}

/// A coordinate: one decimal at most, never `NaN`, `inf` or `-0`.
fn num(value: f64) -> String {
    if !value.is_finite() {
        return "0".to_string();
    }
    let text = format!("{value:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

/// A data value as people read it: integers without decimals, others as Rust prints them shortest.
fn value_text(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

/// Escapes text for SVG (XML) content and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab and newline are not allowed in XML 1.0.
            c if c.is_control() && c != '\t' && c != '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
