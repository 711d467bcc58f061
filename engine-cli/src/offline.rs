//! What needs no platform: replaying a trace, decoding a stream.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use engine_core::AnswerStream;

use crate::terminal;

/// `agent-chat replay FILE`: the timeline as it replays; exit 1 at the first failed expectation
/// or malformed line (a line that is not UTF-8 included), with its line number and the
/// difference. A closed output (`| head`) ends the replay quietly.
pub fn replay(file: &Path) -> ExitCode {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("agent-chat: cannot read {}: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let line = e
                .as_bytes()
                .iter()
                .take(valid)
                .filter(|b| **b == b'\n')
                .count()
                + 1;
            eprintln!(
                "agent-chat: {}: line {line}: malformed record: not UTF-8",
                file.display()
            );
            return ExitCode::from(1);
        }
    };
    let mut out = std::io::stdout().lock();
    let mut closed = writeln!(out, "{}", engine_core::trace::TIMELINE_HEADER).is_err();
    let result = engine_core::trace::replay_with(&text, |entry| {
        if !closed {
            closed = write!(out, "{}", entry.render()).is_err();
        }
    });
    match result {
        Ok(report) => {
            let _ = writeln!(out, "ok: {} expectations met", report.expectations);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("agent-chat: {}: {e}", file.display());
            ExitCode::from(1)
        }
    }
}

/// `agent-chat decode-stream FILE.sse`: the assembled message as JSON (AI SDK shape).
pub fn decode_stream(file: &Path) -> ExitCode {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("agent-chat: cannot read {}: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    let mut stream = AnswerStream::new(String::new(), 1 << 20);
    let mut deltas = Vec::new();
    stream.feed(&bytes, &mut deltas);
    stream.end(&mut deltas);
    match serde_json::to_string_pretty(stream.message()) {
        Ok(json) => {
            println!("{json}");
            // On stderr, as the chat shows them: the tool calls and their outcomes, and why
            // an answer showed nothing (issue 24).
            let parts = &stream.message().parts;
            for part in parts {
                if let Some(line) = match part {
                    engine_core::message::Part::Tool(tool) => crate::answer::tool_line(tool),
                    _ => None,
                } {
                    terminal::error_line(&line);
                }
            }
            if let Some(note) = crate::answer::showed_nothing_in(parts, stream.stats()) {
                terminal::error_line(&note);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("agent-chat: {e}");
            ExitCode::from(1)
        }
    }
}

/// `agent-chat simulate`: `seeds` runs from `sim.seed`; totals and steps per second, or the
/// first failing seed with its trace written under `out`.
pub fn simulate(sim: spec_tests::sim::Sim, seeds: u64, out: &Path) -> ExitCode {
    let started = std::time::Instant::now();
    let mut total = spec_tests::sim::Report::default();
    for seed in sim.seed..sim.seed.saturating_add(seeds) {
        let one = spec_tests::sim::Sim {
            seed,
            dialect: spec_tests::sim::dialect_of(seed),
            ..sim
        };
        let outcome = if sim.vary_presence {
            spec_tests::sim::presence_only(one)
        } else {
            spec_tests::sim::run(one)
        };
        match outcome {
            Ok(r) => total.add(&r),
            Err(failure) => {
                println!("{failure}");
                if failure.trace.is_empty() {
                    // A comparison of two runs (INV-6): no one trace to write.
                    return ExitCode::from(1);
                }
                let path = out.join(format!("seed-{seed}.jsonl"));
                let written = std::fs::create_dir_all(out)
                    .and_then(|()| std::fs::write(&path, &failure.trace));
                match written {
                    Ok(()) => println!(
                        "trace: {} (agent-chat replay {})",
                        path.display(),
                        path.display()
                    ),
                    Err(e) => eprintln!("agent-chat: cannot write {}: {e}", path.display()),
                }
                return ExitCode::from(1);
            }
        }
    }
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    println!(
        "{seeds} seeds, {} steps in {secs:.1} s ({:.0} steps/s): {} requests, {} message turns ({} answered), {} faults, {} texts written, {} queue edits and model changes, {} stale answers checked, {} steps with the default session shown; every invariant held",
        total.steps,
        total.steps as f64 / secs,
        total.requests,
        total.turns,
        total.answered,
        total.faults,
        total.texts,
        total.edits,
        total.stale_answers,
        total.default_shown
    );
    ExitCode::SUCCESS
}
