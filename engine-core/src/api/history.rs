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
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::error::hostile_bodies;

    const HISTORY_EXAMPLE: &str = r#"{
      "version": 1,
      "session": {"sessionId": "5b0c7e1e-1111-4a6e-9c6f-000000000a01", "threadId": "5b0c7e1e-1111-4a6e-9c6f-000000000a01", "agentName": "Ledger Helper", "agentUid": "7d2f0c4a-2222-4b1f-8e3a-000000000b01", "agentSessionUid": "5b0c7e1e-1111-4a6e-9c6f-000000000a01", "status": "completed", "startedAt": "2026-10-02T08:15:00Z", "updatedAt": "2026-10-02T08:16:30Z", "error": null},
      "messages": [
        {"id": "m-1", "role": "user", "createdAt": "2026-10-02T08:16:00Z", "content": [{"type": "text", "text": "Total for Q3?"}], "provenance": {"origin": "user", "targetAgentUid": "7d2f0c4a-2222-4b1f-8e3a-000000000b01"}},
        {"id": "m-2", "role": "assistant", "createdAt": "2026-10-02T08:16:30Z", "content": [{"type": "reasoning", "text": "Sum the ledger."}, {"type": "tool-call", "toolCallId": "c-1", "toolName": "ledger_sum", "args": {"quarter": 3}, "result": {"total": 4120}, "isError": false}, {"type": "text", "text": "Q3 totals 4120."}], "provenance": {"origin": "user", "targetAgentUid": "7d2f0c4a-2222-4b1f-8e3a-000000000b01"}}
      ],
      "inProgressMessage": null
    }"#;

    fn history(value: Value) -> History {
        parse_history(value.to_string().as_bytes()).unwrap()
    }

    fn text(text: &str) -> Part {
        Part::done_text(text)
    }

    fn reasoning(text: &str) -> Part {
        Part::done_reasoning(text)
    }

    /// The parts of a single assistant message with the given content.
    fn assistant_parts(content: Value) -> Vec<Part> {
        let loaded = history(json!({"messages": [{"role": "assistant", "content": content}]}));
        loaded
            .messages
            .into_iter()
            .next()
            .map(|message| message.parts)
            .unwrap_or_default()
    }

    /// The example's provenance, normalized.
    fn example_provenance() -> Value {
        json!({
            "origin": "user", "channel": null, "actorKind": null, "actorUid": null,
            "actorName": null, "callerAgentName": null, "handleUniqueId": null,
            "callerAgentSessionUid": null,
            "targetAgentUid": "7d2f0c4a-2222-4b1f-8e3a-000000000b01"
        })
    }

    fn provenance_part() -> Part {
        Part::Data(DataPart {
            data_type: PROVENANCE_PART_TYPE.to_owned(),
            id: None,
            data: example_provenance().into(),
        })
    }

    #[test]
    fn history_example() {
        let loaded = parse_history(HISTORY_EXAMPLE.as_bytes()).unwrap();
        let provenance = example_provenance();
        let metadata = json!({"custom": {"mainSequenceAi": {"provenance": provenance}}});
        assert_eq!(
            loaded,
            History {
                runtime_session_id: Some("5b0c7e1e-1111-4a6e-9c6f-000000000a01".to_owned()),
                thread_id: Some("5b0c7e1e-1111-4a6e-9c6f-000000000a01".to_owned()),
                agent_name: Some("Ledger Helper".to_owned()),
                status: HistoryStatus::Completed,
                error: None,
                messages: vec![
                    Message {
                        id: "m-1".to_owned(),
                        role: Role::User,
                        metadata: Some(metadata.clone().into()),
                        parts: vec![provenance_part(), text("Total for Q3?")],
                        status: MessageStatus::Complete,
                        created_at: Some("2026-10-02T08:16:00Z".to_owned()),
                        provenance: Some(provenance.clone().into()),
                    },
                    Message {
                        id: "m-2".to_owned(),
                        role: Role::Assistant,
                        metadata: Some(metadata.into()),
                        parts: vec![
                            provenance_part(),
                            reasoning("Sum the ledger."),
                            Part::Tool(Box::new(ToolPart {
                                tool_name: "ledger_sum".to_owned(),
                                tool_call_id: "c-1".to_owned(),
                                state: ToolState::OutputAvailable,
                                input: Some(json!({"quarter": 3}).into()),
                                output: Some(json!({"total": 4120}).into()),
                                ..ToolPart::default()
                            })),
                            text("Q3 totals 4120."),
                        ],
                        status: MessageStatus::Complete,
                        created_at: Some("2026-10-02T08:16:30Z".to_owned()),
                        provenance: Some(provenance.into()),
                    },
                ],
                agent_uid: Some("7d2f0c4a-2222-4b1f-8e3a-000000000b01".to_owned()),
                agent_session_uid: Some("5b0c7e1e-1111-4a6e-9c6f-000000000a01".to_owned()),
            }
        );
    }

    #[test]
    fn history_parts_serialize_as_ui_message_parts() {
        let loaded = parse_history(HISTORY_EXAMPLE.as_bytes()).unwrap();
        assert_eq!(
            serde_json::to_value(&loaded.messages[1].parts).unwrap(),
            json!([
                {"type": "data-main_sequence_ai_provenance", "data": example_provenance()},
                {"type": "reasoning", "text": "Sum the ledger.", "state": "done"},
                {"type": "tool-ledger_sum", "toolCallId": "c-1", "state": "output-available",
                 "input": {"quarter": 3}, "output": {"total": 4120}},
                {"type": "text", "text": "Q3 totals 4120.", "state": "done"}
            ])
        );
    }

    #[test]
    fn legacy_session_names_read_as_uids() {
        let loaded = history(json!({"session": {"agentId": 25, "agentSessionId": "87"}}));
        assert_eq!(loaded.agent_uid.as_deref(), Some("25"));
        assert_eq!(loaded.agent_session_uid.as_deref(), Some("87"));
        let loaded = history(json!({"session": {
            "agentUid": "a-1", "agentId": 25, "agentSessionUid": " ", "agentSessionId": 87
        }}));
        assert_eq!(loaded.agent_uid.as_deref(), Some("a-1"));
        assert_eq!(loaded.agent_session_uid.as_deref(), Some("87"));
        let loaded = history(json!({"session": {"agentUid": true, "agentSessionUid": null}}));
        assert_eq!((loaded.agent_uid, loaded.agent_session_uid), (None, None));
    }

    #[test]
    fn not_an_object_is_malformed() {
        let expected = Err(ApiError::Malformed {
            message: "The session history answer is not a JSON object.".to_owned(),
        });
        for body in ["", "[]", "null", r#""x""#, "{", "<html></html>"] {
            assert_eq!(parse_history(body.as_bytes()), expected, "{body}");
        }
    }

    #[test]
    fn empty_object_is_an_empty_transcript() {
        assert_eq!(history(json!({})), History::empty());
        assert_eq!(
            history(json!({"session": null, "messages": null, "inProgressMessage": null})),
            History::empty()
        );
    }

    #[test]
    fn session_status_values() {
        let status = |value: Value| history(json!({"session": {"status": value}})).status;
        assert_eq!(status(json!("running")), HistoryStatus::Running);
        assert_eq!(status(json!("completed")), HistoryStatus::Completed);
        assert_eq!(status(json!("error")), HistoryStatus::Error);
        assert_eq!(status(json!("paused")), HistoryStatus::Completed);
        assert_eq!(status(json!(3)), HistoryStatus::Completed);
        assert_eq!(status(Value::Null), HistoryStatus::Completed);
    }

    #[test]
    fn in_progress_message_is_appended_and_running() {
        let loaded = history(json!({
            "session": {"status": "running"},
            "messages": [{"id": "m-1", "role": "user", "content": [{"type": "text", "text": "Hi"}]}],
            "inProgressMessage": {"id": "m-2", "role": "assistant", "content": [{"type": "text", "text": "Wor"}]}
        }));
        assert_eq!(loaded.messages.len(), 2);
        assert_eq!(loaded.messages[0].status, MessageStatus::Complete);
        assert_eq!(loaded.messages[1].id, "m-2");
        assert_eq!(loaded.messages[1].status, MessageStatus::Running);
    }

    #[test]
    fn in_progress_message_fails_with_the_session_error() {
        let in_progress =
            json!({"role": "assistant", "content": [{"type": "text", "text": "Part"}]});
        let loaded = history(json!({
            "session": {"status": "error", "error": "Runtime crashed."},
            "inProgressMessage": in_progress
        }));
        assert_eq!(loaded.status, HistoryStatus::Error);
        assert_eq!(loaded.error.as_deref(), Some("Runtime crashed."));
        assert_eq!(
            loaded.messages[0].status,
            MessageStatus::Failed {
                error: "Runtime crashed.".to_owned()
            }
        );

        let loaded = history(
            json!({"session": {"status": "error", "error": null}, "inProgressMessage": in_progress}),
        );
        assert_eq!(loaded.error, None);
        assert_eq!(
            loaded.messages[0].status,
            MessageStatus::Failed {
                error: "The previous run failed.".to_owned()
            }
        );
    }

    #[test]
    fn ids_default_to_the_combined_position() {
        let part = json!([{"type": "text", "text": "t"}]);
        let loaded = history(json!({
            "messages": [
                {"role": "user", "content": part},
                {"role": "robot", "content": part},
                {"id": "", "role": "assistant", "content": part},
                {"id": 17, "role": "assistant", "content": part}
            ],
            "inProgressMessage": {"role": "assistant", "content": part}
        }));
        let ids: Vec<&str> = loaded.messages.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["history-0", "history-2", "17", "history-4"]);
    }

    #[test]
    fn unknown_roles_and_empty_messages_are_dropped() {
        let loaded = history(json!({
            "messages": [
                {"id": "a", "role": "tool", "content": [{"type": "text", "text": "x"}]},
                {"id": "b", "role": "user", "content": []},
                {"id": "c", "role": "user", "content": [{"type": "text", "text": "  "}]},
                {"id": "d", "role": "user", "content": [{"type": "reasoning", "text": "hidden"}]},
                {"id": "e", "role": "user", "content": [{"type": "tool-call", "toolCallId": "c", "toolName": "t"}]},
                {"id": "f", "content": [{"type": "text", "text": "no role"}]},
                {"id": "g", "role": "assistant", "content": [{"type": "image", "url": "x"}]},
                {"id": "h", "role": "system", "content": [{"type": "text", "text": "Be brief."}]},
                {"id": "i", "role": "assistant"}
            ]
        }));
        let ids: Vec<&str> = loaded.messages.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["h"]);
        assert_eq!(loaded.messages[0].role, Role::System);
    }

    #[test]
    fn think_spans_split_into_reasoning() {
        assert_eq!(
            assistant_parts(
                json!([{"type": "text", "text": "<think>Plan it.</think>\n\nThe answer."}])
            ),
            vec![reasoning("Plan it."), text("The answer.")]
        );
        assert_eq!(
            assistant_parts(
                json!([{"type": "text", "text": "A <think>one</think> B <think>two</think> C"}])
            ),
            vec![
                text("A"),
                reasoning("one"),
                text("B"),
                reasoning("two"),
                text("C")
            ]
        );
        assert_eq!(
            assistant_parts(json!([{"type": "text", "text": "Before <think>still thinking"}])),
            vec![text("Before"), reasoning("still thinking")]
        );
        assert_eq!(
            assistant_parts(
                json!([{"type": "text", "text": "<think></think>  <think> </think>Only text"}])
            ),
            vec![text("Only text")]
        );
        assert_eq!(
            assistant_parts(json!([{"type": "text", "text": "<think>only reasoning</think>"}])),
            vec![reasoning("only reasoning")]
        );
        // Text without a span is kept verbatim.
        assert_eq!(
            assistant_parts(json!([{"type": "text", "text": "  a </think> b\n"}])),
            vec![text("  a </think> b\n")]
        );
    }

    #[test]
    fn think_spans_stay_in_user_text() {
        let loaded = history(
            json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "<think>x</think>"}]}]}),
        );
        assert_eq!(loaded.messages[0].parts, vec![text("<think>x</think>")]);
    }

    #[test]
    fn reasoning_parts() {
        assert_eq!(
            assistant_parts(json!([
                {"type": "reasoning", "text": "a"},
                {"type": "thinking", "content": "b"},
                {"type": "thinking", "text": "", "content": "c"},
                {"type": "reasoning", "text": 5},
                {"type": "reasoning"}
            ])),
            vec![reasoning("a"), reasoning("b"), reasoning("c")]
        );
    }

    #[test]
    fn tool_call_states() {
        let parts = assistant_parts(json!([
            {"type": "tool_call", "toolCallId": "c-1", "toolName": "t", "input": {"a": 1}},
            {"type": "tool-call", "toolCallId": "c-2", "toolName": "t", "args": {"a": 2}, "input": {"ignored": true}, "result": "done"},
            {"type": "tool-call", "toolCallId": "c-3", "toolName": "t", "args": null, "result": "boom", "isError": true},
            {"type": "tool-call", "toolCallId": "c-4", "toolName": "t", "result": {"code": 7}, "isError": true},
            {"type": "tool-call", "toolCallId": "c-5", "toolName": "t", "isError": true},
            {"type": "tool-call", "toolCallId": "c-6", "toolName": "t", "result": null, "isError": "no"},
            {"type": "tool-call", "toolName": "t"},
            {"type": "tool-call", "toolCallId": "c-8"},
            {"type": "tool-call", "toolCallId": 9, "toolName": "t"}
        ]));
        let tool = |id: &str, state, input: Value, output: Option<Value>, error: Option<&str>| {
            Part::Tool(Box::new(ToolPart {
                tool_name: "t".to_owned(),
                tool_call_id: id.to_owned(),
                state,
                input: Some(input.into()),
                output: output.map(Json::from),
                error_text: error.map(str::to_owned),
                ..ToolPart::default()
            }))
        };
        assert_eq!(
            parts,
            vec![
                tool(
                    "c-1",
                    ToolState::InputAvailable,
                    json!({"a": 1}),
                    None,
                    None
                ),
                tool(
                    "c-2",
                    ToolState::OutputAvailable,
                    json!({"a": 2}),
                    Some(json!("done")),
                    None
                ),
                tool("c-3", ToolState::OutputError, json!({}), None, Some("boom")),
                tool(
                    "c-4",
                    ToolState::OutputError,
                    json!({}),
                    None,
                    Some(r#"{"code":7}"#)
                ),
                tool(
                    "c-5",
                    ToolState::OutputError,
                    json!({}),
                    None,
                    Some("The tool call failed.")
                ),
                tool("c-6", ToolState::InputAvailable, json!({}), None, None),
            ]
        );
    }

    #[test]
    fn provenance_needs_a_string_origin() {
        let message = |value: Value| {
            history(json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "t"}], "provenance": value}]}))
                .messages[0]
                .clone()
        };
        let valid = message(
            json!({"origin": "agent", "channel": "api", "actorKind": "agent", "unknown": [1]}),
        );
        let normalized = normalize_provenance(
            &json!({"origin": "agent", "channel": "api", "actorKind": "agent"}),
        );
        assert_eq!(valid.provenance, normalized.map(Json::from));
        assert_eq!(valid.parts.len(), 2);
        for invalid in [
            json!({"origin": 5}),
            json!({"origin": ""}),
            json!({"channel": "api"}),
            json!("user"),
            Value::Null,
        ] {
            let m = message(invalid.clone());
            assert_eq!(m.provenance, None, "{invalid}");
            assert_eq!(m.metadata, None, "{invalid}");
            assert_eq!(m.parts, vec![text("t")], "{invalid}");
        }
    }

    #[test]
    fn a_provenance_alone_does_not_keep_a_message() {
        let loaded = history(json!({"messages": [
            {"role": "user", "content": [], "provenance": {"origin": "user"}}
        ]}));
        assert!(loaded.messages.is_empty());
    }

    #[test]
    fn created_at_and_session_fields_tolerate_wrong_types() {
        let loaded = history(json!({
            "session": {"sessionId": 5, "threadId": null, "agentName": [], "error": {"m": 1}},
            "messages": [{"role": "user", "createdAt": 17, "content": [{"type": "text", "text": "t"}]}]
        }));
        assert_eq!(loaded.runtime_session_id, None);
        assert_eq!(loaded.thread_id, None);
        assert_eq!(loaded.agent_name, None);
        assert_eq!(loaded.error, None);
        assert_eq!(loaded.messages[0].created_at, None);
        assert_eq!(loaded.messages.len(), 1);
    }

    #[test]
    fn hostile_bodies_do_not_panic() {
        for body in hostile_bodies() {
            let _ = parse_history(&body);
        }
    }
}
