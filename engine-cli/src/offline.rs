//! What needs no platform: replaying a trace, decoding a stream.

use std::path::Path;
use std::process::ExitCode;

use engine_core::AnswerStream;

/// `agent-chat replay FILE`: the timeline as it replays; exit 1 at the first failed expectation
/// or malformed line, with its line number and the difference.
pub fn replay(file: &Path) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("agent-chat: cannot read {}: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    println!("{}", engine_core::trace::TIMELINE_HEADER);
    let result = engine_core::trace::replay_with(&text, |entry| println!("{}", entry.render()));
    match result {
        Ok(report) => {
            println!(
                "ok: {} records, {} expectations met",
                report.entries.len(),
                report.expectations
            );
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
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("agent-chat: {e}");
            ExitCode::from(1)
        }
    }
}
