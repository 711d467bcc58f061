//! Helpers the simulator's test files share.
#![allow(dead_code)]

use engine_core::AnswerStream;
use engine_core::message::Part;

/// Assembles a streamed answer, fed in odd slices to exercise the incremental decoder.
pub fn assemble(bytes: &[u8]) -> AnswerStream {
    let mut stream = AnswerStream::new("x".into(), 1 << 20);
    let mut out = Vec::new();
    for piece in bytes.chunks(7) {
        stream.feed(piece, &mut out);
    }
    stream.end(&mut out);
    stream
}

/// The text parts of the assembled message, joined.
pub fn text_of(stream: &AnswerStream) -> String {
    stream
        .message()
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}
