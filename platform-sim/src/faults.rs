//! The answers of the faults that write a body of their own (a redirect, a slow drip, invalid
//! UTF-8, a huge SSE line, an answer past a size, a long history). Bodies that can be large are
//! produced as they are read, never held whole; the bytes they produce are counted
//! ([`Shared::fault_bytes`]) so a test can tell how much of an answer a client really read.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::Body;
use axum::http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::answer;
use crate::server::{Shared, decode, json_response, lock};
use crate::types::Dialect;
use crate::wire::{Frame, iso, now_ms};

/// How much of a generated body one piece holds.
const PIECE: usize = 64 * 1024;

/// The size of one text delta of [`large_answer`].
const DELTA: usize = 1024;

/// `status` with `Location: location` and no body.
pub(crate) fn redirect(status: u16, location: &str) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::TEMPORARY_REDIRECT);
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(LOCATION, value);
    }
    response
}

/// A 200 answer stream made of these pieces, in order.
fn event_stream(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn frame(dialect: Dialect, fields: &[(&str, Value)]) -> Bytes {
    answer::frame(dialect, fields).bytes()
}

/// The id of the one text part of a generated answer.
fn text_id(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Runtime => "text-0",
        Dialect::AiSdk => "t",
    }
}

/// The field of a text delta's text.
fn delta_key(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Runtime => "textDelta",
        Dialect::AiSdk => "delta",
    }
}

/// A text delta of the generated answer's one text part.
fn delta(dialect: Dialect, text: &str) -> Bytes {
    frame(
        dialect,
        &[
            ("type", "text-delta".into()),
            ("id", text_id(dialect).into()),
            (delta_key(dialect), text.into()),
        ],
    )
}

/// A text delta's event up to the opening quote of its text (written by hand: what follows
/// is not always valid JSON text).
fn delta_head(dialect: Dialect) -> String {
    format!(
        r#"data: {{"type":"text-delta","id":"{}","{}":""#,
        text_id(dialect),
        delta_key(dialect)
    )
}

/// The opening of a generated answer: `start` (AI SDK) or `start-step` (runtime), then
/// `text-start`.
fn opening(dialect: Dialect) -> Vec<Bytes> {
    let first = match dialect {
        Dialect::AiSdk => frame(
            dialect,
            &[
                ("type", "start".into()),
                ("messageId", "msg-fault-a".into()),
            ],
        ),
        Dialect::Runtime => frame(dialect, &[("type", "start-step".into())]),
    };
    vec![
        first,
        frame(
            dialect,
            &[
                ("type", "text-start".into()),
                ("id", text_id(dialect).into()),
            ],
        ),
    ]
}

/// The end of a generated answer: `text-end`, (`finish-step`, runtime), `finish`, `[DONE]`.
fn closing(dialect: Dialect) -> Vec<Bytes> {
    let mut frames = vec![frame(
        dialect,
        &[("type", "text-end".into()), ("id", text_id(dialect).into())],
    )];
    if dialect == Dialect::Runtime {
        frames.push(frame(
            dialect,
            &[
                ("type", "finish-step".into()),
                ("finishReason", "stop".into()),
            ],
        ));
    }
    frames.push(frame(
        dialect,
        &[("type", "finish".into()), ("finishReason", "stop".into())],
    ));
    frames.push(Frame::done().bytes());
    frames
}

/// The text a [`crate::FaultKind::InvalidUtf8`] answer writes, as a client decodes it lossily:
/// each invalid sequence becomes one U+FFFD.
pub const INVALID_UTF8_TEXT: &str = "caf\u{FFFD}( and \u{FFFD} end";

/// A finished answer whose one text delta holds invalid UTF-8: `caf\xC3(` (a lead byte
/// without its continuation) and a lone `\xFF`.
pub(crate) fn invalid_utf8(dialect: Dialect) -> Response {
    let mut delta = BytesMut::new();
    delta.extend_from_slice(delta_head(dialect).as_bytes());
    delta.extend_from_slice(b"caf\xC3( and \xFF end\"}\n\n");
    let mut pieces = opening(dialect);
    pieces.push(delta.freeze());
    pieces.extend(closing(dialect));
    let stream = futures_util::stream::iter(pieces.into_iter().map(Ok::<_, std::io::Error>));
    event_stream(Body::from_stream(stream))
}

/// The text of the short delta that follows the long line of a [`crate::FaultKind::HugeLine`]
/// answer.
pub const AFTER_HUGE_LINE: &str = "after the long line";

