//! How an answer stream ended (ui-message-stream §6), and the status its message ends with.

use serde::Serialize;

use crate::message::MessageStatus;

/// The error text of an answer whose body ended before `finish`, `[DONE]` or an error.
pub const INTERRUPTED_TEXT: &str = "The answer was interrupted before it finished.";

/// Where an answer stream stands.
///
/// `finish` or `[DONE]` gives `Finished`, unless an `error` chunk was seen: then `Failed` with
/// the first error's text, even when `finish` follows (an error after `finish` turns `Finished`
/// into `Failed` too). `abort` gives `Aborted` (unless an error was seen). A body that ends with
/// none of these gives `Interrupted`. The first of `finish`, `abort` and `[DONE]` decides; later
/// ones change nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum StreamOutcome {
    /// Still streaming.
    Open,
    /// The Agent finished the answer.
    Finished {
        /// `finish.finishReason`, when given.
        finish_reason: Option<String>,
    },
    /// The Agent stopped generating (`abort`).
    Aborted {
        /// `abort.reason`, when given.
        reason: Option<String>,
    },
    /// The Agent reported an error.
    Failed {
        /// The first error's text.
        error_text: String,
    },
    /// The body ended before the answer finished.
    Interrupted,
}

impl StreamOutcome {
    /// The status a message ends with after this outcome: complete when finished or aborted,
    /// failed with the error (or [`INTERRUPTED_TEXT`]) otherwise; running while open.
    pub fn final_status(&self) -> MessageStatus {
        match self {
            StreamOutcome::Open => MessageStatus::Running,
            StreamOutcome::Finished { .. } | StreamOutcome::Aborted { .. } => {
                MessageStatus::Complete
            }
            StreamOutcome::Failed { error_text } => MessageStatus::Failed {
                error: error_text.clone(),
            },
            StreamOutcome::Interrupted => MessageStatus::Failed {
                error: INTERRUPTED_TEXT.to_owned(),
            },
        }
    }
}
