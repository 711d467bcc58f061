//! What a fed slice changed: the deltas a host applies to mirror the streamed message.

use serde::Serialize;
use serde_json::Value;

use super::chunk::NewSession;
use super::outcome::StreamOutcome;
use crate::Json;
use crate::message::{Message, MessageStatus, Part};

/// One change of an answer stream, in order. Applying the deltas of a stream, in order, to
/// `Message::assistant(String::new())` (see [`StreamDelta::apply_to`]) gives the stream's
/// message.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum StreamDelta {
    /// The message id is known (or changed, by a `start` chunk with a `messageId`).
    Started {
        /// The message id.
        message_id: String,
    },
    /// A part was appended at `index`.
    PartAdded {
        /// Its index.
        index: usize,
        /// The part.
        part: Part,
    },
    /// Text was appended to the text part at `index`.
    TextDelta {
        /// The part's index.
        index: usize,
        /// The appended text.
        delta: String,
    },
    /// Text was appended to the reasoning part at `index`.
    ReasoningDelta {
        /// The part's index.
        index: usize,
        /// The appended text.
        delta: String,
    },
    /// The streaming tool call at `index` (state `input-streaming`) received more input: `delta`
    /// was appended to its `rawInput`, and its `input` follows the raw text: the best-effort
    /// parse of it (ui-message-stream §5), or the text itself when `inputIsText`
    /// (`inputEncoding: "text"`). Nothing else of the part changed. Work is proportional to
    /// the delta (issue 12): no copy of the part. [`StreamDelta::apply_to`] parses the raw
    /// text whole; [`crate::stream::MessageMirror`] keeps the parse incremental.
    ToolInputDelta {
        /// The part's index.
        index: usize,
        /// The appended raw input.
        delta: String,
        /// The input is the raw text itself, not its parse.
        input_is_text: bool,
    },
    /// The part at `index` changed (state, tool progress, data, metadata): here it is whole.
    PartUpdated {
        /// Its index.
        index: usize,
        /// The part as it is now.
        part: Part,
    },
    /// The parts from `from` on were removed (`reset-step`).
    PartsRemoved {
        /// The first removed index.
        from: usize,
    },
    /// The message metadata changed: here it is whole, merged.
    Metadata {
        /// The metadata.
        metadata: Value,
    },
    /// A transient data chunk: delivered here only, never stored in the message.
    TransientData {
        /// Its type (`data-<name>`).
        data_type: String,
        /// Its id, if any.
        id: Option<String>,
        /// Its data.
        data: Value,
    },
    /// The Agent reported an error (the answer keeps assembling).
    Error {
        /// The error text.
        error_text: String,
    },
    /// The answer finished (`finish` or `[DONE]`, without an error).
    Finished {
        /// `finish.finishReason`, when given.
        finish_reason: Option<String>,
    },
    /// The Agent stopped generating (`abort`).
    Aborted {
        /// `abort.reason`, when given.
        reason: Option<String>,
    },
    /// The body ended: the final outcome and the message's final status.
    Ended {
        /// The outcome.
        outcome: StreamOutcome,
        /// The message's status from now on.
        status: MessageStatus,
    },
    /// A frame named the Agent (`agent_id`), a different one than before.
    AgentId {
        /// The agent id.
        agent_id: String,
    },
    /// The Agent announced the session it created (`new_session`).
    NewSession(NewSession),
    /// A tool frame set the run's status line (RU-8 to RU-12): `line` names the running tool
    /// ("Running bash", "Using metatables MCP tool list_namespaces", ...); `None` after a tool's
    /// result ("Thinking..."). Nothing of the message changes.
    ToolStatus {
        /// The line, or `None` when the tool is done.
        line: Option<String>,
    },
    /// A frame was skipped: the first of its type in this answer (later ones are only
    /// counted, in [`super::StreamStats`]). A host logs it; nothing of the message changes.
    FrameSkipped {
        /// The frame's `type`; `None` for a payload that is not a frame at all.
        frame_type: Option<String>,
        /// Why.
        reason: SkipReason,
    },
}

/// Why a frame was skipped.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum SkipReason {
    /// A type this engine does not know (forward compatibility: skipped, not an error).
    UnknownType,
    /// A known type with a required field missing or of the wrong type.
    InvalidField {
        /// The field at fault.
        field: String,
    },
    /// Not JSON, or not an object with a string `type`.
    NotAFrame,
}

impl SkipReason {
    /// Whether the frame was broken (an invalid field or not a frame), not merely unknown: a
    /// host warns of these, and only logs unknown types at debug level.
    pub fn is_invalid(&self) -> bool {
        !matches!(self, SkipReason::UnknownType)
    }
}

impl StreamDelta {
    /// Applies this delta to `message`, a mirror of the streamed message.
    pub fn apply_to(&self, message: &mut Message) {
        match self {
            StreamDelta::Started { message_id } => message.id.clone_from(message_id),
            StreamDelta::PartAdded { index, part } | StreamDelta::PartUpdated { index, part } => {
                match message.parts.get_mut(*index) {
                    Some(slot) => *slot = part.clone(),
                    None => message.parts.push(part.clone()),
                }
            }
            StreamDelta::TextDelta { index, delta } => {
                if let Some(Part::Text(text)) = message.parts.get_mut(*index) {
                    text.text.push_str(delta);
                }
            }
            StreamDelta::ReasoningDelta { index, delta } => {
                if let Some(Part::Reasoning(reasoning)) = message.parts.get_mut(*index) {
                    reasoning.text.push_str(delta);
                }
            }
            StreamDelta::ToolInputDelta {
                index,
                delta,
                input_is_text,
            } => {
                if let Some(Part::Tool(tool)) = message.parts.get_mut(*index) {
                    let raw = append_raw(tool, delta);
                    tool.input = if *input_is_text {
                        Some(Value::String(raw.to_owned()))
                    } else {
                        super::partial_json::parse_partial_json(raw)
                    }
                    .map(Json::from);
                }
            }
            StreamDelta::PartsRemoved { from } => message.parts.truncate(*from),
            StreamDelta::Metadata { metadata } => {
                message.metadata = Some(Json::from(metadata.clone()))
            }
            StreamDelta::Ended { status, .. } => message.status = status.clone(),
            StreamDelta::TransientData { .. }
            | StreamDelta::Error { .. }
            | StreamDelta::Finished { .. }
            | StreamDelta::Aborted { .. }
            | StreamDelta::AgentId { .. }
            | StreamDelta::NewSession(_)
            | StreamDelta::ToolStatus { .. }
            | StreamDelta::FrameSkipped { .. } => {}
        }
    }
}

/// Appends `delta` to the call's raw input text; returns the text.
pub(crate) fn append_raw<'a>(tool: &'a mut crate::message::ToolPart, delta: &str) -> &'a str {
    match &mut tool.raw_input {
        Some(Value::String(raw)) => {
            raw.push_str(delta);
            raw
        }
        slot => match slot.insert(Value::String(delta.to_owned())) {
            Value::String(raw) => raw,
            _ => "",
        },
    }
}
