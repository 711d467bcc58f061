//! Chunks of the ui-message-stream (§4) and the engine's own frames, from one event's JSON
//! payload.
//!
//! Parsing is tolerant (ui-message-stream §6): a payload that is not a JSON object with a string
//! `type` is not a chunk; an unknown type is reported as such (the caller skips it); a known type
//! whose required field is missing or of the wrong type is invalid (skipped too). Unknown extra
//! fields are ignored, and an optional field of the wrong type (or `null`) counts as absent.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::surrogates::{self, Repaired, SplitSurrogates};
use crate::Json;
use crate::message::OtherPart;

mod fields;
mod plain;

use fields::Fields;

/// One parsed event payload: the chunk, and the frame's `agent_id` when it carries one.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Frame {
    /// The frame's top-level `agent_id` (a non-blank string, trimmed, or a number as its
    /// digits), whatever its type.
    pub agent_id: Option<String>,
    /// The chunk, or why there is none.
    pub chunk: Result<Chunk, ChunkError>,
}

/// Why a payload gave no chunk.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChunkError {
    /// Not JSON, or not an object with a string `type`: dropped.
    #[error("the payload is not a JSON object with a string `type`")]
    NotAChunk,
    /// A type this decoder does not know: skipped.
    #[error("unknown chunk type `{chunk_type}`")]
    UnknownType {
        /// The type.
        chunk_type: String,
    },
    /// A known type with a required field missing or of the wrong type: skipped.
    #[error("`{chunk_type}` chunk without a valid `{field}`")]
    Invalid {
        /// The type.
        chunk_type: String,
        /// The field at fault.
        field: &'static str,
    },
}

/// How a tool call's input streams (`tool-input-start.inputEncoding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum InputEncoding {
    /// JSON text, parsed (and repaired) as it grows: the default.
    #[default]
    Json,
    /// Plain text: the part's input is the raw text itself.
    Text,
}

/// The fields shared by the tool input chunks (`tool-input-start`, `-available`, `-error`).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ToolCall {
    /// `toolCallId`.
    pub tool_call_id: String,
    /// `toolName`.
    pub tool_name: String,
    /// `providerExecuted`.
    pub provider_executed: Option<bool>,
    /// `dynamic`: a dynamic tool (`false` when absent).
    pub dynamic: bool,
    /// `title`.
    pub title: Option<String>,
    /// `providerMetadata`.
    pub provider_metadata: Option<Json>,
    /// `toolMetadata`.
    pub tool_metadata: Option<Json>,
}

/// The fields shared by the tool output chunks (`tool-output-available`, `-error`).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ToolResult {
    /// `toolCallId`.
    pub tool_call_id: String,
    /// `providerExecuted`.
    pub provider_executed: Option<bool>,
    /// `providerMetadata`.
    pub provider_metadata: Option<Json>,
    /// `toolMetadata`.
    pub tool_metadata: Option<Json>,
}

/// An `error` frame. The text falls back from `errorText` to `error`, `message`,
/// `error_detail`, then to "The agent reported an error.".
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AgentError {
    /// The error text.
    pub error_text: String,
    /// `status`, as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Value>,
    /// `error_code`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// `error_source`, else `source`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_source: Option<String>,
}

/// A `new_session` frame: the session the Agent created for a `newChat` turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NewSession {
    /// The session's id: `runtime_session_uid`, else `agent_session_uid`, `session_uid`, `uid`.
    pub session_uid: String,
    /// `agent_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// `agent_unique_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_unique_id: Option<String>,
    /// `session_key`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// `thread_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}

