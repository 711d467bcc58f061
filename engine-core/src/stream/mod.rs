//! Streamed answers: the ui-message-stream body of `POST {rpc_url}/api/chat`, decoded from raw
//! bytes into one assistant [`Message`] (sans-IO).
//!
//! [`AnswerStream`] ties the layers together: [`sse`] turns bytes into events, [`chunk`] turns an
//! event's JSON into a typed chunk (or says why not), and [`assemble`] applies chunks to the
//! message, reporting each change as a [`StreamDelta`].

pub mod activity;
pub mod assemble;
pub mod chunk;
pub mod delta;
pub mod metadata;
mod mirror;
pub mod outcome;
pub mod partial_json;
pub mod sse;
pub mod surrogates;

use litemap::LiteMap;

use serde::Serialize;

use self::activity::ToolActivity;
use self::assemble::Assembler;
pub use self::chunk::NewSession;
use self::chunk::{Chunk, ChunkError, parse_delta, parse_frame};
pub use self::delta::{SkipReason, StreamDelta};
pub use self::mirror::MessageMirror;
pub use self::outcome::{INTERRUPTED_TEXT, StreamOutcome};
use self::sse::{SseDecoder, SseEvent};
pub use self::surrogates::SplitSurrogates;
use crate::message::Message;

/// What an answer stream skipped or found wrong, and how much it processed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StreamStats {
    /// SSE events dispatched (`[DONE]` and oversized ones included).
    pub events: u64,
    /// Chunks applied.
    pub chunks: u64,
    /// Payloads dropped: not JSON, or not an object with a string `type`.
    pub dropped_payloads: u64,
    /// Chunks of an unknown type, skipped.
    pub unknown_chunks: u64,
    /// Chunks of a known type with a required field missing or mistyped, skipped.
    pub invalid_chunks: u64,
    /// Chunks that broke the protocol (a delta, end or tool chunk for an unknown id).
    pub protocol_errors: u64,
    /// Events dropped for exceeding the size cap.
    pub oversized_events: u64,
    /// Lines that were not valid UTF-8 (decoded lossily, with U+FFFD).
    pub invalid_utf8_lines: u64,
    /// Events ignored because they came after `[DONE]`.
    pub after_done: u64,
    /// Events ignored because the stream broke the protocol beyond repair before them (RU-5).
    pub after_failure: u64,
    /// The body ended in the middle of an event, which was discarded.
    pub discarded_at_end: bool,
    /// Skipped frames by `type` (unknown and invalid ones; payloads that are not frames under
    /// `""`), for the first [`MAX_SKIPPED_TYPES`] types seen; all are counted in
    /// `unknown_chunks`, `invalid_chunks` and `dropped_payloads`.
    #[serde(serialize_with = "crate::json::object")]
    pub skipped_types: LiteMap<String, u64>,
}

/// How many distinct skipped frame types [`StreamStats::skipped_types`] names (a hostile
/// stream cannot grow it further).
pub const MAX_SKIPPED_TYPES: usize = 32;

/// One streamed answer: feed it the body's bytes as they arrive, then [`AnswerStream::end`].
#[derive(Debug, Clone)]
pub struct AnswerStream {
    decoder: SseDecoder,
    receiver: Receiver,
    ended: bool,
}

/// What the decoded events go to (apart from the decoder, which lends them).
#[derive(Debug, Clone)]
struct Receiver {
    assembler: Assembler,
    /// `[DONE]` was seen: later events are ignored.
    done: bool,
    agent_id: Option<String>,
    agent_id_reports: u64,
    new_session: Option<NewSession>,
    activity: ToolActivity,
    stats: StreamStats,
}

impl AnswerStream {
    /// A stream whose message has `message_id` until a `start` chunk gives one, dropping any
    /// event whose data exceeds `max_event_bytes`.
    pub fn new(message_id: String, max_event_bytes: usize) -> AnswerStream {
        AnswerStream {
            decoder: SseDecoder::new(max_event_bytes),
            receiver: Receiver {
                assembler: Assembler::new(message_id),
                done: false,
                agent_id: None,
                agent_id_reports: 0,
                new_session: None,
                activity: ToolActivity::default(),
                stats: StreamStats::default(),
            },
            ended: false,
        }
    }

