//! Assembling the assistant message from chunks (ui-message-stream §5), and the outcome rules
//! of §6.
//!
//! Each chunk costs work proportional to itself: parts are found through id maps, not by
//! scanning the message; text deltas are appended in place; a changed part is cloned alone into
//! its delta. Protocol errors are handled leniently and counted: a text or reasoning delta for an
//! id with no open part opens a part; an end for such an id, and a tool chunk for an unknown
//! call (or approval), are skipped.

mod text;
mod tools;

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use crate::Json;

use super::chunk::{Chunk, DeltaChunk, InputEncoding};
use super::delta::StreamDelta;
use super::metadata::deep_merge;
use super::outcome::StreamOutcome;
use super::partial_json::PartialJson;
use super::surrogates::SplitSurrogates;
use crate::message::{DataPart, Message, Part};
use text::{Append, TextKind};

/// A tool call whose input is streaming.
#[derive(Debug, Clone)]
struct PartialTool {
    /// The index of its part.
    index: usize,
    encoding: InputEncoding,
    /// A high surrogate half that ended the last delta (see [`surrogates`]).
    pending: Option<u16>,
    /// The input's parse, kept up to date as the raw text grows.
    parser: PartialJson,
}

/// Turns chunks into one assistant message.
#[derive(Debug, Clone)]
pub struct Assembler {
    message: Message,
    /// `Started` was emitted.
    started: bool,
    /// Open text parts by chunk id.
    open_text: HashMap<String, usize>,
    /// Open reasoning parts by chunk id.
    open_reasoning: HashMap<String, usize>,
    /// The open part found last, as (kind, index, chunk id): the deltas of a part follow one
    /// another, so most are found without hashing their id. Forgotten whenever the open parts
    /// may change ([`Assembler::open_parts`]).
    last_open: Option<(TextKind, usize, String)>,
    /// The high surrogate half that ended an open text part's last delta, by chunk id.
    pending_text: HashMap<String, u16>,
    /// The same for reasoning parts.
    pending_reasoning: HashMap<String, u16>,
    /// Tool calls whose input streams, by call id.
    partial_tools: HashMap<String, PartialTool>,
    /// The runtime's call started last and not yet ended (`tool-call-start`, RU-3): where
    /// `tool-call-delta` appends, whatever id it names.
    runtime_call: Option<String>,
    /// The stream broke the protocol beyond repair (RU-5): the message failed, and later
    /// chunks change nothing.
    broken: bool,
    /// The indices of the tool parts of each call id, ascending.
    tool_parts: HashMap<String, Vec<usize>>,
    /// The tool part of each approval id.
    approvals: HashMap<String, usize>,
    /// Data parts with an id, by (type, id).
    data_parts: HashMap<(String, String), usize>,
    /// The index of the last `step-start` part.
    step_start: Option<usize>,
    /// The first error text seen.
    error_text: Option<String>,
    /// The first error's source (`error_source`, else `source`), when it named one (RU-15).
    error_source: Option<String>,
    outcome: StreamOutcome,
    protocol_errors: u64,
    /// See [`Assembler::last_reasoning`].
    last_reasoning: String,
    /// The deltas from this index of `out` on were made by the caller's current call and may
    /// be joined (see [`Assembler::joins_from`]).
    joins_from: usize,
}

impl Assembler {
    /// An assembler whose message has `message_id` until a `start` chunk gives another.
    pub fn new(message_id: String) -> Assembler {
        Assembler {
            message: Message::assistant(message_id),
            started: false,
            open_text: HashMap::new(),
            open_reasoning: HashMap::new(),
            last_open: None,
            pending_text: HashMap::new(),
            pending_reasoning: HashMap::new(),
            partial_tools: HashMap::new(),
            runtime_call: None,
            broken: false,
            tool_parts: HashMap::new(),
            approvals: HashMap::new(),
            data_parts: HashMap::new(),
            step_start: None,
            error_text: None,
            error_source: None,
            outcome: StreamOutcome::Open,
            protocol_errors: 0,
            last_reasoning: String::new(),
            joins_from: usize::MAX,
        }
    }

    /// The message so far.
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// The message, taken whole.
    pub fn into_message(self) -> Message {
        self.message
    }

    /// The outcome so far.
    pub fn outcome(&self) -> &StreamOutcome {
        &self.outcome
    }

