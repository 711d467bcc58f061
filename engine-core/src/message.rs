//! The engine's own message model: what the thread holds.
//!
//! History answers (platform `content` arrays) and, later, streamed answers (ui-message-stream)
//! are both normalized into this one shape. Its serialized form follows the AI SDK's UI message
//! field names (`parts`, `toolCallId`, `state`, ...) so hosts can render either the same way.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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
}

/// One message of the thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// The message id (the platform's, or `history-{index}` when it has none).
    pub id: String,
    /// Who wrote it.
    pub role: Role,
    /// Its content, in order.
    pub parts: Vec<Part>,
    /// Finished, running or failed.
    #[serde(flatten)]
    pub status: MessageStatus,
    /// Creation time as the platform gave it (ISO-8601), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The platform's provenance object, passed through when valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Value>,
}

/// One part of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Part {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// Model reasoning ("thinking").
    Reasoning {
        /// The reasoning text.
        text: String,
    },
    /// A tool call, with its result when known.
    #[serde(rename_all = "camelCase")]
    Tool {
        /// The call id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// Where the call stands.
        state: ToolState,
        /// The call's input.
        input: Value,
        /// The tool's output, once available.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<Value>,
        /// The error text, when the call failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_text: Option<String>,
    },
    /// The start of a step (streamed answers).
    StepStart,
}

/// The state of a tool call part (AI SDK names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolState {
    /// The input is still streaming.
    InputStreaming,
    /// The input is complete; no output yet.
    InputAvailable,
    /// The output is available.
    OutputAvailable,
    /// The call failed.
    OutputError,
}
