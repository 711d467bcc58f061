//! A chunk's fields read one by one, moved out of its JSON object, into the typed chunk.

use super::*;

/// The fields of a chunk being parsed (`type` removed). Fields are moved out, not cloned.
pub(super) struct Fields {
    pub(super) chunk_type: String,
    pub(super) map: Map<String, Value>,
    /// Lone surrogate halves at the edges of top-level strings, by key (rarely any).
    pub(super) splits: Vec<(String, SplitSurrogates)>,
}

impl Fields {
    pub(super) fn invalid(&self, field: &'static str) -> ChunkError {
        ChunkError::Invalid {
            chunk_type: self.chunk_type.clone(),
            field,
        }
    }

    /// A required string.
    pub(super) fn string(&mut self, key: &'static str) -> Result<String, ChunkError> {
        match self.map.remove(key) {
            Some(Value::String(value)) => Ok(value),
            _ => Err(self.invalid(key)),
        }
    }

    /// A required value of any JSON type (`null` included).
    pub(super) fn value(&mut self, key: &'static str) -> Result<Value, ChunkError> {
        self.map.remove(key).ok_or_else(|| self.invalid(key))
    }

    /// A required boolean.
    pub(super) fn boolean(&mut self, key: &'static str) -> Result<bool, ChunkError> {
        match self.map.remove(key) {
            Some(Value::Bool(value)) => Ok(value),
            _ => Err(self.invalid(key)),
        }
    }

    pub(super) fn opt_string(&mut self, key: &str) -> Option<String> {
        match self.map.remove(key)? {
            Value::String(value) => Some(value),
            _ => None,
        }
    }

    /// A string that is not blank, trimmed.
    pub(super) fn nonblank(&mut self, key: &str) -> Option<String> {
        let value = self.opt_string(key)?;
        let trimmed = value.trim();
        (!trimmed.is_empty()).then(|| trimmed.to_owned())
    }

    pub(super) fn opt_bool(&mut self, key: &str) -> Option<bool> {
        self.map.remove(key)?.as_bool()
    }

