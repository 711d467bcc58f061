//! The Agent runtime's turn and cancel bodies (R2, R3): ADR 060 as laid out in OI-18 and OI-19.

use serde_json::{Map, Value, json};

/// What a turn's body is made of, besides the text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BodyFacts {
    /// The canonical detail payload as loaded (SND-6).
    pub record: Option<Value>,
    /// `session.threadId` from the history (OI-18).
    pub thread_id: Option<String>,
    /// The person's uid.
    pub user_uid: Option<String>,
    /// The application's `viewContext`.
    pub context: Option<Value>,
    /// The selected reasoning effort.
    pub reasoning_effort: Option<String>,
}

/// The R2 body of one turn (SND-1, SND-6, OI-18): the newest user message alone, `tools`,
/// `runConfig`, `user_uid` when known, `threadId`, `runtime_session_uid`, `session`, and
/// `context` when the application gave one. Never `newChat`: every send has a session (SND-2).
pub(crate) fn turn_body(session_uid: &str, text: &str, facts: &BodyFacts) -> Value {
    let mut body = Map::new();
    body.insert(
        "messages".into(),
        json!([{"role": "user", "content": [{"type": "text", "text": text}]}]),
    );
    body.insert("tools".into(), Value::Object(Map::new()));
    // OI-18: without a known level the chat runtime's own (empty) run config goes out.
    let run_config = match &facts.reasoning_effort {
        Some(level) => json!({ "reasoning_effort": level }),
        None => Value::Object(Map::new()),
    };
    body.insert("runConfig".into(), run_config);
    if let Some(user) = &facts.user_uid {
        body.insert("user_uid".into(), Value::String(user.clone()));
    }
    let thread = facts.thread_id.as_deref().unwrap_or(session_uid);
    body.insert("threadId".into(), Value::String(thread.to_owned()));
    body.insert(
        "runtime_session_uid".into(),
        Value::String(session_uid.to_owned()),
    );
    if let Some(record) = &facts.record {
        body.insert("session".into(), record.clone());
    }
    if let Some(context) = &facts.context {
        body.insert("context".into(), context.clone());
    }
    Value::Object(body)
}

/// The R3 body (OI-19): `thread_id` is the session's thread id, else its runtime session id.
pub(crate) fn cancel_body(session_uid: &str, facts: &BodyFacts) -> Value {
    let thread = facts.thread_id.as_deref().unwrap_or(session_uid);
    json!({
        "runtime_session_uid": session_uid,
        "thread_id": thread,
        "user_uid": facts.user_uid,
        "reason": "user_requested",
        "message": "User pressed stop.",
    })
}

/// The text of a refused turn or cancel: "{what} failed with status N." plus the server's
/// message (R2, R3).
pub(crate) fn status_text(what: &str, status: u16, body: &[u8]) -> String {
    match super::error_message(body) {
        Some(message) => format!("{what} failed with status {status}. {message}"),
        None => format!("{what} failed with status {status}."),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn body_layout_follows_oi_18() {
        let facts = BodyFacts {
            record: Some(json!({"uid": "s-1", "llm_model": "m"})),
            thread_id: Some("t-9".into()),
            user_uid: Some("u-1".into()),
            context: Some(json!({"route": "/x"})),
            reasoning_effort: Some("high".into()),
        };
        let body = turn_body("s-1", "Hi", &facts);
        assert_eq!(
            body,
            json!({
                "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
                "tools": {},
                "runConfig": {"reasoning_effort": "high"},
                "user_uid": "u-1",
                "threadId": "t-9",
                "runtime_session_uid": "s-1",
                "session": {"uid": "s-1", "llm_model": "m"},
                "context": {"route": "/x"},
            })
        );
        let bare = turn_body("s-1", "Hi", &BodyFacts::default());
        assert_eq!(bare["runConfig"], json!({}));
        assert_eq!(bare["threadId"], json!("s-1"));
        for absent in ["user_uid", "context", "session", "newChat", "model"] {
            assert!(bare.get(absent).is_none(), "{absent}");
        }
    }

    #[test]
    fn cancel_body_follows_oi_19() {
        let body = cancel_body("s-1", &BodyFacts::default());
        assert_eq!(
            body,
            json!({"runtime_session_uid": "s-1", "thread_id": "s-1", "user_uid": null,
                   "reason": "user_requested", "message": "User pressed stop."})
        );
        assert_eq!(
            status_text("Chat stream", 409, br#"{"detail": "Busy."}"#),
            "Chat stream failed with status 409. Busy."
        );
        assert_eq!(
            status_text("Chat stream", 500, b""),
            "Chat stream failed with status 500."
        );
    }
}
