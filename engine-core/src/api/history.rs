//! P9 history answers, normalized into the engine's message model.

use serde::Serialize;
use serde_json::{Map, Value};

use super::ApiError;
use super::error::parse_json;
use super::provenance::{PROVENANCE_PART_TYPE, id_like, normalize_provenance, provenance_metadata};
use crate::Json;
use crate::message::{DataPart, Message, MessageStatus, Part, Role, ToolPart, ToolState};

/// The run status the history reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HistoryStatus {
    /// A turn is running.
    Running,
    /// Idle (also anything unknown).
    Completed,
    /// The last run failed.
    Error,
}

/// A loaded transcript.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct History {
    /// `session.sessionId`: the runtime session id.
    pub runtime_session_id: Option<String>,
    /// `session.threadId`: the thread id later turns carry.
    pub thread_id: Option<String>,
    /// `session.agentName`.
    pub agent_name: Option<String>,
    /// `session.status`.
    pub status: HistoryStatus,
    /// `session.error`, when `status` is error.
    pub error: Option<String>,
    /// `messages` then `inProgressMessage`, normalized.
    pub messages: Vec<Message>,
    /// `session.agentUid` (legacy `agentId`): a string, or a number read as its digits.
    pub agent_uid: Option<String>,
    /// `session.agentSessionUid` (legacy `agentSessionId`), the same way.
    pub agent_session_uid: Option<String>,
}

impl History {
    /// The empty transcript a 404 stands for (status completed).
    pub fn empty() -> History {
        History {
            runtime_session_id: None,
            thread_id: None,
            agent_name: None,
            status: HistoryStatus::Completed,
            error: None,
            messages: Vec::new(),
            agent_uid: None,
            agent_session_uid: None,
        }
    }
}

/// Parses a 2xx history body. A body that is not a JSON object is malformed.
///
/// `messages` are read as complete, then `inProgressMessage` as running (or failed with
/// `session.error`, else "The previous run failed.", when `session.status` is `error`).
/// Messages of an unknown role, or left with no part, are dropped; a message without an id gets
/// `history-{index}`, its position among `messages` followed by `inProgressMessage`.
pub fn parse_history(body: &[u8]) -> Result<History, ApiError> {
    let Some(Value::Object(root)) = parse_json(body) else {
        return Err(ApiError::Malformed {
            message: NOT_AN_OBJECT.to_owned(),
        });
    };
    let session = root.get("session").and_then(Value::as_object);
    let field = |key: &str| session.and_then(|session| text(session, key));
    // P9: the platform's names first, the legacy ones as fallbacks.
    let id_field = |key: &str, legacy: &str| {
        session.and_then(|s| id_like(s.get(key)).or_else(|| id_like(s.get(legacy))))
    };
    let status = match session
        .and_then(|session| session.get("status"))
        .and_then(Value::as_str)
        .map(str::trim)
    {
        Some("running") => HistoryStatus::Running,
        Some("error") => HistoryStatus::Error,
        _ => HistoryStatus::Completed,
    };
    let error = field("error");

    let completed = root
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut messages: Vec<Message> = completed
        .iter()
        .enumerate()
        .filter_map(|(index, raw)| parse_message(raw, index, MessageStatus::Complete))
        .collect();
    if let Some(raw) = root.get("inProgressMessage").filter(|raw| raw.is_object()) {
        let in_progress = if status == HistoryStatus::Error {
            MessageStatus::Failed {
                error: error
                    .clone()
                    .unwrap_or_else(|| PREVIOUS_RUN_FAILED.to_owned()),
            }
        } else {
            MessageStatus::Running
        };
        messages.extend(parse_message(raw, completed.len(), in_progress));
    }

    Ok(History {
        runtime_session_id: field("sessionId"),
        thread_id: field("threadId"),
        agent_name: field("agentName"),
        status,
        error,
        messages,
        agent_uid: id_field("agentUid", "agentId"),
        agent_session_uid: id_field("agentSessionUid", "agentSessionId"),
    })
}

/// Message for a history body that is not a JSON object.
const NOT_AN_OBJECT: &str = "The session history answer is not a JSON object.";
/// The in-progress message's error when the session failed without saying why.
const PREVIOUS_RUN_FAILED: &str = "The previous run failed.";
/// The error text of a failed tool call that carries no result.
const TOOL_CALL_FAILED: &str = "The tool call failed.";

