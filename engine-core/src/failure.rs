//! Why a turn failed, as a stable, machine-readable code beside the text a person reads.
//!
//! Every failed turn carries a [`RunFailure`]: in the snapshot (`runFailure`, while the run
//! status is `error`), in [`crate::Event::RunFailed`], and, when the message did not go out, in
//! [`crate::Event::MessageNotSent`]. The codes follow the reference implementation where it has
//! one (`agent_unreachable`, `runtime_request_not_sent`, `runtime_interaction_blocked`,
//! `runtime_unavailable`); the rest are this engine's, one per kind of failure. The list is
//! documented in `docs/interpretations.md` ("Failure codes").

use serde::{Deserialize, Serialize};

/// The kind of a turn's failure. Serialized in `snake_case`; the set only grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureCode {
    /// Nothing is selected: there is no session to send to.
    NoSessionSelected,
    /// Send guard (SND-2): the session is not ready (still loading, or in error).
    SessionNotReady,
    /// Send guard (SND-2): the session is ready but its detail record is not loaded.
    SessionDetailMissing,
    /// Ten messages already wait in the queue (SND-24).
    QueueFull,
    /// The engine refused to build the turn's first request (an invalid id or credential).
    RequestRefused,
    /// resolve-runtime-access failed: no answer, an HTTP error, or a malformed answer.
    RuntimeAccessFailed,
    /// The first runtime-access answer was terminal (SND-11): the decision's notice.
    RuntimeInteractionBlocked,
    /// `can_submit` with mode `unavailable` (OI-6).
    RuntimeUnavailable,
    /// A held send ended undelivered (SND-11 to SND-13, OI-4): the decision turned terminal,
    /// the start passed its deadline, or the person stopped the run.
    RuntimeRequestNotSent,
    /// The message request failed at the network level (SND-14): it is never sent again.
    AgentUnreachable,
    /// The message request got a non-2xx answer (after the one repeat of SND-23).
    AgentHttpError,
    /// The answer stream reported an error frame.
    StreamError,
    /// The answer's body broke off or ended before the answer finished.
    StreamInterrupted,
    /// The answer was larger than the engine's limit.
    StreamTooLarge,
    /// The run was stopped before its message left (`cancelActiveSession()`).
    RunCancelled,
    /// The session's record belongs to another Environment (OI-24): a message queued for it
    /// under this one is handed back.
    SessionInAnotherEnvironment,
    /// The first turn of a new local conversation finished without the runtime naming the
    /// session it started (adr-notes 2 and 8).
    NewChatWithoutSession,
}

impl FailureCode {
    /// The code as it is serialized (`"agent_unreachable"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureCode::NoSessionSelected => "no_session_selected",
            FailureCode::SessionNotReady => "session_not_ready",
            FailureCode::SessionDetailMissing => "session_detail_missing",
            FailureCode::QueueFull => "queue_full",
            FailureCode::RequestRefused => "request_refused",
            FailureCode::RuntimeAccessFailed => "runtime_access_failed",
            FailureCode::RuntimeInteractionBlocked => "runtime_interaction_blocked",
            FailureCode::RuntimeUnavailable => "runtime_unavailable",
            FailureCode::RuntimeRequestNotSent => "runtime_request_not_sent",
            FailureCode::AgentUnreachable => "agent_unreachable",
            FailureCode::AgentHttpError => "agent_http_error",
            FailureCode::StreamError => "stream_error",
            FailureCode::StreamInterrupted => "stream_interrupted",
            FailureCode::StreamTooLarge => "stream_too_large",
            FailureCode::RunCancelled => "run_cancelled",
            FailureCode::SessionInAnotherEnvironment => "session_in_another_environment",
            FailureCode::NewChatWithoutSession => "new_chat_without_session",
        }
    }
}

impl std::fmt::Display for FailureCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed turn: its code and the text shown to the person.
///
/// ```
/// use engine_core::{FailureCode, RunFailure};
///
/// let failure = RunFailure::new(FailureCode::AgentUnreachable, "connection reset");
/// assert_eq!(failure.code.as_str(), "agent_unreachable");
/// assert_eq!(
///     serde_json::to_value(&failure).unwrap(),
///     serde_json::json!({"code": "agent_unreachable", "message": "connection reset"}),
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunFailure {
    /// The stable code.
    pub code: FailureCode,
    /// The text, as `runStatusDetail` shows it.
    pub message: String,
}

impl RunFailure {
    /// A failure with this code and text.
    pub fn new(code: FailureCode, message: impl Into<String>) -> RunFailure {
        RunFailure {
            code,
            message: message.into(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn as_str_is_the_serialized_form() {
        let all = [
            FailureCode::NoSessionSelected,
            FailureCode::SessionNotReady,
            FailureCode::SessionDetailMissing,
            FailureCode::QueueFull,
            FailureCode::RequestRefused,
            FailureCode::RuntimeAccessFailed,
            FailureCode::RuntimeInteractionBlocked,
            FailureCode::RuntimeUnavailable,
            FailureCode::RuntimeRequestNotSent,
            FailureCode::AgentUnreachable,
            FailureCode::AgentHttpError,
            FailureCode::StreamError,
            FailureCode::StreamInterrupted,
            FailureCode::StreamTooLarge,
            FailureCode::RunCancelled,
            FailureCode::SessionInAnotherEnvironment,
            FailureCode::NewChatWithoutSession,
        ];
        for code in all {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, serde_json::Value::String(code.as_str().to_owned()));
        }
    }
}
