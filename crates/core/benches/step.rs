//! Framework overhead per step: one scripted model call, validation of one tool call, the tool call itself,
//! events to an observer and history trimming. Goal: under 20 µs per step.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use steward_core::{Event, NoObserver, Outcome, Retention, RunStatus};

fn per_step(c: &mut Criterion) {
    let rt = support::runtime();
    let mut group = c.benchmark_group("run");
    group.measurement_time(Duration::from_secs(5));
    for (name, retention) in [
        ("step/window", Retention::Window),
        ("step/full", Retention::Full),
    ] {
        group.bench_function(name, |b| {
            // One iteration is one step: each sample is a run of `iters` steps.
            b.iter_custom(|iters| {
                let steps = u32::try_from(iters).unwrap_or(u32::MAX).max(1);
                let (runner, mut run) = support::workload(steps, retention, Arc::new(NoObserver));
                let started = std::time::Instant::now();
                let status = rt.block_on(runner.drive(&mut run));
                let spent = started.elapsed();
                assert_eq!(status, RunStatus::Done(Outcome::MaxSteps { limit: steps }));
                spent
            });
        });
    }
    group.bench_function("step/window+observer", |b| {
        b.iter_custom(|iters| {
            let steps = u32::try_from(iters).unwrap_or(u32::MAX).max(1);
            let observer = |e: &Event| {
                std::hint::black_box(e);
            };
            let (runner, mut run) = support::workload(steps, Retention::Window, Arc::new(observer));
            let started = std::time::Instant::now();
            rt.block_on(runner.drive(&mut run));
            started.elapsed()
        });
    });
    group.finish();
}

criterion_group!(benches, per_step);
criterion_main!(benches);
