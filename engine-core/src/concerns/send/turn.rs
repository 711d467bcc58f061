//! One message on its way (a turn), how a run ends, and the failures a turn ends with.

use super::*;

/// OI-6: the text of a held send that ends undelivered.
fn not_sent_text(notice: Option<&str>) -> String {
    match notice.map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) => {
            format!("{n} Your message was not sent; send it again when the agent is ready.")
        }
        None => "The agent is not ready to take messages yet. Your message was not sent; send it again when it is ready.".to_owned(),
    }
}

/// A queued row on its way out (OI-20).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueuedTurn {
    pub row: QueuedMessage,
    /// "Sending queued message {n} of {total}".
    pub n: usize,
    pub total: usize,
}

/// The run status a loaded history stands for (adr-notes 8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Restored {
    pub status: RunStatus,
    pub detail: Option<String>,
    pub visible_output: bool,
}

impl Restored {
    /// adr-notes 8: the run status of a session opened from its history. `working` is what the
    /// session's record says (true while the record is not loaded: the history's word stands).
    pub(crate) fn from_history(history: &crate::api::History, working: bool) -> Restored {
        use crate::api::HistoryStatus;
        use crate::concerns::send::{COMPLETED_TEXT, RESTORED_LIVE_TEXT};
        use crate::snapshot::RunStatus;
        // The reference's order: an empty history of a session not running says nothing.
        let running = history.status == HistoryStatus::Running;
        let (status, detail) = if history.messages.is_empty() && !running {
            (RunStatus::Idle, None)
        } else if running && working {
            (RunStatus::Responding, Some(RESTORED_LIVE_TEXT.to_owned()))
        } else if history.status == HistoryStatus::Error {
            let error = history
                .error
                .as_deref()
                .map(str::trim)
                .filter(|e| !e.is_empty());
            let detail = error.unwrap_or(PREVIOUS_RUN_FAILED_TEXT).to_owned();
            (RunStatus::Error, Some(detail))
        } else {
            (RunStatus::Complete, Some(COMPLETED_TEXT.to_owned()))
        };
        Restored {
            status,
            detail,
            visible_output: has_answer(history),
        }
    }
}

/// The history's fallback text for a failed last run (adr-notes 8).
const PREVIOUS_RUN_FAILED_TEXT: &str = "The previous run failed.";

fn has_answer(history: &crate::api::History) -> bool {
    history
        .messages
        .iter()
        .any(|m| m.role == crate::message::Role::Assistant)
}

/// One message on its way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Turn {
    pub text: String,
    pub user_message_id: String,
    /// The answer's id when the stream names none.
    pub answer_id: String,
    pub queued: Option<QueuedTurn>,
    /// SND-23: the one repeat after a 401 or 403 was used.
    pub auth_retried: bool,
    /// OI-4: the hold's deadline (wall-clock ms), fixed when the turn is first held.
    pub hold_deadline_ms: Option<u64>,
    /// The first turn of a new local conversation (ADR 099): the runtime must name the
    /// conversation it started, by the `X-Agent-Session-Uid` header or a `new_session` frame.
    pub new_chat: bool,
}

/// A turn is over: what the queue and the host learn of it (OI-20).
#[derive(Debug, Clone)]
pub(crate) struct TurnEnded {
    pub session_uid: String,
    pub end: RunEnd,
    /// The message request went out.
    pub sent: bool,
    pub turn: Turn,
}

/// How a run ended, for the queue (OI-20).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RunEnd {
    /// The answer finished.
    Clean,
    /// An error: a guard, a refused or failed request, a failed answer.
    Failed(RunFailure),
    /// `cancelActiveSession()`; with the reason handed back when the message had not gone out.
    Stopped(Option<RunFailure>),
    /// A terminal decision, with its notice (the queue's hold message) and the turn's failure.
    Blocked {
        notice: Option<String>,
        failure: RunFailure,
    },
}

impl RunEnd {
    /// The failure of the turn: the text shown, and handed back when the message did not go out.
    pub(crate) fn failure(&self) -> Option<&RunFailure> {
        match self {
            RunEnd::Failed(f) | RunEnd::Blocked { failure: f, .. } => Some(f),
            RunEnd::Stopped(f) => f.as_ref(),
            RunEnd::Clean => None,
        }
    }
}

/// A failed turn, its text labelled with its source (RU-13, RU-16).
pub(super) fn failed(code: FailureCode, source: FailureSource, message: &str) -> RunEnd {
    RunEnd::Failed(RunFailure::from_source(code, source, message))
}

/// A stop before the message left (the engine's text, docs/interpretations.md).
pub(super) fn stopped_unsent() -> RunEnd {
    RunEnd::Stopped(Some(RunFailure::new(
        FailureCode::RunCancelled,
        STOPPED_UNSENT_TEXT,
    )))
}

/// OI-6, RU-16: a held send that ends undelivered ("Source: Request was never sent. ...").
pub(super) fn not_sent(notice: Option<&str>) -> RunFailure {
    RunFailure::from_source(
        FailureCode::RuntimeRequestNotSent,
        FailureSource::NOT_SENT,
        &not_sent_text(notice),
    )
}
