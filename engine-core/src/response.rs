//! What the shell feeds back for a request: a head, body chunks and an end, or a failure.

use serde::{Deserialize, Serialize};

/// The status line and the headers the engine reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseHead {
    /// The HTTP status.
    pub status: u16,
    /// `Content-Type`, when present.
    pub content_type: Option<String>,
    /// `X-Agent-Session-Uid`, when present: a local runtime names the conversation a turn ran
    /// in (ADR 099). Shells pass it for every answer; the engine reads it for turns only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_session_uid: Option<String>,
}

impl ResponseHead {
    /// A head with this status and content type, and no other header.
    pub fn new(status: u16, content_type: Option<String>) -> ResponseHead {
        ResponseHead {
            status,
            content_type,
            agent_session_uid: None,
        }
    }

    /// A head with this status and a JSON content type.
    pub fn json(status: u16) -> ResponseHead {
        ResponseHead::new(status, Some("application/json".into()))
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
pub struct TransportFailure {
    /// Which kind.
    pub kind: FailureKind,
    /// The transport's message.
    pub message: String,
}

impl TransportFailure {
    /// A "no answer" failure with this message.
    pub fn no_answer(message: impl Into<String>) -> TransportFailure {
        TransportFailure {
            kind: FailureKind::NoAnswer,
            message: message.into(),
        }
    }
}