    /// The first error text an `error` chunk gave.
    pub fn error_text(&self) -> Option<&str> {
        self.error_text.as_deref()
    }

    /// The source the first `error` chunk named (`error_source`, else `source`), if any.
    pub fn error_source(&self) -> Option<&str> {
        self.error_source.as_deref()
    }

    /// Chunks that broke the protocol (deltas, ends or tool chunks for unknown ids).
    pub fn protocol_errors(&self) -> u64 {
        self.protocol_errors
    }

    /// Whether the stream broke the protocol beyond repair (a `tool-result` for a call never
    /// started, a call id started twice: RU-5): the message failed with what it had, and
    /// later chunks are ignored.
    pub fn broken(&self) -> bool {
        self.broken
    }

    /// Applies one chunk. `new_session` frames and `tool-output-delta` change nothing here,
    /// nor does anything once the stream [broke](Assembler::broken).
    pub fn apply(&mut self, chunk: Chunk, out: &mut Vec<StreamDelta>) {
        if self.broken {
            return;
        }
        if !matches!(chunk, Chunk::Start { .. }) {
            self.ensure_started(out);
        }
        match chunk {
            Chunk::Start {
                message_id,
                message_metadata,
            } => {
                let new_id = message_id.is_some();
                if let Some(id) = message_id {
                    self.message.id = id;
                }
                if new_id || !self.started {
                    self.started = true;
                    out.push(StreamDelta::Started {
                        message_id: self.message.id.clone(),
                    });
                }
                self.merge_metadata(message_metadata, out);
            }
            Chunk::StartStep => {
                let index = self.push_part(Part::StepStart, out);
                self.step_start = Some(index);
            }
            Chunk::ResetStep => self.reset_step(out),
            Chunk::Finish {
                finish_reason,
                message_metadata,
            } => {
                self.merge_metadata(message_metadata, out);
                self.terminate(StreamOutcome::Finished { finish_reason }, out);
            }
            Chunk::Abort { reason } => self.terminate(StreamOutcome::Aborted { reason }, out),
            Chunk::Error(error) => {
                if self.error_text.is_none() {
                    self.error_source = error.error_source.clone();
                }
                let first = self.error_text.get_or_insert(error.error_text.clone());
                if self.outcome != StreamOutcome::Open {
                    self.outcome = StreamOutcome::Failed {
                        error_text: first.clone(),
                    };
                }
                out.push(StreamDelta::Error {
                    error_text: error.error_text,
                });
            }
            Chunk::MessageMetadata { message_metadata } => {
                self.merge_metadata(message_metadata, out);
            }
            Chunk::TextStart {
                id,
                provider_metadata,
            } => self.start_text(TextKind::Text, id, provider_metadata, out),
            Chunk::TextDelta {
                id,
                delta,
                provider_metadata,
                split,
            } => {
                let delta = (Cow::Owned(delta), split);
                self.text_delta(TextKind::Text, &id, delta, provider_metadata, out);
            }
            Chunk::TextEnd {
                id,
                provider_metadata,
                citations,
            } => self.end_text(TextKind::Text, &id, provider_metadata, citations, out),
            Chunk::ReasoningStart {
                id,
                provider_metadata,
            } => self.start_text(TextKind::Reasoning, id, provider_metadata, out),
            Chunk::ReasoningDelta {
                id,
                delta,
                provider_metadata,
                split,
            } => {
                let delta = (Cow::Owned(delta), split);
                self.text_delta(TextKind::Reasoning, &id, delta, provider_metadata, out);
            }
            Chunk::ReasoningEnd {
                id,
                provider_metadata,
            } => self.end_text(TextKind::Reasoning, &id, provider_metadata, None, out),
            Chunk::ToolInputStart {
                call,
                input_encoding,
            } => self.tool_input_start(call, input_encoding, out),
            Chunk::ToolInputDelta {
                tool_call_id,
                input_text_delta,
                split,
            } => self.tool_input_delta(&tool_call_id, &input_text_delta, split, out),
            Chunk::ToolInputAvailable { call, input } => {
                self.tool_input_available(call, input, out);
            }
            Chunk::ToolInputError {
                call,
                input,
                error_text,
            } => self.tool_input_error(call, input, error_text, out),
            Chunk::ToolOutputAvailable {
                result,
                output,
                preliminary,
                is_error,
            } => self.tool_output_available(result, output, preliminary, is_error, out),
            Chunk::ToolCallStart {
                tool_call_id,
                tool_name,
            } => self.tool_call_start(tool_call_id, tool_name, out),
            Chunk::ToolCallDelta {
                args_text, split, ..
            } => self.tool_call_delta(args_text, split, out),
            Chunk::ToolCallEnd { .. } => self.tool_call_end(out),
            Chunk::ToolCallResult {
                tool_call_id,
                result,
                is_error,
            } => self.tool_call_result(&tool_call_id, result, is_error, out),
            Chunk::ToolOutputError { result, error_text } => {
                self.tool_output_error(result, error_text, out);
            }
            Chunk::ToolApprovalRequest {
                approval_id,
                tool_call_id,
                reason,
                extra,
            } => self.tool_approval_request(approval_id, &tool_call_id, reason, extra, out),
            Chunk::ToolApprovalResponse {
                approval_id,
                approved,
                reason,
                provider_executed,
                provider_metadata,
            } => self.tool_approval_response(
                &approval_id,
                approved,
                reason,
                provider_executed,
                provider_metadata,
                out,
            ),
            Chunk::ToolOutputDenied { tool_call_id } => {
                self.tool_output_denied(&tool_call_id, out);
            }
            Chunk::Part(part) => {
                self.push_part(Part::Other(part), out);
            }
            Chunk::Data {
                data_type,
                id,
                data,
                transient,
            } => self.data(data_type, id, data, transient, out),
            Chunk::FinishStep | Chunk::ToolOutputDelta | Chunk::NewSession(_) => {}
        }
    }

