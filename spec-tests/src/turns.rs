//! Helpers for tests about turns: request predicates, bodies, and answering access ready.

use engine_core::{ApiCall, Event, RequestId, StreamDelta};
use serde_json::Value;

use crate::fixtures::{AGENT, ENV, insights, record, runtime_ready};
use crate::harness::Harness;

/// A message request (R2).
pub fn is_send(c: &ApiCall) -> bool {
    matches!(c, ApiCall::SendMessage { .. })
}

/// A resolve-runtime-access (P11).
pub fn is_resolve(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ResolveRuntimeAccess { .. })
}

/// An Agent confirmation (R1).
pub fn is_confirm(c: &ApiCall) -> bool {
    matches!(c, ApiCall::ConfirmAgent { .. })
}

/// The JSON body of request `id`.
pub fn body(h: &Harness, id: RequestId) -> Value {
    let bytes = h.request(id).request.body.clone().expect("a body");
    serde_json::from_slice(&bytes).expect("a JSON body")
}

/// The texts of every message request so far, in order.
pub fn texts_sent(h: &Harness) -> Vec<String> {
    h.sent()
        .iter()
        .filter(|s| is_send(&s.call))
        .map(|s| {
            body(h, s.id)["messages"][0]["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect()
}

/// Sends `text` on a talking session `uid` and answers its resolve ready: with the confirmation
/// remembered, the message request follows at once (SND-4). Returns its id.
pub fn post_on(h: &mut Harness, uid: &str, text: &str) -> RequestId {
    h.send(text);
    let id = h.runtime_request(uid);
    h.reply(id, 200, runtime_ready(uid));
    h.message_request(uid)
}

/// Answers every open resolve-runtime-access ready (for `uid`) and every open confirmation
/// serving.
pub fn all_ready_on(h: &mut Harness, uid: &str) {
    for _ in 0..8 {
        if let Some(r) = h.pending(is_resolve) {
            h.reply(r, 200, runtime_ready(uid));
        } else if let Some(c) = h.pending(is_confirm) {
            h.reply_raw(c, 200, None, b"", None);
        } else {
            return;
        }
    }
}

/// The text of every `Event::Answer` text delta in `events`, joined.
pub fn streamed_text(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Answer {
                delta: StreamDelta::TextDelta { delta, .. },
                ..
            } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

/// `uid` selected, hydrated and confirmed ready, its record reporting `working`: another writer
/// runs a turn (SND-25).
pub fn another_writer_at_work(uid: &str) -> Harness {
    let mut h = Harness::selected(uid);
    let mut working = record(uid, AGENT, ENV, 0);
    working["working"] = serde_json::json!(true);
    h.answer_detail(uid, working);
    // RU-20: the history says it runs (one that does not would clear the record's flag).
    let id = h.history_request(uid);
    h.reply(id, 200, crate::fixtures::running_history(uid));
    let ins = h.insights_request(uid);
    h.reply(ins, 200, insights(uid));
    h.runtime_ready(uid, 200);
    h
}
