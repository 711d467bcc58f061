//! The Agent runtime's turn and cancel bodies (R2, R3): ADR 060 as laid out in OI-18 and OI-19.

use serde_json::{Map, Value, json};

use crate::http::CallLine;

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

/// A runtime call whose refusal has RU-19's full text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuntimeCall {
    /// R2 (and a local runtime's `POST /api/chat`): a turn.
    Chat,
    /// R3 (and a local runtime's cancel): the run cancel.
    Cancel,
}

impl RuntimeCall {
    /// RU-19: the operation that starts the text.
    fn operation(self) -> &'static str {
        match self {
            RuntimeCall::Chat => "Agent chat stream request failed",
            RuntimeCall::Cancel => "Agent session cancellation request failed",
        }
    }

    /// RU-19: the server message when the body gives none.
    fn fallback(self, status: u16) -> String {
        match self {
            RuntimeCall::Chat => format!("Chat stream failed with status {status}."),
            RuntimeCall::Cancel => format!("Session cancellation failed with status {status}."),
        }
    }
}

/// RU-19: the text of a runtime request refused with a non-2xx answer, "{operation}. Status:
/// HTTP {code}[ {reason}]. Call: {METHOD} {url}. Server response: {message}", the server message
/// read by RU-18 (the call's fallback when the body gives none). Unlabelled: a turn's failure
/// puts its source before it, a cancel's stays as it is (RU-17).
pub(crate) fn refused_text(
    call: RuntimeCall,
    line: &CallLine,
    content_type: Option<&str>,
    status: u16,
    body: &[u8],
) -> String {
    let reason = super::error::reason_suffix(line.reason.as_deref());
    let message =
        super::server_message(content_type, body).unwrap_or_else(|| call.fallback(status));
    format!(
        "{}. Status: HTTP {status}{reason}. Call: {} {}. Server response: {message}",
        call.operation(),
        line.method.as_str(),
        line.url,
    )
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
    }

    fn line(reason: Option<&str>, url: &str) -> CallLine {
        CallLine {
            method: crate::http::Method::Post,
            url: url.to_owned(),
            reason: reason.map(str::to_owned),
        }
    }

    /// RU-19 and RU-23: the full text of a refused R2 and R3.
    #[test]
    fn refused_texts_follow_ru_19() {
        let url = "https://rt.test/agents/a/api/chat/session/cancel";
        let a = line(Some("Internal Server Error"), url);
        assert_eq!(
            refused_text(
                RuntimeCall::Cancel,
                &a,
                Some("application/json"),
                500,
                br#"{"detail":"boom"}"#
            ),
            "Agent session cancellation request failed. Status: HTTP 500 Internal Server Error. Call: POST https://rt.test/agents/a/api/chat/session/cancel. Server response: boom"
        );
        let a = line(None, "https://rt.test/a/api/chat");
        assert_eq!(
            refused_text(RuntimeCall::Chat, &a, Some("application/json"), 409, b""),
            "Agent chat stream request failed. Status: HTTP 409. Call: POST https://rt.test/a/api/chat. Server response: Chat stream failed with status 409."
        );
        let a = line(Some("  "), "https://rt.test/a/api/chat/session/cancel");
        assert_eq!(
            refused_text(RuntimeCall::Cancel, &a, None, 502, b"  "),
            "Agent session cancellation request failed. Status: HTTP 502. Call: POST https://rt.test/a/api/chat/session/cancel. Server response: Session cancellation failed with status 502."
        );
    }
}
