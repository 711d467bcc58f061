//! Helpers shared by the answer-stream tests: building bodies, feeding them in a slicing, and
//! replaying the deltas.

#![allow(dead_code)]

use engine_core::message::Message;
use engine_core::{AnswerStream, StreamDelta};
use serde_json::Value;

/// The size cap the tests use unless they test the cap.
pub const CAP: usize = 1 << 20;

/// A body of one `data:` event per chunk, as AI SDK servers write it, without `[DONE]`.
pub fn events(chunks: &[Value]) -> Vec<u8> {
    let mut body = Vec::new();
    for chunk in chunks {
        body.extend_from_slice(format!("data: {chunk}\n\n").as_bytes());
    }
    body
}

/// [`events`] followed by `data: [DONE]`.
pub fn body(chunks: &[Value]) -> Vec<u8> {
    let mut body = events(chunks);
    body.extend_from_slice(b"data: [DONE]\n\n");
    body
}

/// A finished stream and every delta it produced.
pub struct Run {
    pub stream: AnswerStream,
    pub deltas: Vec<StreamDelta>,
}

/// Feeds `body` cut at `cuts` (positions, any order, out-of-range ignored), then ends it.
/// After every slice, the deltas so far replayed onto an empty message equal `message()`.
pub fn run_cut(body: &[u8], cuts: &[usize], cap: usize) -> Run {
    let mut cuts: Vec<usize> = cuts.iter().copied().filter(|&c| c <= body.len()).collect();
    cuts.push(0);
    cuts.push(body.len());
    cuts.sort_unstable();
    cuts.dedup();
    let mut stream = AnswerStream::new(String::new(), cap);
    let mut deltas = Vec::new();
    let mut mirror = Message::assistant(String::new());
    // Issue 12: the incremental mirror a host keeps gives the same message.
    let mut incremental = engine_core::stream::MessageMirror::new("");
    for pair in cuts.windows(2) {
        let before = deltas.len();
        stream.feed(&body[pair[0]..pair[1]], &mut deltas);
        for delta in &deltas[before..] {
            delta.apply_to(&mut mirror);
            incremental.apply(delta);
        }
        assert_eq!(
            &mirror,
            stream.message(),
            "replayed deltas differ from the message"
        );
        assert_eq!(
            incremental.message(),
            stream.message(),
            "the mirror differs"
        );
    }
    let before = deltas.len();
    stream.end(&mut deltas);
    for delta in &deltas[before..] {
        delta.apply_to(&mut mirror);
        incremental.apply(delta);
    }
    assert_eq!(
        &mirror,
        stream.message(),
        "replayed deltas differ after end()"
    );
    assert_eq!(
        incremental.message(),
        stream.message(),
        "the mirror differs after end()"
    );
    Run { stream, deltas }
}

/// Feeds `body` one SSE event at a time (cut after every blank line), then ends it: every
/// frame's deltas come from a call of their own, so none is joined to another frame's.
pub fn run_frame_by_frame(body: &[u8]) -> Run {
    let cuts: Vec<usize> = body
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w == b"\n\n")
        .map(|(i, _)| i + 2)
        .collect();
    run_cut(body, &cuts, CAP)
}

/// `deltas` with the appends that follow one another to the same part joined into one, as one
/// call of `feed` hands them on: the same answer, whatever the slicing.
pub fn joined(deltas: &[StreamDelta]) -> Vec<StreamDelta> {
    let mut out: Vec<StreamDelta> = Vec::with_capacity(deltas.len());
    for delta in deltas {
        let joins = match (out.last_mut(), delta) {
            (
                Some(StreamDelta::TextDelta { index, delta: text }),
                StreamDelta::TextDelta {
                    index: i,
                    delta: more,
                },
            )
            | (
                Some(StreamDelta::ReasoningDelta { index, delta: text }),
                StreamDelta::ReasoningDelta {
                    index: i,
                    delta: more,
                },
            ) if index == i => Some((text, more)),
            (
                Some(StreamDelta::ToolInputDelta {
                    index,
                    delta: text,
                    input_is_text,
                }),
                StreamDelta::ToolInputDelta {
                    index: i,
                    delta: more,
                    input_is_text: t,
                },
            ) if index == i && input_is_text == t => Some((text, more)),
            _ => None,
        };
        match joins {
            Some((text, more)) => text.push_str(more),
            None => out.push(delta.clone()),
        }
    }
    out
}

/// Feeds `body` whole, then ends it.
pub fn run(body: &[u8]) -> Run {
    run_cut(body, &[], CAP)
}

/// The message's AI SDK fields: `id`, `role`, `metadata` (when set), `parts`.
pub fn projection(message: &Message) -> Value {
    let mut value = serde_json::to_value(message).unwrap();
    let object = value.as_object_mut().unwrap();
    object.retain(|key, _| matches!(key.as_str(), "id" | "role" | "metadata" | "parts"));
    value
}

/// The message's parts as JSON.
pub fn parts(message: &Message) -> Value {
    serde_json::to_value(&message.parts).unwrap()
}