/// A finished answer with one `text-delta` event whose `data:` line is `bytes` long (its delta
/// a run of `x`), written in pieces as it is read, then a short delta ([`AFTER_HUGE_LINE`]).
pub(crate) fn huge_line(shared: &Arc<Shared>, bytes: usize) -> Response {
    let dialect = shared.config.dialect;
    let head = delta_head(dialect);
    let tail = b"\"}\n\n";
    let filler = bytes.saturating_sub(head.len() + tail.len());
    let mut pieces = opening(dialect);
    pieces.push(Bytes::from(head));
    let shared_count = Arc::clone(shared);
    let long = futures_util::stream::iter(chunks(filler)).map(move |n| {
        count(&shared_count, n);
        Ok::<_, std::io::Error>(Bytes::from(vec![b'x'; n]))
    });
    let mut after = vec![Bytes::from_static(tail)];
    after.push(delta(dialect, AFTER_HUGE_LINE));
    after.extend(closing(dialect));
    let stream = futures_util::stream::iter(pieces.into_iter().map(Ok))
        .chain(long)
        .chain(futures_util::stream::iter(after.into_iter().map(Ok)));
    event_stream(Body::from_stream(stream))
}

/// A valid, finished answer of at least `bytes` bytes: text deltas of 1 KiB (runs of `y`),
/// produced as they are read.
pub(crate) fn large_answer(shared: &Arc<Shared>, bytes: usize) -> Response {
    let dialect = shared.config.dialect;
    let delta = delta(dialect, &"y".repeat(DELTA));
    let per_piece = (PIECE / delta.len()).max(1);
    let one_piece: Bytes = delta.repeat(per_piece).into();
    let pieces = bytes.div_ceil(one_piece.len());
    let shared_count = Arc::clone(shared);
    let body = futures_util::stream::iter(0..pieces).map(move |_| {
        count(&shared_count, one_piece.len());
        Ok::<_, std::io::Error>(one_piece.clone())
    });
    let stream = futures_util::stream::iter(opening(dialect).into_iter().map(Ok))
        .chain(body)
        .chain(futures_util::stream::iter(
            closing(dialect).into_iter().map(Ok),
        ));
    event_stream(Body::from_stream(stream))
}

/// `total` split into pieces of at most [`PIECE`].
fn chunks(total: usize) -> impl Iterator<Item = usize> {
    let full = total / PIECE;
    let rest = total % PIECE;
    std::iter::repeat_n(PIECE, full).chain((rest > 0).then_some(rest))
}

fn count(shared: &Shared, n: usize) {
    let n = u64::try_from(n).unwrap_or(u64::MAX);
    shared.fault_bytes.fetch_add(n, Ordering::Relaxed);
}

/// The text of message `i` (from 0) of a [`crate::FaultKind::LargeHistory`] transcript.
pub fn history_text(i: usize) -> String {
    format!("m{i}")
}

/// A P9 history of `messages` short text messages (user first, then assistant, in turn) for
/// the session of `path` (`/api/v1/agent-sessions/{uid}/history/`), status completed.
pub(crate) fn large_history(shared: &Shared, path: &str, messages: usize) -> Response {
    let uid = path
        .split('/')
        .skip_while(|s| *s != "agent-sessions")
        .nth(1)
        .map(decode)
        .unwrap_or_default();
    let (agent_uid, thread_id) = {
        let state = lock(&shared.state);
        state
            .session(&uid)
            .map(|s| (s.agent_uid.clone(), s.thread_id.clone()))
            .unwrap_or_else(|| (String::new(), uid.clone()))
    };
    let at = iso(now_ms());
    let list: Vec<Value> = (0..messages)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            json!({
                "id": format!("hist-{i}"),
                "role": role,
                "createdAt": at,
                "content": [{"type": "text", "text": history_text(i)}],
            })
        })
        .collect();
    json_response(
        200,
        &json!({
            "version": 1,
            "session": {
                "sessionId": uid,
                "threadId": thread_id,
                "agentUid": agent_uid,
                "agentSessionUid": uid,
                "status": "completed",
                "error": null,
            },
            "messages": list,
            "inProgressMessage": null,
        }),
    )
}

/// The same answer, its body written `bytes` at a time with `pause_ms` between two writes
/// (shorter when the server shuts down). The drip stops when the client goes away.
pub(crate) fn drip(
    shared: &Arc<Shared>,
    response: Response,
    bytes: usize,
    pause_ms: u64,
) -> Response {
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(CONTENT_LENGTH);
    let bytes = bytes.max(1);
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(1);
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        let mut body = body.into_data_stream();
        let mut first = true;
        while let Some(next) = body.next().await {
            let Ok(mut chunk) = next else {
                let _ = tx
                    .send(Err(std::io::Error::other("dropped mid-drip")))
                    .await;
                return;
            };
            while !chunk.is_empty() {
                if !first {
                    shared.pause(pause_ms).await;
                }
                first = false;
                let piece = chunk.split_to(bytes.min(chunk.len()));
                if tx.send(Ok(piece)).await.is_err() {
                    return;
                }
            }
        }
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_add_up_and_stay_small() {
        for total in [0, 1, PIECE - 1, PIECE, PIECE + 1, 5 * PIECE + 7] {
            let pieces: Vec<usize> = chunks(total).collect();
            assert_eq!(pieces.iter().sum::<usize>(), total);
            assert!(pieces.iter().all(|n| (1..=PIECE).contains(n)));
        }
    }
}
