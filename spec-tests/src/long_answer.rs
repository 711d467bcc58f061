//! A long streamed answer, recorded: the harness's talking session sends one message and its
//! answer arrives as N text deltas of 3 to 6 characters, one SSE event per body chunk, as a
//! paced stream does. For replay benchmarks and tests (issue 12).

use std::time::Duration;

use bytes::Bytes;
use engine_core::{Engine, ResponseHead, Time};

use crate::harness::{Harness, ORIGIN};

/// The session the answer is in.
pub const SESSION: &str = "s-1";

/// The answer's message id.
pub const MESSAGE_ID: &str = "msg-long";

const WORDS: [&str; 8] = [
    "the ", "quick", " fox", " jumps", " over", " a", " lazy", " dog.",
];

/// The `i`th text delta (3 to 6 characters).
pub fn delta(i: usize) -> String {
    let word = WORDS[i % WORDS.len()];
    if word.len() < 3 {
        format!("{word}{}", i % 10)
    } else {
        word.to_owned()
    }
}

fn drain(engine: &mut Engine) {
    while engine.poll_intent().is_some() {}
    while engine.poll_event().is_some() {}
}

/// The recording engine after the answer of `deltas` text deltas, each in its own body chunk,
/// 10 µs apart, has ended; its trace is `engine.trace()`.
pub fn recorded(deltas: usize) -> Engine {
    let mut h = Harness::recording().into_talking(SESSION);
    let id = crate::turns::post_on(&mut h, SESSION, "Write a long answer.");
    let mut now: Time = ORIGIN + Duration::from_millis(h.now_ms());
    let (mut engine, _) = h.into_engine();
    engine.handle_response(
        id,
        ResponseHead::new(200, Some("text/event-stream".into())),
        now,
    );
    drain(&mut engine);
    let mut feed = |engine: &mut Engine, event: &str| {
        now += Duration::from_micros(10);
        let chunk = format!("data: {event}\n\n");
        engine.handle_body_chunk(id, Bytes::from(chunk), now);
        drain(engine);
    };
    feed(
        &mut engine,
        &format!(r#"{{"type":"start","messageId":"{MESSAGE_ID}"}}"#),
    );
    feed(&mut engine, r#"{"type":"start-step"}"#);
    feed(&mut engine, r#"{"type":"text-start","id":"t-1"}"#);
    for i in 0..deltas {
        let event = format!(
            r#"{{"type":"text-delta","id":"t-1","delta":"{}"}}"#,
            delta(i)
        );
        feed(&mut engine, &event);
    }
    feed(&mut engine, r#"{"type":"text-end","id":"t-1"}"#);
    feed(&mut engine, r#"{"type":"finish-step"}"#);
    feed(&mut engine, r#"{"type":"finish","finishReason":"stop"}"#);
    feed(&mut engine, "[DONE]");
    engine.handle_body_end(id, now);
    drain(&mut engine);
    engine
}

/// The trace of [`recorded`].
pub fn trace(deltas: usize) -> String {
    recorded(deltas)
        .trace()
        .expect("a recording engine")
        .to_owned()
}
