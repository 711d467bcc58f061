//! What needs no platform: replaying a trace, decoding a stream.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use engine_core::AnswerStream;

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
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("agent-chat: {e}");
            ExitCode::from(1)
        }
    }
}
