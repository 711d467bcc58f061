//! Why a turn failed, as a stable, machine-readable code beside the text a person reads.
//!
//! Every failed turn carries a [`RunFailure`]: in the snapshot (`runFailure`, while the run
//! status is `error`), in [`crate::Event::RunFailed`], and, when the message did not go out, in
//! [`crate::Event::MessageNotSent`]. The codes follow the reference implementation where it has
//! one (`agent_unreachable`, `runtime_request_not_sent`, `runtime_interaction_blocked`,
//! `runtime_unavailable`); the rest are this engine's, one per kind of failure. The list is
//! documented in `docs/interpretations.md` ("Failure codes").
//!
//! Its text says where the failure comes from (`reference-update.md`, RU-13 to RU-17): "Source:
//! {label}. {message}", labelled once, by [`RunFailure::from_source`]; see [`FailureSource`].

use serde::{Deserialize, Serialize};

mod source;

pub use source::{FailureSource, is_labelled, labelled};

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

/// A failed turn: its code, the text shown to the person, and where it comes from.
///
/// A failure with a source reads "Source: {label}. {message}" (RU-13): the label is put on once,
/// here, by [`RunFailure::from_source`]. A stop, and a failed cancel request, carry none (RU-17):
/// [`RunFailure::new`].
///
/// ```
/// use engine_core::{FailureCode, FailureSource, RunFailure};
///
/// let failure = RunFailure::from_source(
///     FailureCode::AgentUnreachable,
///     FailureSource::SENDING,
///     "connection reset",
/// );
/// assert_eq!(failure.code.as_str(), "agent_unreachable");
/// assert_eq!(failure.message, "Source: Sending to the Agent. connection reset");
/// assert_eq!(failure.unlabelled_message(), "connection reset");
/// assert_eq!(
///     serde_json::to_value(&failure).unwrap(),
///     serde_json::json!({
///         "code": "agent_unreachable",
///         "message": "Source: Sending to the Agent. connection reset",
///         "source": "assistant_backend_http",
///     }),
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunFailure {
    /// The stable code.
    pub code: FailureCode,
    /// The text, as `runStatusDetail` shows it: labelled with its source when it has one.
    pub message: String,
    /// Where the failure comes from (RU-14), when it has a source; serialized as its key and
    /// left out when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<FailureSource>,
}

impl RunFailure {
    /// A failure with this code and text, and no source: the text is kept as given. For a
    /// stop and a failed cancel request (RU-17); every failure of a turn has a source.
    pub fn new(code: FailureCode, message: impl Into<String>) -> RunFailure {
        RunFailure {
            code,
            message: message.into(),
            source: None,
        }
    }

    /// A failure with this code, from this source: its text is the message labelled (RU-13),
    /// "Source: {label}. {message}", never twice.
    pub fn from_source(code: FailureCode, source: FailureSource, message: &str) -> RunFailure {
        RunFailure {
            code,
            message: source.label_message(message),
            source: Some(source),
        }
    }

    /// The text after the label (RU-17: "a check on an error's own message compares the text
    /// after the label"): the message without "Source: {label}. " when it begins with its own
    /// source's label, else the message as it is.
    pub fn unlabelled_message(&self) -> &str {
        let Some(source) = &self.source else {
            return &self.message;
        };
        let prefix = format!("Source: {}. ", source.label());
        self.message.strip_prefix(&prefix).unwrap_or(&self.message)
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

    #[test]
    fn a_failure_with_a_source_is_labelled_once() {
        let failure = RunFailure::from_source(
            FailureCode::StreamError,
            FailureSource::new("provider_gateway"),
            " The model provider refused the request. ",
        );
        assert_eq!(
            failure.message,
            "Source: Provider Gateway. The model provider refused the request."
        );
        assert_eq!(
            failure.unlabelled_message(),
            "The model provider refused the request."
        );
        let again = RunFailure::from_source(
            FailureCode::StreamError,
            FailureSource::RECEIVING,
            &failure.message,
        );
        assert_eq!(again.message, failure.message);
        // Labelled by another source before: the whole text is its own message.
        assert_eq!(again.unlabelled_message(), failure.message);
        let plain = RunFailure::new(FailureCode::RunCancelled, "Run cancelled.");
        assert_eq!(plain.unlabelled_message(), "Run cancelled.");
        assert_eq!(
            serde_json::to_value(&plain).unwrap(),
            serde_json::json!({"code": "run_cancelled", "message": "Run cancelled."})
        );
        let read: RunFailure =
            serde_json::from_value(serde_json::json!({"code": "queue_full", "message": "x"}))
                .unwrap();
        assert_eq!(read.source, None);
    }
}
