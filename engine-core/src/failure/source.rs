//! Where a failure comes from (`reference-update.md`, RU-13 and RU-14): a source key, its label,
//! and the one function that puts the label before a message.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// The text of an empty message (RU-13).
pub const UNKNOWN_ERROR_TEXT: &str = "Unknown error.";

/// The label of a missing or blank source key (RU-13).
pub const UNKNOWN_SOURCE_LABEL: &str = "Unknown source";

/// The labels of the reference's known source keys (RU-14), by key.
const LABELS: [(&str, &str); 15] = [
    ("agent_session_detail", "Loading the session"),
    ("agent_session_history", "Loading the conversation"),
    ("agent_session_insights", "Loading session usage"),
    ("agent_session_selection", "Choosing the session"),
    ("agent_session_tools", "The Agent's tools"),
    ("agent_tasks", "Agent tasks"),
    ("assistant_available_models", "Loading available models"),
    ("assistant_backend_http", "Sending to the Agent"),
    ("assistant_runtime_access", "Connecting to the Agent"),
    ("assistant_runtime_stream", "Receiving the Agent's reply"),
    ("local_agent_runtime", "Local Agent"),
    ("frontend", "Command Center"),
    ("frontend_request_not_sent", "Request was never sent"),
    ("frontend_runtime_guard", "Request was never sent"),
    ("frontend_runtime_parser", "Reading the Agent's reply"),
];

/// Where a failure comes from: the reference's source key (RU-14), known or not. Serialized as
/// the key itself (`"assistant_backend_http"`); [`FailureSource::label`] gives the words a person
/// reads.
///
/// ```
/// use engine_core::FailureSource;
///
/// assert_eq!(FailureSource::SENDING.label(), "Sending to the Agent");
/// assert_eq!(FailureSource::new("provider_gateway").label(), "Provider Gateway");
/// assert_eq!(FailureSource::new("  ").label(), "Unknown source");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FailureSource(Cow<'static, str>);

impl FailureSource {
    /// `assistant_backend_http`, "Sending to the Agent": the message request (R2) was refused
    /// or got no answer.
    pub const SENDING: FailureSource = FailureSource::known("assistant_backend_http");
    /// `assistant_runtime_access`, "Connecting to the Agent": resolve-runtime-access (P11)
    /// failed, or admitted the turn with its runtime unavailable.
    pub const CONNECTING: FailureSource = FailureSource::known("assistant_runtime_access");
    /// `assistant_runtime_stream`, "Receiving the Agent's reply": an `error` frame that names
    /// no source of its own (RU-15).
    pub const RECEIVING: FailureSource = FailureSource::known("assistant_runtime_stream");
    /// `frontend_runtime_guard`, "Request was never sent": the send guard refused the turn.
    pub const GUARD: FailureSource = FailureSource::known("frontend_runtime_guard");
    /// `frontend_request_not_sent`, "Request was never sent": a held send ended unsent, and
    /// any other failure without a source of its own (RU-16).
    pub const NOT_SENT: FailureSource = FailureSource::known("frontend_request_not_sent");

    const fn known(key: &'static str) -> FailureSource {
        FailureSource(Cow::Borrowed(key))
    }

    /// The source with this key (any key: the Agent's `error_source` may name its own).
    pub fn new(key: impl Into<String>) -> FailureSource {
        FailureSource(Cow::Owned(key.into()))
    }

    /// The key, as given.
    pub fn key(&self) -> &str {
        &self.0
    }

    /// The label (RU-13, RU-14): the reference's words for a known key (trimmed); another key
    /// split on runs of `.`, `_` and `-`, each word capitalised, joined with spaces; a blank key
    /// gives "Unknown source".
    pub fn label(&self) -> String {
        let key = self.0.trim();
        if let Some((_, label)) = LABELS.iter().find(|(k, _)| *k == key) {
            return (*label).to_owned();
        }
        let words: Vec<String> = key
            .split(['.', '_', '-'])
            .filter(|word| !word.is_empty())
            .map(capitalised)
            .collect();
        if words.is_empty() {
            UNKNOWN_SOURCE_LABEL.to_owned()
        } else {
            words.join(" ")
        }
    }

    /// The message with this source's label before it (RU-13): see [`labelled`].
    pub fn label_message(&self, message: &str) -> String {
        labelled(Some(self), message)
    }
}

/// A word with its first character in upper case, the rest as given.
fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Whether a message already carries a label: it begins with "Source:" and a space, in any
/// letter case (RU-13).
pub fn is_labelled(message: &str) -> bool {
    const PREFIX: &str = "source: ";
    message
        .get(..PREFIX.len())
        .is_some_and(|start| start.eq_ignore_ascii_case(PREFIX))
}

/// RU-13: "Source: {label}. {message}", the message trimmed ("Unknown error." when empty); a
/// message that already begins with "Source: " (any case) is returned trimmed, not labelled
/// again. No source gives the label "Unknown source".
///
/// ```
/// use engine_core::{FailureSource, labelled};
///
/// assert_eq!(
///     labelled(Some(&FailureSource::RECEIVING), " The model provider refused the request. "),
///     "Source: Receiving the Agent's reply. The model provider refused the request.",
/// );
/// assert_eq!(labelled(Some(&FailureSource::SENDING), "source: Elsewhere. X"), "source: Elsewhere. X");
/// assert_eq!(labelled(None, ""), "Source: Unknown source. Unknown error.");
/// ```
pub fn labelled(source: Option<&FailureSource>, message: &str) -> String {
    let message = message.trim();
    let message = if message.is_empty() {
        UNKNOWN_ERROR_TEXT
    } else {
        message
    };
    if is_labelled(message) {
        return message.to_owned();
    }
    let label = source.map_or_else(|| UNKNOWN_SOURCE_LABEL.to_owned(), FailureSource::label);
    format!("Source: {label}. {message}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