/// One chunk (ui-message-stream §4), or an engine frame.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Chunk {
    /// `start`.
    Start {
        /// `messageId`.
        message_id: Option<String>,
        /// `messageMetadata`.
        message_metadata: Option<Value>,
    },
    /// `start-step`.
    StartStep,
    /// `finish-step`.
    FinishStep,
    /// `reset-step`.
    ResetStep,
    /// `finish`.
    Finish {
        /// `finishReason`.
        finish_reason: Option<String>,
        /// `messageMetadata`.
        message_metadata: Option<Value>,
    },
    /// `abort`.
    Abort {
        /// `reason`.
        reason: Option<String>,
    },
    /// `error`.
    Error(AgentError),
    /// `message-metadata` (absent or `null` metadata changes nothing).
    MessageMetadata {
        /// `messageMetadata`.
        message_metadata: Option<Value>,
    },
    /// `text-start`.
    TextStart {
        /// `id`.
        id: String,
        /// `providerMetadata`.
        provider_metadata: Option<Json>,
    },
    /// `text-delta`.
    TextDelta {
        /// `id`.
        id: String,
        /// `delta`.
        delta: String,
        /// `providerMetadata`.
        provider_metadata: Option<Json>,
        /// Lone surrogate halves taken from the edges of `delta` (a pair split across deltas).
        split: SplitSurrogates,
    },
    /// `text-end`.
    TextEnd {
        /// `id`.
        id: String,
        /// `providerMetadata`.
        provider_metadata: Option<Json>,
        /// `citations` (an array).
        citations: Option<Value>,
    },
    /// `reasoning-start`.
    ReasoningStart {
        /// `id`.
        id: String,
        /// `providerMetadata`.
        provider_metadata: Option<Json>,
    },
    /// `reasoning-delta`.
    ReasoningDelta {
        /// `id`.
        id: String,
        /// `delta`.
        delta: String,
        /// `providerMetadata`.
        provider_metadata: Option<Json>,
        /// See [`Chunk::TextDelta`].
        split: SplitSurrogates,
    },
    /// `reasoning-end`.
    ReasoningEnd {
        /// `id`.
        id: String,
        /// `providerMetadata`.
        provider_metadata: Option<Json>,
    },
    /// `tool-input-start`.
    ToolInputStart {
        /// The call.
        call: ToolCall,
        /// `inputEncoding`.
        input_encoding: InputEncoding,
    },
    /// `tool-input-delta`.
    ToolInputDelta {
        /// `toolCallId`.
        tool_call_id: String,
        /// `inputTextDelta`.
        input_text_delta: String,
        /// See [`Chunk::TextDelta`].
        split: SplitSurrogates,
    },
    /// `tool-input-available`.
    ToolInputAvailable {
        /// The call.
        call: ToolCall,
        /// `input` (any JSON).
        input: Value,
    },
    /// `tool-input-error`.
    ToolInputError {
        /// The call.
        call: ToolCall,
        /// `input` (any JSON; may be the unparsable raw text).
        input: Value,
        /// `errorText`.
        error_text: String,
    },
    /// `tool-output-available`.
    ToolOutputAvailable {
        /// The result's common fields.
        result: ToolResult,
        /// `output` (any JSON).
        output: Value,
        /// `preliminary`.
        preliminary: Option<bool>,
        /// `isError: true`, which older runtimes send for a failed tool (RU-2): the output is
        /// kept and the call fails.
        is_error: bool,
    },
    /// `tool-call-start` (the runtime's dialect, RU-1): a call, its arguments to follow.
    ToolCallStart {
        /// `toolCallId`.
        tool_call_id: String,
        /// `toolName`, when a string.
        tool_name: Option<String>,
    },
    /// `tool-call-delta`: more argument text for the call started last and not yet ended
    /// (RU-3), whatever id it names.
    ToolCallDelta {
        /// `toolCallId`, when a string.
        tool_call_id: Option<String>,
        /// `argsText`, when a string.
        args_text: Option<String>,
        /// See [`Chunk::TextDelta`].
        split: SplitSurrogates,
    },
    /// `tool-call-end`: the call started last has all its arguments.
    ToolCallEnd {
        /// `toolCallId`, when a string.
        tool_call_id: Option<String>,
    },
    /// `tool-result`: the tool ran.
    ToolCallResult {
        /// `toolCallId`.
        tool_call_id: String,
        /// `result` (any JSON; `null` when absent).
        result: Value,
        /// `isError` (`false` when absent).
        is_error: bool,
    },
    /// `tool-output-error`.
    ToolOutputError {
        /// The result's common fields.
        result: ToolResult,
        /// `errorText`.
        error_text: String,
    },
    /// `tool-output-delta` of older runtimes: recognized, and dropped.
    ToolOutputDelta,
    /// `tool-approval-request`.
    ToolApprovalRequest {
        /// `approvalId`.
        approval_id: String,
        /// `toolCallId`.
        tool_call_id: String,
        /// `reason`.
        reason: Option<String>,
        /// The other optional fields, as the part's approval carries them: `descriptor` (from
        /// `approvalDescriptor`), `signature`, `inputSchemaInput`, `isAutomatic`.
        extra: Map<String, Value>,
    },
    /// `tool-approval-response`.
    ToolApprovalResponse {
        /// `approvalId`.
        approval_id: String,
        /// `approved`.
        approved: bool,
        /// `reason`.
        reason: Option<String>,
        /// `providerExecuted`.
        provider_executed: Option<bool>,
        /// `providerMetadata`.
        provider_metadata: Option<Json>,
    },
    /// `tool-output-denied`.
    ToolOutputDenied {
        /// `toolCallId`.
        tool_call_id: String,
    },
    /// `source-url`, `source-document`, `file`, `reasoning-file`, `custom` or
    /// `steering-message`: appended as a part of the same type with the chunk's fields.
    Part(OtherPart),
    /// `data-<name>`.
    Data {
        /// The type, `data-` included.
        data_type: String,
        /// `id`.
        id: Option<String>,
        /// `data` (any JSON).
        data: Value,
        /// `transient`: delivered, never stored.
        transient: bool,
    },
    /// `new_session` (engine frame).
    NewSession(NewSession),
}