/// The trimmed string at `key`, unless absent, not a string, or blank.
fn text(map: &Map<String, Value>, key: &str) -> Option<String> {
    let text = map.get(key)?.as_str()?.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// One history message, or `None` when it is not an object, has an unknown role, or has no part.
fn parse_message(raw: &Value, index: usize, status: MessageStatus) -> Option<Message> {
    let map = raw.as_object()?;
    let role = match map.get("role")?.as_str()?.trim() {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => Role::System,
        _ => return None,
    };
    let parts: Vec<Part> = map
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|part| parse_part(part, role))
        .collect();
    if parts.is_empty() {
        return None;
    }
    let id = match map.get("id") {
        Some(Value::String(id)) if !id.trim().is_empty() => id.trim().to_owned(),
        Some(Value::Number(id)) => id.to_string(),
        _ => format!("history-{index}"),
    };
    // P9: a valid provenance leads the parts as a data part and is the message's metadata.
    let provenance = map.get("provenance").and_then(normalize_provenance);
    let mut parts = parts;
    if let Some(provenance) = &provenance {
        parts.insert(
            0,
            Part::Data(DataPart {
                data_type: PROVENANCE_PART_TYPE.to_owned(),
                id: None,
                data: Json::from(provenance.clone()),
            }),
        );
    }
    let mut message = Message {
        id,
        role,
        metadata: provenance
            .as_ref()
            .map(|provenance| Json::from(provenance_metadata(provenance))),
        parts,
        status,
        created_at: text(map, "createdAt"),
        provenance: provenance.map(Json::from),
    };
    // A history message is final: its values are kept compact.
    message.compact();
    Some(message)
}

/// The engine parts of one content part (none, one, or several for assistant text with
/// `<think>` spans). Reasoning and tool calls count only in assistant messages.
fn parse_part(part: &Map<String, Value>, role: Role) -> Vec<Part> {
    let assistant = role == Role::Assistant;
    match part.get("type").and_then(Value::as_str).map(str::trim) {
        Some("text") => match part.get("text").and_then(Value::as_str) {
            Some(text) if assistant => split_think(text),
            Some(text) if !text.trim().is_empty() => vec![Part::done_text(text)],
            _ => Vec::new(),
        },
        Some("reasoning" | "thinking") if assistant => ["text", "content"]
            .iter()
            .filter_map(|key| part.get(*key).and_then(Value::as_str))
            .find(|text| !text.trim().is_empty())
            .map(Part::done_reasoning)
            .into_iter()
            .collect(),
        Some("tool-call" | "tool_call") if assistant => tool_call(part).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// Splits assistant text into text and reasoning parts at `<think>...</think>` spans, in order.
/// An unclosed `<think>` makes the rest reasoning. Text without a span is kept verbatim; the
/// pieces of a split text are trimmed; blank pieces are dropped.
fn split_think(text: &str) -> Vec<Part> {
    const OPEN: &str = "<think>";
    const CLOSE: &str = "</think>";
    if !text.contains(OPEN) {
        return if text.trim().is_empty() {
            Vec::new()
        } else {
            vec![Part::done_text(text)]
        };
    }
    let mut parts = Vec::new();
    let mut push = |piece: &str, reasoning: bool| {
        let piece = piece.trim();
        if piece.is_empty() {
            return;
        }
        parts.push(if reasoning {
            Part::done_reasoning(piece)
        } else {
            Part::done_text(piece)
        });
    };
    let mut rest = text;
    while let Some((before, after)) = rest.split_once(OPEN) {
        push(before, false);
        match after.split_once(CLOSE) {
            Some((reasoning, tail)) => {
                push(reasoning, true);
                rest = tail;
            }
            None => {
                push(after, true);
                rest = "";
            }
        }
    }
    push(rest, false);
    parts
}

/// A tool-call part (`tool-<toolName>`), or `None` when `toolCallId` or `toolName` is missing.
fn tool_call(part: &Map<String, Value>) -> Option<Part> {
    let tool_call_id = text(part, "toolCallId")?;
    let tool_name = text(part, "toolName")?;
    let input = ["args", "input"]
        .iter()
        .filter_map(|key| part.get(*key))
        .find(|input| !input.is_null())
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let result = part.get("result").filter(|result| !result.is_null());
    let is_error = part
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let (state, output, error_text) = match (is_error, result) {
        (true, Some(Value::String(message))) => {
            (ToolState::OutputError, None, Some(message.clone()))
        }
        (true, Some(result)) => (ToolState::OutputError, None, Some(result.to_string())),
        (true, None) => (
            ToolState::OutputError,
            None,
            Some(TOOL_CALL_FAILED.to_owned()),
        ),
        (false, Some(result)) => (ToolState::OutputAvailable, Some(result.clone()), None),
        (false, None) => (ToolState::InputAvailable, None, None),
    };
    Some(Part::Tool(Box::new(ToolPart {
        tool_name,
        tool_call_id,
        state,
        input: Some(Json::from(input)),
        output: output.map(Json::from),
        error_text,
        ..ToolPart::default()
    })))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests;