    /// Decodes the next slice of the body (any slicing), pushing what changed to `out`. Text
    /// appended to one part by frames that follow one another in the slice comes as one
    /// delta (their texts joined), never joined to a delta `out` held before the call.
    /// Ignored after [`AnswerStream::end`].
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<StreamDelta>) {
        if self.ended {
            return;
        }
        self.receiver.assembler.joins_from(out.len());
        let receiver = &mut self.receiver;
        self.decoder.feed(bytes, |event| receiver.event(event, out));
        let stats = &mut self.receiver.stats;
        stats.protocol_errors = self.receiver.assembler.protocol_errors();
        stats.invalid_utf8_lines = self.decoder.invalid_utf8_lines();
    }

    /// The body ended cleanly: an unfinished last event is discarded, and the message takes
    /// its final status (see [`StreamOutcome`]). Only the first call counts.
    pub fn end(&mut self, out: &mut Vec<StreamDelta>) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.receiver.stats.discarded_at_end = self.decoder.finish();
        self.receiver.assembler.joins_from(out.len());
        self.receiver.assembler.end(out);
    }

    /// The assistant message so far (status running until [`AnswerStream::end`]).
    pub fn message(&self) -> &Message {
        self.receiver.assembler.message()
    }

    /// The assistant message, taken whole when the answer is over, its values compact
    /// ([`Message::compact`]).
    pub fn into_message(self) -> Message {
        let mut message = self.receiver.assembler.into_message();
        message.compact();
        message
    }

    /// Where the stream stands.
    pub fn outcome(&self) -> &StreamOutcome {
        self.receiver.assembler.outcome()
    }

    /// Whether the stream broke the protocol beyond repair (RU-5): a `tool-result` for a call
    /// never started, or a call id started twice. The message failed with the reference's
    /// text; later events are ignored.
    pub fn broken(&self) -> bool {
        self.receiver.assembler.broken()
    }

    /// The trimmed text of the last reasoning frame's append that was not blank (empty before
    /// any): the run's thinking summary. The deltas one piece of the body gives for one part are
    /// handed on joined, so this is what tells where the last one began.
    pub(crate) fn last_reasoning(&self) -> &str {
        self.receiver.assembler.last_reasoning()
    }

    /// The first error text an `error` chunk gave, if any.
    pub fn error_text(&self) -> Option<&str> {
        self.receiver.assembler.error_text()
    }

    /// The source the first `error` chunk named (`error_source`, else `source`), if any: where
    /// the turn's failure comes from (RU-15).
    pub fn error_source(&self) -> Option<&str> {
        self.receiver.assembler.error_source()
    }

    /// The agent id the latest frame carrying one gave: its top-level `agent_id`, or the
    /// `agent_id` of a `data-*` part's data (adr-notes 6).
    pub fn agent_id(&self) -> Option<&str> {
        self.receiver.agent_id.as_deref()
    }

    /// How many frames reported an agent id so far (the same id again included): a host that
    /// forgot the id (a new selection) learns it again from the next report.
    pub fn agent_id_reports(&self) -> u64 {
        self.receiver.agent_id_reports
    }

    /// The session announced by a `new_session` frame (the latest, if several).
    pub fn new_session(&self) -> Option<&NewSession> {
        self.receiver.new_session.as_ref()
    }

    /// Counts of what was processed and skipped.
    pub fn stats(&self) -> &StreamStats {
        &self.receiver.stats
    }
}

impl Receiver {
    fn event(&mut self, event: SseEvent<'_>, out: &mut Vec<StreamDelta>) {
        self.stats.events += 1;
        if self.done {
            self.stats.after_done += 1;
            return;
        }
        if self.assembler.broken() {
            self.stats.after_failure += 1;
            return;
        }
        match event {
            SseEvent::Oversized { .. } => self.stats.oversized_events += 1,
            SseEvent::Done => {
                self.done = true;
                self.assembler.done(out);
            }
            SseEvent::Data(payload) => {
                if let Some((agent_id, chunk)) = parse_delta(payload) {
                    if let Some(agent_id) = agent_id {
                        self.set_agent_id(agent_id, out);
                    }
                    self.stats.chunks += 1;
                    self.assembler.apply_delta(chunk, out);
                    return;
                }
                let frame = parse_frame(payload);
                if let Some(agent_id) = frame.agent_id {
                    self.set_agent_id(agent_id, out);
                }
                match frame.chunk {
                    Err(ChunkError::NotAChunk) => {
                        self.stats.dropped_payloads += 1;
                        self.skipped(String::new(), SkipReason::NotAFrame, out);
                    }
                    Err(ChunkError::UnknownType { chunk_type }) => {
                        self.stats.unknown_chunks += 1;
                        self.skipped(chunk_type, SkipReason::UnknownType, out);
                    }
                    Err(ChunkError::Invalid { chunk_type, field }) => {
                        self.stats.invalid_chunks += 1;
                        let reason = SkipReason::InvalidField {
                            field: field.to_owned(),
                        };
                        self.skipped(chunk_type, reason, out);
                    }
                    // The inner `new_session.agent_id` only names the session's Agent; it does
                    // not report the chat's `agentId` (the reference's choice).
                    Ok(Chunk::NewSession(session)) => {
                        self.stats.chunks += 1;
                        self.new_session = Some(session.clone());
                        out.push(StreamDelta::NewSession(session));
                    }
                    Ok(chunk) => {
                        self.stats.chunks += 1;
                        // adr-notes 6: a data part whose data carries `agent_id` reports it too.
                        let reported = match &chunk {
                            Chunk::Data { data, .. } => crate::api::id_like(data.get("agent_id")),
                            _ => None,
                        };
                        let status = self.activity.status(&chunk);
                        self.assembler.apply(chunk, out);
                        if let Some(status) = status.filter(|_| !self.assembler.broken()) {
                            out.push(status);
                        }
                        if let Some(agent_id) = reported {
                            self.set_agent_id(agent_id, out);
                        }
                    }
                }
            }
        }
    }

    /// Counts a skipped frame by type; the first of its type is reported.
    fn skipped(&mut self, frame_type: String, reason: SkipReason, out: &mut Vec<StreamDelta>) {
        let types = &mut self.stats.skipped_types;
        if let Some(count) = types.get_mut(&frame_type) {
            *count += 1;
            return;
        }
        if types.len() >= MAX_SKIPPED_TYPES {
            return;
        }
        types.insert(frame_type.clone(), 1);
        out.push(StreamDelta::FrameSkipped {
            frame_type: (!frame_type.is_empty()).then_some(frame_type),
            reason,
        });
    }

    fn set_agent_id(&mut self, agent_id: String, out: &mut Vec<StreamDelta>) {
        self.agent_id_reports = self.agent_id_reports.wrapping_add(1);
        if self.agent_id.as_deref() != Some(agent_id.as_str()) {
            self.agent_id = Some(agent_id.clone());
            out.push(StreamDelta::AgentId { agent_id });
        }
    }
}
