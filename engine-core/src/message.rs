//! The engine's own message model: what the thread holds.
//!
//! History answers (platform `content` arrays) and streamed answers (ui-message-stream) are both
//! normalized into this one shape. Its serialized form is the AI SDK's UI message (`id`, `role`,
//! `metadata`, `parts`, with parts such as `{"type":"text","text":..,"state":"done"}` or
//! `{"type":"tool-<name>","toolCallId":..,"state":..,"input":..}`), plus the engine's own fields
//! (`status`, `error`, `createdAt`, `provenance`), so hosts can render either the same way.

use std::borrow::Cow;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::Json;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// The person.
    User,
    /// The Agent.
    Assistant,
    /// A system message.
    System,
}

/// Where a message stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum MessageStatus {
    /// Finished.
    Complete,
    /// Still being written (an in-progress history message, or a streaming answer).
    Running,
    /// Ended with an error.
    Failed {
        /// The error text.
        error: String,
    },
    /// Cut short by `cancelActiveSession()` (SND-16): never complete.
    Cancelled,
}

/// One message of the thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Message {
    /// The message id (the platform's, the stream's `start.messageId`, or one the engine chose).
    pub id: String,
    /// Who wrote it.
    pub role: Role,
    /// The message metadata (ui-message-stream `messageMetadata`, deep-merged), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Json>,
    /// Its content, in order.
    pub parts: Vec<Part>,
    /// Finished, running or failed.
    #[serde(flatten)]
    pub status: MessageStatus,
    /// Creation time as the platform gave it (ISO-8601), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The history's provenance, normalized (P9); the same value is the message's leading
    /// `data-main_sequence_ai_provenance` part and its metadata `custom.mainSequenceAi`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Json>,
}

impl Message {
    /// SND-16: the message was cut short by a stop. It is marked cancelled, and none of its parts
    /// stays streaming: text and reasoning keep what arrived and are done; a tool call whose
    /// input was still streaming ends as failed with "Run cancelled.".
    pub fn cancel(&mut self) {
        self.status = MessageStatus::Cancelled;
        self.settle_parts("Run cancelled.");
    }

    /// ui-message-stream §6, RU-6: the answer failed. It is marked failed with `error`, and
    /// none of its parts stays streaming: text and reasoning keep what arrived and are done; a
    /// tool call whose input was still streaming ends as failed with the same text.
    pub fn fail(&mut self, error: String) {
        self.settle_parts(&error);
        self.status = MessageStatus::Failed { error };
    }

    /// No part stays streaming: a tool call still streaming its input fails with `error`.
    fn settle_parts(&mut self, error: &str) {
        for part in &mut self.parts {
            match part {
                Part::Text(t) => t.state = PartState::Done,
                Part::Reasoning(r) => r.state = PartState::Done,
                Part::Tool(tool) if tool.state == ToolState::InputStreaming => {
                    tool.state = ToolState::OutputError;
                    tool.error_text = Some(error.to_owned());
                }
                _ => {}
            }
        }
    }

    /// Keeps every JSON value of the message as compact text ([`Json::compact`]) and gives
    /// back the spare capacity of its strings and parts: what the engine does once a message
    /// is final (read from the history, or its answer ended).
    pub fn compact(&mut self) {
        for json in [&mut self.metadata, &mut self.provenance]
            .into_iter()
            .flatten()
        {
            json.compact();
        }
        for part in &mut self.parts {
            part.compact();
        }
        self.parts.shrink_to_fit();
    }

    /// An empty assistant message that is still being written (the start of a streamed answer).
    pub fn assistant(id: String) -> Message {
        Message {
            id,
            role: Role::Assistant,
            metadata: None,
            parts: Vec::new(),
            status: MessageStatus::Running,
            created_at: None,
            provenance: None,
        }
    }
}

