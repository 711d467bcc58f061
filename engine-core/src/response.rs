//! What the shell feeds back for a request: a head, body chunks and an end, or a failure.

use serde::{Deserialize, Serialize};

/// The status line and the headers the engine reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResponseHead {
    /// The HTTP status.
    pub status: u16,
    /// `Content-Type`, when present.
    pub content_type: Option<String>,
    /// `X-Agent-Session-Uid`, when present: a local runtime names the conversation a turn ran
    /// in (ADR 099). Shells pass it for every answer; the engine reads it for turns only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_session_uid: Option<String>,
    /// The reason phrase of the status line, when the shell has one: it goes into the text of a
    /// refused message or cancel request ("Status: HTTP 500 Internal Server Error", RU-19). The
    /// shells give the phrase as received, else the status's canonical phrase; left out, the
    /// text has the code alone. Absent from traces recorded before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `ETag`, when present: an Agent icon's fingerprint (RU-35), so that a revalidated icon
    /// whose tag did not change keeps its image. Shells pass it for every answer; the engine
    /// reads it for icons only. Absent from traces recorded before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
}

impl ResponseHead {
    /// A head with this status and content type, and no other header.
    pub fn new(status: u16, content_type: Option<String>) -> ResponseHead {
        ResponseHead {
            status,
            content_type,
            agent_session_uid: None,
            reason: None,
            etag: None,
        }
    }

    /// A head with this status and a JSON content type.
    pub fn json(status: u16) -> ResponseHead {
        ResponseHead::new(status, Some("application/json".into()))
    }

    /// The same head with the `X-Agent-Session-Uid` the answer carried.
    ///
    /// ```
    /// let head = engine_core::ResponseHead::new(200, Some("text/event-stream".into()))
    ///     .with_agent_session_uid(Some("conversation-1".into()));
    /// assert_eq!(head.agent_session_uid.as_deref(), Some("conversation-1"));
    /// ```
    pub fn with_agent_session_uid(mut self, agent_session_uid: Option<String>) -> ResponseHead {
        self.agent_session_uid = agent_session_uid;
        self
    }

    /// The same head with this reason phrase (blank reads as none).
    ///
    /// ```
    /// let head = engine_core::ResponseHead::json(500).with_reason(Some("Internal Server Error".into()));
    /// assert_eq!(head.reason.as_deref(), Some("Internal Server Error"));
    /// assert_eq!(engine_core::ResponseHead::json(500).with_reason(Some(" ".into())).reason, None);
    /// ```
    pub fn with_reason(mut self, reason: Option<String>) -> ResponseHead {
        self.reason = reason.filter(|r| !r.trim().is_empty());
        self
    }

    /// The same head with the `ETag` the answer carried (blank reads as none).
    ///
    /// ```
    /// let head = engine_core::ResponseHead::new(200, Some("image/svg+xml".into()))
    ///     .with_etag(Some("\"one\"".into()));
    /// assert_eq!(head.etag.as_deref(), Some("\"one\""));
    /// ```
    pub fn with_etag(mut self, etag: Option<String>) -> ResponseHead {
        self.etag = etag.filter(|e| !e.trim().is_empty());
        self
    }
}

/// How a request failed below HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// No answer: connection refused, DNS, TLS, or the shell's transport timeout.
    NoAnswer,
    /// The answer broke off after its head.
    Broken,
}

/// A transport-level failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TransportFailure {
    /// Which kind.
    pub kind: FailureKind,
    /// The transport's message.
    pub message: String,
}

impl TransportFailure {
    /// A failure of this kind with this message.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> TransportFailure {
        TransportFailure {
            kind,
            message: message.into(),
        }
    }

    /// A "no answer" failure with this message.
    pub fn no_answer(message: impl Into<String>) -> TransportFailure {
        TransportFailure::new(FailureKind::NoAnswer, message)
    }

    /// A "broken" failure (the answer broke off after its head) with this message.
    pub fn broken(message: impl Into<String>) -> TransportFailure {
        TransportFailure::new(FailureKind::Broken, message)
    }
}
