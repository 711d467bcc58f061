//! Replay throughput on a long answer (issue 12): a session recorded with
//! `Engine::new_recording` (`spec_tests::long_answer`: the harness's ready engine, a message
//! sent, then an answer of N text deltas of 3 to 6 characters, one SSE event per body chunk as a
//! paced stream arrives), replayed with `replay_with_options` in three modes (`bare`: `ReplayOptions::bare()`, no
//! timeline at all; `check`: no
//! changed fields; `timeline`: what `replay` does), next to the floor (`engine`: the same inputs
//! read ahead and fed straight to a fresh engine). Prints records (inputs) per second, least of
//! `REPLAY_RUNS` runs (default 3).
//!
//! `cargo bench -p spec-tests --bench replay` (`REPLAY_DELTAS=10000,100000` picks the answer
//! sizes; `REPLAY_ONLY=<mode>:<deltas>` runs one replay and exits, for callgrind).

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use engine_core::trace::{
    Header, Offset, Record, ReplayOptions, ReplayReport, Step, replay_with, replay_with_options,
};
use engine_core::{Engine, Time};
use spec_tests::long_answer;

fn drain(engine: &mut Engine) {
    while engine.poll_intent().is_some() {}
    while engine.poll_event().is_some() {}
}

fn options(mode: &str) -> ReplayOptions {
    match mode {
        "timeline" => ReplayOptions::timeline(),
        "check" => ReplayOptions::check(),
        "bare" => ReplayOptions::bare(),
        other => panic!("unknown mode {other:?} (timeline, check or bare)"),
    }
}

/// The trace's header and steps, read ahead (for the engine-alone floor).
fn read_steps(trace: &str) -> (Header, Vec<(Offset, Step)>) {
    let mut records = trace.lines().map(|l| l.parse::<Record>().unwrap());
    let Some(Record::Header(header)) = records.next() else {
        panic!("a trace starts with its header")
    };
    let steps = records
        .filter_map(|r| match r {
            Record::Step { at, step } => Some((at, step)),
            _ => None,
        })
        .collect();
    (header, steps)
}

/// The floor: the same inputs fed straight to a fresh engine and drained, with no trace to
/// read and no timeline to keep.
#[inline(never)]
fn run_engine(header: &Header, steps: Vec<(Offset, Step)>) -> usize {
    let mut engine = Engine::new(header.config.to_config().unwrap(), Time::ZERO);
    let n = steps.len();
    for (at, step) in steps {
        let now = Time::ZERO + at.as_duration();
        match step {
            Step::Input(input) => engine.handle_input(input, now),
            Step::Head { id, head } => engine.handle_response(id, head, now),
            Step::Chunk { id, bytes } => engine.handle_body_chunk(id, Bytes::from(bytes), now),
            Step::End { id } => engine.handle_body_end(id, now),
            Step::Failure { id, failure } => engine.handle_failure(id, failure, now),
            Step::Timeout => engine.handle_timeout(now),
        }
        drain(&mut engine);
    }
    black_box(engine.snapshot());
    n
}

/// Records per second: least time of `runs` runs.
fn measure(trace: &str, mode: &str, runs: usize) -> (usize, f64) {
    let mut best = Duration::MAX;
    let mut records = 0;
    for _ in 0..runs {
        if mode == "engine" {
            let (header, steps) = read_steps(trace);
            let t = Instant::now();
            records = run_engine(&header, steps);
            best = best.min(t.elapsed());
        } else {
            // Every record but the header, whether or not the mode keeps entries.
            records = trace
                .lines()
                .skip(1)
                .filter(|l| !l.trim().is_empty())
                .count();
            let t = Instant::now();
            let report = run(trace, mode);
            best = best.min(t.elapsed());
            black_box(report);
        }
    }
    (records, records as f64 / best.as_secs_f64())
}

fn main() {
    if let Ok(only) = std::env::var("REPLAY_ONLY") {
        let (mode, deltas) = only.split_once(':').expect("REPLAY_ONLY=<mode>:<deltas>");
        let trace = long_answer::trace(deltas.parse().unwrap());
        if mode == "engine" {
            let (header, steps) = read_steps(&trace);
            black_box(run_engine(&header, steps));
        } else {
            black_box(run_once(&trace, mode));
        }
        return;
    }
    let sizes: Vec<usize> = std::env::var("REPLAY_DELTAS")
        .unwrap_or_else(|_| "10000,100000".to_owned())
        .split(',')
        .map(|s| s.trim().parse().unwrap())
        .collect();
    let runs = std::env::var("REPLAY_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    println!(
        "{:>8} {:>9} {:>10} {:>14}",
        "deltas", "mode", "records", "records/s"
    );
    for deltas in sizes {
        let trace = long_answer::trace(deltas);
        for mode in ["engine", "bare", "check", "timeline"] {
            let (records, rate) = measure(&trace, mode, runs);
            println!("{deltas:>8} {mode:>9} {records:>10} {rate:>14.0}");
        }
    }
}

/// One replay (the callgrind entry point).
#[inline(never)]
fn run_once(trace: &str, mode: &str) -> usize {
    run(trace, mode).entries.len()
}

/// `timeline` is what `replay_with` does (the default options).
fn run(trace: &str, mode: &str) -> ReplayReport {
    match mode {
        "timeline" => replay_with(trace, |_| {}).unwrap(),
        _ => replay_with_options(trace, options(mode), |_| {}).unwrap(),
    }
}
