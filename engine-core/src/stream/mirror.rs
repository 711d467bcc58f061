//! A host's copy of a streaming message, kept up to date from its [`StreamDelta`]s at a cost
//! proportional to each delta (issue 12): what a host following [`crate::Event::Answer`]
//! holds instead of copying the engine's message after every chunk.

use std::collections::HashMap;

use serde_json::Value;

use super::delta::{StreamDelta, append_raw};
use super::partial_json::PartialJson;
use crate::Json;
use crate::message::{Message, Part};

/// A streaming assistant message rebuilt from its deltas. Equal, after every delta, to the
/// message the engine shows ([`crate::Engine::thread`]'s `streaming`).
///
/// ```
/// use engine_core::stream::{AnswerStream, MessageMirror};
///
/// let mut answer = AnswerStream::new("a-1".into(), 1 << 20);
/// let mut mirror = MessageMirror::new("a-1");
/// let mut deltas = Vec::new();
/// answer.feed(b"data: {\"type\":\"tool-input-start\",\"toolCallId\":\"c\",\"toolName\":\"f\"}\n\n", &mut deltas);
/// answer.feed(b"data: {\"type\":\"tool-input-delta\",\"toolCallId\":\"c\",\"inputTextDelta\":\"{\\\"q\\\":\\\"Ber\"}\n\n", &mut deltas);
/// for delta in &deltas {
///     mirror.apply(delta);
/// }
/// assert_eq!(mirror.message(), answer.message());
/// ```
#[derive(Debug, Clone)]
pub struct MessageMirror {
    message: Message,
    /// The incremental parse of each streaming tool input, by part index.
    parsers: HashMap<usize, PartialJson>,
}

impl MessageMirror {
    /// An empty running assistant message with this id (the engine's answer id until the
    /// stream's `start` names another).
    pub fn new(message_id: &str) -> MessageMirror {
        MessageMirror::of(Message::assistant(message_id.to_owned()))
    }

    /// A mirror of `message` as it stands (a host joining a stream under way).
    pub fn of(message: Message) -> MessageMirror {
        MessageMirror {
            message,
            parsers: HashMap::new(),
        }
    }

    /// Applies one delta, in order.
    pub fn apply(&mut self, delta: &StreamDelta) {
        match delta {
            StreamDelta::ToolInputDelta {
                index,
                delta,
                input_is_text: false,
            } => {
                let Some(Part::Tool(tool)) = self.message.parts.get_mut(*index) else {
                    return;
                };
                let parser = self.parsers.entry(*index).or_insert_with(|| {
                    // Joining mid-input: the parse starts over from the text so far.
                    tool.input = None;
                    PartialJson::default()
                });
                append_raw(tool, delta);
                let raw = match &tool.raw_input {
                    Some(Value::String(raw)) => raw.as_str(),
                    _ => "",
                };
                parser.update_json(raw, &mut tool.input);
            }
            StreamDelta::ToolInputDelta {
                index,
                delta,
                input_is_text: true,
            } => {
                if let Some(Part::Tool(tool)) = self.message.parts.get_mut(*index) {
                    let raw = append_raw(tool, delta).to_owned();
                    match tool.input.as_mut().map(Json::get_mut) {
                        Some(Value::String(input)) => input.push_str(delta),
                        // As the engine: the input becomes the whole raw text.
                        _ => tool.input = Some(Json::from(Value::String(raw))),
                    }
                }
            }
            StreamDelta::PartAdded { index, .. } | StreamDelta::PartUpdated { index, .. } => {
                // The part is replaced whole: a parse of its old input no longer applies.
                self.parsers.remove(index);
                delta.apply_to(&mut self.message);
            }
            StreamDelta::PartsRemoved { from } => {
                self.parsers.retain(|index, _| index < from);
                delta.apply_to(&mut self.message);
            }
            other => other.apply_to(&mut self.message),
        }
    }

    /// The message so far.
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// The message, taking it: compact, as the engine keeps a finished one
    /// ([`Message::compact`]).
    pub fn into_message(self) -> Message {
        let mut message = self.message;
        message.compact();
        message
    }
}