/// One part of a message, serialized as the AI SDK's UI message part.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Part {
    /// `{"type":"text"}`: plain text.
    Text(TextPart),
    /// `{"type":"reasoning"}`: model reasoning ("thinking").
    Reasoning(ReasoningPart),
    /// `{"type":"step-start"}`: the start of a step.
    StepStart,
    /// `{"type":"tool-<toolName>"}` or `{"type":"dynamic-tool"}`: a tool call (boxed: it is
    /// much larger than the other parts).
    Tool(Box<ToolPart>),
    /// `{"type":"data-<name>"}`: an application data part.
    Data(DataPart),
    /// Any other part (`source-url`, `source-document`, `file`, `reasoning-file`, `custom`,
    /// `steering-message`, or a type this model does not know), carried with its fields.
    Other(OtherPart),
}

impl Part {
    /// A finished text part.
    pub fn done_text(text: impl Into<String>) -> Part {
        Part::Text(TextPart {
            text: text.into(),
            state: PartState::Done,
            provider_metadata: None,
            citations: None,
        })
    }

    /// A finished reasoning part without an id.
    pub fn done_reasoning(text: impl Into<String>) -> Part {
        Part::Reasoning(ReasoningPart {
            id: None,
            text: text.into(),
            state: PartState::Done,
            provider_metadata: None,
        })
    }

    /// [`Message::compact`] for one part.
    pub fn compact(&mut self) {
        match self {
            Part::Text(text) => {
                text.text.shrink_to_fit();
                for json in [&mut text.provider_metadata, &mut text.citations]
                    .into_iter()
                    .flatten()
                {
                    json.compact();
                }
            }
            Part::Reasoning(reasoning) => {
                reasoning.text.shrink_to_fit();
                if let Some(json) = &mut reasoning.provider_metadata {
                    json.compact();
                }
            }
            Part::StepStart => {}
            Part::Tool(tool) => {
                for json in [
                    &mut tool.input,
                    &mut tool.output,
                    &mut tool.call_provider_metadata,
                    &mut tool.result_provider_metadata,
                    &mut tool.tool_metadata,
                ]
                .into_iter()
                .flatten()
                {
                    json.compact();
                }
            }
            Part::Data(data) => data.data.compact(),
            Part::Other(other) => other.fields.compact(),
        }
    }

    /// The part's `type` as serialized (`text`, `tool-get_weather`, `data-status`, ...).
    pub fn part_type(&self) -> Cow<'_, str> {
        match self {
            Part::Text(_) => Cow::Borrowed("text"),
            Part::Reasoning(_) => Cow::Borrowed("reasoning"),
            Part::StepStart => Cow::Borrowed("step-start"),
            Part::Tool(tool) if tool.dynamic => Cow::Borrowed("dynamic-tool"),
            Part::Tool(tool) => Cow::Owned(format!("tool-{}", tool.tool_name)),
            Part::Data(data) => Cow::Borrowed(&data.data_type),
            Part::Other(other) => Cow::Borrowed(&other.part_type),
        }
    }
}

/// Whether a text or reasoning part is still streaming.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum PartState {
    /// Deltas may still arrive (or the stream ended before the part's end chunk).
    Streaming,
    /// The part is complete.
    #[default]
    Done,
}

/// A text part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextPart {
    /// The text.
    pub text: String,
    /// Streaming or done.
    #[serde(default)]
    pub state: PartState,
    /// Provider metadata of the part, when the stream gave some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_metadata: Option<Json>,
    /// Citations copied from the `text-end` chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citations: Option<Json>,
}

/// A reasoning part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReasoningPart {
    /// The stream's reasoning id (history reasoning has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The reasoning text.
    pub text: String,
    /// Streaming or done.
    #[serde(default)]
    pub state: PartState,
    /// Provider metadata of the part, when the stream gave some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_metadata: Option<Json>,
}

/// A tool call part: `{"type":"tool-<toolName>", ...}`, or `{"type":"dynamic-tool",
/// "toolName": ..}` when `dynamic`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolPart {
    /// The tool's name.
    #[serde(skip)]
    pub tool_name: String,
    /// A dynamic tool (serialized as `dynamic-tool` with a `toolName` field).
    #[serde(skip)]
    pub dynamic: bool,
    /// The call id.
    pub tool_call_id: String,
    /// Where the call stands.
    pub state: ToolState,
    /// The call's input: complete, or the best-effort parse of what streamed so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Json>,
    /// The tool's output, once available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Json>,
    /// The error text, when the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_text: Option<String>,
    /// The raw input text while it streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Value>,
    /// A display title for the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Whether the provider ran the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_executed: Option<bool>,
    /// `true` while the output is an intermediate one of a streaming tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preliminary: Option<bool>,
    /// Provider metadata of the call (from input chunks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_provider_metadata: Option<Json>,
    /// Provider metadata of the result (from output chunks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_provider_metadata: Option<Json>,
    /// The tool's own metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_metadata: Option<Json>,
    /// The approval asked for the call, and the answer once given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ToolApproval>,
}