/// The default text of an `error` frame that gives none.
pub const DEFAULT_ERROR_TEXT: &str = "The agent reported an error.";

/// Parses one event payload. A payload with lone UTF-16 surrogate escapes is repaired first
/// (see [`surrogates`]): the halves at a top-level string's edges are kept apart, others become
/// U+FFFD.
pub fn parse_frame(payload: &str) -> Frame {
    let not_a_chunk = Frame {
        agent_id: None,
        chunk: Err(ChunkError::NotAChunk),
    };
    let (value, splits) = match serde_json::from_str::<Value>(payload) {
        Ok(value) => (value, Vec::new()),
        Err(_) => {
            let repaired = surrogates::repair(payload);
            let parsed = repaired
                .map(|r| serde_json::from_str::<Value>(&r.json).map(|value| (value, r.splits)));
            match parsed {
                Some(Ok(parsed)) => parsed,
                _ => return not_a_chunk,
            }
        }
    };
    let Value::Object(mut map) = value else {
        return not_a_chunk;
    };
    let Some(Value::String(chunk_type)) = map.remove("type") else {
        return not_a_chunk;
    };
    let mut fields = Fields {
        chunk_type,
        map,
        splits,
    };
    // adr-notes 6: a non-blank string, or a number read as its digits.
    let agent_id = crate::api::id_like(fields.map.remove("agent_id").as_ref());
    Frame {
        agent_id,
        chunk: fields.into_chunk(),
    }
}

/// A delta chunk, its strings borrowed from the payload where they have no escapes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeltaChunk<'a> {
    /// `text-delta` without `providerMetadata`.
    Text {
        /// `id`.
        id: Cow<'a, str>,
        /// `delta`.
        delta: Cow<'a, str>,
    },
    /// `reasoning-delta` without `providerMetadata`.
    Reasoning {
        /// `id`.
        id: Cow<'a, str>,
        /// `delta`.
        delta: Cow<'a, str>,
    },
    /// `tool-input-delta`.
    ToolInput {
        /// `toolCallId`.
        tool_call_id: Cow<'a, str>,
        /// `inputTextDelta`.
        input_text_delta: Cow<'a, str>,
    },
}

/// The plain shape of a delta chunk: no other field, each string well formed.
#[derive(Deserialize, Default)]
#[cfg_attr(test, derive(Debug, PartialEq))]
#[serde(deny_unknown_fields)]
struct PlainDelta<'a> {
    #[serde(rename = "type", borrow)]
    chunk_type: Cow<'a, str>,
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    delta: Option<Cow<'a, str>>,
    /// The runtime's text delta (RU-4).
    #[serde(rename = "textDelta", default, borrow)]
    text_delta: Option<Cow<'a, str>>,
    #[serde(rename = "toolCallId", default, borrow)]
    tool_call_id: Option<Cow<'a, str>>,
    #[serde(rename = "inputTextDelta", default, borrow)]
    input_text_delta: Option<Cow<'a, str>>,
    #[serde(default)]
    agent_id: Option<Value>,
}

/// The hot path: a payload that is a delta chunk of the plain shape, parsed into a typed
/// struct borrowing from it (no `Value` map), with the frame's agent id. `None` for anything
/// else, which [`parse_frame`] then reads: an unknown field, a mistyped or duplicate one, or
/// a lone surrogate (which serde_json refuses here) gives `None`, so the two paths agree on
/// every payload.
pub fn parse_delta(payload: &str) -> Option<(Option<String>, DeltaChunk<'_>)> {
    // Read by hand when it is the common shape; serde decides everything else.
    let mut plain = PlainDelta::default();
    match plain::scan(payload, &mut plain) {
        plain::Scan::Plain => {}
        plain::Scan::Not => return None,
        plain::Scan::Unsure => plain = serde_json::from_str::<PlainDelta<'_>>(payload).ok()?,
    }
    // A field of another chunk type is left to the general path.
    let chunk = match (
        &*plain.chunk_type,
        plain.id,
        plain.delta,
        plain.tool_call_id,
        plain.input_text_delta,
    ) {
        // RU-4: `textDelta` wins over `delta`, as on the general path.
        ("text-delta", Some(id), delta, None, None) => match plain.text_delta.or(delta) {
            Some(delta) => DeltaChunk::Text { id, delta },
            None => return None,
        },
        _ if plain.text_delta.is_some() => return None,
        ("reasoning-delta", Some(id), Some(delta), None, None) => {
            DeltaChunk::Reasoning { id, delta }
        }
        ("tool-input-delta", None, None, Some(tool_call_id), Some(input_text_delta)) => {
            DeltaChunk::ToolInput {
                tool_call_id,
                input_text_delta,
            }
        }
        _ => return None,
    };
    Some((crate::api::id_like(plain.agent_id.as_ref()), chunk))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests;