    /// Applies a delta chunk of the plain shape (see [`super::chunk::parse_delta`]): what
    /// [`Assembler::apply`] does with the same chunk, without owning its ids.
    pub fn apply_delta(&mut self, chunk: DeltaChunk<'_>, out: &mut Vec<StreamDelta>) {
        if self.broken {
            return;
        }
        self.ensure_started(out);
        let none = SplitSurrogates::default();
        match chunk {
            DeltaChunk::Text { id, delta } => {
                self.text_delta(TextKind::Text, &id, (delta, none), None, out);
            }
            DeltaChunk::Reasoning { id, delta } => {
                self.text_delta(TextKind::Reasoning, &id, (delta, none), None, out);
            }
            DeltaChunk::ToolInput {
                tool_call_id,
                input_text_delta,
            } => self.tool_input_delta(&tool_call_id, &input_text_delta, none, out),
        }
    }

    /// The `[DONE]` terminator: finishes an open answer. Nothing can complete a pending
    /// surrogate half any more: each becomes U+FFFD.
    pub fn done(&mut self, out: &mut Vec<StreamDelta>) {
        self.ensure_started(out);
        self.flush_pending(out);
        self.terminate(
            StreamOutcome::Finished {
                finish_reason: None,
            },
            out,
        );
    }

    /// The body ended: an open answer is failed (after an error) or interrupted, and the
    /// message takes its final status. Parts left streaming stay as they are.
    pub fn end(&mut self, out: &mut Vec<StreamDelta>) {
        self.ensure_started(out);
        self.flush_pending(out);
        if self.outcome == StreamOutcome::Open {
            self.outcome = match &self.error_text {
                Some(error_text) => StreamOutcome::Failed {
                    error_text: error_text.clone(),
                },
                None => StreamOutcome::Interrupted,
            };
        }
        self.message.status = self.outcome.final_status();
        out.push(StreamDelta::Ended {
            outcome: self.outcome.clone(),
            status: self.message.status.clone(),
        });
    }

    fn ensure_started(&mut self, out: &mut Vec<StreamDelta>) {
        if !self.started {
            self.started = true;
            out.push(StreamDelta::Started {
                message_id: self.message.id.clone(),
            });
        }
    }

    /// `finish`, `abort` or `[DONE]`: the first one decides, and an error seen before wins.
    fn terminate(&mut self, outcome: StreamOutcome, out: &mut Vec<StreamDelta>) {
        if self.outcome != StreamOutcome::Open {
            return;
        }
        if let Some(error_text) = &self.error_text {
            self.outcome = StreamOutcome::Failed {
                error_text: error_text.clone(),
            };
            return;
        }
        match &outcome {
            StreamOutcome::Finished { finish_reason } => out.push(StreamDelta::Finished {
                finish_reason: finish_reason.clone(),
            }),
            StreamOutcome::Aborted { reason } => out.push(StreamDelta::Aborted {
                reason: reason.clone(),
            }),
            _ => {}
        }
        self.outcome = outcome;
    }