/// The approval of a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolApproval {
    /// The approval id.
    pub id: String,
    /// The answer, once given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
    /// The reason given with the answer (or with the request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Further fields of the request (`descriptor`, `signature`, ...), as given.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The state of a tool call part (AI SDK names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ToolState {
    /// The input is still streaming.
    #[default]
    InputStreaming,
    /// The input is complete; no output yet.
    InputAvailable,
    /// An approval of the call was requested.
    ApprovalRequested,
    /// The approval was answered.
    ApprovalResponded,
    /// The output is available.
    OutputAvailable,
    /// The call failed.
    OutputError,
    /// The call was denied.
    OutputDenied,
}

/// A data part: `{"type":"data-<name>","id"?,"data"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DataPart {
    /// The full type, `data-` included.
    pub data_type: String,
    /// The part's id, when it has one (a later chunk with the same type and id replaces `data`).
    pub id: Option<String>,
    /// The data.
    pub data: Json,
}

/// A part carried as its fields: `{"type": part_type, ...fields}`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OtherPart {
    /// The part's type.
    pub part_type: String,
    /// Its other fields: a JSON object (anything else serializes as no fields).
    pub fields: Json,
}

/// Serializes `fields` (a struct serializing as a map) with `type` (and, for dynamic tools,
/// `toolName`) first.
#[derive(Serialize)]
struct Tagged<'a, T: Serialize> {
    #[serde(rename = "type")]
    part_type: &'a str,
    #[serde(rename = "toolName", skip_serializing_if = "Option::is_none")]
    tool_name: Option<&'a str>,
    #[serde(flatten)]
    fields: &'a T,
}

/// The fields of a data part after its type.
#[derive(Serialize)]
struct DataFields<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    data: &'a Json,
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        fn tagged<'a, T: Serialize>(part_type: &'a str, fields: &'a T) -> Tagged<'a, T> {
            Tagged {
                part_type,
                tool_name: None,
                fields,
            }
        }
        match self {
            Part::Text(text) => tagged("text", text).serialize(serializer),
            Part::Reasoning(reasoning) => tagged("reasoning", reasoning).serialize(serializer),
            Part::StepStart => tagged("step-start", &Map::new()).serialize(serializer),
            Part::Tool(tool) if tool.dynamic => Tagged {
                part_type: "dynamic-tool",
                tool_name: Some(&tool.tool_name),
                fields: tool.as_ref(),
            }
            .serialize(serializer),
            Part::Tool(tool) => {
                tagged(&format!("tool-{}", tool.tool_name), tool.as_ref()).serialize(serializer)
            }
            Part::Data(data) => tagged(
                &data.data_type,
                &DataFields {
                    id: data.id.as_deref(),
                    data: &data.data,
                },
            )
            .serialize(serializer),
            // `fields` is an object when read or streamed; one built otherwise adds nothing.
            Part::Other(other) if other.fields.is_object() => {
                tagged(&other.part_type, &other.fields).serialize(serializer)
            }
            Part::Other(other) => tagged(&other.part_type, &Map::new()).serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Part, D::Error> {
        let mut fields = Map::<String, Value>::deserialize(deserializer)?;
        let part_type = match fields.remove("type") {
            Some(Value::String(part_type)) => part_type,
            _ => return Err(D::Error::custom("a message part needs a string `type`")),
        };
        let object = |fields: Map<String, Value>| Value::Object(fields);
        let part = match part_type.as_str() {
            "text" => Part::Text(serde_json::from_value(object(fields)).map_err(D::Error::custom)?),
            "reasoning" => {
                Part::Reasoning(serde_json::from_value(object(fields)).map_err(D::Error::custom)?)
            }
            "step-start" => Part::StepStart,
            "dynamic-tool" => {
                let tool_name = match fields.get("toolName") {
                    Some(Value::String(name)) => name.clone(),
                    _ => return Err(D::Error::custom("a dynamic-tool part needs a `toolName`")),
                };
                let tool: ToolPart =
                    serde_json::from_value(object(fields)).map_err(D::Error::custom)?;
                Part::Tool(Box::new(ToolPart {
                    tool_name,
                    dynamic: true,
                    ..tool
                }))
            }
            _ if part_type.starts_with("tool-") => {
                let tool: ToolPart =
                    serde_json::from_value(object(fields)).map_err(D::Error::custom)?;
                Part::Tool(Box::new(ToolPart {
                    tool_name: part_type
                        .strip_prefix("tool-")
                        .unwrap_or_default()
                        .to_owned(),
                    dynamic: false,
                    ..tool
                }))
            }
            _ if part_type.starts_with("data-") => {
                let id = match fields.remove("id") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(id)) => Some(id),
                    Some(_) => return Err(D::Error::custom("a data part's `id` is a string")),
                };
                Part::Data(DataPart {
                    data_type: part_type,
                    id,
                    data: Json::compact_of(fields.remove("data").unwrap_or(Value::Null)),
                })
            }
            _ => Part::Other(OtherPart {
                part_type,
                fields: Json::compact_of(Value::Object(fields)),
            }),
        };
        Ok(part)
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
mod tests {
    use serde_json::json;

