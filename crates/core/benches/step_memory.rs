//! Memory over a 10,000-step run: live heap bytes sampled every 1,000 steps, with window retention (the
//! transcript beyond the history window is left to the event store) and with full retention (the whole
//! transcript stays in memory and grows with it).
//!
//! Run: `cargo bench -p steward-core --bench step_memory`
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use peak_alloc::PeakAlloc;
use steward_core::{Event, Outcome, Retention, RunStatus};

#[global_allocator]
static GLOBAL: PeakAlloc = PeakAlloc;

const STEPS: u32 = 10_000;
const EVERY: u32 = 1_000;

fn live_bytes() -> i64 {
    GLOBAL.current_usage() as i64
}

fn sample(retention: Retention) -> Vec<(u32, i64)> {
    let samples = Arc::new(Mutex::new(Vec::with_capacity(16)));
    let results = Arc::new(AtomicU64::new(0));
    let observer = {
        let samples = samples.clone();
        move |e: &Event| {
            if let Event::ToolResult { .. } = e {
                let n = results.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_multiple_of(u64::from(EVERY)) {
                    samples.lock().unwrap().push((n as u32, live_bytes()));
                }
            }
        }
    };
    let rt = support::runtime();
    let (runner, mut run) = support::workload(STEPS, retention, Arc::new(observer));
    let status = rt.block_on(runner.drive(&mut run));
    assert_eq!(status, RunStatus::Done(Outcome::MaxSteps { limit: STEPS }));
    samples.lock().unwrap().clone()
}

fn main() {
    for (name, retention) in [("window", Retention::Window), ("full", Retention::Full)] {
        let samples = sample(retention);
        let base = samples[0].1;
        println!("retention={name}: live heap bytes after N steps");
        for (step, live) in &samples {
            println!(
                "  {step:>6} steps: {live:>10} bytes ({:+} since step {EVERY})",
                live - base
            );
        }
        let growth = (samples.last().unwrap().1 - base) as f64 / f64::from(STEPS - EVERY);
        println!("  growth: {growth:.1} bytes/step from step {EVERY} to {STEPS}");
    }
}