    pub(super) fn opt_object(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key).filter(Value::is_object)
    }

    pub(super) fn opt_array(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key).filter(Value::is_array)
    }

    /// Any JSON but `null`.
    pub(super) fn opt_value(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key).filter(|value| !value.is_null())
    }

    pub(super) fn provider_metadata(&mut self) -> Option<Json> {
        self.opt_object("providerMetadata").map(Json::from)
    }

    pub(super) fn tool_call(&mut self) -> Result<ToolCall, ChunkError> {
        Ok(ToolCall {
            tool_call_id: self.string("toolCallId")?,
            tool_name: self.string("toolName")?,
            provider_executed: self.opt_bool("providerExecuted"),
            dynamic: self.opt_bool("dynamic").unwrap_or(false),
            title: self.opt_string("title"),
            provider_metadata: self.provider_metadata(),
            tool_metadata: self.opt_object("toolMetadata").map(Json::from),
        })
    }

    pub(super) fn tool_result(&mut self) -> Result<ToolResult, ChunkError> {
        Ok(ToolResult {
            tool_call_id: self.string("toolCallId")?,
            provider_executed: self.opt_bool("providerExecuted"),
            provider_metadata: self.provider_metadata(),
            tool_metadata: self.opt_object("toolMetadata").map(Json::from),
        })
    }

    /// A part carrying the chunk's `required` string fields and its `optional` fields.
    pub(super) fn other_part(
        mut self,
        required: &[&'static str],
        optional: &[&'static str],
    ) -> Result<Chunk, ChunkError> {
        let mut part = Map::new();
        for &key in required {
            part.insert(key.to_owned(), Value::String(self.string(key)?));
        }
        for &key in optional {
            if let Some(value) = self.opt_value(key) {
                part.insert(key.to_owned(), value);
            }
        }
        Ok(Chunk::Part(OtherPart {
            part_type: self.chunk_type,
            fields: Json::from(Value::Object(part)),
        }))
    }

    pub(super) fn into_chunk(mut self) -> Result<Chunk, ChunkError> {
        let chunk = match self.chunk_type.as_str() {
            "start" => Chunk::Start {
                message_id: self.opt_string("messageId"),
                message_metadata: self.opt_value("messageMetadata"),
            },
            "start-step" => Chunk::StartStep,
            "finish-step" => Chunk::FinishStep,
            "reset-step" => Chunk::ResetStep,
            "finish" => Chunk::Finish {
                finish_reason: self.opt_string("finishReason"),
                message_metadata: self.opt_value("messageMetadata"),
            },
            "abort" => Chunk::Abort {
                reason: self.opt_string("reason"),
            },
            "error" => {
                let error_text = ["errorText", "error", "message", "error_detail"]
                    .into_iter()
                    .find_map(|key| self.nonblank(key))
                    .unwrap_or_else(|| DEFAULT_ERROR_TEXT.to_owned());
                Chunk::Error(AgentError {
                    error_text,
                    status: self.opt_value("status"),
                    error_code: self.opt_string("error_code"),
                    error_source: self
                        .opt_string("error_source")
                        .or_else(|| self.opt_string("source")),
                })
            }
            "message-metadata" => Chunk::MessageMetadata {
                message_metadata: self.opt_value("messageMetadata"),
            },
            "text-start" => Chunk::TextStart {
                id: self.string("id")?,
                provider_metadata: self.provider_metadata(),
            },
            // RU-4: the runtime's text is in `textDelta`, the AI SDK's in `delta`.
            "text-delta" => {
                let id = self.string("id")?;
                let (delta, key) = match self.opt_string("textDelta") {
                    Some(delta) => (delta, "textDelta"),
                    None => (self.string("delta")?, "delta"),
                };
                Chunk::TextDelta {
                    id,
                    delta,
                    provider_metadata: self.provider_metadata(),
                    split: Repaired::split(&self.splits, key),
                }
            }
            "text-end" => Chunk::TextEnd {
                id: self.string("id")?,
                provider_metadata: self.provider_metadata(),
                citations: self.opt_array("citations"),
            },
            "reasoning-start" => Chunk::ReasoningStart {
                id: self.string("id")?,
                provider_metadata: self.provider_metadata(),
            },
            "reasoning-delta" => Chunk::ReasoningDelta {
                id: self.string("id")?,
                delta: self.string("delta")?,
                provider_metadata: self.provider_metadata(),
                split: Repaired::split(&self.splits, "delta"),
            },
            "reasoning-end" => Chunk::ReasoningEnd {
                id: self.string("id")?,
                provider_metadata: self.provider_metadata(),
            },
            "tool-input-start" => {
                let input_encoding = match self.opt_string("inputEncoding").as_deref() {
                    Some("text") => InputEncoding::Text,
                    _ => InputEncoding::Json,
                };
                Chunk::ToolInputStart {
                    call: self.tool_call()?,
                    input_encoding,
                }
            }
            "tool-input-delta" => Chunk::ToolInputDelta {
                tool_call_id: self.string("toolCallId")?,
                input_text_delta: self.string("inputTextDelta")?,
                split: Repaired::split(&self.splits, "inputTextDelta"),
            },
            "tool-input-available" => Chunk::ToolInputAvailable {
                call: self.tool_call()?,
                input: self.value("input")?,
            },
            "tool-input-error" => Chunk::ToolInputError {
                call: self.tool_call()?,
                input: self.value("input")?,
                error_text: self.string("errorText")?,
            },
            "tool-output-available" => Chunk::ToolOutputAvailable {
                result: self.tool_result()?,
                output: self.value("output")?,
                preliminary: self.opt_bool("preliminary"),
                is_error: self.opt_bool("isError") == Some(true),
            },
            // RU-1: the runtime's tool frames.
            "tool-call-start" => Chunk::ToolCallStart {
                tool_call_id: self.string("toolCallId")?,
                tool_name: self.opt_string("toolName"),
            },
            "tool-call-delta" => Chunk::ToolCallDelta {
                tool_call_id: self.opt_string("toolCallId"),
                args_text: self.opt_string("argsText"),
                split: Repaired::split(&self.splits, "argsText"),
            },
            "tool-call-end" => Chunk::ToolCallEnd {
                tool_call_id: self.opt_string("toolCallId"),
            },
            "tool-result" => Chunk::ToolCallResult {
                tool_call_id: self.string("toolCallId")?,
                result: self.map.remove("result").unwrap_or(Value::Null),
                is_error: self.opt_bool("isError") == Some(true),
            },
            "tool-output-error" => Chunk::ToolOutputError {
                result: self.tool_result()?,
                error_text: self.string("errorText")?,
            },
            "tool-output-delta" => Chunk::ToolOutputDelta,
            "tool-approval-request" => {
                let approval_id = self.string("approvalId")?;
                let tool_call_id = self.string("toolCallId")?;
                let reason = self.opt_string("reason");
                let mut extra = Map::new();
                for (from, to) in [
                    ("approvalDescriptor", "descriptor"),
                    ("signature", "signature"),
                    ("inputSchemaInput", "inputSchemaInput"),
                    ("isAutomatic", "isAutomatic"),
                ] {
                    if let Some(value) = self.opt_value(from) {
                        extra.insert(to.to_owned(), value);
                    }
                }
                Chunk::ToolApprovalRequest {
                    approval_id,
                    tool_call_id,
                    reason,
                    extra,
                }
            }
            "tool-approval-response" => Chunk::ToolApprovalResponse {
                approval_id: self.string("approvalId")?,
                approved: self.boolean("approved")?,
                reason: self.opt_string("reason"),
                provider_executed: self.opt_bool("providerExecuted"),
                provider_metadata: self.provider_metadata(),
            },
            "tool-output-denied" => Chunk::ToolOutputDenied {
                tool_call_id: self.string("toolCallId")?,
            },
            "source-url" => {
                return self.other_part(&["sourceId", "url"], &["title", "providerMetadata"]);
            }
            "source-document" => {
                return self.other_part(
                    &["sourceId", "mediaType", "title"],
                    &["filename", "providerMetadata"],
                );
            }
            "file" | "reasoning-file" => {
                return self.other_part(&["url", "mediaType"], &["providerMetadata"]);
            }
            "custom" => return self.other_part(&["kind"], &["providerMetadata"]),
            "steering-message" => {
                let id = self.string("id")?;
                let parts = match self.map.remove("parts") {
                    Some(parts @ Value::Array(_)) => parts,
                    _ => return Err(self.invalid("parts")),
                };
                let mut fields = Map::new();
                fields.insert("id".to_owned(), Value::String(id));
                fields.insert("parts".to_owned(), parts);
                Chunk::Part(OtherPart {
                    part_type: self.chunk_type,
                    fields: Json::from(Value::Object(fields)),
                })
            }
            "new_session" => return self.new_session(),
            _ if self.chunk_type.starts_with("data-") => {
                let id = self.opt_string("id");
                let data = self.value("data")?;
                Chunk::Data {
                    id,
                    data,
                    transient: self.opt_bool("transient").unwrap_or(false),
                    data_type: self.chunk_type,
                }
            }
            _ => {
                return Err(ChunkError::UnknownType {
                    chunk_type: self.chunk_type,
                });
            }
        };
        Ok(chunk)
    }

    /// The `new_session` object (or, when it is not an object, the frame itself).
    pub(super) fn new_session(mut self) -> Result<Chunk, ChunkError> {
        let mut inner = match self.map.remove("new_session") {
            Some(Value::Object(map)) => Fields {
                chunk_type: self.chunk_type,
                map,
                splits: Vec::new(),
            },
            _ => self,
        };
        let session_uid = [
            "runtime_session_uid",
            "agent_session_uid",
            "session_uid",
            "uid",
        ]
        .into_iter()
        .find_map(|key| inner.nonblank(key))
        .ok_or_else(|| inner.invalid("new_session.runtime_session_uid"))?;
        Ok(Chunk::NewSession(NewSession {
            session_uid,
            agent_id: inner.nonblank("agent_id"),
            agent_unique_id: inner.nonblank("agent_unique_id"),
            session_key: inner.nonblank("session_key"),
            thread_id: inner.nonblank("thread_id"),
        }))
    }
}