    use super::*;

    fn round_trip(value: Value) -> Part {
        let part: Part = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&part).unwrap(), value);
        part
    }

    #[test]
    fn parts_serialize_in_the_ui_message_shape() {
        assert_eq!(
            round_trip(json!({"type": "text", "text": "Hi", "state": "done"})),
            Part::done_text("Hi")
        );
        round_trip(json!({"type": "text", "text": "", "state": "streaming",
            "providerMetadata": {"a": {"b": 1}}, "citations": [1]}));
        round_trip(json!({"type": "reasoning", "id": "r-1", "text": "x", "state": "streaming"}));
        round_trip(json!({"type": "step-start"}));
        let tool = round_trip(json!({"type": "tool-get_weather", "toolCallId": "c-1",
            "state": "output-available", "input": {"city": "Berlin"}, "output": 21,
            "callProviderMetadata": {"p": {}}, "approval": {"id": "a-1", "approved": true,
            "signature": "s"}}));
        let Part::Tool(tool) = tool else {
            panic!("not a tool part")
        };
        assert_eq!(tool.tool_name, "get_weather");
        assert!(!tool.dynamic);
        let tool = round_trip(json!({"type": "dynamic-tool", "toolName": "lookup",
            "toolCallId": "c-2", "state": "input-streaming"}));
        assert_eq!(tool.part_type(), "dynamic-tool");
        round_trip(json!({"type": "data-weather", "id": "w", "data": {"t": 1}}));
        round_trip(json!({"type": "data-weather", "data": null}));
        round_trip(json!({"type": "source-url", "sourceId": "s", "url": "https://x"}));
    }

    #[test]
    fn an_other_part_whose_fields_are_not_an_object_serializes_without_them() {
        let part = Part::Other(OtherPart {
            part_type: "source-url".to_owned(),
            fields: Json::from(json!(5)),
        });
        assert_eq!(
            serde_json::to_value(&part).unwrap(),
            json!({"type": "source-url"})
        );
    }

    #[test]
    fn history_text_without_state_is_done() {
        let part: Part = serde_json::from_value(json!({"type": "text", "text": "a"})).unwrap();
        assert_eq!(part, Part::done_text("a"));
        assert!(serde_json::from_value::<Part>(json!({"text": "a"})).is_err());
        assert!(serde_json::from_value::<Part>(json!({"type": "dynamic-tool"})).is_err());
    }

    #[test]
    fn message_metadata_is_skipped_when_absent() {
        let message = Message::assistant("m".to_owned());
        let value = serde_json::to_value(&message).unwrap();
        assert_eq!(
            value,
            json!({"id": "m", "role": "assistant", "parts": [], "status": "running"})
        );
        let back: Message = serde_json::from_value(value).unwrap();
        assert_eq!(back, message);
    }
}