    /// The stream broke the protocol beyond repair (RU-5): the message fails with
    /// `error_text`, keeping what it has; later chunks are ignored. As in the reference, whose
    /// decoder throws there.
    fn break_stream(&mut self, error_text: String, out: &mut Vec<StreamDelta>) {
        self.protocol_errors += 1;
        self.broken = true;
        if self.outcome != StreamOutcome::Open {
            return;
        }
        if self.error_text.is_none() {
            self.error_text = Some(error_text.clone());
            out.push(StreamDelta::Error { error_text });
        }
        self.outcome = StreamOutcome::Failed {
            error_text: self.error_text.clone().unwrap_or_default(),
        };
    }

    fn merge_metadata(&mut self, metadata: Option<Value>, out: &mut Vec<StreamDelta>) {
        let Some(metadata) = metadata else {
            return;
        };
        let merged = match &mut self.message.metadata {
            Some(existing) => {
                let existing = existing.get_mut();
                deep_merge(existing, metadata);
                existing.clone()
            }
            None => {
                self.message.metadata = Some(Json::from(metadata.clone()));
                metadata
            }
        };
        out.push(StreamDelta::Metadata { metadata: merged });
    }

    /// Appends `part`; returns its index.
    fn push_part(&mut self, part: Part, out: &mut Vec<StreamDelta>) -> usize {
        let index = self.message.parts.len();
        out.push(StreamDelta::PartAdded {
            index,
            part: part.clone(),
        });
        self.message.parts.push(part);
        index
    }

    /// Reports the part at `index` whole.
    fn updated(&self, index: usize, out: &mut Vec<StreamDelta>) {
        if let Some(part) = self.message.parts.get(index) {
            out.push(StreamDelta::PartUpdated {
                index,
                part: part.clone(),
            });
        }
    }

    /// `reset-step`: drops the parts after the last `step-start` (all when there is none) and
    /// forgets open text, reasoning and partial tool calls.
    fn reset_step(&mut self, out: &mut Vec<StreamDelta>) {
        self.flush_pending(out);
        self.last_open = None;
        self.open_text.clear();
        self.open_reasoning.clear();
        self.partial_tools.clear();
        self.runtime_call = None;
        let from = self.step_start.map_or(0, |index| index + 1);
        if from >= self.message.parts.len() {
            return;
        }
        for (offset, part) in self
            .message
            .parts
            .get(from..)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let index = from + offset;
            match part {
                Part::Tool(tool) => {
                    if let Some(indices) = self.tool_parts.get_mut(&tool.tool_call_id) {
                        indices.retain(|&at| at < from);
                        if indices.is_empty() {
                            self.tool_parts.remove(&tool.tool_call_id);
                        }
                    }
                    if let Some(approval) = &tool.approval
                        && self.approvals.get(&approval.id) == Some(&index)
                    {
                        self.approvals.remove(&approval.id);
                    }
                }
                Part::Data(DataPart {
                    data_type,
                    id: Some(id),
                    ..
                }) => {
                    self.data_parts.remove(&(data_type.clone(), id.clone()));
                }
                _ => {}
            }
        }
        self.message.parts.truncate(from);
        out.push(StreamDelta::PartsRemoved { from });
    }

    fn data(
        &mut self,
        data_type: String,
        id: Option<String>,
        data: Value,
        transient: bool,
        out: &mut Vec<StreamDelta>,
    ) {
        if transient {
            out.push(StreamDelta::TransientData {
                data_type,
                id,
                data,
            });
            return;
        }
        let Some(id) = id else {
            self.push_part(
                Part::Data(DataPart {
                    data_type,
                    id: None,
                    data: Json::from(data),
                }),
                out,
            );
            return;
        };
        let key = (data_type, id);
        if let Some(&index) = self.data_parts.get(&key)
            && let Some(Part::Data(part)) = self.message.parts.get_mut(index)
            && part.data_type == key.0
            && part.id.as_ref() == Some(&key.1)
        {
            part.data = Json::from(data);
            self.updated(index, out);
            return;
        }
        let index = self.push_part(
            Part::Data(DataPart {
                data_type: key.0.clone(),
                id: Some(key.1.clone()),
                data: Json::from(data),
            }),
            out,
        );
        self.data_parts.insert(key, index);
    }
}
