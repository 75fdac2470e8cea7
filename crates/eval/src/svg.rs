//! A run's figures as one self-contained SVG: accuracy by difficulty (and overall) as bars, and a histogram
//! of latencies. No scripts, no external fonts or styles; every text is escaped.

use std::fmt::Write as _;

use crate::summary::{Summary, Tally};

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 330.0;
/// The plots' top and bottom edges.
const TOP: f64 = 60.0;
const BOTTOM: f64 = 270.0;
/// Histogram bins.
const BINS: usize = 10;

/// Text made safe for SVG (XML) content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// At most `max` characters of `text`, with `…` when cut.
fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let head: String = text.chars().take(max.saturating_sub(1)).collect();
        format!("{head}…")
    }
}

fn text(out: &mut String, x: f64, y: f64, anchor: &str, size: u32, content: &str) {
    let _ = writeln!(
        out,
        r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}" font-size="{size}">{}</text>"#,
        escape(content)
    );
}

impl Summary {
    /// The chart: accuracy by difficulty (the last bar is all questions) on the left, the latency histogram
    /// on the right.
    pub fn to_svg(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">"#
        );
        let _ = writeln!(
            out,
            r##"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>"##
        );
        text(
            &mut out,
            WIDTH / 2.0,
            24.0,
            "middle",
            15,
            &format!(
                "Execution accuracy {:.1} % ({} of {})",
                self.accuracy * 100.0,
                self.correct,
                self.total
            ),
        );
        self.accuracy_bars(&mut out, 50.0, 340.0);
        self.latency_histogram(&mut out, 420.0, 730.0);
        out.push_str("</svg>\n");
        out
    }

    fn accuracy_bars(&self, out: &mut String, left: f64, right: f64) {
        text(
            out,
            (left + right) / 2.0,
            TOP - 16.0,
            "middle",
            13,
            "Accuracy by difficulty",
        );
        axis(out, left, right);
        for (pct, label) in [(0.0, "0 %"), (0.5, "50 %"), (1.0, "100 %")] {
            let y = BOTTOM - pct * (BOTTOM - TOP);
            text(out, left - 6.0, y + 4.0, "end", 10, label);
        }
        let mut bars: Vec<(String, Tally)> = self
            .difficulties()
            .into_iter()
            .map(|(name, t)| (name.to_owned(), t))
            .collect();
        bars.push((
            "all".to_owned(),
            Tally {
                total: self.total,
                correct: self.correct,
                accuracy: self.accuracy,
            },
        ));
        let slot = (right - left) / bars.len() as f64;
        let width = (slot * 0.6).min(60.0);
        for (i, (name, tally)) in bars.iter().enumerate() {
            let x = left + slot * (i as f64 + 0.5);
            let h = tally.accuracy.clamp(0.0, 1.0) * (BOTTOM - TOP);
            let fill = if name == "all" { "#555555" } else { "#4c78a8" };
            let _ = writeln!(
                out,
                r#"<rect x="{:.1}" y="{:.1}" width="{width:.1}" height="{h:.1}" fill="{fill}"><title>{}</title></rect>"#,
                x - width / 2.0,
                BOTTOM - h,
                escape(&format!("{name}: {} of {}", tally.correct, tally.total))
            );
            text(
                out,
                x,
                BOTTOM - h - 4.0,
                "middle",
                10,
                &format!("{:.1} %", tally.accuracy * 100.0),
            );
            text(out, x, BOTTOM + 14.0, "middle", 11, &short(name, 12));
            text(
                out,
                x,
                BOTTOM + 27.0,
                "middle",
                9,
                &format!("n={}", tally.total),
            );
        }
    }

    fn latency_histogram(&self, out: &mut String, left: f64, right: f64) {
        text(
            out,
            (left + right) / 2.0,
            TOP - 16.0,
            "middle",
            13,
            "Latency (ms)",
        );
        axis(out, left, right);
        let latencies = self.latencies_ms();
        let (Some(&min), Some(&max)) = (latencies.iter().min(), latencies.iter().max()) else {
            text(
                out,
                (left + right) / 2.0,
                (TOP + BOTTOM) / 2.0,
                "middle",
                11,
                "no questions",
            );
            return;
        };
        let span = (max - min).max(1);
        let bins = if max == min { 1 } else { BINS };
        let bin_of =
            |v: u64| (((v - min) as f64 / span as f64 * bins as f64) as usize).min(bins - 1);
        let mut counts = vec![0usize; bins];
        for &v in latencies {
            if let Some(c) = counts.get_mut(bin_of(v)) {
                *c += 1;
            }
        }
        let highest = counts.iter().copied().max().unwrap_or(1).max(1);
        text(out, left - 6.0, TOP + 4.0, "end", 10, &highest.to_string());
        text(out, left - 6.0, BOTTOM + 4.0, "end", 10, "0");
        let slot = (right - left) / bins as f64;
        for (i, &count) in counts.iter().enumerate() {
            let h = count as f64 / highest as f64 * (BOTTOM - TOP);
            let lo = min as f64 + span as f64 * i as f64 / bins as f64;
            let hi = min as f64 + span as f64 * (i + 1) as f64 / bins as f64;
            let _ = writeln!(
                out,
                r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="#f58518"><title>{}</title></rect>"##,
                left + slot * i as f64 + 1.0,
                BOTTOM - h,
                (slot - 2.0).max(1.0),
                escape(&format!("{lo:.0}–{hi:.0} ms: {count}"))
            );
        }
        text(out, left, BOTTOM + 14.0, "start", 10, &min.to_string());
        text(out, right, BOTTOM + 14.0, "end", 10, &max.to_string());
        let l = &self.latency;
        text(
            out,
            (left + right) / 2.0,
            BOTTOM + 40.0,
            "middle",
            10,
            &format!("median {} ms · p95 {} ms", l.p50_ms, l.p95_ms),
        );
    }
}

/// The axes of a plot.
fn axis(out: &mut String, left: f64, right: f64) {
    let _ = writeln!(
        out,
        r##"<path d="M{left:.1} {TOP:.1} V{BOTTOM:.1} H{right:.1}" fill="none" stroke="#333333" stroke-width="1"/>"##
    );
}
